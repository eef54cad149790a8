#!/bin/sh
# SPDX-License-Identifier: MIT
# Compare the verdicts of this build with those of a baseline binary (for
# example last round's build) on every log of the sets eval/run.sh
# scores: how many went from wrong to right, from right to wrong, and
# from one wrong class to another.  A rule change that mends some logs
# and breaks others shows here even when the macro-F1 hides it.
#
# Usage: eval/compare.sh BASELINE [BUILDDIR]   (default: build)
# GPUALERT_PAPER_CORPUS: as for eval/run.sh; only its counts are printed.
# The built-in rules only: GPUALERT_RULES_DIR is emptied for both.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: eval/compare.sh BASELINE [BUILDDIR]" >&2; exit 2; }
base=$1
build=${2:-build}
ninja -C "$build" cli/gpualert >/dev/null
exe=$build/cli/gpualert
paper=${GPUALERT_PAPER_CORPUS:-../shared/paper-corpus/labels.tsv}
export GPUALERT_RULES_DIR=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# misses EXE MANIFEST OUT: "file<TAB>gold<TAB>predicted" of every log EXE
# gets wrong, sorted, into OUT; prints the number of logs scored.
misses() {
	"$1" eval --errors "$2" >"$tmp/report" || true
	sed -n 's/^.*:[0-9]*: \([^ ]*\): gold \([a-z_]*\), predicted \([a-z_]*\).*/\1	\2	\3/p' \
		"$tmp/report" | sort >"$3"
	sed -n 's/^gpualert eval: \([0-9]*\) logs scored.*/\1/p' "$tmp/report"
}

# compare NAME MANIFEST [counts]: one line of counts, then (unless
# "counts") each changed verdict.
compare() {
	name=$1
	manifest=$2
	if [ ! -f "$manifest" ]; then
		echo "eval/compare.sh: $manifest not found: skipping '$name'" >&2
		return 0
	fi
	logs=$(misses "$base" "$manifest" "$tmp/old")
	misses "$exe" "$manifest" "$tmp/new" >/dev/null
	# Tagged by file: F fixed (a miss only before), B broken (only
	# after), C changed (a miss in both, another class after).
	awk -F '\t' -v name="$name" -v logs="$logs" -v quiet="${3:-}" '
		FILENAME == ARGV[1] { old[$1] = $3; gold[$1] = $2; next }
		{ new[$1] = $3; gold[$1] = $2 }
		END {
			for (k in old)
				if (!(k in new)) { n["F"]++; line["F", k] = old[k] " -> " gold[k] }
				else if (old[k] != new[k]) { n["C"]++; line["C", k] = old[k] " -> " new[k] }
			for (k in new)
				if (!(k in old)) { n["B"]++; line["B", k] = gold[k] " -> " new[k] }
			printf "%s: %d logs, %d verdicts changed: %d wrong to right, %d right to wrong, %d wrong to another wrong class\n",
			       name, logs, n["F"] + n["B"] + n["C"], n["F"], n["B"], n["C"]
			if (quiet == "")
				for (kk in line) {
					split(kk, p, SUBSEP)
					printf "  %s %s: %s\n", p[1] == "F" ? "fixed" : p[1] == "B" ? "BROKEN" : "changed", p[2], line[kk]
				}
		}' "$tmp/old" "$tmp/new" | { read -r head; echo "$head"; sort; }
}

echo "baseline: $base"
echo "this build: $exe"
compare corpus corpus/labels.tsv
compare wild-dev corpus/wild/dev.tsv
compare wild-test corpus/wild/test.tsv
compare paper "$paper" counts
