#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end test (TAP) of `gpualert eval` on the fixtures in eval/testdata.
# Usage: test-cli.sh GPUALERT TESTDATA_DIR
set -u
exe=$1
data=$2
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../tests/tap.sh"

has() { grep -qF -- "$2" "$1"; }

# Built-in rules only, whatever the machine's rules.d holds.
export GPUALERT_RULES_DIR="$tmp/no-rules"

"$exe" eval --svg "$tmp/m.svg" "$data/labels.tsv" >"$tmp/out" 2>"$tmp/err"
check_status $? "eval on a clean manifest exits 0"
check "counts 4 logs" has "$tmp/out" "4 logs scored, 0 rows skipped"
check "gpualert macro-F1 1.0000" has "$tmp/out" "gpualert      1.0000    1.0000  (4/4)"
check "keywords macro-F1 0.7500" has "$tmp/out" "keywords      0.7500    0.7500  (3/4)"
check "exit-code macro-F1 0.5000" has "$tmp/out" "exit-code     0.5000    0.5000  (2/4)"
check "states the macro-F1 definition" has "$tmp/out" "over the classes present in the gold labels"
check "per-system line" has "$tmp/out" "macro-F1 0.5000 over 4 gold classes"
if command -v xmllint >/dev/null 2>&1; then
	check "SVG is well-formed XML" xmllint --noout "$tmp/m.svg"
else
	check "SVG written (xmllint not installed)" has "$tmp/m.svg" "</svg>"
fi

"$exe" eval --json "$data/labels.tsv" >"$tmp/json" 2>"$tmp/err"
check_status $? "--json exits 0"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f1 = {s["name"]: s["macro_f1"] for s in d["systems"]}
assert d["logs"] == 4, d["logs"]
assert f1 == {"gpualert": 1.0, "keywords": 0.75, "exit-code": 0.5}, f1
PY
	check_status $? "--json parses and holds the same macro-F1s"
else
	check "--json holds gpualert's macro-F1" has "$tmp/json" '"macro_f1":1.000000'
fi

"$exe" eval "$data/bad.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?; check "skipped rows make the exit status 1" [ $rc -eq 1 ]
check "unknown class reported with file:LINE" has "$tmp/err" "bad.tsv:3: error: unknown class id 'no_such_class'"
check "missing log reported with file:LINE" has "$tmp/err" "bad.tsv:4: error: log 'logs/missing.log': No such file"
check "bad exit code reported with file:LINE" has "$tmp/err" "bad.tsv:5: error: exit_code 'zero'"
check "short row reported with file:LINE" has "$tmp/err" "bad.tsv:6: error: expected 3 tab-separated fields"
check "the good row is still scored" has "$tmp/out" "1 logs scored, 4 rows skipped"

"$exe" eval --errors "$data/mislabelled.tsv" >"$tmp/out" 2>"$tmp/err"
check_status $? "--errors exits 0"
check "--errors lists the miss" has "$tmp/out" "mislabelled.tsv:2: logs/oom.log: gold nccl, predicted cuda_oom"
check "--errors shows the deciding line" has "$tmp/out" "    line 5: RuntimeError: CUDA out of memory"
check "--errors summarises patterns" has "$tmp/out" "nccl -> cuda_oom: 1, e.g. logs/oom.log"

# --count-right: gpualert's scores had its verdict on the listed logs been
# right, by the same scorer as the report.
printf 'logs/oom.log\n' >"$tmp/right.txt"
"$exe" eval --count-right "$tmp/right.txt" "$data/mislabelled.tsv" >"$tmp/out" 2>"$tmp/err"
check_status $? "--count-right exits 0"
check "--count-right with the miss listed" has "$tmp/out" "gpualert with its verdict on the 1 listed logs right: macro-F1 1.0000, accuracy 1.0000"
: >"$tmp/none.txt"
"$exe" eval --count-right "$tmp/none.txt" "$data/mislabelled.tsv" >"$tmp/out" 2>"$tmp/err"
check "--count-right with nothing listed gives the report's macro-F1" has "$tmp/out" "on the 0 listed logs right: macro-F1 0.5000, accuracy 0.5000"
"$exe" eval --json --count-right "$tmp/none.txt" "$data/mislabelled.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?; check "--count-right with --json is a usage error" [ $rc -eq 2 ]
"$exe" eval --count-right "$tmp/no-such-list.txt" "$data/mislabelled.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?; check "--count-right without its list fails" [ $rc -eq 1 ]
check "the missing list is named" has "$tmp/err" "no-such-list.txt: No such file or directory"

# eval/misses.sh: the misses grouped by a reader's reading, and the
# macro-F1 with the misses of some groups right.
misses=$(dirname "$0")/misses.sh
GPUALERT=$exe "$misses" "$data/mislabelled.tsv" "$data/mislabelled-reading.tsv" none >"$tmp/out" 2>"$tmp/err"
check_status $? "misses.sh exits 0"
check "misses.sh groups the miss" has "$tmp/out" "1 misses: C 1"
check "misses.sh with no group right gives eval's macro-F1" has "$tmp/out" "macro-F1 with every miss of none right: 0.5000"
GPUALERT=$exe "$misses" "$data/mislabelled.tsv" "$data/mislabelled-reading.tsv" >"$tmp/out" 2>"$tmp/err"
check "misses.sh with group C right" has "$tmp/out" "macro-F1 with every miss of C C1 D right: 1.0000"
head -n 1 "$data/mislabelled-reading.tsv" >"$tmp/empty-reading.tsv"
GPUALERT=$exe "$misses" "$data/mislabelled.tsv" "$tmp/empty-reading.tsv" >"$tmp/out" 2>"$tmp/err"
check "a miss the reading does not list is unread" has "$tmp/out" "1 misses: unread 1"
GPUALERT=$exe "$misses" "$data/mislabelled.tsv" "$tmp/no-such-reading.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?; check "misses.sh without its reading fails" [ $rc -eq 1 ]
GPUALERT=false "$misses" "$data/mislabelled.tsv" "$data/mislabelled-reading.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?; check "misses.sh fails when gpualert eval gives no figure" [ $rc -eq 1 ]
check "misses.sh says why" has "$tmp/err" "gave no --count-right figure"

# An empty exit_code: the status is not known (logs pasted into public
# threads).  Success then needs a completion line (ok.log's "training
# finished"); the exit-code baseline has nothing to go on.
"$exe" eval "$data/unknown-status.tsv" >"$tmp/out" 2>"$tmp/err"
ok $? "an empty exit_code is accepted"
has "$tmp/out" "3 logs scored, 0 rows skipped"; ok $? "unknown status: 3 logs scored"
has "$tmp/out" "gpualert      1.0000    1.0000  (3/3)"; ok $? "unknown status: gpualert decides from the log"
has "$tmp/out" "exit-code     0.0000    0.0000  (0/3)"; ok $? "unknown status: exit-code baseline has nothing"

"$exe" eval "$data/no-such-manifest.tsv" >"$tmp/out" 2>"$tmp/err"
rc=$?; check "a missing manifest fails" [ $rc -eq 1 ]
"$exe" eval >"$tmp/out" 2>"$tmp/err"
rc=$?; check "no manifest is a usage error" [ $rc -eq 2 ]

tap_done
exit
