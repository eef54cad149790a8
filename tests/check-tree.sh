#!/bin/bash
# SPDX-License-Identifier: MIT
# Checks of the tracked tree itself (TAP):
#  - no .log or .eml file outside corpus/, tests/ and eval/testdata/ (a
#    stray job log or mail written into the checkout must not be
#    committed);
#  - no file cites, by name or by section, a note kept outside the
#    repository (the names are in the pattern below): a fact is stated
#    where it is used.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "1..0 # SKIP not a git checkout: no list of tracked files"
	exit 0
fi

echo "1..2"
status=0

mapfile -t logs < <(git ls-files '*.log' '*.eml' |
	grep -vE '^(corpus|tests|eval/testdata)/' || true)
if [ "${#logs[@]}" = 0 ]; then
	echo "ok 1 - no tracked .log or .eml outside corpus/, tests/, eval/testdata/"
else
	echo "not ok 1 - tracked .log or .eml files outside corpus/, tests/, eval/testdata/"
	status=1
	printf '# %s\n' "${logs[@]}"
fi

docs='SLURM-NOTES|[Pp]itfall [0-9]|STYLE\.md|TAXONOMY\.md'
mapfile -t cites < <(git grep -lE "$docs" -- . ':!corpus/logs' \
	':!tests/check-tree.sh' || true)
if [ "${#cites[@]}" != 0 ]; then
	echo "not ok 2 - files cite documents outside the repository"
	status=1
	git grep -nE "$docs" -- "${cites[@]}" | sed 's/^/# /'
else
	echo "ok 2 - no file cites a document outside the repository"
fi
exit "$status"
