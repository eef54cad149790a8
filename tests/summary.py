#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print one closing line for meson test runs: "tests: N passed, N failed, N skipped".

Usage: summary.py [--no-skip SUITE]... BUILD_DIR...
  (reads BUILD_DIR/meson-logs/testlog.json)
Exits 1 if any test failed, if no test ran at all, or if a test of a suite
named with --no-skip was skipped: the integration tests must really run.
"""
import json
import sys

args = sys.argv[1:]
no_skip = []
while args and args[0] == '--no-skip':
    no_skip.append(args[1])
    args = args[2:]

passed = failed = skipped = 0
for build in args:
    try:
        with open(build + '/meson-logs/testlog.json', encoding='utf-8') as f:
            for line in f:
                test = json.loads(line)
                result, name = test.get('result'), test.get('name', '')
                suites = name.split(' / ')[0].split(':')[-1].split('+')
                if result in ('OK', 'EXPECTEDFAIL'):
                    passed += 1
                elif result == 'SKIP':
                    skipped += 1
                    if any(s in no_skip for s in suites):
                        print('summary.py: %s was skipped, but it must run'
                              % name, file=sys.stderr)
                        failed += 1
                else:
                    failed += 1
    except FileNotFoundError:
        print('summary.py: no test log in %s' % build, file=sys.stderr)
        failed += 1
print('tests: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
sys.exit(1 if failed or not passed else 0)
