#!/bin/sh
# SPDX-License-Identifier: MIT
# What gpualert's misses on one manifest are, by a reader's grouping of
# each miss (eval/misses-*.tsv), and the macro-F1 the set would reach if
# every miss of some groups were right: how much of the gap any rule that
# reads only the log could close.
#
# Usage: eval/misses.sh MANIFEST READING [GROUP...]   (default: C C1 D)
#   READING: TSV with a header; columns file (as in MANIFEST), gold,
#   predicted (when it was read), group, the reader's reason.  Groups:
#     A   the excerpt does not show the cause (only the thread does)
#     B   it shows a message the label contract gives to another class;
#         the thread's fix decided the label
#     C   a line names the cause in a form other programs print too
#     C1  the same in one project's own words
#     D   other
# Misses the reading does not list (it was made at an earlier commit)
# count as "unread"; listed logs that are no longer missed are left out.
# GPUALERT: the executable to use (default: build/cli/gpualert, built if
# needed).  The built-in rules are measured, as by eval/run.sh.
set -eu
[ $# -ge 2 ] || { echo "usage: eval/misses.sh MANIFEST READING [GROUP...]" >&2; exit 2; }
manifest=$1
reading=$2
shift 2
groups=${*:-C C1 D}
exe=${GPUALERT:-}
if [ -z "$exe" ]; then
	root=$(cd "$(dirname "$0")/.." && pwd)
	[ -f "$root/build/build.ninja" ] || meson setup "$root/build" "$root" >/dev/null
	ninja -C "$root/build" cli/gpualert >/dev/null
	exe=$root/build/cli/gpualert
fi
[ -r "$reading" ] || { echo "eval/misses.sh: cannot read $reading" >&2; exit 1; }
GPUALERT_RULES_DIR= "$exe" eval --errors "$manifest" |
awk -v reading="$reading" -v groups="$groups" '
BEGIN {
	FS = "\t"
	while ((getline line < reading) > 0) {
		split(line, f, "\t")
		if (f[1] != "file")
			group[f[1]] = f[4]
	}
	n = split(groups, g, " ")
	for (i = 1; i <= n; i++)
		fixed[g[i]] = 1
	FS = " "
}
# The first per-class table is gpualert'\''s: class support predicted precision recall F1.
/^class +support +predicted/ { table++; next }
# (a class predicted but not in the gold labels has support 0 and recall "-")
table == 1 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {
	tp[$1] = $2 > 0 ? int($5 * $2 + 0.5) : 0
	fp[$1] = $3 - tp[$1]
	fn[$1] = $2 - tp[$1]
	next
}
table == 1 && /^macro-F1 / { table++ }
# "MANIFEST:LINE: FILE: gold G, predicted P"
/: gold [a-z_]+, predicted [a-z_]+/ {
	file = $2
	sub(/:$/, "", file)
	gold = $4
	sub(/,$/, "", gold)
	pred = $6
	k = (file in group) ? group[file] : "unread"
	count[k]++
	misses++
	if (k in fixed) {
		tp[gold]++; fn[gold]--; fp[pred]--
	}
}
function macro(  c, n, sum, p, r) {
	for (c in tp) {
		if (tp[c] + fn[c] == 0)
			continue
		n++
		p = (tp[c] + fp[c]) ? tp[c] / (tp[c] + fp[c]) : 0
		r = tp[c] / (tp[c] + fn[c])
		sum += (p + r) ? 2 * p * r / (p + r) : 0
	}
	return n ? sum / n : 0
}
END {
	printf "%d misses:", misses
	n = split("A B C C1 D unread", order, " ")
	for (i = 1; i <= n; i++)
		if (order[i] in count)
			printf " %s %d", order[i], count[order[i]]
	printf "\nmacro-F1 with every miss of %s right: %.4f\n", groups, macro()
}'
