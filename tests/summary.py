#!/usr/bin/env python3
"""Print one closing line for meson test runs: "tests: N passed, N failed, N skipped".

Usage: summary.py BUILD_DIR...   (reads BUILD_DIR/meson-logs/testlog.json)
Exits 1 if any test failed or if no test ran at all.
"""
import json
import sys

passed = failed = skipped = 0
for build in sys.argv[1:]:
    try:
        with open(build + '/meson-logs/testlog.json', encoding='utf-8') as f:
            for line in f:
                result = json.loads(line).get('result')
                if result in ('OK', 'EXPECTEDFAIL'):
                    passed += 1
                elif result == 'SKIP':
                    skipped += 1
                else:
                    failed += 1
    except FileNotFoundError:
        print('summary.py: no test log in %s' % build, file=sys.stderr)
        failed += 1
print('tests: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
sys.exit(1 if failed or not passed else 0)
