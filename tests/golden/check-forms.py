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
import os
import subprocess
import sys
import tempfile


def main():
    gpualert, forms = sys.argv[1:3]
    with open(forms, encoding='utf-8') as f:
        next(f)
        rows = [l.rstrip('\n').split('\t', 1) for l in f if l.strip()]
    # A form listed twice tests nothing twice and hides which class the
    # file means when the copies disagree.
    seen = {}
    for n, (_, log) in enumerate(rows, 2):
        if log in seen:
            print('Bail out! %s line %d repeats line %d: %s'
                  % (forms, n, seen[log], log[:70]))
            return 1
        seen[log] = n
    # One gpualert process for all forms: the rules load once (an
    # instrumented build takes a tenth of a second per load).
    texts = [log.replace('\\n', '\n') for _, log in rows]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for n, text in enumerate(texts, 1):
            path = os.path.join(tmp, '%d.log' % n)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text + '\n')
            paths.append(path)
        out = subprocess.run([gpualert, 'classify', '--json'] + paths,
                             capture_output=True, text=True)
    verdicts = [json.loads(l)['class'] for l in out.stdout.splitlines()]
    if out.returncode != 0 or len(verdicts) != len(rows):
        print('Bail out! gpualert classify exited %d with %d verdicts for '
              '%d forms: %s' % (out.returncode, len(verdicts), len(rows),
                                out.stderr.strip()[:300]))
        return 1
    failures = 0
    for n, ((cls, _), text, got) in enumerate(zip(rows, texts, verdicts), 1):
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
