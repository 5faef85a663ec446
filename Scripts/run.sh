#!/usr/bin/env bash
# Builds dsh (only when a source changed since the last build) and starts the shell with the
# bundled sample data bound. Works from any folder: arguments go to dsh as given, so paths in
# them are the caller's (e.g. Scripts/run.sh Scripts/tour.dsh, or ../my-screen.dsh).
#
# The build is Scripts/test.sh's own (debug, with the tests), so the two README commands build
# once between them in either order, and the second starts at once; a release build that is up
# to date (Scripts/install.sh's, or the benchmark's) is used instead when there is one, for its
# speed on large files.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/Scripts/setup.sh"
# Whether a binary is missing or something it is built from is newer.
stale() { [ ! -x "$1" ] || [ -n "$(find "$root/Sources" "$root/Package.swift" -newer "$1" -print -quit)" ]; }
binary="$root/.build/release/dsh"
if stale "$binary"; then
  binary="$root/.build/debug/dsh"
  if stale "$binary"; then swift build --package-path "$root" --build-tests >&2; fi
fi
if [ $# -gt 0 ]; then
  exec "$binary" "$@"
fi
exec "$binary" -i "$root/Scripts/start.dsh"
