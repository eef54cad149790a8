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
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
# The logs of the groups counted as right; gpualert eval scores them (one
# scorer for every figure).
awk -F '\t' -v groups="$groups" '
BEGIN { n = split(groups, g, " "); for (i = 1; i <= n; i++) fixed[g[i]] = 1 }
$1 != "file" && ($4 in fixed) { print $1 }' "$reading" >"$tmp"
GPUALERT_RULES_DIR= "$exe" eval --errors --count-right "$tmp" "$manifest" |
awk -v reading="$reading" -v groups="$groups" '
BEGIN {
	FS = "\t"
	while ((getline line < reading) > 0) {
		split(line, f, "\t")
		if (f[1] != "file")
			group[f[1]] = f[4]
	}
	FS = " "
}
# "MANIFEST:LINE: FILE: gold G, predicted P"
/: gold [a-z_]+, predicted [a-z_]+/ {
	file = $2
	sub(/:$/, "", file)
	k = (file in group) ? group[file] : "unread"
	count[k]++
	misses++
}
# "gpualert with its verdict on the N listed logs right: macro-F1 X, accuracy Y"
/^gpualert with its verdict on the [0-9]+ listed logs right: / {
	reach = $(NF - 2)
	sub(/,$/, "", reach)
}
END {
	# gpualert eval failed (its error is above): no figure rather than a wrong one
	if (reach == "") {
		print "eval/misses.sh: gpualert eval gave no --count-right figure" > "/dev/stderr"
		exit 1
	}
	printf "%d misses:", misses
	n = split("A B C C1 D unread", order, " ")
	for (i = 1; i <= n; i++)
		if (order[i] in count)
			printf " %s %d", order[i], count[order[i]]
	printf "\nmacro-F1 with every miss of %s right: %s\n", groups, reach
}'
