#!/usr/bin/env bash
# Runs the linter, then every test: engine and language unit tests, help examples, and the tests that drive the
# real dsh binary (transcripts in batch mode, and line editing under a pseudo-terminal).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
# Style first: the checked-in .swift-format, strictly (warnings fail too).
swift format lint --strict --recursive Sources Tests Package.swift
swift build --build-tests
swift test --skip-build "$@"
