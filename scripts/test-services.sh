#!/usr/bin/env bash
# Installs and starts the services the test suite uses (PostgreSQL from Debian's packages, Synapse
# from PyPI into a cached virtual environment), then prints the variables that point the tests at
# them. Developers and .ci/run use it alike:
#   eval "$(bash scripts/test-services.sh)"
# Progress goes to stderr; only `export` lines go to stdout. Safe to run again.
set -euo pipefail

log() { printf 'test-services: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

PG_USER=steward
PG_PASSWORD=steward-test
PG_DB=steward_test
PG_PORT=${STEWARD_TEST_PG_PORT:-5432}

apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then
    log "apt-get update"
    as_root apt-get update -qq >&2
    apt_updated=1
  fi
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >&2
}

# --- bubblewrap (the host jail for the shell tool) --------------------------------------------------
# The jail tests run real commands in it; util-linux (unshare, setpriv) is the fallback they cover too.
if ! command -v bwrap >/dev/null 2>&1; then
  apt_install bubblewrap
fi
log "bubblewrap $(bwrap --version | awk '{print $2}') ready"

# --- Docker (the sandbox's engine) ----------------------------------------------------------------
# Debian's docker.io, its daemon started here when none answers: vfs storage (works on any
# filesystem, also inside a container), no iptables and no default bridge (loopback-only machine).
# The sandbox images are built from Debian packages and `docker import`ed; nothing is ever pulled.
if ! command -v dockerd >/dev/null 2>&1; then
  apt_install docker.io
fi
DOCKER_LOG=${STEWARD_TEST_DOCKER_LOG:-/var/log/steward-test-dockerd.log}
docker_up() { docker info >/dev/null 2>&1; }
if ! docker_up; then
  log "starting dockerd (vfs, no iptables, no bridge); log in $DOCKER_LOG"
  # setsid and its own output file: a daemon holding this script's stdout would stall the eval.
  as_root setsid dockerd --storage-driver=vfs --iptables=false --bridge=none \
    </dev/null >>"$DOCKER_LOG" 2>&1 &
  for _ in $(seq 1 60); do docker_up && break; sleep 1; done
  docker_up || { log "dockerd did not answer; see $DOCKER_LOG"; exit 1; }
fi
log "Docker $(docker version -f '{{.Server.Version}}') ready"
TINY_IMAGE=steward-sandbox-tiny:latest
FULL_IMAGE=steward-sandbox:latest
docker image inspect "$TINY_IMAGE" >/dev/null 2>&1 || bash "$(dirname "$0")/build-sandbox-image.sh" tiny "$TINY_IMAGE"
docker image inspect "$FULL_IMAGE" >/dev/null 2>&1 || bash "$(dirname "$0")/build-sandbox-image.sh" full "$FULL_IMAGE"
echo "export STEWARD_TEST_DOCKER_HOST=${DOCKER_HOST:-unix:///var/run/docker.sock}"
echo "export STEWARD_TEST_SANDBOX_IMAGE=$TINY_IMAGE"
echo "export STEWARD_TEST_SANDBOX_FULL_IMAGE=$FULL_IMAGE"

# --- PostgreSQL ---------------------------------------------------------------------------------
if ! command -v pg_lsclusters >/dev/null 2>&1 || [ -z "$(pg_lsclusters -h 2>/dev/null)" ]; then
  apt_install postgresql
fi
read -r pg_version pg_cluster _ < <(pg_lsclusters -h | head -n 1)
if ! pg_lsclusters -h | awk -v v="$pg_version" -v c="$pg_cluster" '$1==v && $2==c {print $4}' | grep -q online; then
  log "starting PostgreSQL $pg_version/$pg_cluster"
  as_root pg_ctlcluster "$pg_version" "$pg_cluster" start >&2
fi
for _ in $(seq 1 30); do
  as_root su postgres -c "pg_isready -q -p $PG_PORT" && break
  sleep 1
done
as_root su postgres -c "pg_isready -q -p $PG_PORT" || { log "PostgreSQL did not become ready"; exit 1; }

psql_admin() { as_root su postgres -c "psql -v ON_ERROR_STOP=1 -q -p $PG_PORT -tAc \"$1\""; }
if [ "$(psql_admin "select 1 from pg_roles where rolname = '$PG_USER'")" != 1 ]; then
  log "creating role $PG_USER"
  psql_admin "create role $PG_USER login createdb password '$PG_PASSWORD'" >&2
fi
if [ "$(psql_admin "select 1 from pg_database where datname = '$PG_DB'")" != 1 ]; then
  log "creating database $PG_DB"
  psql_admin "create database $PG_DB owner $PG_USER" >&2
fi
log "PostgreSQL $pg_version ready on 127.0.0.1:$PG_PORT"
echo "export STEWARD_TEST_DATABASE_URL=postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB"
# The server binaries, for suites that run a private cluster they can stop and start.
echo "export STEWARD_TEST_PG_BIN=/usr/lib/postgresql/$pg_version/bin"

# --- Synapse (Matrix homeserver) ------------------------------------------------------------------
# A real homeserver on loopback: SQLite, no federation, users registered with the shared secret.
# The virtual environment and the server's data live in a cache folder, so a second run only starts
# it (or finds it running).
SYN_DIR=${STEWARD_TEST_SYNAPSE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/steward-test/synapse}
SYN_PORT=${STEWARD_TEST_SYNAPSE_PORT:-28008}
SYN_URL=http://127.0.0.1:$SYN_PORT
SYN_VERSION=1.163.2
SYN_PY=$SYN_DIR/venv/bin/python
mkdir -p "$SYN_DIR"
command -v curl >/dev/null 2>&1 || apt_install curl

