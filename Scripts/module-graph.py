#!/usr/bin/env python3
"""Draws the package's module graph from Package.swift, as docs/ARCHITECTURE.md shows it.

    Scripts/module-graph.py          prints the graph
    Scripts/module-graph.py --check  fails when docs/ARCHITECTURE.md's copy differs

The graph is SwiftPM's own reading of the manifest (`swift package dump-package`), so it cannot
drift from what builds: each library and executable target, lowest first, with the targets and
packages it depends on directly. The manifest is compiled in a scratch folder of its own, so this
never waits for a build or a test run holding `.build`.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DOCUMENT = os.path.join(ROOT, "docs", "ARCHITECTURE.md")
BEGIN = "<!-- module graph: Scripts/module-graph.py -->"
END = "<!-- end of module graph -->"


def dependency_name(dependency):
    kind, value = next(iter(dependency.items()))
    name = value[0]
    if kind == "product":
        return f"{name} ({value[1]})"
    return name


def graph():
    manifest = json.loads(
        subprocess.run(
            ["swift", "package", "--scratch-path", os.path.join(ROOT, ".build-docs", "manifest"), "dump-package"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout
    )
    targets = [t for t in manifest["targets"] if t["type"] in ("regular", "executable")]
    depends = {t["name"]: [dependency_name(d) for d in t.get("dependencies", [])] for t in targets}
    local = set(depends)
    # Lowest first: a target after everything it depends on, ties in the manifest's order.
    placed, order = set(), []
    while len(order) < len(targets):
        for target in targets:
            name = target["name"]
            if name not in placed and all(d not in local or d in placed for d in depends[name]):
                placed.add(name)
                order.append(name)
                break
    width = max(len(name) for name in order)
    lines = []
    for name in order:
        kind = "executable" if next(t for t in targets if t["name"] == name)["type"] == "executable" else "module"
        uses = ", ".join(depends[name]) or "(nothing)"
        lines.append(f"{name.ljust(width)}  {kind.ljust(10)}  ← {uses}")
    return "```\n" + "\n".join(lines) + "\n```"


def main():
    drawn = graph()
    if "--check" not in sys.argv:
        print(drawn)
        return
    text = open(DOCUMENT, encoding="utf-8").read()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        sys.exit(f"module-graph.py: docs/ARCHITECTURE.md has no block between {BEGIN} and {END}")
    shown = text[start + len(BEGIN):end].strip()
    if shown != drawn:
        sys.exit(
            "module-graph.py: docs/ARCHITECTURE.md's module graph is not Package.swift's; "
            "paste the output of Scripts/module-graph.py between its markers:\n" + drawn
        )


if __name__ == "__main__":
    main()
