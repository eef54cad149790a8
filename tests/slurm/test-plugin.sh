#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/test-plugin.sh GPUALERT_SO GPUALERT_BIN [BASE_PORT]
#
# Integration test of the SPANK plugin against real Slurm: two throwaway
# two-node labs run side by side, identical except that lab "on" loads
# gpualert.so and lab "off" does not.  The same jobs (one per failure mode
# a CPU machine can produce) are submitted to both in the same order, so
# job ids match; then for every job we assert:
#   - same exit code and state (scontrol show job, sacct -c / jobcomp);
#   - byte-identical output (after mapping the labs' node names);
#   - on, batch (the output is a file): no file of gpualert's anywhere in
#     the working directory, and the report's record names the .out;
#   - the same for an srun step whose -o name is per task (%t: slurmstepd
#     opens the file, so the task's stdout is a file; a plain -o name is
#     written by srun itself and the task's stdout stays a pipe);
#   - on, srun (a pipe): a durable log in gpualert-<job>/, header first,
#     holding the task's bytes;
#   - on: the spooled report's verdict.
# Among the jobs are the ones that try hardest to tell plugin on from off:
# /dev/stdout reopened, [ -f /dev/stdout ], O_NONBLOCK on stdout, a script
# appending to its own .out by name, ENOSPC on the .out, and a job that
# kills every gpualert process of its job it can see (only its job's: the
# other jobs of the test run as the same user at the same time).
# Needs root, Debian's slurm packages, cgroup v1.  Prints TAP.
set -u
SO=$(realpath "$1"); BIN=$(realpath "$2"); BASE=${3:-18840}
HERE=$(cd "$(dirname "$0")" && pwd)
LABSH=$HERE/lab.sh
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 77; }
for b in slurmctld slurmd srun; do
    command -v $b >/dev/null || { echo "1..0 # SKIP $b not installed"; exit 77; }
done
[ -e /sys/fs/cgroup/memory/cgroup.procs ] || { echo "1..0 # SKIP no cgroup v1 memory controller"; exit 77; }

