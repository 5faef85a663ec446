#!/usr/bin/env bash
# Runs the linter, then every test: engine and language unit tests, help examples, and the tests
# that drive the real dsh binary (transcripts in batch mode, line editing under a pseudo-terminal,
# pages in headless Chromium, the postgres provider against a throwaway cluster, answers against
# DuckDB's CLI).
#
#   Scripts/test.sh                      # everything, as CI runs it
#   Scripts/test.sh --fast               # without the slow suites (terminal, browser, PostgreSQL,
#                                        # generated programs), for a quick loop while editing
#   Scripts/test.sh --filter Transcripts # arguments go to swift test
#
# A passing run prints a line per step and, while the build and the tests run, a line every 30 s
# saying how far they have got (tests: 120 of 582 done, 95 s); each step's own output is kept
# aside and printed only when it fails.
#
# What each step costs on a fresh clone of this 2-core machine, with another build running beside
# it (wall time; the whole script took 441-480 s of CPU and 577-666 s of wall time in three such
# runs, docs/BENCHMARKS.md "Set-up"). Each step prints its own time on standard error.
#   packages the tests start (apt-get, first run only)   about a minute of download
#   DuckDB's CLI (pip, first run only)                   ~20 s of download
#   swift format lint                                    ~10 s
#   doc comments checked, DocC catalogs built            ~1 min (symbol graphs of 4 targets; skipped
#                                                        when no doc or public declaration changed)
#   swift build --build-tests (the one debug build)      ~4 min
#   install check, from that same debug build            ~10 s (the manual's plugin)
#   swift test                                           ~4-5 min (suites run in parallel; the
#                                                        generated-program suite builds a small
#                                                        package of its own)
set -euo pipefail
cd "$(dirname "$0")/.."
# pip's warning about running as root (CI's containers do) is not news to a reader of the log.
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
source Scripts/setup.sh
# The tests' own components, started by the tests: headless Chromium draws the pages and pictures
# (zlib reads its PNGs), PostgreSQL serves the postgres provider's tests.
test_missing=()
command -v chromium >/dev/null || test_missing+=(chromium)
# A throwaway PostgreSQL cluster (initdb and pg_ctl) for the postgres provider's tests.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || test_missing+=(postgresql)
command -v openssl >/dev/null || test_missing+=(openssl)
# less pages help on a terminal (PseudoTerminal and Browse tests).
command -v less >/dev/null || test_missing+=(less)
# zstd compresses the .zst files CompressedFileTests reads (dsh reads them through libzstd.so.1).
command -v zstd >/dev/null || test_missing+=(zstd)
if [ ${#test_missing[@]} -gt 0 ]; then install_packages "${test_missing[@]}"; fi
# pyte, a terminal emulator, reads browse's full screen back for BrowseTests; websocket-client
# drives Chromium's DevTools protocol and reads serve's /live socket for ServeTests; pyarrow
# writes the Parquet files of every type and codec ParquetTests reads.
for module in pyte:pyte websocket:websocket-client pyarrow:pyarrow; do
  if ! python3 -c "import ${module%%:*}" 2>/dev/null; then
    python3 -m pip install -q "${module#*:}" 2>/dev/null \
      || python3 -m pip install -q --break-system-packages "${module#*:}"
  fi
done
# DuckDB's CLI (PyPI's duckdb-cli, as Scripts/bench.sh uses it) is the oracle of
# DuckDBOracleTests: the same rows asked the same question, the answers compared.
if [ ! -x .build-duckdb/bin/duckdb ]; then
  python3 -m pip install -q --target .build-duckdb duckdb-cli
fi

test_arguments=()
if [ "${1:-}" = "--fast" ]; then
  shift
  test_arguments+=(--skip "PseudoTerminalTests|BrowseTests|PictureTests|PostgresTests|SwiftProgramTests|ServeTests")
fi
test_arguments+=("$@")

# Prints how long the step that just ended took.
step_started=$SECONDS
step_done() {
  echo "test.sh: $1 took $((SECONDS - step_started)) s" >&2
  step_started=$SECONDS
}
# Waits for the background step $1, saying every 30 s how far it has got (what $2 prints), so a
# long step is never silent; returns its exit status.
watch_step() {
  local pid=$1 describe=$2 waited=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    waited=$((waited + 1))
    if [ $((waited % 30)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
      echo "test.sh: $($describe), $((SECONDS - step_started)) s" >&2
    fi
  done
  wait "$pid"
}
# Runs a command with its output kept aside, printed only when it fails.
quietly() {
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "test.sh: failed: $*" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}
# Style first: the checked-in .swift-format, strictly (warnings fail too).
swift format lint --strict --recursive Sources Tests Bridge Package.swift
step_done "swift format lint"
# The one build: the tests, and the dsh binary they drive and the install check installs.
build_log=$(mktemp)
swift build --build-tests >"$build_log" 2>&1 &
build_progress() { echo "building $(grep -oE '^\[[0-9]+/[0-9]+\]' "$build_log" | tail -1)"; }
if ! watch_step $! build_progress; then
  tail -60 "$build_log" >&2
  echo "test.sh: the build failed (above)" >&2
  exit 1
fi
# A warning from the project's own code is news to nobody after the first time: none may stay.
# (Package manifests' and dependencies' own lines are not the project's.)
if grep -E "/(Sources|Tests)/[^ ]*: warning:|found [0-9]+ file\(s\) which are unhandled" "$build_log" | grep -v "/\.build/" >&2; then
  echo "test.sh: the build warns (above); fix the code rather than the check" >&2
  exit 1
fi
rm -f "$build_log"
step_done "swift build --build-tests"
# Every public declaration of the library's products has a doc comment, and the DocC catalogs
# build (the toolchain's docc: Scripts/docs.sh), from the symbol graphs of the build above (after
# it, so that its log, checked for warnings, is the one that compiles).
quietly python3 Scripts/check-docs.py
# docs/ARCHITECTURE.md's module graph is Package.swift's, as SwiftPM reads it.
quietly python3 Scripts/module-graph.py --check
# The catalogs are built again only when what they are made of changed since they last built
# without fault here: the doc comments, the public and open declarations, the catalogs' own
# files and docs/API.md (a clean clone, as CI's, always builds them).
docs_stamp=.build-docs/built-from
docs_source=$( { grep -rhE '^[[:space:]]*(///|public |open |@_spi)' Sources --include='*.swift'; \
  find Sources -path '*.docc/*' -type f -print0 | sort -z | xargs -0 cat; cat docs/API.md; } | sha256sum | cut -d' ' -f1)
if [ -f "$docs_stamp" ] && [ "$(cat "$docs_stamp")" = "$docs_source" ]; then
  echo "documentation: every public declaration commented; the catalogs unchanged since they last built (.build-docs)" >&2
else
  rm -f "$docs_stamp"
  # The engine's catalog builds with no warning at all: every parameter documented, every link
  # resolved (an app developer reads it first).
  quietly Scripts/docs.sh DataSourceKit --warnings-as-errors
  # docs/API.md lists the engine's public API from that symbol graph: a change of the API is a
  # change of that file, seen in review.
  quietly python3 Scripts/api.py --check
  for target in DataSourceKitValues DataSourceKitRelational DataSourceKitRendering DataSourceKitFiles DataSourceKitSQLite DataSourceKitHTTP; do
    quietly Scripts/docs.sh "$target"
  done
  echo "$docs_source" > "$docs_stamp"
  echo "documentation: every public declaration commented, the catalogs built (the engine's without warnings)" >&2
fi
step_done "documentation"
# An app that depends on the engine alone, without the default trait, resolves no other package.
app=$(mktemp -d)
mkdir -p "$app/Sources/App"
cat > "$app/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription
let package = Package(
  name: "App",
  dependencies: [.package(path: "$PWD", traits: [])],
  targets: [.executableTarget(name: "App", dependencies: [.product(name: "DataSourceKit", package: "$(basename "$PWD")")])])
MANIFEST
echo 'import DataSourceKit' > "$app/Sources/App/main.swift"
(cd "$app" && swift package resolve >/dev/null)
if [ -s "$app/Package.resolved" ] && grep -q '"identity"' "$app/Package.resolved"; then
  echo "test.sh: an app of the engine alone resolves other packages:" >&2
  cat "$app/Package.resolved" >&2
  exit 1
fi
# The same app importing a product that needs the trait is told so, by name, when it builds.
sed -i 's/"DataSourceKit", package/"DataSourceKitValues", package/' "$app/Package.swift"
echo 'import DataSourceKitValues' > "$app/Sources/App/main.swift"
built=$(cd "$app" && swift build 2>&1 || true)
if ! grep -q "DataSourceKitValues needs the package's default trait, Shell" <<<"$built"; then
  echo "test.sh: an app of DataSourceKitValues without the trait is not told it needs it:" >&2
  echo "$built" | tail -20 >&2
  exit 1
fi
rm -rf "$app"
echo "an app of the engine alone (traits: []) resolves no other package; one of the rest is told it needs the trait" >&2
step_done "the engine alone"
# The install script, into a throwaway prefix: the binary, its completions and manual.
prefix=$(mktemp -d)
quietly env DSH_CONFIGURATION=debug bash Scripts/install.sh "$prefix"
"$prefix/bin/dsh" --version >/dev/null
grep -q '_dsh' "$prefix/share/zsh/site-functions/_dsh"
grep -q "^complete -c 'dsh'" "$prefix/share/fish/vendor_completions.d/dsh.fish"
grep -q '__dsh' "$prefix/share/bash-completion/completions/dsh"
grep -q '^\.Nm dsh' "$prefix/share/man/man1/dsh.1"
grep -q '^\.It Ev DSH_HISTORY' "$prefix/share/man/man1/dsh.1"
(cd / && "$prefix/bin/dsh" -c 'show csv "samples:people.csv" | limit 1 as csv' | grep -q 'Ada Lovelace')
# Run by name from PATH, as an installed tool is: the samples are found from the executable itself.
(cd / && PATH="$prefix/bin:$PATH" dsh -c 'show csv "samples:people.csv" | limit 1 as csv' | grep -q 'Ada Lovelace')
! grep -q 'subcommand' "$prefix/share/man/man1/dsh.1"
rm -rf "$prefix"
echo "install script: binary, completions and manual installed and checked" >&2
step_done "install check"
# Last. The runner's output goes to a log; a line every 30 s says how many tests are done, and
# the log is printed only when a test fails (a passing run's helpers may print what they like).
test_log=$(mktemp)
if [ ${#test_arguments[@]} -eq 0 ]; then
  total=$(swift test list --skip-build 2>/dev/null | grep -c . || true)
else
  total="?"
fi
swift test --skip-build --disable-xctest "${test_arguments[@]}" >"$test_log" 2>&1 &
test_progress() {
  echo "tests: $(grep -cE '^[✔✘] Test .* (passed|failed) after' "$test_log" || true) of $total done"
}
if watch_step $! test_progress; then
  grep -E '^✔ Test run' "$test_log" || tail -3 "$test_log"
  rm -f "$test_log"
else
  # What failed, and why: the runner's lines but the passes and starts.
  grep -vE '^(◇|✔) ' "$test_log" >&2 || true
  echo "test.sh: tests failed (above; the whole log is $test_log)" >&2
  exit 1
fi
