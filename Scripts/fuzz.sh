#!/usr/bin/env bash
# Fuzzes the lexer, parser and interpreter, and the CSV and JSON readers, with libFuzzer for a
# given time (seconds, default 600), seeded from every script, CSV and JSON file in Scripts/ and
# Tests/. Crashes land in Fuzz/crashes/.
#   Scripts/fuzz.sh 1800
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
seconds=${1:-600}
build=.build-fuzz
swift build -c release --scratch-path "$build" --product dsh-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING >&2
corpus=$(mktemp -d)
find Scripts Tests \( -name '*.dsh' -o -name '*.csv' -o -name '*.json' -o -name '*.jsonl' \) \
  -size -64k -exec cp {} "$corpus" \;
mkdir -p Fuzz/crashes
"$build/release/dsh-fuzz" "$corpus" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=4096 \
  -artifact_prefix=Fuzz/crashes/ -print_final_stats=1 2>&1 | tail -25
