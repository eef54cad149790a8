#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sanity checks for labels.tsv and the logs; prints per-class/per-source counts."""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CORPUS, HEADER, LABELS  # noqa: E402

sys.path.insert(0, CORPUS)
from taxonomy import class_ids  # noqa: E402

CLASSES = class_ids()
SOURCES = {"reproduced", "gpu", "composed"}


def main():
    lines = open(LABELS, newline="").read().split("\n")
    assert lines[0] == "\t".join(HEADER), lines[0]
    rows = [l.split("\t") for l in lines[1:] if l]
    bad = 0
    seen = set()
    by = collections.Counter()
    for r in rows:
        ok = (len(r) == 5 and r[1] in CLASSES and r[3] in SOURCES and r[0] not in seen
              and os.path.isfile(os.path.join(CORPUS, r[0])) and r[0].startswith(f"logs/{r[1]}/")
              and r[2].lstrip("-").isdigit() and r[4])
        seen.add(r[0])
        if not ok:
            bad += 1
            print("BAD ROW", r)
        by[(r[1], r[3])] += 1
    listed = set(seen)
    for d, _, fs in os.walk(os.path.join(CORPUS, "logs")):
        for f in fs:
            p = os.path.relpath(os.path.join(d, f), CORPUS)
            if p not in listed:
                bad += 1
                print("UNLISTED", p)
    classes = sorted({c for c, _ in by})
    print(f"{'class':14s} {'reproduced':>10s} {'composed':>9s} {'gpu':>4s} {'total':>6s}")
    for c in classes:
        print(f"{c:14s} {by[(c, 'reproduced')]:10d} {by[(c, 'composed')]:9d} {by[(c, 'gpu')]:4d} "
              f"{sum(by[(c, s)] for s in SOURCES):6d}")
    print(f"{'total':14s} {sum(v for (c, s), v in by.items() if s == 'reproduced'):10d} "
          f"{sum(v for (c, s), v in by.items() if s == 'composed'):9d} 0 {len(rows):6d}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
