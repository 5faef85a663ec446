#!/usr/bin/env bash
# Builds dsh in release and starts the shell with the bundled sample data bound.
# Extra arguments go to dsh (e.g. Scripts/run.sh Scripts/tour.dsh).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
swift build -c release --product dsh >&2
if [ $# -gt 0 ]; then
  exec .build/release/dsh "$@"
fi
exec .build/release/dsh -i Scripts/start.dsh
