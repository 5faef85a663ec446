#!/usr/bin/env bash
# Draws the README's pictures of Scripts/screen.dsh with dsh itself: docs/screen.svg (light, an
# iPhone 15) and docs/screen-dark.svg. Run it after a change to the screen or to the renderer;
# a test fails while the pictures in docs/ are not what dsh draws now.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
swift build --product dsh >/dev/null
dsh=$(swift build --show-bin-path)/dsh
draw() { # appearance, file
  { echo "set appearance $1"; cat Scripts/screen.dsh; echo "show screen as svg"; } | "$dsh" - > "$2.tmp"
  mv "$2.tmp" "$2"
  echo "drew $2" >&2
}
draw light docs/screen.svg
draw dark docs/screen-dark.svg
