#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/test-notify-e2e.sh GPUALERT_SO GPUALERT_BIN [BASE_PORT]
#
# Notifications people act on, on a real Slurm with a real SMTP server
# (aiosmtpd) and a real HTTP server on loopback:
#   - a job whose loss went NaN and that exited 0 is mailed COMPLETED, nan;
#   - a Python exception's mail shows File "...train.py", line N and the
#     last output lines in its text body;
#   - a mail whose output has a 3,000-character line lays out in headless
#     chromium at 390 px with scrollWidth <= 390;
#   - a job that asked fail:email and succeeded sends nothing (its report
#     is still spooled and recorded in sent.log);
#   - a personal webhook to an allowed host receives the message with
#     Slack's markup escaped; one to another host, and the site webhook
#     when none is configured, are refused at submission.
# SHOTS=DIR keeps phone and desktop screenshots of the exception mail.
# Prints TAP.
set -u
SO=$(realpath "$1"); BIN=$(realpath "$2"); BASE=${3:-18900}
HERE=$(cd "$(dirname "$0")" && pwd)
LABSH=$HERE/lab.sh
HTML=$HERE/../notify/test-html-chromium.py
. "$HERE/lab-test.sh"
lab_test_needs

lab_test_root notify
SMTP_PORT=$((BASE + 10))
HOOK_PORT=$((BASE + 11))
MAIL=$ROOT/mail
. "$HERE/../tap.sh"

export GPUALERT_LAB=$L GPUALERT_LAB_PORT=$BASE
lab_test_start
spool=$L/gaspool
"$LABSH" gpualert "$SO" "$SMTP_PORT" "connect_timeout = 2" "timeout = 10" \
	"[webhook]" "allowed_hosts = 127.0.0.1:$HOOK_PORT"
J=$GPUALERT_LAB_JOBS

# The SMTP sink and a webhook receiver that stores each POST body.
lab_test_sink "$MAIL"
/usr/bin/python3 - "$HOOK_PORT" "$ROOT/hook" >"$ROOT/hook.log" 2>&1 <<'PY' &
import http.server, os, sys
port, d = int(sys.argv[1]), sys.argv[2]
os.makedirs(d, exist_ok=True)
class H(http.server.BaseHTTPRequestHandler):
    n = 0
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        H.n += 1
        with open(os.path.join(d, "%03d.json" % H.n), "wb") as f:
            f.write(body)
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", port), H)
print("listening", flush=True)
s.serve_forever()
PY
hook=$!
lab_test_pids="$lab_test_pids $hook"
for _ in $(seq 1 40); do
	grep -q listening "$ROOT/sink.log" && grep -q listening "$ROOT/hook.log" && break
	sleep 0.25
done

