#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/test-kernel-evidence.sh GPUALERT_SO GPUALERT_BIN [BASE_PORT]
#
# GPU faults the job's output cannot show, on a real Slurm with a real
# SMTP server.  Jobs print only "CUDA error: unspecified launch failure"
# and exit 1 while the test (root) writes an NVIDIA driver line into the
# kernel log (/dev/kmsg), in the format of NVIDIA's Xid documentation:
#   NVRM: Xid (PCI:0000:3b:00): 48, pid=N, name=python, An uncorrectable
#   double bit error (DBE) has been detected on GPU ...
# A fake /proc/driver/nvidia/gpus directory stands for the driver.
#   - Xid 48 naming the job's pid: mailed as gpu_hw, the line in the body;
#   - Xid 48 naming an unrelated pid: stays cuda_kernel;
#   - Xid 79 with pid='<unknown>' on the step's GPU (device minor 0 in
#     SLURM_JOB_GPUS, mapped through the fake driver directory): gpu_hw;
#   - the admin channel (mail and webhook) gets one message for the node
#     and GPU, even with a second faulty job within the period;
#   - gpualert stats shows the node, flagged for repeated gpu_hw.
# Prints TAP.
set -u
SO=$(realpath "$1"); BIN=$(realpath "$2"); BASE=${3:-18900}
HERE=$(cd "$(dirname "$0")" && pwd)
LABSH=$HERE/lab.sh
. "$HERE/lab-test.sh"
lab_test_needs
[ -w /dev/kmsg ] || { echo "1..0 # SKIP /dev/kmsg is not writable"; exit 77; }

lab_test_root kernel
SMTP_PORT=$((BASE + 20))
HOOK_PORT=$((BASE + 21))
MAIL=$ROOT/mail
. "$HERE/../tap.sh"

# The driver's GPU list (NVIDIA driver README, "Using the /proc File
# System Interface"): one GPU, minor 0, at 0000:3b:00.0.
mkdir -p "$ROOT/gpus/0000:3b:00.0"
printf 'Model:           NVIDIA H100 80GB HBM3\nIRQ:             10\nBus Type:        PCIe\nBus Location:    0000:3b:00.0\nDevice Minor:    0\n' \
	>"$ROOT/gpus/0000:3b:00.0/information"

export GPUALERT_LAB=$L GPUALERT_LAB_PORT=$BASE
lab_test_start
spool=$L/gaspool
"$LABSH" gpualert "$SO" "$SMTP_PORT" "connect_timeout = 2" "timeout = 10" \
	"[general]" "kernel_log = yes" "nvidia_gpus_dir = $ROOT/gpus" \
	"[admin]" "mail = admin@localhost" "period = 3600" \
	"webhook = http://127.0.0.1:$HOOK_PORT/admin"

J=$GPUALERT_LAB_JOBS
cat >"$J/gpujob.sh" <<'JOB'
#!/bin/bash
#SBATCH --job-name=gpujob
# Tell the test our pid, wait until it has written the kernel line, then
# fail the way a CUDA program does when its GPU faults.
echo $$ >"$PWD/pid.$SLURM_JOB_ID"
for _ in $(seq 1 300); do
	[ -e "$PWD/go.$SLURM_JOB_ID" ] && break
	sleep 0.1
