#!/usr/bin/env bash
# Installs (from Debian's packages) and starts the services the test suite uses, then prints the
# variables that point the tests at them. Developers and .ci/run use it alike:
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
