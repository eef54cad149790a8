#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Message forms: the general wording of each message family and the
class it must get with the exit status unknown.

Usage: check-forms.py GPUALERT FORMS_TSV

FORMS_TSV has the columns class and log; "\\n" in log separates lines.
Each row is one short log written from the documented or source form of
a message (a launcher's report of a signal, a shell's, a scheduler's, a
framework's OOM wording, a driver's hardware error, a completion line),
not from one collected log, so that a rule narrowed to one thread's
wording fails here.  Prints TAP.
"""
import json
import subprocess
import sys


def main():
    gpualert, forms = sys.argv[1:3]
    with open(forms, encoding='utf-8') as f:
        next(f)
        rows = [l.rstrip('\n').split('\t', 1) for l in f if l.strip()]
    failures = 0
    for n, (cls, log) in enumerate(rows, 1):
        text = log.replace('\\n', '\n') + '\n'
        out = subprocess.run([gpualert, 'classify', '--json', '-'], input=text,
                             capture_output=True, text=True)
        got = json.loads(out.stdout)['class'] if out.returncode == 0 else None
        first = text.splitlines()[-1][:70]
        if got == cls:
            print('ok %d - %s: %s' % (n, cls, first))
        else:
            failures += 1
            print('not ok %d - %s, got %s: %s' % (n, cls, got, first))
    print('1..%d' % len(rows))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
