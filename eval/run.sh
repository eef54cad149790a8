#!/bin/sh
# SPDX-License-Identifier: MIT
# Score gpualert and the two baselines on our corpus, the two halves of
# corpus/wild (dev: the rules were tuned on it; test: never looked at
# while tuning) and, when it is there, the paper corpus; write
# eval/results/ and print a markdown summary for the README.
#
# Usage: eval/run.sh [BUILDDIR]     (default: build; set up if missing)
# GPUALERT_PAPER_CORPUS: the paper corpus's manifest (default:
# ../shared/paper-corpus/labels.tsv, next to the repository).
#
# The numbers measure the built-in rules only: GPUALERT_RULES_DIR is
# emptied so that a machine's rules.d cannot change them.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
ninja -C "$build" >/dev/null
exe=$build/cli/gpualert
results=eval/results
export GPUALERT_RULES_DIR=
mkdir -p "$results"

rows=
status=0
# name, manifest, extra options.  --errors only for the sets in this
# repository: the paper corpus's lines stay outside it.
run() {
	name=$1
	manifest=$2
	shift 2
	if [ ! -f "$manifest" ]; then
		echo "eval/run.sh: $manifest not found: skipping '$name'" >&2
		return 0
	fi
	"$exe" eval "$@" --svg "$results/$name.svg" "$manifest" \
		>"$results/$name.txt" || status=1
	row=$(awk -v name="$name" -f eval/summary.awk "$results/$name.txt")
	rows="$rows$row
"
}

run corpus corpus/labels.tsv --errors
run wild-dev corpus/wild/dev.tsv --errors
run wild-test corpus/wild/test.tsv --errors
run paper "${GPUALERT_PAPER_CORPUS:-../shared/paper-corpus/labels.tsv}"

echo "Measured $(date -u +%Y-%m-%d) with \`eval/run.sh\` (built-in rules; macro-F1 = mean F1 over the classes present in the gold labels)."
echo
echo "| set | logs | gpualert macro-F1 | gpualert accuracy | keywords macro-F1 | keywords accuracy | exit-code macro-F1 | exit-code accuracy |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
printf '%s' "$rows"
exit $status
