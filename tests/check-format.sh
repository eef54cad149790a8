#!/bin/bash
# SPDX-License-Identifier: MIT
# Check that the C sources are formatted by .clang-format (CI runs this).
#   tests/check-format.sh          report unformatted files, exit 1 if any
#   tests/check-format.sh --fix    format them in place
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v '^corpus/')
if [ "${1:-}" = --fix ]; then
	clang-format -i "${files[@]}"
	exit 0
fi
bad=0
for f in "${files[@]}"; do
	if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "not formatted: $f (tests/check-format.sh --fix)"
		bad=1
	fi
done
[ "$bad" = 0 ] && echo "format: ${#files[@]} files OK"
exit "$bad"
