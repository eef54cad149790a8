#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Golden test: classify every corpus log as labelled.

Usage: check-corpus.py GPUALERT CORPUS_DIR GOLDEN_DIR [--update]

For every row of CORPUS_DIR/labels.tsv, runs `GPUALERT classify --json
--exit-code N` and checks
  - the class equals the label, except for the logs listed in
    GOLDEN_DIR/corpus-known-misses.tsv (file, predicted class, why), which
    must still be misclassified exactly as listed (so the list cannot go
    stale), and
  - the whole verdict (class, rule, evidence line numbers) equals the
    checked-in GOLDEN_DIR/corpus-verdicts.tsv, so any change in behaviour
    shows up as a diff.  --update rewrites that file.
Prints TAP.
"""
import json
import os
import subprocess
import sys


def read_tsv(path):
    with open(path, encoding='utf-8') as f:
        lines = [l.rstrip('\n') for l in f if l.strip()]
    header = lines[0].split('\t')
    return [dict(zip(header, l.split('\t'))) for l in lines[1:]]


def main():
    gpualert, corpus, golden = sys.argv[1:4]
    update = '--update' in sys.argv[4:]
    rows = read_tsv(os.path.join(corpus, 'labels.tsv'))
    misses = {r['file']: r for r in read_tsv(os.path.join(golden, 'corpus-known-misses.tsv'))}
    verdicts_path = os.path.join(golden, 'corpus-verdicts.tsv')
    lines = ['file\tlabel\tclass\trule\tevidence_lines']
    n = 0
    failures = 0
    for row in rows:
        out = subprocess.run([gpualert, 'classify', '--json', '--exit-code',
                              row['exit_code'], os.path.join(corpus, row['file'])],
                             capture_output=True, text=True)
        n += 1
        if out.returncode != 0:
            print('not ok %d - %s: gpualert exited %d: %s'
                  % (n, row['file'], out.returncode, out.stderr.strip()))
            failures += 1
            continue
        v = json.loads(out.stdout)
        evidence = ','.join(str(e['line']) for e in v['evidence'])
        lines.append('\t'.join([row['file'], row['class'], v['class'],
                                v['rule'] or '-', evidence or '-']))
        miss = misses.get(row['file'])
        if miss:
            good = v['class'] == miss['predicted'] and v['class'] != row['class']
            what = 'known miss still predicted %s (%s)' % (miss['predicted'], miss['why'])
        else:
            good = v['class'] == row['class']
            what = 'classified %s' % row['class']
        if not good:
            failures += 1
            print('not ok %d - %s: %s, got %s (rule %s)'
                  % (n, row['file'], what, v['class'], v['rule']))
        else:
            print('ok %d - %s: %s' % (n, row['file'], what))
    for f in misses:
        if f not in {r['file'] for r in rows}:
            n += 1
            failures += 1
            print('not ok %d - known miss %s is not in the corpus' % (n, f))

    text = '\n'.join(lines) + '\n'
    n += 1
    if update:
        with open(verdicts_path, 'w', encoding='utf-8') as f:
            f.write(text)
        print('ok %d - wrote %s' % (n, verdicts_path))
    else:
        with open(verdicts_path, encoding='utf-8') as f:
            want = f.read()
        if want == text:
            print('ok %d - verdicts equal %s' % (n, os.path.basename(verdicts_path)))
        else:
            failures += 1
            print('not ok %d - verdicts differ from %s (rerun with --update '
                  'if the change is intended):' % (n, verdicts_path))
            old = {l.split('\t')[0]: l for l in want.splitlines()}
            for l in text.splitlines():
                if old.get(l.split('\t')[0]) != l:
                    print('#   was: %s' % old.get(l.split('\t')[0]))
                    print('#   now: %s' % l)
    print('1..%d' % n)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
