#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end test (TAP) of `gpualert eval` on the fixtures in eval/testdata.
# Usage: test-cli.sh GPUALERT TESTDATA_DIR
set -u
exe=$1
data=$2
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fail=1
	fi
}

has() { grep -qF -- "$2" "$1"; }

# Built-in rules only, whatever the machine's rules.d holds.
export GPUALERT_RULES_DIR="$tmp/no-rules"

"$exe" eval --svg "$tmp/m.svg" "$data/labels.tsv" >"$tmp/out" 2>"$tmp/err"
ok $? "eval on a clean manifest exits 0"
has "$tmp/out" "4 logs scored, 0 rows skipped"; ok $? "counts 4 logs"
has "$tmp/out" "gpualert      1.0000    1.0000  (4/4)"; ok $? "gpualert macro-F1 1.0000"
has "$tmp/out" "keywords      0.7500    0.7500  (3/4)"; ok $? "keywords macro-F1 0.7500"
has "$tmp/out" "exit-code     0.5000    0.5000  (2/4)"; ok $? "exit-code macro-F1 0.5000"
has "$tmp/out" "over the classes present in the gold labels"; ok $? "states the macro-F1 definition"
has "$tmp/out" "macro-F1 0.5000 over 4 gold classes"; ok $? "per-system line"
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout "$tmp/m.svg"; ok $? "SVG is well-formed XML"
else
	has "$tmp/m.svg" "</svg>"; ok $? "SVG written (xmllint not installed)"
fi

"$exe" eval --json "$data/labels.tsv" >"$tmp/json" 2>"$tmp/err"
ok $? "--json exits 0"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f1 = {s["name"]: s["macro_f1"] for s in d["systems"]}
assert d["logs"] == 4, d["logs"]
assert f1 == {"gpualert": 1.0, "keywords": 0.75, "exit-code": 0.5}, f1
PY
	ok $? "--json parses and holds the same macro-F1s"
else
	has "$tmp/json" '"macro_f1":1.000000'; ok $? "--json holds gpualert's macro-F1"
fi

"$exe" eval "$data/bad.tsv" >"$tmp/out" 2>"$tmp/err"
ok $([ $? -eq 1 ]; echo $?) "skipped rows make the exit status 1"
has "$tmp/err" "bad.tsv:3: error: unknown class id 'no_such_class'"; ok $? "unknown class reported with file:LINE"
has "$tmp/err" "bad.tsv:4: error: log 'logs/missing.log': No such file"; ok $? "missing log reported with file:LINE"
has "$tmp/err" "bad.tsv:5: error: exit_code 'zero'"; ok $? "bad exit code reported with file:LINE"
has "$tmp/err" "bad.tsv:6: error: expected 3 tab-separated fields"; ok $? "short row reported with file:LINE"
has "$tmp/out" "1 logs scored, 4 rows skipped"; ok $? "the good row is still scored"

"$exe" eval --errors "$data/mislabelled.tsv" >"$tmp/out" 2>"$tmp/err"
ok $? "--errors exits 0"
has "$tmp/out" "mislabelled.tsv:2: logs/oom.log: gold nccl, predicted cuda_oom"; ok $? "--errors lists the miss"
has "$tmp/out" "    line 5: RuntimeError: CUDA out of memory"; ok $? "--errors shows the deciding line"
has "$tmp/out" "nccl -> cuda_oom: 1, e.g. logs/oom.log"; ok $? "--errors summarises patterns"

# An empty exit_code: the status is not known (logs pasted into public
# threads).  Success then needs a completion line (ok.log's "training
# finished"); the exit-code baseline has nothing to go on.
"$exe" eval "$data/unknown-status.tsv" >"$tmp/out" 2>"$tmp/err"
ok $? "an empty exit_code is accepted"
has "$tmp/out" "3 logs scored, 0 rows skipped"; ok $? "unknown status: 3 logs scored"
has "$tmp/out" "gpualert      1.0000    1.0000  (3/3)"; ok $? "unknown status: gpualert decides from the log"
has "$tmp/out" "exit-code     0.0000    0.0000  (0/3)"; ok $? "unknown status: exit-code baseline has nothing"

"$exe" eval "$data/no-such-manifest.tsv" >"$tmp/out" 2>"$tmp/err"
ok $([ $? -eq 1 ]; echo $?) "a missing manifest fails"
"$exe" eval >"$tmp/out" 2>"$tmp/err"
ok $([ $? -eq 2 ]; echo $?) "no manifest is a usage error"

echo "1..$n"
exit $fail
