#!/usr/bin/env bash
# Measures what a new user waits for, the way they run it: each README command on a fresh clone
# of this repository (its own folder, no build), as whole processes under GNU time, beside the
# install of DuckDB's CLI from PyPI (what a user might pick instead), in one run.
#
#   Scripts/setup-time.sh              # run.sh to the prompt, fresh then again; DuckDB's install
#   Scripts/setup-time.sh test [N]     # also test.sh on N fresh clones (default 1), each while
#                                      # another clean release build of dsh runs beside it
#   Scripts/setup-time.sh before REV   # also run.sh to the prompt at commit REV, for comparison
#   Scripts/setup-time.sh both         # also both orders of the two README commands: run.sh,
#                                      # then test.sh's build step; and that step, then run.sh
#
# CPU is user + system time of the whole process tree; wall time depends on what else runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
[ -x /usr/bin/time ] || install_packages time
work=$(mktemp -d /tmp/dsh-setup-time.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# Prints "label  CPU  wall  peak" for a command run in a folder, its output in $work/label.log.
measure() {  # label folder command…
  local label=$1 folder=$2
  local file="$work/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')"
  shift 2
  (cd "$folder" && /usr/bin/time -f "%U %S %e %M" -o "$file.time" "$@" >"$file.log" 2>&1 </dev/null) \
    || { echo "$label failed: see $file.log" >&2; tail -20 "$file.log" >&2; exit 1; }
  last_log="$file.log"
  read -r user system wall peak <"$file.time"
  printf '%-34s %9.1f s CPU %9.1f s wall %7d MB peak\n' "$label" "$(echo "$user + $system" | bc)" "$wall" \
    "$((peak / 1024))"
}

# Every clone is of the commit the run started at, whatever is committed meanwhile.
git clone -q --no-local . "$work/source"
fresh() {  # name [commit]
  git clone -q "$work/source" "$work/$1"
  if [ -n "${2:-}" ]; then git -C "$work/$1" checkout -q "$2"; fi
  echo "$work/$1"
}

echo "fresh clone of $(git rev-parse --short HEAD) on $(nproc) cores"
clone=$(fresh run)
measure "Scripts/run.sh to the prompt" "$clone" bash Scripts/run.sh
tls=$(grep -ci "boringssl" "$last_log" || true)
echo "  TLS-stack files compiled: $tls"
measure "Scripts/run.sh again (built)" "$clone" bash Scripts/run.sh
rm -rf "$clone"

if [ "${1:-}" = before ]; then
  clone=$(fresh before "$2")
  measure "run.sh to the prompt at $(git rev-parse --short "$2")" "$clone" bash Scripts/run.sh
  rm -rf "$clone"
fi

if [ "${1:-}" = both ]; then
  # The two README commands share one build: whichever runs second finds it done. test.sh's
  # own first step after set-up and lint is `swift build --build-tests`; that step is timed.
  clone=$(fresh order-run-first)
  measure "run.sh first, to the prompt" "$clone" bash Scripts/run.sh -c "show 1"
  measure "  then test.sh's build step" "$clone" swift build --build-tests
  rm -rf "$clone"
  clone=$(fresh order-test-first)
  measure "test.sh's build step first" "$clone" swift build --build-tests
  measure "  then run.sh to the prompt" "$clone" bash Scripts/run.sh -c "show 1"
  rm -rf "$clone"
fi

duckdb_target="$work/duckdb-cli"
measure "pip install duckdb-cli (compare)" "$work" python3 -m pip install -q --no-cache-dir --target "$duckdb_target" duckdb-cli

if [ "${1:-}" = test ]; then
  runs=${2:-1}
  for run in $(seq 1 "$runs"); do
    # Another build on the same machine meanwhile: a clean release build of dsh, again and again.
    other=$(fresh "other$run")
    (while true; do rm -rf "$other/.build"; swift build --package-path "$other" -c release --product dsh >/dev/null 2>&1; done) &
    loader=$!
    clone=$(fresh "test$run")
    measure "Scripts/test.sh, run $run (loaded)" "$clone" env CI=true bash Scripts/test.sh
    grep -E "Test run with|Executed .* tests" "$last_log" | tail -2 | sed 's/^/  /'
    kill "$loader" 2>/dev/null || true
    wait "$loader" 2>/dev/null || true
    pkill -f "$other" 2>/dev/null || true
    rm -rf "$clone" "$other"
  done
fi
