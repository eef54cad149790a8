#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/test-step-echo.sh GPUALERT_BIN [BASE_PORT]
#
# A Slurm step that srun ended because one task failed is not a person's
# cancel.  Slurm 22.05 prints the same "*** STEP N.0 ON node CANCELLED AT
# ... ***" line for both (no "DUE TO TASK FAILURE"); what tells them apart
# is the order: srun reports the failed task first, ends the step
# (--kill-on-bad-exit), then the cancellation and the other tasks'
# "Terminated" follow.  After scancel the cancellation comes first.
#
# Real batch jobs on a real lab cluster; `gpualert classify` reads each
# job's output file with the job's exit code, as an admin or a user would.
# Prints TAP.
set -u
BIN=$(realpath "$1"); BASE=${2:-18740}
HERE=$(cd "$(dirname "$0")" && pwd)
LABSH=$HERE/lab.sh
. "$HERE/lab-test.sh"
lab_test_needs

lab_test_root echo
. "$HERE/../tap.sh"

export GPUALERT_LAB=$L GPUALERT_LAB_PORT=$BASE
lab_test_start
J=$GPUALERT_LAB_JOBS

# sbatch --wait NAME SCRIPT: run a batch job as the lab user; its exit
# code in $J/NAME.rc, its output in $J/NAME.out.
batch() {
	printf '#!/bin/bash\n%s\n' "$2" >"$J/$1.sh"
	chown "$GPUALERT_LAB_USER" "$J/$1.sh"
	( cd "$J" && runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" \
		sbatch --wait -J "$1" -o "$1.out" "$1.sh" >/dev/null 2>&1 </dev/null
	  echo $? >"$J/$1.rc" ) &
}

# Three tasks on the lab's CPUs (-O); task 1 fails after a second, the
# others would run for 30 s.
batch fail 'srun -n3 -O --kill-on-bad-exit=1 bash -c '\''
	if [ "$SLURM_PROCID" = 1 ]; then sleep 1; echo "task 1: bad config" >&2; exit 1; fi
	sleep 30'\'''
batch raise 'srun -n3 -O --kill-on-bad-exit=1 /usr/bin/python3 -c '\''
import os, time
def schedule(config):
    return config["warmup_steps"]
if os.environ["SLURM_PROCID"] == "1":
    time.sleep(1)
    schedule({"lr": 0.1})
time.sleep(30)'\'''
batch crash 'srun -n3 -O --kill-on-bad-exit=1 bash -c '\''
	if [ "$SLURM_PROCID" = 1 ]; then sleep 1; kill -SEGV $$; fi
	sleep 30'\'''
# The user cancels the step ("scancel JOBID.0") while both tasks run.
batch cancel 'srun -n2 -O sleep 60'
for _ in $(seq 1 80); do
	id=$(squeue -h -n cancel -t R -o %i 2>/dev/null | head -1)
	[ -n "$id" ] && squeue -h -s -j "$id" -o %i 2>/dev/null | grep -q "^$id\.0$" && break
	sleep 0.25
done
sleep 1
runuser -u "$GPUALERT_LAB_USER" -- env SLURM_CONF="$SLURM_CONF" scancel "$id.0"
wait

# classify NAME: "class rule" of the job's output, with its exit code.
classify() {
	"$BIN" classify --json --exit-code "$(cat "$J/$1.rc")" "$J/$1.out" |
		/usr/bin/python3 -c 'import json, sys
d = json.loads(sys.stdin.readline())
print(d["class"], d.get("rule") or "-")'
}

declare -A verdict
for n in fail raise crash cancel; do
	sed "s/^/# $n.out: /" "$J/$n.out"
	verdict[$n]=$(classify "$n")
	diag "$n: exit $(cat "$J/$n.rc"), ${verdict[$n]}"
done
check "srun ended a step after a task failed, as Slurm 22.05 says it" \
	grep -q '_step_signal: Terminating StepId=' "$J/fail.out"
check "... with the cancellation line" grep -q '\*\*\* STEP .* CANCELLED AT' "$J/fail.out"
check "a task's failure, not a cancel: unknown, by srun's task report" \
	[ "${verdict[fail]}" = "unknown launcher.child-failed" ]
check "the failed task's exception decides" \
	[ "${verdict[raise]}" = "code_error python.exception" ]
check "the failed task's crash decides" \
	[ "${verdict[crash]}" = "segfault native.crash" ]
check "scancel of the step: the cancellation came first" \
	grep -q '\*\*\* STEP .* CANCELLED AT' "$J/cancel.out"
check "... and it is cancelled" \
	[ "${verdict[cancel]}" = "cancelled slurm.step-cancelled" ]
tap_done
