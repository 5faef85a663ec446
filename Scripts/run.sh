#!/usr/bin/env bash
# Builds dsh in release (only when a source changed since the last build) and starts the shell
# with the bundled sample data bound. Works from any folder: arguments go to dsh as given, so
# paths in them are the caller's (e.g. Scripts/run.sh Scripts/tour.dsh, or ../my-screen.dsh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/Scripts/setup.sh"
binary="$root/.build/release/dsh"
# Rebuild only when the binary is missing or something it is built from is newer.
if [ ! -x "$binary" ] || [ -n "$(find "$root/Sources" "$root/Package.swift" -newer "$binary" -print -quit)" ]; then
  swift build --package-path "$root" -c release --product dsh >&2
fi
if [ $# -gt 0 ]; then
  exec "$binary" "$@"
fi
exec "$binary" -i "$root/Scripts/start.dsh"