job() {         # $1 = name; the script's body on stdin
	{ echo '#!/bin/bash'; cat; } >"$J/$1.sh"
	chown "$GPUALERT_LAB_USER" "$J/$1.sh"
}
submit() {      # $1 = script name, rest = sbatch options; prints the job id
	local s=$1
	shift
	runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
		sbatch --parsable -D "$J" -o "$J/$s.%j.out" "$@" "$J/$s.sh"
}
wait_job() {
	for _ in $(seq 1 240); do
		squeue -h -j "$1" 2>/dev/null | grep -q . || return 0
		sleep 0.5
	done
	return 1
}
state_of() { scontrol show job "$1" | grep -o 'JobState=[A-Z_]*' ; }
mail_of() {     # the delivered message for job $1
	grep -lE "^X-Gpualert-Job: $1\s*$" "$MAIL"/*.eml 2>/dev/null | head -1
}
body_of() {     # decoded text/plain of a message
	/usr/bin/python3 -c '
import email, sys
from email import policy
m = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=policy.default)
print("Subject:", m["Subject"])
print(m.get_body(("plain",)).get_content())' "$1"
}

cat >"$J/train.py" <<'PY'
import sys


def load(batch):
    return batch["labels"]


for step in range(30):
    print(f"epoch 0 step {step} loss {2.0 - step * 0.01:.3f}", flush=True)
load({"images": []})
PY
chown "$GPUALERT_LAB_USER" "$J/train.py"
job nan <<'EOF2'
#SBATCH --job-name=nan-e2e
/usr/bin/python3 -c '
import math
for i in range(6):
    print(f"step {i} loss {1.0 / (4 - i) if i < 4 else math.nan}", flush=True)
print("training finished", flush=True)'
EOF2
job exc <<EOF2
#SBATCH --job-name=train-resnet
/usr/bin/python3 $J/train.py
EOF2
job long <<'EOF2'
#SBATCH --job-name=long-e2e
/usr/bin/python3 -c '
print("config: " + ("{\"lr\": 0.001, \"name\": \"averyveryverylongname\"}" * 80)[:3000], flush=True)
raise SystemExit("bad config")'
EOF2
job ok <<'EOF2'
#SBATCH --job-name=ok-e2e
echo "all good"
EOF2
job hook <<'EOF2'
echo "step 1 loss 0.5"
exit 3
EOF2

nan=$(submit nan --gpualert=email)
exc=$(submit exc --gpualert=email --time=10 --mem=400M)
long=$(submit long --gpualert=email)
okj=$(submit ok --gpualert=fail:email)
hookj=$(submit hook --job-name='<!channel> & <https://evil.example|click>' \
	--gpualert="webhook:http://127.0.0.1:$HOOK_PORT/hook/alice")

# Refused at submission, with a message, and nothing queued.
bad=$(submit ok --gpualert=webhook:http://198.51.100.7/hook 2>&1); rc=$?
echo "$bad" | head -2 | sed "s/^/# /"
check "webhook to a host not allowed: refused at submission" \
	eval '[ $rc != 0 ] && grep -q "not allowed" <<<"$bad"'
none=$(submit ok --gpualert=webhook 2>&1); rc=$?
echo "$none" | head -2 | sed "s/^/# /"
check "webhook with none configured: refused at submission" \
	eval '[ $rc != 0 ] && grep -q "no webhook configured" <<<"$none"'

for j in $nan $exc $long $okj $hookj; do wait_job "$j"; done
check "NaN job: Slurm says COMPLETED" [ "$(state_of "$nan")" = JobState=COMPLETED ]
check "fail-only job: Slurm says COMPLETED" [ "$(state_of "$okj")" = JobState=COMPLETED ]
for _ in $(seq 1 20); do
	[ "$(ls "$spool/new" | wc -l)" -ge 5 ] && break
	sleep 0.25
done
check "five reports spooled (the fail-only success included)" \
	[ "$(ls "$spool/new" | wc -l)" = 5 ]
"$BIN" send --once --now --config "$L/gpualert.conf" >"$ROOT/send.log" 2>&1
# Both sinks store a message before they answer: once send returns, what
# it delivered is on disk.
check "four messages: three mails and one webhook" \
	eval '[ "$(ls "$MAIL" | grep -c "\.eml$")" = 3 ] && [ "$(ls "$ROOT/hook" | wc -l)" = 1 ]'

m=$(mail_of "$nan")
check "NaN after exit 0: mailed" [ -n "$m" ]
[ -n "$m" ] && body_of "$m" >"$ROOT/nan.txt"
check "NaN after exit 0: subject has COMPLETED and nan ($(grep -m1 ^Subject "$ROOT/nan.txt" 2>/dev/null))" \
	grep -q "^Subject: .*COMPLETED.*nan" "$ROOT/nan.txt"

m=$(mail_of "$exc")
[ -n "$m" ] && body_of "$m" >"$ROOT/exc.txt"
check "exception: File \"...train.py\", line N in the text body" \
	grep -Eq "File \"$J/train.py\", line [0-9]+" "$ROOT/exc.txt"
check "exception: the last output lines in the text body" \
	eval 'grep -q "epoch 0 step 29 loss 1.710" "$ROOT/exc.txt" && grep -q "KeyError" "$ROOT/exc.txt"'
check "exception: the submitted script, not slurmd's copy" \
	eval 'grep -q "Script     $J/exc.sh" "$ROOT/exc.txt" && ! grep -q slurm_script "$ROOT/exc.txt"'
check "exception: elapsed against the time limit" \
	grep -Eq "^  Elapsed .* of 10m00s limit" "$ROOT/exc.txt"
check "exception: memory peak against the request" \
	grep -Eq "^  Memory +peak [0-9]+ MiB of 400 MiB requested" "$ROOT/exc.txt"
if [ -n "${SHOTS:-}" ] && [ -n "$m" ]; then
	/usr/bin/python3 "$HTML" --shots "$SHOTS" "$m"
fi

m=$(mail_of "$long")
if command -v chromium >/dev/null && [ -n "$m" ]; then
	sw=$(/usr/bin/python3 "$HTML" --measure "$m")
	check "3,000-character line: scrollWidth $sw <= 390 at 390 px" \
		[ -n "$sw" ] && [ "$sw" -le 390 ]
else
	nok "3,000-character line: no mail or no chromium to measure it"
fi

check "fail-only success: no message" [ -z "$(mail_of "$okj")" ]
check "fail-only success: recorded as not sent" \
	grep -q "(success, fail-only)" "$spool/sent.log"

h=$(ls "$ROOT"/hook/*.json 2>/dev/null | head -1)
check "personal webhook: received" [ -n "$h" ]
check "personal webhook: Slack markup escaped" \
	/usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["text"]
print("# " + t.splitlines()[0])
sys.exit(0 if "&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;" in t
         and "<!channel>" not in t and "<https" not in t else 1)' "$h"
check "spool empty afterwards" [ -z "$(find "$spool/new" "$spool/out" -mindepth 1)" ]
[ "$tap_failed" = 0 ] || { echo "# send log:"; sed 's/^/#   /' "$ROOT"/send.log; }
tap_done
