#!/usr/bin/env bash
# Builds one target's documentation with the toolchain's docc, as swift-docc-plugin would (the
# manifest names no plugin package, so an app that depends on the engine resolves nothing): the
# package's symbol graphs from the debug build (`swift package dump-symbol-graph`, which builds
# what is not built yet), then `docc convert` of the target's graphs and its catalog, if any.
#   Scripts/docs.sh DataSourceKit --warnings-as-errors
# The archive is .build-docs/TARGET.doccarchive; the target's symbol graphs, which
# Scripts/api.py reads, are in .build-docs/symbols-of/TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$1
shift
# It says where it wrote them (the build's own triple), as its last line.
every=$(swift package dump-symbol-graph --emit-extension-block-symbols | sed -n 's/^Files written to //p' | tail -1)
if [ ! -d "$every" ]; then
  echo "docs.sh: swift package dump-symbol-graph wrote no symbol graphs" >&2
  exit 1
fi
own=".build-docs/symbols-of/$target"
rm -rf "$own"
mkdir -p "$own"
cp "$every/$target.symbols.json" "$own/"
for extension in "$every/$target"@*.symbols.json; do
  if [ -e "$extension" ]; then cp "$extension" "$own/"; fi
done
catalog=()
if [ -d "Sources/$target/$target.docc" ]; then catalog=("Sources/$target/$target.docc"); fi
docc convert "${catalog[@]}" --additional-symbol-graph-dir "$own" \
  --output-path ".build-docs/$target.doccarchive" \
  --fallback-display-name "$target" --fallback-bundle-identifier "$target" "$@"
