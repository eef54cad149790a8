#!/bin/bash
# SPDX-License-Identifier: MIT
# Checks of the tracked tree itself (TAP):
#  - no .log or .eml file outside corpus/, tests/ and eval/testdata/ (a
#    stray job log or mail written into the checkout must not be
#    committed);
#  - no file cites a note kept outside the repository: a fact is stated
#    where it is used.  A cited upper-case NAME.md that is no tracked
#    file is such a note; so is a numbered "Pitfall N" section.  Where the
#    workplace keeps its notes next to the checkout (../shared), their own
#    file names are checked too, and the stem of a compound name (one
#    with a "-" or "_") also bare: a plain-word stem is an ordinary word.
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

tracked=$(git ls-files '*.md' | sed 's|.*/||' | sort -u | paste -sd'|')
docs='\b[A-Z][A-Z0-9_-]*\.md\b|[Pp]itfall [0-9]'
if [ -d ../shared ]; then
	for f in ../shared/*; do
		[ -f "$f" ] || continue
		name=${f##*/}
		docs="$docs|${name//./\\.}"
		stem=${name%.*}
		case $stem in *[-_]*) docs="$docs|\\b$stem\\b" ;; esac
	done
fi
# Each match on its own line (FILE:LINE:MATCH): a tracked README.md beside
# an outside name on one line must not hide it.
mapfile -t cites < <(git grep -onE "$docs" -- . ':!corpus/logs' \
	':!tests/check-tree.sh' | grep -vE ":($tracked)\$" || true)
if [ "${#cites[@]}" != 0 ]; then
	echo "not ok 2 - files cite documents outside the repository"
	status=1
	printf '# %s\n' "${cites[@]}"
else
	echo "ok 2 - no file cites a document outside the repository"
fi
exit "$status"
