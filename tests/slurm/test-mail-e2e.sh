#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/test-mail-e2e.sh GPUALERT_SO GPUALERT_BIN [BASE_PORT]
#
# End to end on a real Slurm with a real SMTP server: a job that asked
# --gpualert=email and failed produces exactly one email with the right
# verdict; while the SMTP server is down the job's exit code, state and
# output are those of the same job run without the plugin, and the mail
# arrives once the server is back.  Prints TAP.
set -u
SO=$(realpath "$1"); BIN=$(realpath "$2"); BASE=${3:-18960}
HERE=$(cd "$(dirname "$0")" && pwd)
LABSH=$HERE/lab.sh
. "$HERE/lab-test.sh"
lab_test_needs

lab_test_root mail
SMTP_PORT=$((BASE + 50))
MAIL=$ROOT/mail
. "$HERE/../tap.sh"

export GPUALERT_LAB=$L GPUALERT_LAB_PORT=$BASE
lab_test_start
spool=$L/gaspool
"$LABSH" gpualert "$SO" "$SMTP_PORT" "connect_timeout = 2" "timeout = 10" \
	"retry_base = 1"
plugin_on()  { echo "optional $L/gpualert.so config=$L/gpualert.conf" >"$L/etc/plugstack.conf.d/gpualert.conf"; }
plugin_off() { rm -f "$L/etc/plugstack.conf.d/gpualert.conf"; }

# A batch job with a successful srun step, then a failure in the batch
# step: two reports, one email.
cat >"$GPUALERT_LAB_JOBS/train.sh" <<'JOB'
#!/bin/bash
#SBATCH --job-name=train-e2e
srun /usr/bin/python3 -c 'print("step 0: data staged", flush=True)'
/usr/bin/python3 -c '
import sys
for i in range(3):
    print(f"epoch 0 step {i} loss {1.5 - i * 0.1:.2f}", flush=True)
labels = {"cat": 0}
print(labels["horse"])
'
JOB
chown "$GPUALERT_LAB_USER" "$GPUALERT_LAB_JOBS/train.sh"

submit() {      # $1 = output name, rest = sbatch options
	local out=$1
	shift
	runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
		sbatch --parsable -D "$GPUALERT_LAB_JOBS" -o "$GPUALERT_LAB_JOBS/$out.out" \
		"$@" "$GPUALERT_LAB_JOBS/train.sh"
}
wait_job() {
	for _ in $(seq 1 240); do
		squeue -h -j "$1" 2>/dev/null | grep -q . || return 0
		sleep 0.5
	done
	return 1
}
state_of() { scontrol show job "$1" | grep -o 'JobState=[A-Z_]* \|ExitCode=[0-9:]*' | tr -d '\n'; }

# 1. Plugin on, SMTP server down.
plugin_on
on=$(submit on --gpualert=email)
check "job with --gpualert=email finished" wait_job "$on"
# 2. The same job without the plugin.
plugin_off
off=$(submit off)
check "the same job without the plugin finished" wait_job "$off"
plugin_on
check "same state and exit code as without the plugin ($(state_of "$on"))" \
	[ "$(state_of "$on")" = "$(state_of "$off")" ]
check "job state is FAILED 1:0" [ "$(state_of "$on")" = "JobState=FAILED ExitCode=1:0" ]
check "byte-identical output with and without the plugin" \
	cmp -s "$GPUALERT_LAB_JOBS/on.out" "$GPUALERT_LAB_JOBS/off.out"
for _ in $(seq 1 20); do
	[ "$(ls "$spool/new" 2>/dev/null | grep -c "^$on\.")" -ge 2 ] && break
	sleep 0.25
done
check "two reports spooled (srun step and batch step)" \
	[ "$(ls "$spool/new" | grep -c "^$on\.")" = 2 ]

"$BIN" send --once --now --config "$L/gpualert.conf" >"$ROOT/send1.log" 2>&1
check "server down: send exits 0" [ $? = 0 ]
check "server down: the message is kept for retry" grep -q "1 kept for retry" "$ROOT/send1.log"
check "server down: nothing dead-lettered" [ -z "$(ls "$spool/dead")" ]

# 3. The server comes back: exactly one email, with the right verdict.
check "the SMTP sink is listening" lab_test_sink "$MAIL"
# The retry is due retry_base (1 s) after the first try: the sender's
# clock (GPUALERT_TEST_NOW, read by tests only) moves past it instead of
# the test sleeping.
GPUALERT_TEST_NOW=$(($(date +%s) + 5)) \
	"$BIN" send --once --now --config "$L/gpualert.conf" >"$ROOT/send2.log" 2>&1
check "server up: delivered" grep -q "1 delivered" "$ROOT/send2.log"
"$BIN" send --once --now --config "$L/gpualert.conf" >"$ROOT/send3.log" 2>&1
# The sink stores a message before it answers 250: once send returns,
# every mail it delivered is on disk.
check "a second pass delivers nothing" grep -q " 0 delivered," "$ROOT/send3.log"
check "exactly one email" [ "$(ls "$MAIL" | grep -c '\.eml$')" = 1 ]
eml=$MAIL/001.eml
check "addressed to the job owner" grep -q "^To: $GPUALERT_LAB_USER@localhost" "$eml"
check "subject names the job and the verdict" \
	grep -q "^Subject: \[gpualert\] FAILED: code_error on .* - job $on (train-e2e)" "$eml"
check "the evidence line is in the body" grep -q "KeyError: 'horse'" "$eml"
check "both steps in one message" grep -q "2 reports" "$ROOT/send2.log"
check "spool empty afterwards" [ -z "$(find "$spool/new" "$spool/out" -mindepth 1)" ]
[ "$tap_failed" = 0 ] || { echo "# send logs:"; sed 's/^/#   /' "$ROOT"/send*.log; }
tap_done
