#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Add collected logs to corpus/wild from a batch file on stdin.

Batch format, one record after another:

    === ID | CLASS | EXIT | URL | REASON
    the excerpt, exactly as pasted in the thread ([...] marks an elision)

EXIT is the job's exit status when the thread shows it, else empty.
The project is the GitHub owner/name of the URL, or the site's host.
Writes logs/ID.log and appends a row to labels.tsv (sorted, no duplicate
ids or URLs+text)."""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
manifest = os.path.join(here, "labels.tsv")
HEADER = "file\tclass\texit_code\tproject\turl\treason\n"


def project_of(url):
    m = re.match(r"https?://github\.com/([^/]+/[^/#?]+)", url)
    if m:
        return m.group(1)
    m = re.match(r"https?://([^/]+)", url)
    return m.group(1) if m else url


def main():
    rows = {}
    if os.path.exists(manifest):
        with open(manifest) as f:
            next(f)
            for line in f:
                rows[line.split("\t", 1)[0]] = line
    text = sys.stdin.read()
    parts = re.split(r"^=== (.*)\n", text, flags=re.M)
    for head, body in zip(parts[1::2], parts[2::2]):
        fields = [x.strip() for x in head.split("|", 4)]
        lid, cls, code, url, reason = fields
        fname = "logs/%s.log" % lid
        if fname in rows:
            sys.exit("duplicate id %s" % lid)
        body = body.rstrip("\n") + "\n"
        with open(os.path.join(here, fname), "w") as f:
            f.write(body)
        rows[fname] = "\t".join(
            [fname, cls, code, project_of(url), url, reason]) + "\n"
    with open(manifest, "w") as f:
        f.write(HEADER)
        for k in sorted(rows):
            f.write(rows[k])


main()
