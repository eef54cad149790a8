#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/unit/test-man-pages.sh GPUALERT DOC_BUILD_DIR SOURCE_ROOT
# The man pages against the code: every example of gpualert-rules(5) and
# the annotated example of rules/README.md pass `gpualert rules check`,
# and gpualert(1) documents every command that `gpualert --help` lists.
# Prints TAP.
set -u
GA=$1; DOC=$2; SRC=$3
. "$(dirname "$0")/../tap.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Each ``` block of the rules page is a rules file; scdoc's "\X" is X.
awk -v dir="$tmp" '
	/^```/ { if (inb) { inb = 0 } else { inb = 1; k++; f = sprintf("%s/%02d/ex.rules", dir, k); system("mkdir -p " dir "/" sprintf("%02d", k)) } next }
	inb { gsub(/\\\\/, "\001"); gsub(/\\/, ""); gsub(/\001/, "\\"); print > f }
' "$DOC/gpualert-rules.5.scd"
blocks=$(ls "$tmp" | wc -l)
[ "$blocks" -ge 3 ] && ok "gpualert-rules(5) has $blocks examples" || nok "gpualert-rules(5) examples found: $blocks"
for d in "$tmp"/*/; do
	if out=$("$GA" rules check "$d" 2>&1); then
		ok "gpualert-rules(5) example $(basename "$d") passes rules check"
	else
		nok "gpualert-rules(5) example $(basename "$d"): $out"
	fi
done
# rules/README.md's annotated example (```ini), as is.
mkdir -p "$tmp/readme"
sed -n '/^```ini$/,/^```$/p' "$SRC/rules/README.md" | sed '/^```/d' >"$tmp/readme/ex.rules"
if [ -s "$tmp/readme/ex.rules" ] && out=$("$GA" rules check "$tmp/readme" 2>&1); then
	ok "rules/README.md's annotated example passes rules check"
else
	nok "rules/README.md's annotated example: ${out:-empty}"
fi
# A comment after a value is part of it: the same rule with one fails.
printf '[rule x]\nclass = nan ; comment\nmatch = abcd\n' >"$tmp/01/ex.rules"
if "$GA" rules check "$tmp/01" >/dev/null 2>&1; then
	nok "an inline comment is not a comment"
else
	ok "an inline comment is not a comment (rules check fails)"
fi

# Every command of `gpualert --help` has its entry in gpualert(1).
cmds=$("$GA" --help | awk '/^  [a-z]/ { print $1 }')
for c in $cmds spool; do
	if grep -q "^\*$c\( \|\*\)" "$DOC/gpualert.1.scd"; then
		ok "gpualert(1) documents '$c'"
	else
		nok "gpualert(1) does not document '$c'"
	fi
done
tap_done
