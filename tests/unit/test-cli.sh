#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/unit/test-cli.sh GPUALERT SPOOL_PUT SOURCE_ROOT
# The command as a Unix user meets it: named paths that do not exist are
# errors, --set errors are usage errors that name the option, every
# message starts with "gpualert:", an empty owner_domain is refused;
# `spool list`, `spool requeue`, `send --render` and `send --test` against
# a real SMTP server on loopback (aiosmtpd).  Prints TAP.
set -u
GA=$1; PUT=$2; SRC=$3
. "$(dirname "$0")/../tap.sh"
tmp=$(mktemp -d); sink=
trap '[ -z "$sink" ] || kill "$sink" 2>/dev/null; rm -rf "$tmp"' EXIT
# expect RC DESCRIPTION CMD...: exit status RC, every stderr line prefixed
# (with USAGE=1: the first; the usage text follows it).
expect() {
	local want=$1 what=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$? lines=
	[ -n "${USAGE:-}" ] && lines=1
	if [ "$rc" = "$want" ] && [ -s "$tmp/err" -o "$want" = 0 ] &&
		! head -n "${lines:-100000}" "$tmp/err" | grep -qv '^gpualert: '; then
		ok "$what (exit $rc)"
	else
		nok "$what: exit $rc, want $want; stderr: $(head -3 "$tmp/err")"
	fi
}
printf '[recipients]\nowner_domain = example.org\n[spool]\nquiet_period = 0\n[mail]\nconnect_timeout = 2\nretry_base = 1\n' >"$tmp/ga.conf"
export GPUALERT_CONFIG=$tmp/ga.conf
echo "log line" >"$tmp/job.log"

expect 1 "classify --rules /nonexistent" "$GA" classify --rules /nonexistent "$tmp/job.log"
expect 1 "rules check /nonexistent" "$GA" rules check /nonexistent
expect 1 "classify /nonexistent" "$GA" classify /nonexistent
expect 2 "run --config /nonexistent" "$GA" run --config /nonexistent -- true
expect 2 "run --rules /nonexistent" "$GA" run --rules /nonexistent -- true
expect 1 "send --config /nonexistent" "$GA" send --once --config /nonexistent
expect 2 "send --set mail.nope=1" "$GA" send --once --spool "$tmp/sp" --set mail.nope=1
grep -q "^gpualert: send: --set: error: unknown setting 'mail.nope'" "$tmp/err" &&
	ok "... blames the option" || nok "... message: $(cat "$tmp/err")"
expect 2 "send --set mail.tls=bogus" "$GA" send --once --spool "$tmp/sp" --set mail.tls=bogus
USAGE=1 expect 2 "an unknown option" "$GA" classify --bogus
USAGE=1 expect 2 "an unknown option of rules" "$GA" rules list --bogus
USAGE=1 expect 2 "an unknown option of send" "$GA" send --bogus
expect 1 "send with an empty owner_domain" "$GA" send --once --spool "$tmp/sp" --set recipients.owner_domain=
grep -q "owner_domain is empty: set it in" "$tmp/err" &&
	ok "... says what to set" || nok "... message: $(cat "$tmp/err")"

# The spool tools.
"$PUT" "$tmp/sp" "$SRC/tests/golden/mail/single.json" >/dev/null 2>&1
expect 0 "spool list" "$GA" spool list --spool "$tmp/sp"
grep -q '^new   1234 .*1 report' "$tmp/out" && ok "... shows the waiting job" || nok "... output: $(cat "$tmp/out")"
expect 0 "send --render 1234" "$GA" send --render 1234 --spool "$tmp/sp"
cp "$tmp/out" "$tmp/render.eml"
grep -q '^Subject: .*FAILED: cuda_oom on node07 - job 1234 (train)' "$tmp/render.eml" &&
	ok "... prints the message" || nok "... output: $(head -5 "$tmp/render.eml" | tr '\n' ' ')"
[ -z "$(ls "$tmp/sp/out")" ] && [ -n "$(ls "$tmp/sp/new")" ] &&
	ok "... and leaves the spool alone" || nok "... the spool changed"
expect 1 "send --render of a job not in the spool" "$GA" send --render 99 --spool "$tmp/sp"
expect 2 "send --render with a bad job id" "$GA" send --render ../x --spool "$tmp/sp"

if ! /usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null; then
	echo "1..$tap_n # SKIP the rest: python3-aiosmtpd not installed"
	[ "$tap_failed" = 0 ]; exit
fi
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=smtp://127.0.0.1:$port
# Server down: the claim fails; make it a dead letter as a 5xx would.
expect 0 "send --once, server down" "$GA" send --once --now --spool "$tmp/sp" --set mail.smtp_url=$url
claim=$(ls "$tmp/sp/out")
mv "$tmp/sp/out/$claim" "$tmp/sp/dead/" && echo "550 no such user" >"$tmp/sp/dead/$claim/reason"
expect 0 "spool list with a dead letter" "$GA" spool list --spool "$tmp/sp"
grep -q "^dead  $claim  attempts 1: 550 no such user" "$tmp/out" && ok "... shows it with its reason" ||
	nok "... output: $(cat "$tmp/out")"
expect 1 "spool requeue of an unknown claim" "$GA" spool requeue 1234.0000 --spool "$tmp/sp"
expect 2 "spool requeue of a bad name" "$GA" spool requeue ../x --spool "$tmp/sp"
expect 0 "spool requeue $claim" "$GA" spool requeue "$claim" --spool "$tmp/sp"
[ -d "$tmp/sp/out/$claim" ] && [ ! -e "$tmp/sp/out/$claim/reason" ] &&
	grep -q '^attempts=0' "$tmp/sp/out/$claim/state" && ok "... back in out/, attempts reset" ||
	nok "... not requeued: $(ls -R "$tmp/sp" | head)"
/usr/bin/python3 "$SRC/tests/demo/mailsink.py" "$port" "$tmp/mail" >"$tmp/sink.log" 2>&1 &
sink=$!
for _ in $(seq 1 40); do grep -q listening "$tmp/sink.log" && break; sleep 0.25; done
expect 0 "send --test through the relay" "$GA" send --test bob@example.org --set mail.smtp_url=$url
grep -q '^To: bob@example.org' "$tmp/mail/001.eml" 2>/dev/null && ok "... the server got it" || nok "... no test mail"
expect 2 "send --test with a bad address" "$GA" send --test 'a b@c' --set mail.smtp_url=$url
expect 0 "the requeued letter is delivered" "$GA" send --once --now --spool "$tmp/sp" --set mail.smtp_url=$url
grep -q "1 delivered" "$tmp/err" && ok "... 1 delivered" || nok "... $(cat "$tmp/err")"
want=$(tr -d '\r' <"$tmp/render.eml" | grep "^Message-ID:")
grep -qx "$want" <(tr -d '\r' <"$tmp/mail/002.eml") &&
	ok "--render gave the Message-ID that was sent" || nok "Message-ID: rendered '$want'"
tap_done
