#!/bin/bash
# SPDX-License-Identifier: MIT
# gpualert run: exit status passthrough, durable log, spooled verdict.
GA=$1
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
printf '[general]\nspool_dir=%s/spool\ndefault_mode=log\n[capture]\nkeep=all\n' "$T" >"$T/conf"
. "$(dirname "$0")/../../tests/tap.sh"
run() { "$GA" run --config "$T/conf" --log "$T/$1.log" -- "${@:2}"; }
cls() { python3 -c 'import json,sys,glob
r=[json.load(open(f)) for f in glob.glob(sys.argv[1]+"/spool/new/*.json")]
r=[x for x in r if x["tasks"][0]["log_path"].endswith("/"+sys.argv[2]+".log")]
print(r[0]["class"] if r else "none")' "$T" "$1"; }

out=$(run ok sh -c 'echo hello; echo world >&2' 2>&1); rc=$?
check "exit 0 passes through" [ $rc = 0 ]
check "output unchanged" [ "$out" = "$(printf 'hello\nworld')" ]
check "log has the header, then the output" bash -c "head -1 '$T/ok.log' | grep -q '^# gpualert' && tail -2 '$T/ok.log' | grep -q world"
check "verdict success" [ "$(cls ok)" = success ]
# stdout a pipe (the log), stderr a file (followed as it is)
run three sh -c 'echo "ModuleNotFoundError: No module named foo" >&2; exit 3' 2>"$T/three.err" | cat; rc=${PIPESTATUS[0]}
check "exit 3 passes through" [ $rc = 3 ]
check "verdict import_error (from the stderr file)" [ "$(cls three)" = import_error ]
check "stderr file untouched" grep -qx 'ModuleNotFoundError: No module named foo' "$T/three.err"
printf '[general]\nspool_dir=%s/spool\ndefault_mode=log\n' "$T" >"$T/conf-keep"
"$GA" run --config "$T/conf-keep" --log "$T/gone.log" -- sh -c 'echo fine' | cat >/dev/null
check "keep=failed (default): a successful run's log is removed" [ ! -e "$T/gone.log" ]
"$GA" run --config "$T/conf-keep" --log "$T/kept.log" -- sh -c 'echo bad; exit 1' | cat >/dev/null
check "keep=failed: a failed run's log stays" [ -s "$T/kept.log" ]
run segv sh -c 'kill -SEGV $$' 2>/dev/null; rc=$?
check "killed by SIGSEGV: 139" [ $rc = 139 ]
check "verdict segfault" [ "$(cls segv)" = segfault ]
run nox /nonexistent/cmd 2>&1 | cat >/dev/null; rc=${PIPESTATUS[0]}
check "missing command: 127" [ $rc = 127 ]
check "missing command: its log exists with the reason" grep -q 'cannot execute /nonexistent/cmd' "$T/nox.log"
out=$(seq 1 1000000 | md5sum); got=$(run big seq 1 1000000 | md5sum)
check "1,000,000 lines byte-identical" [ "$out" = "$got" ]
"$GA" run --mode 'email:a b@c' -- true 2>/dev/null; rc=$?
check "bad --mode: usage error 2" [ $rc = 2 ]
out=$("$GA" run --config "$T/conf" --mode off -- sh -c 'echo off'); rc=$?
check "--mode off: plain exec" [ $rc = 0 -a "$out" = off ]
printf '[general]\nspool_dir=/nonexistent/spool\n' >"$T/bad"
out=$("$GA" run --config "$T/bad" --log "$T/x.log" -- sh -c 'echo still; exit 5' 2>/dev/null); rc=$?
check "spool missing: the command's status and output are unchanged" [ $rc = 5 -a "$out" = still ]
# an admin rule whose backtracking is exponential is flagged by rules check
printf '[rule slow]\nclass = code_error\nliteral = abcd\nmatch = ^(\\w+\\s*)+$\n' >"$T/slow.rules"
"$GA" rules check "$T/slow.rules" >"$T/check.out" 2>&1
check "rules check flags a nested unbounded quantifier" grep -q 'repeated without bound' "$T/check.out"
printf '[rule fine]\nclass = code_error\nliteral = abcd\nmatch = ^(?>\\w+\\s*)+$\n' >"$T/fine.rules"
"$GA" rules check "$T/fine.rules" >"$T/check2.out" 2>&1
check "rules check accepts the atomic form" bash -c "! grep -q 'repeated without bound' '$T/check2.out'"
tap_done
