#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""TAP: corpus/wild/ingest.py adds a good batch and refuses a bad one whole.

Runs a copy of ingest.py in a scratch tree shaped like the repository
(corpus/wild/, corpus/taxonomy.py and common/taxonomy.c), so the real corpus is never touched.
Usage: check-wild-ingest.py SOURCE_ROOT"""
import os
import shutil
import subprocess
import sys
import tempfile

root = sys.argv[1]
n = 0
failed = 0


def check(ok, what):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))


def record(lid, cls, code, url, reason, body="line one\nline two\n"):
    return "=== %s | %s | %s | %s | %s\n%s" % (lid, cls, code, url, reason, body)


with tempfile.TemporaryDirectory() as tmp:
    wild = os.path.join(tmp, "corpus", "wild")
    os.makedirs(os.path.join(wild, "logs"))
    os.makedirs(os.path.join(tmp, "common"))
    shutil.copy(os.path.join(root, "corpus", "wild", "ingest.py"), wild)
    shutil.copy(os.path.join(root, "corpus", "taxonomy.py"),
                os.path.join(tmp, "corpus"))
    shutil.copy(os.path.join(root, "common", "taxonomy.c"),
                os.path.join(tmp, "common"))
    labels = os.path.join(wild, "labels.tsv")
    with open(labels, "w") as f:
        f.write("file\tclass\texit_code\tproject\turl\treason\n"
                "logs/old-1.log\tnan\t\to/old\thttps://github.com/o/old/issues/1\tr\n")

    def ingest(text):
        p = subprocess.run([sys.executable, os.path.join(wild, "ingest.py")],
                           input=text, capture_output=True, text=True)
        return p.returncode, p.stderr

    def state():
        return (open(labels).read(), sorted(os.listdir(os.path.join(wild, "logs"))))

    good = (record("proj-2", "cuda_oom", "", "https://github.com/o/proj/issues/2",
                   "maintainer: lower the batch size") +
            record("proj-3", "host_oom", "137", "https://github.com/o/proj/issues/3",
                   "the thread states exit 137; the kernel's oom-kill"))
    rc, err = ingest(good)
    check(rc == 0, "a good batch is taken (%s)" % err.strip())
    text, logs = state()
    check(logs == ["proj-2.log", "proj-3.log"], "its logs are written")
    check("logs/proj-2.log\tcuda_oom\t\to/proj\thttps://github.com/o/proj/issues/2\t"
          "maintainer: lower the batch size\n" in text, "a row with its project")
    check(text.index("logs/old-1.log") < text.index("logs/proj-2.log")
          < text.index("logs/proj-3.log"), "rows sorted by file")
    with open(os.path.join(wild, "logs", "proj-2.log")) as f:
        check(f.read() == "line one\nline two\n", "the excerpt as given")

    before = state()

    def variant(**changed):
        """A record that differs from a good one only in CHANGED."""
        fields = dict(lid="proj-4", cls="unknown", code="",
                      url="https://github.com/o/proj/issues/4", reason="r")
        fields.update(changed)
        return record(**fields)

    bad = {
        "a class that is not a class id ('exit=' from a checker's fix)":
            variant(cls="exit=", code="-9"),
        "an exit status that is not an integer": variant(code="SIGKILL"),
        "a Windows status, not an exit status": variant(code="-1073741819"),
        "an id already here":
            variant(lid="proj-2", url="https://github.com/o/proj/issues/9"),
        "a URL already here": variant(url="https://github.com/o/old/issues/1"),
        "an id twice in the batch":
            variant(lid="proj-6", url="https://github.com/o/proj/issues/7"),
        "a URL twice in the batch": variant(url="https://github.com/o/proj/issues/6"),
        "an id with a path in it": variant(lid="../../x"),
        "a URL that is not http(s)": variant(url="file:///etc/passwd"),
        "an empty excerpt": variant(body="\n"),
        "four fields":
            "=== proj-4 | unknown | https://github.com/o/proj/issues/4 | r\nx\n",
        "text before the first record": "stray\n",
    }
    # A good record first (after the stray text, which can only be first):
    # a bad one anywhere refuses the batch whole.
    good6 = record("proj-6", "nan", "", "https://github.com/o/proj/issues/6", "r")
    for what, text in bad.items():
        batch = text + good6 if text.startswith("stray") else good6 + text
        rc, err = ingest(batch)
        check(rc != 0 and ("nothing written" in err or "text before" in err),
              "refused: %s" % what)
        check(state() == before, "nothing written: %s" % what)

print("1..%d" % n)
sys.exit(1 if failed else 0)
