#!/usr/bin/env bash
# Validates docker-compose.yml with Debian's docker-compose, using .env.example in place of the
# operator's .env (which a checkout never has).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v docker-compose >/dev/null 2>&1; then
  echo "check-compose: installing docker-compose" >&2
  [ "$(id -u)" = 0 ] || { echo "check-compose: docker-compose missing; apt-get install docker-compose" >&2; exit 1; }
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >&2
fi
STEWARD_ENV_FILE=.env.example docker-compose --env-file .env.example config -q
echo "check-compose: docker-compose.yml is valid"
