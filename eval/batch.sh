#!/bin/sh
# SPDX-License-Identifier: MIT
# Score the logs that one commit added to corpus/wild with the rules of
# that same commit: the figure for logs the rules had never seen.  A batch
# of new logs is committed (and split) before any rule changes for it, so
# the commit that adds it still carries the rules written without it.
#
# Usage: eval/batch.sh COMMIT [WORKDIR]
#   WORKDIR (default: a fresh temporary directory) receives a worktree of
#   COMMIT and its build; it is removed afterwards unless given.
#
# Prints macro-F1 and accuracy of gpualert and the two baselines on the
# batch as a whole and on its dev and test parts.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: eval/batch.sh COMMIT [WORKDIR]" >&2; exit 2; }
commit=$(git rev-parse --verify "$1^{commit}")
keep=${2:-}
work=${2:-$(mktemp -d)}
cleanup() {
	git worktree remove --force "$work/src" 2>/dev/null || true
	[ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM

git worktree add --detach "$work/src" "$commit" >/dev/null 2>&1
meson setup "$work/build" "$work/src" >/dev/null
ninja -C "$work/build" cli/gpualert >/dev/null

# The rows COMMIT added to labels.tsv, and which of them went to dev and test.
wild=$work/src/corpus/wild
header=$(head -n 1 "$wild/labels.tsv")
git diff "$commit^" "$commit" -- corpus/wild/labels.tsv |
	sed -n 's/^+\(logs\/.*\)/\1/p' >"$work/added"
[ -s "$work/added" ] || { echo "eval/batch.sh: $commit adds no log" >&2; exit 1; }
for part in all dev test; do
	{
		echo "$header"
		case $part in
		all) cat "$work/added" ;;
		*) grep -F -x -f "$work/added" "$wild/$part.tsv" || true ;;
		esac
	} >"$wild/batch-$part.tsv"
done

export GPUALERT_RULES_DIR=
echo "Logs added by $(git log -1 --format='%h (%cs)' "$commit"), scored with its own rules:"
echo
echo "| part | logs | gpualert macro-F1 | gpualert accuracy | keywords macro-F1 | keywords accuracy | exit-code macro-F1 | exit-code accuracy |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for part in all dev test; do
	"$work/build/cli/gpualert" eval "$wild/batch-$part.tsv" |
		awk -v name="$part" -f eval/summary.awk
done
