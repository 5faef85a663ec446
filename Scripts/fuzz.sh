#!/usr/bin/env bash
# Fuzzes dsh with libFuzzer for a given time (seconds, default 600). Three targets:
#   script   the lexer, parser and interpreter, and the CSV and JSON readers (the default),
#            seeded from every script, CSV and JSON file in Scripts/ and Tests/;
#   swift    the Swift generator: hostile text in a screen printed `as swift`, whose program
#            must parse (swiftc -dump-parse) into the same tree as with plain words;
#   numbers  expressions over values at the limits of Int64 and Double, in every stage.
# Crashes land in Fuzz/crashes/TARGET-*.
#   Scripts/fuzz.sh 1800            (the script target)
#   Scripts/fuzz.sh swift 1800
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
target=script
case "${1:-}" in script | swift | numbers) target=$1; shift ;; esac
seconds=${1:-600}
build=.build-fuzz
swift build -c release --scratch-path "$build" --product dsh-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING >&2
corpus=$(mktemp -d)
case "$target" in
  script)
    find Scripts Tests \( -name '*.dsh' -o -name '*.csv' -o -name '*.json' -o -name '*.jsonl' \) \
      -size -64k -exec cp {} "$corpus" \;
    ;;
  swift)
    # What ends a Swift comment or string, or starts code inside one.
    i=0
    for seed in $'\r' $'a\rimport Glibc\rlet _ = system("id")\r//' $'\u2028' $'\u2029' '*/' '/*' '"""' \
      '\(1)' '#' '#"' '"#' $'\x1b[8m' $'\u202e' $'\t\v\f' '\u{0}' $'line\nbreak' 'ünïcödé 😀'; do
      printf '%s' "$seed" > "$corpus/seed-$i"
      i=$((i + 1))
    done
    ;;
  numbers)
    for i in $(seq 1 32); do head -c 64 /dev/urandom > "$corpus/seed-$i"; done
    ;;
esac
mkdir -p Fuzz/crashes
# The swift target starts swiftc through Foundation's Process, whose few bytes LeakSanitizer
# reports at every run: leaks are not what these targets look for.
leaks=1
[ "$target" = script ] || leaks=0
ASAN_OPTIONS=detect_leaks=$leaks DSH_FUZZ_TARGET=$target "$build/release/dsh-fuzz" "$corpus" -max_total_time="$seconds" -timeout=20 \
  -detect_leaks=$leaks -rss_limit_mb=4096 -max_len=4096 -artifact_prefix="Fuzz/crashes/$target-" -print_final_stats=1 2>&1 | tail -25
