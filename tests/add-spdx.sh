#!/bin/bash
# SPDX-License-Identifier: MIT
# Give every tracked source file the line "SPDX-License-Identifier: MIT"
# (the licence is in LICENSE): C files (.c, .h) and scripts (.sh, .py, and
# any other file that starts with #!).  Files that already carry an SPDX
# line are left alone, so running it again changes nothing.
#   tests/add-spdx.sh           add the line where it is missing
#   tests/add-spdx.sh --check   change nothing; TAP, not ok if a file lacks it
set -euo pipefail
cd "$(dirname "$0")/.."

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "1..0 # SKIP not a git checkout: no list of tracked files"
	exit 0
fi

# The programs corpus/gen runs to produce the corpus logs: the tracebacks in
# corpus/logs quote their line numbers, so the line goes at their end, where
# it moves no other line.
at_end() {
	case $1 in
	corpus/gen/proj/* | corpus/gen/slurm/jobs/*) return 0 ;;
	esac
	return 1
}

# Where the line must be: the first three lines (after a #! line and in a
# file's opening comment is fine), or the last one for the files above.
has_spdx() {
	if at_end "$1"; then
		tail -n 1 -- "$1" | grep -qE '^(#|/\*|//) SPDX-License-Identifier: '
	else
		head -n 3 -- "$1" | grep -qE '^(#|/\*|//) SPDX-License-Identifier: '
	fi
}

add_spdx() {
	local f=$1 line first=
	case $f in
	*.c | *.h) line='/* SPDX-License-Identifier: MIT */' ;;
	*) line='# SPDX-License-Identifier: MIT' ;;
	esac
	if [ ! -s "$f" ]; then
		printf '%s\n' "$line" >"$f"
	elif at_end "$f"; then
		[ -n "$(tail -c 1 -- "$f")" ] && echo >>"$f"
		printf '%s\n' "$line" >>"$f"
	else
		IFS= read -r first <"$f" || true
		if [ "${first#\#!}" != "$first" ]; then
			sed -i "1a $line" -- "$f"
		else
			sed -i "1i $line" -- "$f"
		fi
	fi
}

files=()
while IFS= read -r -d '' f; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	case $f in
	*.c | *.h | *.sh | *.py) files+=("$f") ;;
	*)
		first=
		IFS= read -r -n 2 first <"$f" || true
		[ "$first" = '#!' ] && files+=("$f")
		;;
	esac
done < <(git ls-files -z | sort -zu) # a conflicted file is listed per stage

missing=() twice=()
for f in "${files[@]}"; do
	has_spdx "$f" || missing+=("$f")
	[ "$(head -n 5 -- "$f" | grep -cE '^(#|/\*|//) SPDX-License-Identifier: ')" -le 1 ] ||
		twice+=("$f")
done

if [ "${1:-}" = --check ]; then
	echo "1..2"
	status=0
	if [ "${#missing[@]}" = 0 ]; then
		echo "ok 1 - ${#files[@]} source files carry an SPDX line"
	else
		echo "not ok 1 - ${#missing[@]} of ${#files[@]} source files lack an SPDX line (tests/add-spdx.sh adds it)"
		printf '# %s\n' "${missing[@]}"
		status=1
	fi
	if [ "${#twice[@]}" = 0 ]; then
		echo "ok 2 - none carries it twice"
	else
		echo "not ok 2 - ${#twice[@]} files carry it more than once"
		printf '# %s\n' "${twice[@]}"
		status=1
	fi
	exit "$status"
fi

for f in "${missing[@]}"; do
	add_spdx "$f"
done
echo "add-spdx: ${#missing[@]} files given an SPDX line, ${#files[@]} checked"
