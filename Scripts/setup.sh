#!/usr/bin/env bash
# Installs what dsh needs to build (libedit's headers) when it is missing. Sourced by run.sh and test.sh.
set -euo pipefail

need_libedit() { ! pkg-config --exists libedit 2>/dev/null || [ ! -f /usr/include/histedit.h ]; }

if need_libedit; then
  echo "dsh: installing libedit-dev (line editing) …" >&2
  sudo_if_needed=""
  if [ "$(id -u)" -ne 0 ]; then sudo_if_needed="sudo"; fi
  $sudo_if_needed apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_if_needed apt-get install -y -qq libedit-dev pkg-config >/dev/null
fi
