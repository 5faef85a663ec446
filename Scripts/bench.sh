#!/usr/bin/env bash
# Builds dsh in release and runs the benchmark: figures for dsh and what it is compared with,
# side by side. Generates its inputs under bench-data/ (about 70 MB) on the first run.
# 'Scripts/bench.sh scale' runs only the hostile-scale measures, 'Scripts/bench.sh types' only the
# typed-loading and expression measures, 'Scripts/bench.sh live' only the live-data measures (first window, edits), 'Scripts/bench.sh library' only the library's diff and snapshot → apply loop, 'Scripts/bench.sh answers' only group by, join and footer
# aggregates (the last two beside DuckDB's CLI, installed from PyPI when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
sudo_if_needed=""; [ "$(id -u)" -ne 0 ] && sudo_if_needed="sudo"
if ! command -v sqlite3 >/dev/null; then
  $sudo_if_needed apt-get install -y -qq sqlite3 >/dev/null
fi
# GNU time reports a child's own peak memory (see measure() in Sources/dsh-bench/main.swift).
if [ ! -x /usr/bin/time ]; then
  $sudo_if_needed apt-get install -y -qq time >/dev/null || echo "no GNU time: peak memory may read as unknown" >&2
fi
if [ -z "${DUCKDB:-}" ] && ! command -v duckdb >/dev/null; then
  if [ ! -x .build-duckdb/bin/duckdb ]; then
    python3 -m pip install -q --target .build-duckdb duckdb-cli >&2 || echo "no DuckDB CLI: its comparisons are skipped" >&2
  fi
  [ -x .build-duckdb/bin/duckdb ] && export DUCKDB="$(pwd)/.build-duckdb/bin/duckdb" PYTHONPATH="$(pwd)/.build-duckdb"
fi
swift build -c release --product dsh >&2
swift build -c release --product dsh-bench >&2
exec .build/release/dsh-bench "$(pwd)/.build/release/dsh" "$@"