done
echo "CUDA error: unspecified launch failure"
exit 1
JOB
chown "$GPUALERT_LAB_USER" "$J/gpujob.sh"
submit() {
	runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
		sbatch --parsable --gpualert=email -D "$J" -o "$J/%j.out" "$@" "$J/gpujob.sh"
}
wait_file() { for _ in $(seq 1 600); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
wait_job() {
	for _ in $(seq 1 240); do
		squeue -h -j "$1" 2>/dev/null | grep -q . || return 0
		sleep 0.5
	done
	return 1
}
# NVIDIA/open-gpu-kernel-modules issue 1151 shows this line; the
# "pid='<unknown>', name=<unknown>" form is the one of leptonai/gpud PR 46.
xid79() {
	echo "<3>NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." >/dev/kmsg
}
xid48() {	# $1 = pid named by the line
	echo "<3>NVRM: Xid (PCI:0000:3b:00): 48, pid=$1, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0." >/dev/kmsg
}

# Another process, not the job's: the "other job" whose pid a line names.
sleep 600 &
other=$!
lab_test_pids="$lab_test_pids $other"

# Each job: once it runs (the lab may run two at a time), the kernel line,
# then the job goes on to fail.
# The lab has no GRES: the GPU list of the last job comes from its
# environment (what Slurm sets with --gres=gpu), the only way to give it
# one here.
hw=$(submit); app=$(submit); hw2=$(submit); dev=$(submit --export=ALL,SLURM_JOB_GPUS=0)
for j in "$hw" "$app" "$hw2" "$dev"; do
	check "job $j started" wait_file "$J/pid.$j"
	case $j in
	"$app") xid48 "$other" ;;
	"$dev") xid79 ;;
	*) xid48 "$(cat "$J/pid.$j")" ;;
	esac
	touch "$J/go.$j"
done
pid_hw=$(cat "$J/pid.$hw")
for j in "$hw" "$app" "$hw2" "$dev"; do
	check "job $j finished" wait_job "$j"
	check "job $j: FAILED 1:0, as without gpualert" \
		[ "$(scontrol show job "$j" | grep -o 'JobState=[A-Z_]* \|ExitCode=[0-9:]*' | tr -d '\n')" = "JobState=FAILED ExitCode=1:0" ]
	check "job $j: its output is only the CUDA error" \
		[ "$(cat "$J/$j.out")" = "CUDA error: unspecified launch failure" ]
done
for _ in $(seq 1 20); do
	[ "$(ls "$spool/new" 2>/dev/null | wc -l)" -ge 4 ] && break
	sleep 0.25
done
check "four reports spooled" [ "$(ls "$spool/new" | wc -l)" -ge 4 ]

