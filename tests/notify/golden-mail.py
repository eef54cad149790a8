#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Golden messages, compared the way a reviewer reads them.

Each case in tests/golden/mail is rendered with render-mail and compared
twice: the encoded message byte for byte (NAME.eml: encoders, folding,
boundaries) and its decoded form (NAME.txt: headers decoded, the text and
HTML parts as text, attachment names, types and sizes), so a change shows
as a diff of what the reader sees.  Every message must also parse without
defects in Python's strict email policy, with lines of at most 78 bytes.

GA_REGENERATE=1 rewrites the files, prints the decoded diff and fails
when anything changed, so a regeneration is never silent.
"""
import difflib
import email
import json
import os
import subprocess
import sys
from email import policy

SRC = os.environ["SRCDIR"]
G = os.path.join(SRC, "tests/golden/mail")
RENDER = os.environ["RENDER_MAIL"]
REGEN = os.environ.get("GA_REGENERATE") == "1"


def g(*names):
    return [os.path.join(G, n) for n in names]


ARRAY = g(*("array-%d.json" % i for i in range(5)))
CASES = [
    ("single", ["--claim", "1234.00000000000000aa"] + g("single.json")),
    ("multi", ["--claim", "5678.00000000000000bb"]
     + g("multi-0-node07.json", "multi-0-node08.json", "multi-batch.json")),
    ("inject", ["--claim", "4242.00000000000000cc"] + g("inject.json")),
    ("utf8", ["--claim", "4243.00000000000000dd"] + g("utf8.json")),
    ("array", ["--claim", "900.00000000000000ee"] + ARRAY),
    ("array-ok", ["--claim", "13.000000000000010a"]
     + g(*("array-ok-%d.json" % i for i in range(3)))),
    ("budget", ["--claim", "1234.00000000000000ff", "--budget", "100",
                "--att", os.path.join(G, "att-single")] + g("single.json")),
    ("attach", ["--claim", "1234.0000000000000100",
                "--att", os.path.join(G, "att-single")] + g("single.json")),
    ("nan", ["--claim", "2001.0000000000000101"] + g("nan.json")),
    ("timeout", ["--claim", "2002.0000000000000102"] + g("timeout.json")),
    ("hostoom", ["--claim", "2005.000000000000010b"] + g("hostoom.json")),
    ("success", ["--claim", "2003.0000000000000103"] + g("success.json")),
    ("longline", ["--claim", "2004.0000000000000104"] + g("longline.json")),
    ("site", ["--claim", "1234.0000000000000105", "--site"]
     + g("single.json")),
    ("webhook", ["--webhook", "--claim", "1234.00000000000000aa"]
     + g("single.json")),
    ("markup", ["--claim", "4300.0000000000000109"] + g("markup.json")),
    ("webhook-escape", ["--chat", "slack", "--claim", "4300.0000000000000106"]
     + g("markup.json")),
    ("teams", ["--chat", "teams", "--claim", "4300.0000000000000107"]
     + g("markup.json")),
    ("ntfy", ["--chat", "ntfy", "--claim", "1234.0000000000000108"]
     + g("single.json")),
]


def decode_mail(raw):
    """The reader's view of RAW, and a list of problems."""
    problems = []
    for n, line in enumerate(raw.split(b"\r\n"), 1):
        if len(line) > 78:
            problems.append("line %d is %d bytes" % (n, len(line)))
    m = email.message_from_bytes(raw, policy=policy.strict)
    out = []
    for h in ("From", "To", "Subject", "Auto-Submitted", "X-Gpualert-Job"):
        out.append("%s: %s" % (h, m[h]))
    for part in m.walk():
        if part.defects:
            problems.append("defects: %r" % part.defects)
        ct = part.get_content_type()
        if part.get_content_maintype() == "multipart":
            continue
        if part.get_content_disposition() == "attachment":
            data = part.get_payload(decode=True)
            out.append("== attachment %r (%s, %d bytes)"
                       % (part.get_filename(), ct, len(data)))
            continue
        out.append("== " + ct)
        out.append(part.get_content().rstrip("\n"))
    if m.defects:
        problems.append("defects: %r" % m.defects)
    return "\n".join(out) + "\n", problems


def decode_other(raw):
    try:
        return json.dumps(json.loads(raw), indent=1, ensure_ascii=False) + "\n"
    except ValueError:
        return raw.decode("utf-8")


def main():
    fail = False
    changed = False
    n = 0
    for name, args in CASES:
        n += 1
        r = subprocess.run([RENDER] + args, capture_output=True)
        if r.returncode != 0:
            print("not ok %d - %s: render failed: %s"
                  % (n, name, r.stderr.decode(errors="replace").strip()))
            fail = True
            continue
        raw = r.stdout
        is_mail = not any(a in ("--webhook", "--chat") for a in args)
        ext = ".eml" if is_mail else (".txt" if "ntfy" in args else ".json")
        if is_mail:
            text, problems = decode_mail(raw)
        else:
            text, problems = decode_other(raw), []
        enc_path = os.path.join(G, name + ext)
        dec_path = os.path.join(G, name + ".decoded")
        old_raw = open(enc_path, "rb").read() if os.path.exists(enc_path) else None
        old_text = open(dec_path).read() if os.path.exists(dec_path) else ""
        diff = list(difflib.unified_diff(
            old_text.splitlines(), text.splitlines(),
            "golden/" + name + ".decoded", "rendered", lineterm=""))
        for p in problems:
            print("# %s: %s" % (name, p))
        if problems:
            fail = True
        if old_raw == raw and not diff:
            print("ok %d - %s" % (n, name))
            continue
        if REGEN:
            open(enc_path, "wb").write(raw)
            open(dec_path, "w").write(text)
            changed = True
        print("not ok %d - %s %s" % (n, name,
                                      "regenerated" if REGEN else "differs"))
        for line in diff[:200]:
            print("# " + line)
        if not diff:
            print("# the decoded text is the same; the encoding differs")
        fail = True
    print("1..%d" % n)
    if REGEN and changed:
        print("# golden files rewritten: review the diff above and commit")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
