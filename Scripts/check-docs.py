#!/usr/bin/env python3
"""Fails when a public declaration of the library's products has no doc comment, when a type of
any target is `@unchecked Sendable` without saying why in the comment above it, or when a source
file is over 600 lines (a file that long holds more than one thing: split it by what it does).

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
# `@unchecked Sendable` turns the compiler's check off: the comment above the declaration says
# what makes it safe instead (a lock, memory never written after it is built, …).
unchecked = 0
unexplained = []
for path in sorted(glob.glob("Sources/**/*.swift", recursive=True) + glob.glob("Bridge/*.swift")):
    lines = open(path, encoding="utf-8").read().split("\n")
    for index, line in enumerate(lines):
        if "@unchecked Sendable" not in line or line.strip().startswith("//"):
            continue
        unchecked += 1
        above = index - 1
        comment = []
        while above >= 0 and lines[above].strip().startswith(("//", "@")):
            comment.append(lines[above])
            above -= 1
        if "`@unchecked Sendable`" not in " ".join(comment):
            unexplained.append(f"{path}:{index + 1}: {line.strip()[:100]} (no `@unchecked Sendable`: reason above)")
# A file over 600 lines holds more than one thing; the tests are suites of one area each, read
# case by case, and are not held to it.
too_long = []
for path in sorted(glob.glob("Sources/**/*.swift", recursive=True) + glob.glob("Bridge/*.swift")):
    lines = open(path, encoding="utf-8").read().count("\n")
    if lines > 600:
        too_long.append(f"{path}: {lines} lines, over 600: split it by what it does")
for entry in missing + unexplained + too_long:
    print(entry)
print(
    f"{count} public declarations, {len(missing)} without a doc comment; "
    f"{unchecked} @unchecked Sendable, {len(unexplained)} without its reason",
    file=sys.stderr,
)
sys.exit(1 if missing or unexplained or too_long else 0)
