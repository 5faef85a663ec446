#!/usr/bin/env bash
# Times a clean debug build of the DataSourceKit library target, as an app that depends on it
# builds it, now and at an earlier commit, side by side: each from a fresh clone with its own
# build folder. The default earlier commit is the last one before the package split (issue 15),
# when the core linked GRDB.
#   Scripts/build-time.sh [COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
before=${1:-bc9b156}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
measure() {  # label commit
  git clone -q . "$work/$1"
  git -C "$work/$1" checkout -q "$2"
  (cd "$work/$1" && swift package resolve >/dev/null 2>&1)
  local start end
  start=$(date +%s.%N)
  (cd "$work/$1" && swift build --target DataSourceKit >/dev/null 2>&1)
  end=$(date +%s.%N)
  local modules
  modules=$(ls "$work/$1/.build/debug/Modules" 2>/dev/null | sed -n 's/\.swiftmodule$//p' | sort | tr '\n' ' ')
  printf '%-8s %-10s %6.1f s   modules built: %s\n' "$1" "$(git rev-parse --short "$2")" "$(echo "$end - $start" | bc)" "$modules"
}
echo "clean debug build of the DataSourceKit target (dependencies resolved beforehand, not timed)"
measure before "$before"
measure now HEAD
