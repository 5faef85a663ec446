#!/usr/bin/env bash
# Runs every test: engine and language unit tests, help examples, and the tests that drive the
# real dsh binary (transcripts in batch mode, and line editing under a pseudo-terminal).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
swift build --build-tests
swift test --skip-build "$@"
