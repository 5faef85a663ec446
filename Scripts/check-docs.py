#!/usr/bin/env python3
"""Fails when a public declaration of the library's products has no doc comment.

DocC's coverage counts members an app never wrote (synthesized `hashValue`, the standard
library's `!=`), so this checks the source itself: every `public` or `open` declaration of
Sources/DataSourceKit* must have a `///` comment right above it (attributes may sit between).
"""
import glob
import re
import sys

missing = []
count = 0
for path in sorted(glob.glob("Sources/DataSourceKit*/**/*.swift", recursive=True)):
    lines = open(path, encoding="utf-8").read().split("\n")
    for index, line in enumerate(lines):
        text = line.strip()
        if not re.match(r"^(@\w+(\([^)]*\))?\s+)*(public|open)\s", text):
            continue
        if re.match(r"^(public|open)\s+(import|extension)\b", text):
            continue
        count += 1
        above = index - 1
        while above >= 0 and lines[above].strip().startswith(("@", "#")):
            above -= 1
        if above < 0 or not lines[above].strip().startswith("///"):
            missing.append(f"{path}:{index + 1}: {text[:100]}")
# Enum cases take their enum's access: each case of a public enum needs its comment too.
for path in sorted(glob.glob("Sources/DataSourceKit*/**/*.swift", recursive=True)):
    lines = open(path, encoding="utf-8").read().split("\n")
    inside = False
    for index, line in enumerate(lines):
        if re.match(r"^\s*public (indirect )?enum \w+", line):
            inside, depth = True, len(line) - len(line.lstrip())
            continue
        if inside and line.startswith(" " * depth + "}"):
            inside = False
        if inside and re.match(r"^" + " " * (depth + 2) + r"case \w", line):
            count += 1
            if not lines[index - 1].strip().startswith("///"):
                missing.append(f"{path}:{index + 1}: {line.strip()[:100]}")
for entry in missing:
    print(entry)
print(f"{count} public declarations, {len(missing)} without a doc comment", file=sys.stderr)
sys.exit(1 if missing else 0)
