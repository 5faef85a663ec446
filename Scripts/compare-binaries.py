#!/usr/bin/env python3
"""Times two dsh binaries on the same statements, whole processes, and says whether they agree.

    Scripts/compare-binaries.py OLD-DSH NEW-DSH [RUNS]

For a change meant to move code, not behaviour (a module split, a file split): each statement
runs RUNS times (5 unless given) with each binary, the binaries taking turns, and the row gives
each median, the new one's ratio to the old, and whether their outputs (exit status, standard
output and standard error) are byte for byte the same. The inputs are the bench's (`Scripts/bench.sh answers` and `parquet` make them in
bench-data/). Release builds of both, on an idle machine: two cores shared with anything else
make every figure noise.
"""
import os
import statistics
import subprocess
import sys
import time

CSV = ["bench-data/people-1m.csv", "-c"]
PARQUET = ["bench-data/people-10m.parquet", "-c"]
CASES = [
    ("Parquet 10M: group by team", PARQUET, "show people_10m | group by team with n = count(), a = avg(age) as csv"),
    ("Parquet 10M: where, group by", PARQUET,
     "show people_10m | where age > 60 | group by team with n = count(), a = avg(age) as csv"),
    ("CSV 1M: group by two keys", CSV,
     "show people_1m | group by name, team with n = count(), m = max(score) | limit 3 as csv"),
    ("CSV 1M: group by id (1M groups)", CSV, "show people_1m | group by id with n = count() | limit 3 as csv"),
    ("CSV 1M: distinct", CSV, "show people_1m | distinct name | limit 3 as csv"),
    ("CSV 1M: rank() within team", CSV,
     "show people_1m | extend r = rank() by score desc within team | limit 3 as csv"),
    ("CSV 1M: join a grouping", CSV,
     "let t = people_1m | group by team with n = count()\nshow people_1m | join t on team == team as tt | limit 3 as csv"),
    ("CSV 1M: join itself by id", CSV, "show people_1m | join people_1m on id == id as o | limit 3 as csv"),
    ("CSV 1M: show as csv", CSV, "show people_1m as csv"),
]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old, new = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    print("| statement | old | new | new / old | same output |")
    print("|---|---|---|---|---|")
    for name, arguments, statement in CASES:
        if not os.path.exists(os.path.join(root, arguments[0])):
            print(f"| {name} | — | — | — | {arguments[0]} missing |")
            continue
        times = {old: [], new: []}
        outputs = {}
        for _ in range(runs):
            for binary in (old, new):
                started = time.monotonic()
                run = subprocess.run([binary] + arguments + [statement], cwd=root, capture_output=True)
                times[binary].append(time.monotonic() - started)
                outputs[binary] = (run.returncode, run.stdout, run.stderr)
        before, after = statistics.median(times[old]), statistics.median(times[new])
        same = "yes" if outputs[old] == outputs[new] else "**no**"
        print(f"| {name} | {before:.3f} s | {after:.3f} s | {after / before:.2f}× | {same} |", flush=True)


if __name__ == "__main__":
    main()