ROOT=$(mktemp -d /tmp/ga-it.XXXXXX)
chmod 755 "$ROOT"
declare -A PORT=([on]=$BASE [off]=$((BASE + 10)))
declare -A TINY=([on]=$ROOT/on-tiny [off]=$ROOT/off-tiny)
declare -A FULL=([on]=$ROOT/on-full [off]=$ROOT/off-full)
cleanup() {
    for s in on off; do
        GPUALERT_LAB=$ROOT/$s "$LABSH" stop >/dev/null 2>&1
        mountpoint -q "$ROOT/$s-tiny" && umount "$ROOT/$s-tiny"
        mountpoint -q "$ROOT/$s-full" && umount "$ROOT/$s-full"
    done
    [ -n "${KEEP:-}" ] || rm -rf "$ROOT"
}
trap cleanup EXIT
n=0; fails=0
ok()   { n=$((n+1)); echo "ok $n - $*"; }
nok()  { n=$((n+1)); fails=$((fails+1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
# same_output ON OFF: byte-identical after norm; otherwise the difference
# is shown as TAP comments, for the record of a failed run
same_output() {
    cmp -s <(norm "$1") <(norm "$2") && return 0
    diff <(norm "$1") <(norm "$2") | head -20 | sed 's/^/#   /'
    return 1
}

start_lab() {   # $1 = on|off
    local s=$1 L=$ROOT/$1
    GPUALERT_LAB=$L GPUALERT_LAB_PORT=${PORT[$s]} GPUALERT_LAB_NODES=2 GPUALERT_LAB_CGROUP=1 \
        GPUALERT_LAB_CPUS=12 GPUALERT_LAB_MEM=6000 "$LABSH" start >"$ROOT/$s-start.log" 2>&1 \
        || { echo "# lab $s failed to start:"; sed 's/^/#   /' "$ROOT/$s-start.log"; return 1; }
    mkdir -p "${TINY[$s]}" && mount -t tmpfs -o size=1m,mode=1777 tmpfs "${TINY[$s]}"
    # the .out of job "enospc" lives on a file system that fills up
    mkdir -p "${FULL[$s]}" && mount -t tmpfs -o size=256k,mode=1777 tmpfs "${FULL[$s]}"
    if [ "$s" = on ]; then
        install -d -m 0700 "$L/gaspool"
        install -m 0755 "$SO" "$L/gpualert.so"      # a new inode, never in place
        # keep = all: the logs of successful steps stay, to be checked
        printf '[general]\nspool_dir=%s/gaspool\ndefault_mode=log\ndrain_timeout_ms=5000\n[capture]\nkeep=all\n[recipients]\nowner_domain=localhost\n' "$L" >"$L/gpualert.conf"
        chmod 644 "$L/gpualert.conf"
        echo "optional $L/gpualert.so config=$L/gpualert.conf" >"$L/etc/plugstack.conf.d/gpualert.conf"
    fi
}

echo "# labs under $ROOT"
start_lab on & start_lab off & wait
for s in on off; do [ -s "$ROOT/$s/etc/lab.env" ] || { echo "1..0 # SKIP lab $s did not start"; exit 1; }; done

# ------------------------------------------------------------------ the jobs
# name | kind (batch|srun) | extra options | command | expected class
JOBS=$ROOT/jobs.tsv
cat >"$JOBS" <<'EOT'
success	batch	-N1	echo starting; seq 1 1000; echo done	success
pyexc	batch	-N1	python3 -c 'import sys; print("epoch 1"); sys.stdout.flush(); raise ValueError("bad shape (3, 4)")'	code_error
import	batch	-N1	python3 -c 'import torch_not_installed_here'	import_error
missing	batch	-N1	python3 -c 'open("/nonexistent/dataset/train.csv")'	io_error
perm	batch	-N1	python3 -c 'open("/etc/shadow")'	io_error
diskfull	batch	-N1	echo writing checkpoint; dd if=/dev/zero of=@TINY@/ckpt.bin bs=64k count=100 2>&1; exit 1	disk_full
hostoom	batch	-N1 --mem=100M	echo allocating; python3 -c 'x = b"x" * 400000000; print(len(x))'	host_oom
segv	batch	-N1	python3 -c 'import ctypes; print("about to crash", flush=True); ctypes.string_at(0)'	segfault
abort	batch	-N1	python3 -c 'import os; print("aborting", flush=True); os.abort()'	segfault
nan	batch	-N1	python3 -c 'import math; [print(f"step {i} loss {1.0/(5-i) if i<5 else math.nan}", flush=True) for i in range(7)]; raise FloatingPointError("Loss is nan, stopping training")'	nan
bigbatch	batch	-N1	seq 1 1000000; echo LAST-LINE	success
timelimit	batch	-N1 --time=1	echo sleeping; sleep 300	time_limit
scancel	batch	-N1	echo waiting; sleep 300	cancelled
devstdout	batch	-N1	echo first; echo second > /dev/stdout; [ -f /dev/stdout ] && echo is-a-file; echo last	success
nonblock	batch	-N1	python3 -c 'import os, fcntl, sys; fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_NONBLOCK); [sys.stdout.write(f"{i}\n") for i in range(3000000)]'; echo "rc=$?"	success
appendself	batch	-N1	for i in 1 2 3; do echo "stdout $i"; echo "by name $i" >> appendself.out; done	success
enospc	batch	-N1	head -c 1000000 /dev/zero | tr '\0' x; echo; echo "rc=$?" >&2; exit 42	*
killhelper	batch	-N1	echo before; for p in $(pgrep -u "$(id -u)" -x gpualert-helper); do grep -qs "job_$SLURM_JOB_ID/" /proc/$p/cgroup && kill -KILL $p; done; sleep 1; seq 1 1000; echo after	success
execfail	srun	-N1	/nonexistent/train.bin --epochs 3	io_error
bigsrun	srun	-N1 -n2	bash -c 'seq 1 1000000; echo LAST-LINE-$SLURM_PROCID'	success
bgchild	srun	-N1	bash -c 'sleep 30 & echo bye'	success
srunfile	srunfile	-N1 -o srunfile.%t.out	python3 -c 'print("epoch 1", flush=True); raise KeyError("label_smoothing")'	code_error
twonode	srun	-N2 -n2	bash -c 'if [ $SLURM_PROCID = 1 ]; then echo "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"; exit 1; fi; sleep 4; echo "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7) ran for 600000 milliseconds"; exit 1'	cuda_oom
EOT

out_of() {  # $1=lab $2=name: where a batch job's .out goes
    if [ "$2" = enospc ]; then echo "${FULL[$1]}/enospc.out"; else echo "$ROOT/$1/jobs/$2.out"; fi
}
submit() {  # $1=lab $2=name $3=kind $4=opts $5=cmd
    local s=$1 name=$2 kind=$3 opts=$4 cmd=${5//@TINY@/${TINY[$1]}} L=$ROOT/$1
    local J=$L/jobs
    . "$L/etc/lab.env"
    export SLURM_CONF=$L/etc/slurm.conf
    if [ "$kind" = batch ]; then
        printf '#!/bin/bash\n%s\n' "$cmd" >"$J/$name.sh"; chmod 755 "$J/$name.sh"
        runuser -u labuser -- sbatch --parsable -D "$J" -J "$name" -o "$(out_of $s $name)" \
            $opts "$J/$name.sh" >"$J/$name.jobid" 2>"$J/$name.submit-err"
    else
        ( cd "$J" && t0=$(date +%s.%N)
          # </dev/null: srun forwards its stdin to the tasks, and would
          # otherwise eat the job list this loop is reading.
          eval "runuser -u labuser -- srun -J $name $opts $cmd" >"$J/$name.out" 2>"$J/$name.err" </dev/null
          echo $? >"$J/$name.rc"; echo "$(date +%s.%N) - $t0" | bc >"$J/$name.secs" ) &
        sleep 0.3
    fi
}

T0=$(date +%s)
while IFS=$'\t' read -r name kind opts cmd class; do
    for s in on off; do submit $s "$name" "$kind" "$opts" "$cmd"; done
done <"$JOBS"

# wait_grep TEXT FILE: until FILE holds TEXT, at most 120 s
wait_grep() {
    local i
    for i in $(seq 1 1200); do grep -qs "$1" "$2" && return 0; sleep 0.1; done
    return 1
}

# scancel once the job runs its script (it printed "waiting")
for s in on off; do
    wait_grep waiting "$(out_of $s scancel)" || echo "# $s: scancel job never started"
    SLURM_CONF=$ROOT/$s/etc/slurm.conf scancel "$(cat $ROOT/$s/jobs/scancel.jobid)"
done
wait    # the srun jobs

# wait for every batch job to finish (time limit: ~90 s)
for s in on off; do
    export SLURM_CONF=$ROOT/$s/etc/slurm.conf
    for i in $(seq 1 300); do
        [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
        sleep 1
    done
done
echo "# all jobs finished after $(( $(date +%s) - T0 )) s"

# preemption: one low job, then a high one that needs the node's CPUs
for s in on off; do
    export SLURM_CONF=$ROOT/$s/etc/slurm.conf; J=$ROOT/$s/jobs
    printf '#!/bin/bash\necho low priority work; sleep 300\n' >"$J/preempt.sh"; chmod 755 "$J/preempt.sh"
    runuser -u labuser -- sbatch --parsable -D "$J" -J preempt -o "$J/preempt.out" -p low \
        -w "ga${PORT[$s]}n1" -c 12 "$J/preempt.sh" >"$J/preempt.jobid"
done
# the high job preempts only a low job that holds the CPUs: it runs
for s in on off; do
    wait_grep 'low priority work' "$ROOT/$s/jobs/preempt.out" || echo "# $s: low job never started"
done
for s in on off; do
    export SLURM_CONF=$ROOT/$s/etc/slurm.conf; J=$ROOT/$s/jobs
    runuser -u labuser -- sbatch --parsable -D "$J" -J preemptor -o "$J/preemptor.out" -p high \
        -w "ga${PORT[$s]}n1" -c 12 --wrap 'echo high' >"$J/preemptor.jobid"
done
for s in on off; do
    export SLURM_CONF=$ROOT/$s/etc/slurm.conf
    for i in $(seq 1 60); do [ -z "$(squeue -h -o %i)" ] && break; sleep 1; done
done
printf 'preempt\tbatch\t-N1\t-\tcancelled\n' >>"$JOBS"
echo "# including preemption: $(( $(date +%s) - T0 )) s"

# ------------------------------------------------------------------ checks
# srun returns before the report process that slurm_spank_exit forks has
# written the report
report_of() {   # job name -> report path, waiting up to 10 s
    local r i
    for i in $(seq 1 100); do
        r=$(grep -l "\"job_name\":\"$1\"" $ROOT/on/gaspool/new/*.json 2>/dev/null | head -1)
        [ -n "$r" ] && { echo "$r"; return 0; }
        sleep 0.1
    done
    echo /dev/null
}
job_field() {  # lab jobid field
    SLURM_CONF=$ROOT/$1/etc/slurm.conf scontrol show job "$2" 2>/dev/null |
        tr ' ' '\n' | sed -n "s/^$3=//p" | head -1
}
jobcomp() {    # lab jobid -> "STATE EXIT"
    SLURM_CONF=$ROOT/$1/etc/slurm.conf sacct -c -n -j "$2" -o State,ExitCode 2>/dev/null | awk 'NR==1{print $1, $2}'
}
# what legitimately differs between the two labs: node names (and which
# of the two nodes the scheduler picked for a one-node job), lab paths,
# pids (right-aligned: a pid one digit longer shifts the line) and job ids
# in bash's and slurmstepd's messages (each lab numbers its own jobs),
# timestamps, dd's speed, and srun's own
# scheduling chatter (how long a step waited for CPUs depends on the load)
norm() { sed -e '/^srun: \(Job step creation temporarily disabled\|Step created for\|job [0-9]* queued and waiting\|job [0-9]* has been allocated\)/d' \
             -e "s/ga${PORT[on]}n[0-9]*/gaNODE/g; s/ga${PORT[off]}n[0-9]*/gaNODE/g" \
             -e 's/AT [0-9T:-]*/AT <time>/g' \
             -e "s#$ROOT/on#LAB#g; s#$ROOT/off#LAB#g" \
             -e 's/^\(.*: line [0-9]*:\) *[0-9]* /\1 PID /' \
             -e 's/StepId=[0-9]*/StepId=ID/g' \
             -e 's#/job[0-9]*/slurm_script#/jobID/slurm_script#' \
             -e 's/copied, .*/copied, <speed>/' "$1"; }

while IFS=$'\t' read -r name kind opts cmd class; do
    ON=$ROOT/on/jobs OFF=$ROOT/off/jobs
    if [ "$kind" = batch ]; then
        jon=$(cat $ON/$name.jobid) joff=$(cat $OFF/$name.jobid)
        son="$(job_field on $jon JobState) $(job_field on $jon ExitCode)"
        soff="$(job_field off $joff JobState) $(job_field off $joff ExitCode)"
        check "$name: state and exit code unchanged (on: $son, off: $soff)" [ "$son" = "$soff" ]
        con=$(jobcomp on $jon) coff=$(jobcomp off $joff)
        check "$name: sacct -c unchanged (on: $con, off: $coff)" [ "$con" = "$coff" -a -n "$con" ]
        step=batch; jid=$jon
    else
        check "$name: srun exit status unchanged (on: $(cat $ON/$name.rc), off: $(cat $OFF/$name.rc))" \
            [ "$(cat $ON/$name.rc)" = "$(cat $OFF/$name.rc)" ]
        step=0
        jid=$(SLURM_CONF=$ROOT/on/etc/slurm.conf sacct -c -n -o JobID,JobName 2>/dev/null | awk -v n="$name" '$2==n{print $1}' | tail -1)
        [ -n "$jid" ] || jid=$(grep -l "\"job_name\":\"$( [ $name = execfail ] && echo train.bin || echo bash)\"" $ROOT/on/gaspool/new/*.json 2>/dev/null | head -1 | xargs -r basename | cut -d. -f1)
        check "$name: srun stderr unchanged" cmp -s <(norm $ON/$name.err | sort) <(norm $OFF/$name.err | sort)
    fi
    if [ "$name" = bigsrun ]; then
        # two tasks through srun: line order between tasks is not defined
        check "$name: srun stdout unchanged (as a multiset of lines)" \
            cmp -s <(sort $ON/$name.out) <(sort $OFF/$name.out)
        check "$name: 2,000,002 lines, both last lines" \
            [ "$(wc -l <$ON/$name.out)" = 2000002 -a "$(grep -c LAST-LINE- $ON/$name.out)" = 2 ]
    elif [ "$kind" = batch ]; then
        oon=$(out_of on $name) ooff=$(out_of off $name)
        check "$name: output byte-identical" same_output $oon $ooff
    elif [ "$kind" = srunfile ]; then
        check "$name: the task's file byte-identical" same_output $ON/$name.0.out $OFF/$name.0.out
    else
        check "$name: output byte-identical" same_output $ON/$name.out $OFF/$name.out
    fi
    logs=$(ls $ON/gpualert-$jid/*.$step.*.log 2>/dev/null)
    if [ "$kind" != srun ]; then
        # the .out is the record: gpualert wrote nothing next to it
        check "$name: no file of gpualert's in the working directory" \
            [ -z "$(ls -d $ON/gpualert-$jid $ON/gpualert-$jid.* 2>/dev/null)" ]
    else
        # durable logs of this step: header first, then the task's bytes
        check "$name: durable log(s) present for job $jid step $step" [ -n "$logs" ]
    fi
    for log in $logs; do
        check "$name: $(basename $log) starts with its header" \
            bash -c "head -1 '$log' | grep -q '^# gpualert ' && grep -q '^# ---- output ----\$' '$log'"
        check "$name: $(basename $log) owned by labuser, mode 600" \
            [ "$(stat -c %U:%a $log)" = labuser:600 ]
    done
    if [ "$name" = bigsrun ]; then
        for log in $logs; do
            check "$name: $(basename $log) has all 1,000,001 lines" \
                [ "$(sed '1,/^# ---- output ----$/d' $log | wc -l)" = 1000001 ]
        done
    fi
    reps=$(ls $ROOT/on/gaspool/new/$jid.$step.*.json 2>/dev/null)
    if [ -z "$reps" ]; then nok "$name: report spooled"; continue; fi
    if [ "$kind" != srun ]; then
        rec=$(out_of on $name); [ "$kind" = srunfile ] && rec=$ON/$name.0.out
        check "$name: the report's record is the .out, its whole byte range" python3 -c '
import json, os, sys
r = json.load(open(sys.argv[1])); t = r["tasks"][0]; rec = t.get("record", {})
st = os.stat(sys.argv[2])
sys.exit(not (rec.get("kind") == "file" and t["log_path"] == sys.argv[2] and
              rec["ino"] == st.st_ino and rec["start"] == 0 and rec["end"] <= st.st_size))' \
            $reps "$rec"
    fi
    # One report per step and node (each node's slurmstepd writes its
    # own); across nodes the root cause is the failing task that ended
    # first, as ga_report_choose_root does within one report.
    got=$(python3 - $reps <<'EOP'
import json, sys
best = None
for f in sys.argv[1:]:
    r = json.load(open(f))
    if r["root_task"] is not None and r["root_task"] >= 0:
        t = r["tasks"][r["root_task"]]
        key = (t["end_time"], t["task_id"])
        if best is None or key < best[0]:
            best = (key, r["class"], t["task_id"])
if best is None:
    best = (None, json.load(open(sys.argv[1]))["class"], -1)
print(best[1], best[2])
EOP
)
    root_rank=${got#* }; got=${got% *}
    if [ "$class" = '*' ]; then
        check "$name: verdict is a failure ($got)" [ "$got" != success ]
    else
        check "$name: verdict $class (got $got)" [ "$got" = "$class" ]
    fi
    case $name in timelimit|scancel|hostoom|preempt)
        # SIGKILLed by Slurm: the verdict's tail still holds the last lines
        check "$name: the report's tail holds the job's last output" python3 -c '
import json, sys
want = {"timelimit": "sleeping", "scancel": "waiting", "hostoom": "allocating", "preempt": "low priority work"}[sys.argv[1]]
tails = [t.get("tail", "") for f in sys.argv[2:] for t in json.load(open(f))["tasks"]]
sys.exit(not any(want in t for t in tails))' $name $reps ;;
    esac
    if [ "$name" = twonode ]; then
        check "$name: root cause is rank 1, which failed first (got rank $root_rank)" [ "$root_rank" = 1 ]
        check "$name: one report per node" [ "$(ls $ROOT/on/gaspool/new/$jid.$step.*.json | wc -l)" = 2 ]
    fi
done <"$JOBS"

bon=$(cat $ROOT/on/jobs/bgchild.secs) boff=$(cat $ROOT/off/jobs/bgchild.secs)
check "bgchild: a background child holding stdout does not stall the step (on ${bon}s, off ${boff}s)" \
    [ "$(echo "$bon < $boff + 4" | bc)" = 1 ]   # a stall would be the 30 s sleep, or the 5 s drain timeout
# the option is rejected at submission, with a message
export SLURM_CONF=$ROOT/on/etc/slurm.conf
out=$(cd $ROOT/on/jobs && runuser -u labuser -- srun --gpualert='email:x y@example.org' true 2>&1); rc=$?
check "bad --gpualert rejected at submission (rc $rc)" [ $rc != 0 ]
check "bad --gpualert: clear message" grep -q "is not a plain mail address" <<<"$out"
out=$(cd $ROOT/on/jobs && runuser -u labuser -- sbatch --gpualert=mail --wrap true 2>&1); rc=$?
check "bad --gpualert rejected by sbatch too (rc $rc)" [ $rc != 0 ]
# the srun path: a job that kills its helper is told apart from the job
# (SIGPIPE cannot be avoided once the pipe's reader is gone) and the report
# says exactly what happened
(cd $ROOT/on/jobs && runuser -u labuser -- srun -J killsrun bash -c \
    'echo before; pkill -KILL -u "$(id -u)" -x gpualert-helper; sleep 1; echo after' >/dev/null 2>&1)
rep=$(report_of killsrun)
check "srun job killing its helper: the report says the capture helper did not finish" \
    grep -q 'capture helper did not finish' "${rep:-/dev/null}"
# The capture helper is the task's sibling: slurmstepd's child (the program
# does not find it among its children), sharing the task's memory until the
# exec instead of copying it, so it is not dumpable (that image is
# slurmstepd's); it runs as the job's user and holds nothing of the task's
# but its streams.
(cd $ROOT/on/jobs && runuser -u labuser -- srun -J helperproc bash -c \
    'echo start; sleep 3; echo end' >"$ROOT/on/jobs/helperproc.out" 2>&1) &
wait_grep start "$ROOT/on/jobs/helperproc.out"
# (a killed helper of an earlier job may linger as a zombie until init reaps it)
hp=
for p in $(pgrep -u labuser -x gpualert-helper); do
    case "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" in S|R) hp=$p; break ;; esac
done
hpp=$(ps -o ppid= -p ${hp:-0} 2>/dev/null | tr -d ' ')
echo "# helper ${hp:-none}: parent ${hpp:-?} ($(ps -o comm= -p ${hpp:-0} 2>&1)), /proc owner $(stat -c %U /proc/${hp:-0} 2>&1), fds: $(ls -l /proc/${hp:-0}/fd 2>&1 | awk 'NR>1 {printf "%s->%s ", $9, $11}')"
check "capture helper: the job's user runs it (pid ${hp:-none})" \
    [ "$(ps -o user= -p ${hp:-0} 2>/dev/null)" = labuser ]
check "capture helper: a child of slurmstepd, not of the task" \
    [ "$(ps -o comm= -p ${hpp:-0} 2>/dev/null)" = slurmstepd ]
check "capture helper: not dumpable (its /proc files are root's), so the user cannot read slurmstepd's image in it" \
    bash -c "[ \"\$(stat -c %U /proc/${hp:-0}/mem)\" = root ] && ! runuser -u labuser -- head -c1 /proc/${hp:-0}/environ >/dev/null 2>&1"
# (two streams each way, the log twice: once to append, once to write in place)
check "capture helper: stdio on /dev/null, then only its streams, log, collector socket and the task's pidfd" bash -c \
    "[ \$(ls /proc/${hp:-0}/fd 2>/dev/null | wc -l) -ge 5 ] && [ \$(ls /proc/${hp:-0}/fd | wc -l) -le 11 ] &&
     [ \"\$(readlink /proc/${hp:-0}/fd/0)\" = /dev/null ]"
wait
check "capture helper: the step's output went through it to srun" grep -qx end "$ROOT/on/jobs/helperproc.out"
check "capture helper: and into the durable log" grep -qx end "$(sed -n 's/.*"log_path":"\([^"]*\)".*/\1/p' "$(report_of helperproc)" | head -1)"
check "capture helper: gone with the step, reaped" bash -c "! kill -0 ${hp:-0} 2>/dev/null"
# The report process outlives the step: caught and stopped while it reads a
# big record, it must hold no socket, pipe or terminal of the step (srun
# and slurmd would wait on them), be outside the job's cgroups (Slurm
# empties them when the job ends), and still spool the
# report once the job is long gone.
stopped() {    # stopped by us, not gone (a process already exiting ignores SIGSTOP)
    local i
    for i in $(seq 1 50); do
        [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" = T ] && return 0
        [ -d /proc/$1 ] || return 1
        sleep 0.002
    done
    return 1
}
detached() {   # no socket/pipe/terminal left, and at the root of every cgroup hierarchy
    [ -r /proc/$1/cgroup ] &&
    ! ls -l /proc/$1/fd 2>/dev/null | grep -q -e 'socket:' -e 'pipe:' -e '/dev/pts' &&
    ! grep -q ':/.' /proc/$1/cgroup
}
# catch PATTERN SECONDS: SIGSTOP the first gpualert-report holding a file
# whose path contains PATTERN (a tight /proc scan: it lives tens of ms),
# then let it run in steps of a fraction of a millisecond until it has
# detached from the step (the checks below), and print its pid stopped
# there.  Once detached it compiles the rules before it opens pipes of its
# own, so the steps cannot overshoot.
catch() {
    python3 - "$1" "$2" <<'EOP'
import os, signal, sys, time
pat, end = sys.argv[1], time.time() + float(sys.argv[2])
def state(p):
    return open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[0]
def stop(p):
    os.kill(p, signal.SIGSTOP)
    for _ in range(2000):
        if state(p) == 'T':
            return
        time.sleep(0.0001)
    raise OSError('not stopped')
def detached(p):
    if any(l.split(':', 2)[2].strip() != '/' for l in open(f'/proc/{p}/cgroup')):
        return False
    links = [os.readlink(f'/proc/{p}/fd/{f}') for f in os.listdir(f'/proc/{p}/fd')]
    return not any(l.startswith(('socket:', 'pipe:', '/dev/pts')) for l in links)
while time.time() < end:
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            if open(f'/proc/{p}/comm').read().strip() != 'gpualert-report':
                continue
            if not any(pat in os.readlink(f'/proc/{p}/fd/{f}') for f in os.listdir(f'/proc/{p}/fd')):
                continue
            p = int(p)
            stop(p)
            for _ in range(20000):
                if detached(p):
                    print(p)
                    sys.exit(0)
                os.kill(p, signal.SIGCONT)
                time.sleep(0.0002)
                stop(p)
            os.kill(p, signal.SIGCONT)
        except OSError:
            continue
    time.sleep(0.0005)
sys.exit(1)
EOP
}
rp=
for try in 1 2 3; do
    catch "$ROOT/on/" 30 >"$ROOT/caught" & cp=$!
    (cd $ROOT/on/jobs && runuser -u labuser -- srun -J slowreport$try bash -c 'seq 1 4000000; exit 3' >/dev/null 2>&1) &
    sp=$!
    wait $cp; rp=$(cat "$ROOT/caught")
    [ -n "$rp" ] && stopped $rp && break
    [ -n "$rp" ] && kill -CONT $rp 2>/dev/null; rp=
    wait $sp
done
check "report process: caught one while it read its record (pid ${rp:-none})" [ -n "$rp" ]
if [ -n "$rp" ]; then
    check "report process: no socket, pipe or terminal of the step, and out of the job's cgroups" detached $rp
    wait $sp
    rc=$?
    check "report process: srun returned (rc $rc) while the report process was stopped" [ $rc = 3 ]
    export SLURM_CONF=$ROOT/on/etc/slurm.conf
    for i in $(seq 1 100); do [ -z "$(squeue -h -o %i)" ] && break; sleep 0.1; done
    sleep 1    # slurmd's cleanup of the ended job
    check "report process: survives the end of its job" kill -0 $rp
    kill -CONT $rp
    for i in $(seq 1 100); do [ -d /proc/$rp ] || break; sleep 0.1; done
    # the one caught may be an earlier try's: every try's report is there
    for t in $(seq 1 $try); do
        check "report process: the report of slowreport$t is spooled" grep -q '"class":"' "$(report_of slowreport$t)"
    done
fi
# srun -u: a pty on fd 1 (left alone), a pipe on fd 2 (captured)
(cd $ROOT/on/jobs && runuser -u labuser -- srun -u -J unbuffered bash -c \
    'echo to-the-pty; echo "ModuleNotFoundError: No module named foo" >&2; exit 1' >/dev/null 2>&1)
check "srun -u: stderr is captured, and classified" grep -q '"class":"import_error"' "$(report_of unbuffered)"
check "srun --help lists --gpualert" bash -c "SLURM_CONF=$SLURM_CONF srun --help | grep -q -- --gpualert"
# --gpualert=off: no log, no report (counted once every report process of
# the jobs before has finished: they spool after their step has ended)
settled() { for i in $(seq 1 100); do pgrep -x gpualert-report >/dev/null || return 0; sleep 0.1; done; }
settled
before=$(ls $ROOT/on/gaspool/new | wc -l)
(cd $ROOT/on/jobs && runuser -u labuser -- srun -J offjob --gpualert=off true)
# the job is in jobcomp only once completed, after slurm_spank_exit
for i in $(seq 1 100); do
    sacct -c -n -o JobName 2>/dev/null | grep -qw offjob && break
    sleep 0.1
done
check "--gpualert=off: the job completed" bash -c "sacct -c -n -o JobName | grep -qw offjob"
settled
check "--gpualert=off: no report" [ "$(ls $ROOT/on/gaspool/new | wc -l)" = "$before" ]
# email mode: owner as recipient, the failing log attached in the spool
(cd $ROOT/on/jobs && runuser -u labuser -- srun -J mailjob --gpualert=email \
    bash -c 'echo "RuntimeError: CUDA out of memory. Tried to allocate 1 GiB"; exit 1' >/dev/null 2>&1)
rep=$(report_of mailjob)
check "email: report with the owner as recipient" python3 -c '
import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (r["mode"]=="email" and r["recipients"]==["labuser@localhost"] and r["class"]=="cuda_oom"))' "${rep:-/dev/null}"
check "email: the failing task's log collected into att/" bash -c "ls $ROOT/on/gaspool/att/$(basename "${rep:-x}" .json)/ 2>/dev/null | grep -q ."
# a value that bypassed the submission check (set in the environment):
# the job runs unchanged, the user is told once, the report says log
out=$(cd $ROOT/on/jobs && _SLURM_SPANK_OPTION_gpualert_gpualert='email:x@evil.example' \
      runuser -u labuser -- srun -J bypass bash -c 'echo fine' 2>&1); rc=$?
check "bypassed option: job unchanged (rc $rc)" [ $rc = 0 ]
check "bypassed option: one line to the user" grep -q "no notification" <<<"$out"
# an sbatch value reaches the steps of the script
(cd $ROOT/on/jobs && runuser -u labuser -- sbatch -Q --wait -J outer --gpualert=email \
    -o /dev/null --wrap 'srun -J inner bash -c "exit 2"; srun -J inner2 --gpualert=log true' >/dev/null 2>&1)
check "sbatch --gpualert=email reaches its srun steps" grep -q '"mode":"email"' "$(report_of inner)"
check "a step's own --gpualert wins" grep -q '"mode":"log"' "$(report_of inner2)"
# a working directory the user cannot write: no durable log, job unchanged
out=$(cd / && runuser -u labuser -- srun -J rodir -D / bash -c 'echo fine; exit 4' 2>/dev/null); rc=$?
check "unwritable work dir: output and exit code unchanged (rc $rc)" [ $rc = 4 -a "$out" = fine ]
rep=$(report_of rodir)
check "unwritable work dir: report says why there is no log" grep -q 'cannot create' "${rep:-/dev/null}"
# identity comes from Slurm, never from the job's environment
(cd $ROOT/on/jobs && SLURM_JOB_USER=root SLURM_ARRAY_JOB_ID=1 SLURM_ARRAY_TASK_ID=0 \
    runuser -u labuser -- srun -J forged --export=ALL,SLURM_JOB_USER=root,SLURM_ARRAY_JOB_ID=1,SLURM_ARRAY_TASK_ID=0 \
    bash -c 'exit 3' >/dev/null 2>&1)
rep=$(report_of forged)
check "forged SLURM_JOB_USER/SLURM_ARRAY_*: the report is labuser's, not an array task" python3 -c '
import json, sys; r = json.load(open(sys.argv[1]))
sys.exit(not (r["user"] == "labuser" and r["uid"] != 0 and "array_job_id" not in r and
              not any("root" in x for x in r.get("recipients", []))))' "${rep:-/dev/null}"
grep -h 'gpualert: exit' $ROOT/on/log/slurmd*.log | sed -n 's/.*report spooled in \([0-9.]*\) ms.*/\1/p' |
    sort -n | awk '{a[NR]=$1} END {if (NR) printf "# report process time (read-back, verdicts, spool): median %s ms, max %s ms over %d steps\n", a[int((NR+1)/2)], a[NR], NR}'
echo "1..$n"
[ $fails = 0 ]
