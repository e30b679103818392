#!/usr/bin/env bash
# Builds a local sandbox image from Debian packages with `docker import`; nothing is ever pulled.
#   bash scripts/build-sandbox-image.sh [full|tiny] [TAG]
# full (default, tag steward-sandbox:latest): debootstrap --variant=minbase of bookworm plus python3
#   and git, about 200 MB; the root tarball is cached, so a second build only imports it.
# tiny (tag steward-sandbox-tiny:latest): busybox-static and bash-static only, a few MB, for fast tests.
# Either way the image has bash 5.2 at /bin/bash (the shell dialect) and a `nobody` user (65534).
# Progress goes to stderr. Needs root (debootstrap) and a Docker daemon that answers.
set -euo pipefail

kind=${1:-full}
log() { printf 'build-sandbox-image: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
CACHE=${STEWARD_SANDBOX_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/steward-sandbox}
SUITE=${STEWARD_SANDBOX_SUITE:-bookworm}
MIRROR=${STEWARD_SANDBOX_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$CACHE"

need_pkg() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return
  log "installing ${missing[*]}"
  as_root apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >&2
}

# The account the containers run as; read-only root, so these files are fixed at build time.
write_etc() {
  local root=$1
  chmod 755 "$root"
  mkdir -p "$root/etc" "$root/tmp" "$root/workspace"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  chmod 1777 "$root/tmp"
}

case "$kind" in
  tiny)
    tag=${2:-steward-sandbox-tiny:latest}
    need_pkg busybox-static bash-static
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    mkdir -p "$root/bin" "$root/usr/bin"
    cp /bin/busybox "$root/bin/busybox"
    cp /bin/bash-static "$root/bin/bash"
    for applet in $("$root/bin/busybox" --list); do
      [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
    done
    write_etc "$root"
    tarball="$CACHE/tiny.tar"
    tar -C "$root" -cf "$tarball" .
    ;;
  full)
    tag=${2:-steward-sandbox:latest}
    # The suffix names the layout: bump it when the root changes, so old caches are rebuilt.
    tarball="$CACHE/$SUITE-minbase-python3-git-v2.tar"
    if [ ! -s "$tarball" ]; then
      need_pkg debootstrap
      root=$(mktemp -d)
      trap 'rm -rf "$root"' EXIT
      log "debootstrap --variant=minbase $SUITE with python3 and git (a few minutes, once)"
      as_root debootstrap --variant=minbase --include=python3,git,ca-certificates "$SUITE" "$root" "$MIRROR" \
        >"$CACHE/debootstrap.log" 2>&1 || { log "debootstrap failed; see $CACHE/debootstrap.log"; exit 1; }
      as_root rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*
      grep -q '^nobody:' "$root/etc/passwd" || write_etc "$root"
      mkdir -p "$root/workspace"
      chmod 755 "$root" # mktemp made it 0700: uid 65534 could not reach /bin
      as_root tar -C "$root" -cf "$tarball.part" .
      mv "$tarball.part" "$tarball"
    fi
    ;;
  *)
    log "unknown image kind '$kind': use full or tiny"
    exit 2
    ;;
esac

log "docker import $tarball as $tag"
docker import --change 'USER 65534:65534' --change 'WORKDIR /workspace' --change 'CMD ["/bin/bash"]' \
  "$tarball" "$tag" >/dev/null
log "$tag ready ($(docker image inspect -f '{{.Size}}' "$tag") bytes)"