lab_test_sink "$MAIL"
# The admin webhook: an HTTP server on loopback that stores each POST body.
/usr/bin/python3 - "$HOOK_PORT" "$ROOT/hook" >"$ROOT/hook.log" 2>&1 <<'PY' &
import http.server, os, sys
port, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        n = len(os.listdir(out)) + 1
        with open(os.path.join(out, "%03d.json" % n), "wb") as f:
            f.write(body)
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", port), H)
print("listening", flush=True)
s.serve_forever()
PY
hook=$!
lab_test_pids="$lab_test_pids $hook"
for _ in $(seq 1 40); do grep -q listening "$ROOT/hook.log" && break; sleep 0.25; done
"$BIN" send --once --now --config "$L/gpualert.conf" >"$ROOT/send.log" 2>&1
check "send: 4 delivered" grep -q "4 delivered" "$ROOT/send.log"
# Both sinks store a message before they answer: no wait needed.
# The text part of each message, decoded (quoted-printable), as FILE.txt.
for m in "$MAIL"/*.eml; do
	/usr/bin/python3 -c '
import email, sys
msg = email.message_from_binary_file(open(sys.argv[1], "rb"))
for part in msg.walk():
    if part.get_content_type() == "text/plain":
        sys.stdout.write(part.get_payload(decode=True).decode("utf-8", "replace"))
        break' "$m" >"$m.txt"
done
# The subject names the job ("job N (gpujob)") and the verdict ("FAILED:
# CLASS"), in an order the mail renderer decides.
mail_for() { grep -l "^Subject: \[gpualert\] .*job $1 (gpujob)" "$MAIL"/*.eml 2>/dev/null | head -1; }
class_is() { grep -q "^Subject: \[gpualert\] .*FAILED: $2\b" "${1:-/dev/null}"; }
m_hw=$(mail_for "$hw"); m_app=$(mail_for "$app"); m_hw2=$(mail_for "$hw2"); m_dev=$(mail_for "$dev")
check "Xid 48 naming the job's pid: mailed as gpu_hw" \
	class_is "$m_hw" gpu_hw
check "the kernel line is in the body, marked as the node's kernel log" \
	grep -q "node kernel log: NVRM: Xid (PCI:0000:3b:00): 48, pid=$pid_hw, name=python" "${m_hw:-/dev/null}.txt"
check "Xid 48 naming an unrelated pid: stays cuda_kernel" \
	class_is "$m_app" cuda_kernel
check "and the unrelated line is not in its mail" \
	bash -c "[ -s '${m_app:-/dev/null}.txt' ] && ! grep -q 'Xid' '${m_app:-/dev/null}.txt'"
check "the second faulty job is gpu_hw too" \
	class_is "$m_hw2" gpu_hw
check "Xid 79 without a pid on the step's GPU: gpu_hw" \
	class_is "$m_dev" gpu_hw
check "its mail shows the line and the GPU" \
	bash -c "grep -q 'node kernel log: NVRM: Xid (PCI:0000:3b:00): 79' '${m_dev:-/dev/null}.txt' && grep -q 'for GPU 0000:3b:00' '${m_dev:-/dev/null}.txt'"
check "the jobs without that GPU did not get the Xid 79 line" \
	bash -c "! grep -q 'Xid (PCI:0000:3b:00): 79' '${m_hw:-/dev/null}.txt' '${m_app:-/dev/null}.txt'"
admin=$(grep -l "^To: admin@localhost" "$MAIL"/*.eml 2>/dev/null)
check "the admin channel received exactly one message" [ "$(echo "$admin" | grep -c .)" = 1 ]
admin=${admin:-/dev/null}
check "it names the node, the GPU, the Xid and the action" \
	bash -c "grep -q '^Node: *${GPUALERT_LAB_NODE:-ga${BASE}n1}' '$admin' && grep -q '^GPU: *0000:3b:00' '$admin' && grep -q '^Fault: *Xid 48' '$admin' && grep -q '^Action: *drain' '$admin'"
check "it names the job affected" grep -q "^Jobs: *$hw" "$admin"
check "the admin webhook received one POST" [ "$(ls "$ROOT/hook" 2>/dev/null | wc -l)" = 1 ]
check "a JSON text naming the node, the GPU and the Xid" \
	/usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["text"]
sys.exit(0 if all(w in t for w in (sys.argv[2], "0000:3b:00", "Xid 48")) else 1)' \
	"$ROOT/hook/001.json" "ga${BASE}n1"
"$BIN" send --once --now --config "$L/gpualert.conf" >>"$ROOT/send.log" 2>&1
check "still one admin message within the period" \
	[ "$(grep -l "^To: admin@localhost" "$MAIL"/*.eml | wc -l)" = 1 ]
check "and one webhook POST" [ "$(ls "$ROOT/hook" | wc -l)" = 1 ]
check "the second job waits for the next period in admin.state" \
	grep -q "$hw2" "$spool/admin.state"

"$BIN" stats --spool "$spool" --prometheus "$ROOT/gpualert.prom" >"$ROOT/stats.txt" 2>&1
node=ga${BASE}n1
check "gpualert stats shows the node with its gpu_hw failures" \
	grep -q "^  $node .*4  (gpu_hw 3)  <-- REPEATED gpu_hw" "$ROOT/stats.txt"
check "and the GPU" grep -q "^  $node 0000:3b:00 .*(gpu_hw 3)" "$ROOT/stats.txt"
check "Prometheus textfile: gpu_hw by node" \
	grep -q "^gpualert_gpu_hw{node=\"$node\"} 3$" "$ROOT/gpualert.prom"
if [ "$tap_failed" != 0 ]; then
	echo "# send log:"; sed 's/^/#   /' "$ROOT/send.log"
	echo "# stats:"; sed 's/^/#   /' "$ROOT/stats.txt"
	echo "# slurmd log (gpualert):"; grep -h gpualert "$L"/log/slurmd*.log | tail -20 | sed 's/^/#   /'
fi
tap_done