if [ ! -x "$SYN_DIR/venv/bin/pip" ]; then
  rm -rf "$SYN_DIR/venv"
  if ! python3 -m venv "$SYN_DIR/venv" >&2 2>/dev/null; then
    rm -rf "$SYN_DIR/venv"
    command -v python3 >/dev/null 2>&1 || apt_install python3
    apt_install python3-venv
    python3 -m venv "$SYN_DIR/venv" >&2
  fi
fi
if ! "$SYN_PY" -c 'import synapse' 2>/dev/null; then
  log "installing matrix-synapse $SYN_VERSION into $SYN_DIR/venv (about two minutes)"
  "$SYN_DIR/venv/bin/pip" install -q "matrix-synapse==$SYN_VERSION" >&2
fi

if [ ! -f "$SYN_DIR/homeserver.yaml" ]; then
  log "generating the Synapse configuration"
  (cd "$SYN_DIR" && "$SYN_PY" -m synapse.app.homeserver --server-name localhost \
    --config-path homeserver.yaml --data-directory "$SYN_DIR/data" \
    --generate-config --report-stats=no) >&2
fi
[ -f "$SYN_DIR/shared-secret" ] || "$SYN_PY" -c 'import secrets; print(secrets.token_hex(24))' >"$SYN_DIR/shared-secret"
SYN_SECRET=$(cat "$SYN_DIR/shared-secret")
# Loaded after homeserver.yaml, so these keys win. Rate limits are relaxed: tests send fast.
relaxed='{per_second: 1000, burst_count: 1000}'
cat >"$SYN_DIR/steward-test.yaml" <<YAML
listeners:
  - port: $SYN_PORT
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources: [{names: [client], compress: false}]
registration_shared_secret: "$SYN_SECRET"
enable_registration: false
report_stats: false
presence: {enabled: false}
trusted_key_servers: []
suppress_key_server_warning: true
url_preview_enabled: false
max_upload_size: 100M
rc_message: $relaxed
rc_registration: $relaxed
rc_login: {address: $relaxed, account: $relaxed, failed_attempts: $relaxed}
rc_joins: {local: $relaxed, remote: $relaxed}
rc_joins_per_room: $relaxed
rc_invites: {per_room: $relaxed, per_user: $relaxed, per_issuer: $relaxed}
rc_room_creation: $relaxed
rc_3pid_validation: $relaxed
rc_admin_redaction: $relaxed
rc_media_create: $relaxed
rc_reports: $relaxed
YAML

synapse_up() { curl -fsS -m 2 "$SYN_URL/_matrix/client/versions" >/dev/null 2>&1; }
if ! synapse_up; then
  log "starting Synapse on $SYN_URL"
  # Its own output goes to a file: a daemon holding this script's stdout would stall the eval.
  (cd "$SYN_DIR" && "$SYN_PY" -m synapse.app.homeserver -c homeserver.yaml -c steward-test.yaml \
    --daemonize </dev/null >>"$SYN_DIR/daemon.log" 2>&1) ||
    { log "Synapse did not start; see $SYN_DIR/daemon.log and $SYN_DIR/homeserver.log"; exit 1; }
  for _ in $(seq 1 60); do synapse_up && break; sleep 1; done
  synapse_up || { log "Synapse did not answer on $SYN_URL; see $SYN_DIR/homeserver.log"; exit 1; }
fi

json_field() { "$SYN_PY" -c "import json,sys; print(json.load(sys.stdin).get('$1', ''))"; }
# An access token per user, kept in the cache and checked with whoami, so devices do not pile up.
matrix_token() {
  local user=$1 password="$1-test-password" file="$SYN_DIR/token-$1" token out
  token=$(cat "$file" 2>/dev/null || true)
  if [ -n "$token" ] && curl -fsS -m 5 -H "Authorization: Bearer $token" \
    "$SYN_URL/_matrix/client/v3/account/whoami" >/dev/null 2>&1; then
    echo "$token"
    return
  fi
  if ! out=$("$SYN_DIR/venv/bin/register_new_matrix_user" -u "$user" -p "$password" --no-admin \
    -k "$SYN_SECRET" "$SYN_URL" 2>&1); then
    grep -qi 'already taken' <<<"$out" || { log "registering $user failed: $out"; return 1; }
  fi
  token=$(curl -fsS -m 10 -X POST "$SYN_URL/_matrix/client/v3/login" -H 'content-type: application/json' \
    -d "{\"type\":\"m.login.password\",\"identifier\":{\"type\":\"m.id.user\",\"user\":\"$user\"},\"password\":\"$password\",\"device_id\":\"STEWARD_TEST\"}" |
    json_field access_token)
  [ -n "$token" ] || { log "logging $user in failed"; return 1; }
  echo "$token" >"$file"
  echo "$token"
}
BOT_TOKEN=$(matrix_token steward-bot)
OWNER_TOKEN=$(matrix_token owner)
STRANGER_TOKEN=$(matrix_token stranger)
log "Synapse ready on $SYN_URL (@steward-bot, @owner, @stranger on localhost)"
echo "export STEWARD_TEST_MATRIX_HOMESERVER=$SYN_URL"
echo "export STEWARD_TEST_MATRIX_BOT_TOKEN=$BOT_TOKEN"
echo "export STEWARD_TEST_MATRIX_OWNER=@owner:localhost"
echo "export STEWARD_TEST_MATRIX_OWNER_TOKEN=$OWNER_TOKEN"
echo "export STEWARD_TEST_MATRIX_STRANGER_TOKEN=$STRANGER_TOKEN"
