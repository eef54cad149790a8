#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Split corpus/wild/labels.tsv into dev.tsv and test.tsv by source project.

Every log of one project (GitHub owner/name, or the site's host) lands in
the same set, so the test set holds only projects whose messages the rules
were never tuned on.

Round 1 (251 logs, 207 projects) was split once, before any rule was
changed for those logs: the projects, shuffled with seed 20261130, went to
the test set until it held 30 % of the logs.  That assignment is frozen in
split-frozen.tsv (project -> set) so that logs collected later can never
move a project from one set to the other.

A project first seen later keeps the same 70/30 odds by a keyed hash
instead of a shuffle: SHA-256 of "20261130:" + project, its first 8 bytes
read as a big-endian integer; the project goes to test when that integer,
divided by 2**64, is below 0.30.  The decision depends on the project's
name alone, not on which other logs exist or in which order they were
added.  A new log of a project that is already in a set goes to that set.

Running this script again reproduces dev.tsv and test.tsv exactly."""
import hashlib
import os

SEED = 20261130
TEST_SHARE = 0.30

here = os.path.dirname(os.path.abspath(__file__))


def hashed_set(project):
    digest = hashlib.sha256(("%d:%s" % (SEED, project)).encode()).digest()
    share = int.from_bytes(digest[:8], "big") / 2.0**64
    return "test" if share < TEST_SHARE else "dev"


frozen = {}
with open(os.path.join(here, "split-frozen.tsv")) as f:
    next(f)
    for line in f:
        project, part = line.rstrip("\n").split("\t")
        frozen[project] = part

with open(os.path.join(here, "labels.tsv")) as f:
    header = f.readline()
    rows = [line for line in f if line.strip()]

parts = {"dev": [], "test": []}
new_projects = {"dev": set(), "test": set()}
for row in rows:
    project = row.split("\t")[3]
    part = frozen.get(project)
    if part is None:
        part = hashed_set(project)
        new_projects[part].add(project)
    parts[part].append(row)

for part in ("dev", "test"):
    with open(os.path.join(here, part + ".tsv"), "w") as f:
        f.write(header)
        f.writelines(sorted(parts[part]))
print("dev: %d logs, test: %d logs; projects after round 1: %d dev, %d test" %
      (len(parts["dev"]), len(parts["test"]), len(new_projects["dev"]),
       len(new_projects["test"])))
