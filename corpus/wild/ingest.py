#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Add collected logs to corpus/wild from a batch file on stdin.

Batch format, one record after another:

    === ID | CLASS | EXIT | URL | REASON
    the excerpt, exactly as pasted in the thread ([...] marks an elision)

EXIT is the job's exit status when the thread shows it, else empty.
The project is the GitHub owner/name of the URL, or the site's host.
Every record is checked before anything is written (an id of lower-case
letters, digits, '.', '_' and '-' not already here; a class id of the
taxonomy, as common/taxonomy.c defines them, read by corpus/taxonomy.py;
EXIT empty, 0-255 or -N for signal N, as gpualert eval reads it; an
http(s) URL not already here; a reason);
then writes logs/ID.log and adds a row to labels.tsv (sorted by file)."""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from taxonomy import class_ids  # noqa: E402

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
    ids = set(rows)
    urls = {line.split("\t")[4] for line in rows.values()}
    classes = class_ids()
    text = sys.stdin.read()
    parts = re.split(r"^=== (.*)\n", text, flags=re.M)
    if parts[0].strip():
        sys.exit("ingest.py: text before the first '=== ' record")
    new = []
    errors = []
    for n, (head, body) in enumerate(zip(parts[1::2], parts[2::2]), 1):
        fields = [x.strip() for x in head.split("|", 4)]
        if len(fields) != 5:
            errors.append("record %d: %d fields, want 5" % (n, len(fields)))
            continue
        lid, cls, code, url, reason = fields
        fname = "logs/%s.log" % lid
        where = "record %d (%s)" % (n, lid)
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", lid):
            errors.append("%s: bad id" % where)
        if fname in ids:
            errors.append("%s: duplicate id" % where)
        ids.add(fname)
        if cls not in classes:
            errors.append("%s: class %r is not a class id" % (where, cls))
        if code and not re.fullmatch(r"-?\d+", code):
            errors.append("%s: exit status %r is not an integer" % (where, code))
        elif code and not -64 <= int(code) <= 255:
            # What gpualert eval reads: 0-255, or -N for signal N.  A
            # Windows status such as -1073741819 (0xC0000005) is none.
            errors.append("%s: exit status %s is not 0-255 or -N for a "
                          "signal" % (where, code))
        if not re.match(r"https?://\S+$", url):
            errors.append("%s: bad URL %r" % (where, url))
        elif url in urls:
            errors.append("%s: URL already here or in this batch" % where)
        urls.add(url)
        if not reason or "\t" in reason:
            errors.append("%s: no reason, or a tab in it" % where)
        if not body.strip():
            errors.append("%s: empty excerpt" % where)
        new.append((fname, body.rstrip("\n") + "\n",
                    "\t".join([fname, cls, code, project_of(url), url,
                               reason]) + "\n"))
    if errors:
        sys.exit("ingest.py: nothing written:\n  " + "\n  ".join(errors))
    for fname, body, row in new:
        with open(os.path.join(here, fname), "w") as f:
            f.write(body)
        rows[fname] = row
    with open(manifest, "w") as f:
        f.write(HEADER)
        for k in sorted(rows):
            f.write(rows[k])


main()
