#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Split corpus/wild/labels.tsv into dev.tsv and test.tsv by source project.

Every log of one project (GitHub owner/name, or the site's host) lands in
the same set, so the test set holds only projects whose messages the rules
were never tuned on.  Projects are shuffled with a fixed seed and assigned
to the test set until it holds 30 % of the logs; the rest is dev.  The
split was made once, before any rule was changed for these logs; running
this script again reproduces it exactly."""
import os
import random

SEED = 20261130
TEST_SHARE = 0.30

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "labels.tsv")) as f:
    header = f.readline()
    rows = [line for line in f if line.strip()]

by_project = {}
for row in rows:
    by_project.setdefault(row.split("\t")[3], []).append(row)

projects = sorted(by_project)
random.Random(SEED).shuffle(projects)
test, dev = [], []
for p in projects:
    if len(test) < TEST_SHARE * len(rows):
        test.extend(by_project[p])
    else:
        dev.extend(by_project[p])

for name, part in (("dev.tsv", dev), ("test.tsv", test)):
    with open(os.path.join(here, name), "w") as f:
        f.write(header)
        f.writelines(sorted(part))
print("dev: %d logs, test: %d logs, %d projects" %
      (len(dev), len(test), len(projects)))
