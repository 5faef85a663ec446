#!/usr/bin/env bash
# Installs what dsh needs to build (the headers of libedit, SQLite and libpq) when it is missing. Sourced by run.sh and test.sh.
set -euo pipefail

# libedit for line editing; SQLite's headers for GRDB (the sqlite provider); libpq for the
# postgres provider.
missing=()
{ pkg-config --exists libedit 2>/dev/null && [ -f /usr/include/histedit.h ]; } || missing+=(libedit-dev)
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
[ -f /usr/include/postgresql/libpq-fe.h ] || missing+=(libpq-dev)
# zlib inflates gzip and zip data files as they are read, libbz2 bzip2 ones.
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
[ -f /usr/include/bzlib.h ] || missing+=(libbz2-dev)
# Snappy, Parquet's usual codec: dsh opens libsnappy.so.1 when a file first needs it.
[ -e /usr/lib/x86_64-linux-gnu/libsnappy.so.1 ] || [ -e /usr/lib/aarch64-linux-gnu/libsnappy.so.1 ] \
  || ldconfig -p 2>/dev/null | grep -q 'libsnappy\.so\.1 ' || missing+=(libsnappy-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)

# Installs the Debian packages named, with sudo when not root (apt's index is refreshed once).
# A package manager busy elsewhere (unattended upgrades on a fresh machine hold its lock) is
# waited for, up to ten minutes, rather than failing at once.
install_packages() {
  echo "dsh: installing $* …" >&2
  local sudo_if_needed=""
  if [ "$(id -u)" -ne 0 ]; then sudo_if_needed="sudo"; fi
  local wait_for_lock=(-o DPkg::Lock::Timeout=600)
  if [ -z "${dsh_apt_updated:-}" ]; then
    $sudo_if_needed apt-get "${wait_for_lock[@]}" update -qq
    dsh_apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo_if_needed apt-get "${wait_for_lock[@]}" install -y -qq \
    --no-install-recommends "$@" >/dev/null
}

if [ ${#missing[@]} -gt 0 ]; then install_packages "${missing[@]}"; fi
