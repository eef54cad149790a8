#!/bin/bash
# SPDX-License-Identifier: MIT
# corpus/gen/slurm/reproduce.sh -- regenerate gpualert's scheduler-produced corpus logs.
#
# Starts two throwaway Slurm clusters with tests/slurm/lab.sh (own ports), runs
# real jobs as the lab user (CPU training loops from jobs/), and keeps each
# job's batch .out file as it was written by the job and by slurmstepd:
#   time_limit  --time=1 jobs that the scheduler kills (~90 s)
#   cancelled   scancel, preemption (partition_prio, PreemptMode=CANCEL) and a
#               real node failure (slurmd SIGKILLed, SlurmdTimeout=10)
#   host_oom    cgroup v1 memory limit (--mem) OOM kills
# Output: ../../logs/<class>/slurm-<case>.log and labels.part.tsv
# (file, class, exit_code, source, origin; exit_code from scontrol's ExitCode A:B
# as A if B is 0, else -B).
#
# Redaction: only the lab directory (-> /lab) and the per-lab node names
# (-> node01, node02) are rewritten. Job ids and timestamps are the real ones
# of the run. A case whose job did not end in the expected Slurm state is
# reported and left out, never patched.
#
# Needs root, Debian's slurm packages and /usr/bin/python3 with torch + numpy.
# Takes about 2 minutes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)
lab=$(cd "$here/../../../tests/slurm" && pwd)/lab.sh
LAB_A=${GPUALERT_CORPUS_LAB_A:-/tmp/gpualert-corpus-a}; PORT_A=${GPUALERT_CORPUS_PORT_A:-18217}
LAB_B=${GPUALERT_CORPUS_LAB_B:-/tmp/gpualert-corpus-b}; PORT_B=${GPUALERT_CORPUS_PORT_B:-18317}
U=labuser
work=$(mktemp -d)
cases=$work/cases            # case class lab jobid
: >"$cases"

labA() { env GPUALERT_LAB=$LAB_A GPUALERT_LAB_PORT=$PORT_A "$@"; }
labB() { env GPUALERT_LAB=$LAB_B GPUALERT_LAB_PORT=$PORT_B "$@"; }
# client commands against lab A or B
A() { env SLURM_CONF=$LAB_A/etc/slurm.conf "$@"; }
B() { env SLURM_CONF=$LAB_B/etc/slurm.conf "$@"; }
n1A=ga${PORT_A}n1; n2A=ga${PORT_A}n2; n1B=ga${PORT_B}n1; n2B=ga${PORT_B}n2

cleanup() { labA "$lab" stop || true; labB "$lab" stop || true; rm -rf "$work"; }
trap cleanup EXIT

# lab A: 2 nodes, 24 claimed CPUs each so ~30 jobs run at once (they mostly sleep)
labA env GPUALERT_LAB_NODES=2 GPUALERT_LAB_CPUS=24 GPUALERT_LAB_MEM=16000 "$lab" start
# lab B: 2 nodes, short SlurmdTimeout for the node-failure cases
labB env GPUALERT_LAB_NODES=2 GPUALERT_LAB_CPUS=4 GPUALERT_LAB_MEM=4000 GPUALERT_LAB_SLURMD_TIMEOUT=10 "$lab" start
for L in "$LAB_A" "$LAB_B"; do
    install -o "$U" -g "$U" -m 0644 "$here"/jobs/*.py "$L/jobs/"
    install -o "$U" -g "$U" -m 0755 "$here"/jobs/*.sh "$L/jobs/"
done

# sub LAB(A|B) CASE CLASS [sbatch options...] SCRIPT [args...]
sub() {
    local which=$1 case=$2 class=$3 L id; shift 3
    if [ "$which" = A ]; then L=$LAB_A; else L=$LAB_B; fi
    id=$(cd "$L/jobs" && runuser -u "$U" -- env SLURM_CONF="$L/etc/slurm.conf" \
        sbatch --parsable -D "$L/jobs" -o "$L/jobs/$case.out" "$@")
    echo "$case $class $which $id" >>"$cases"
    echo "submitted $case -> job $id (lab $which)"
}
ids_of() { awk -v p="$1" '$1 ~ p {print $4}' "$cases" | tr '\n' ' '; }
T="--time=1 -w $n1A"

# ---- time_limit (lab A, node 1) ---------------------------------------------
sub A tl-train-01 time_limit $T -J mlp-train    fg.sh   train.py
sub A tl-train-02 time_limit $T -J mlp-train    exec.sh train.py --on-sigterm raise
sub A tl-train-03 time_limit $T -J mlp-train    exec.sh train.py --on-sigterm kbd
sub A tl-train-04 time_limit $T -J mlp-ckpt     exec.sh train.py --on-sigterm checkpoint
sub A tl-srun-05  time_limit $T -J mlp-srun     srun.sh train.py
sub A tl-srun-06  time_limit $T -J mlp-srun     srun.sh train.py --on-sigterm raise
sub A tl-srunl-07 time_limit $T -J mlp-ddp -n2  srun.sh train.py --on-sigterm kbd
sub A tl-srunl-08 time_limit $T -J logreg -n4   srun.sh numpy_train.py
sub A tl-numpy-09 time_limit $T -J logreg       fg.sh   numpy_train.py
sub A tl-numpy-10 time_limit $T -J logreg       exec.sh numpy_train.py --on-sigterm raise
sub A tl-trap-11  time_limit $T -J mlp-trap     trap.sh train.py --on-sigterm kbd
sub A tl-loader-12 time_limit $T -J mlp-loader  exec.sh train.py --workers 4 --on-sigterm kbd
sub A tl-trap-13  time_limit $T -J logreg-trap  trap.sh numpy_train.py --on-sigterm raise

# ---- cancelled by scancel (lab A, node 1) -------------------------------------
C="-w $n1A"
sub A ca-scancel-01 cancelled $C -J mlp-train   fg.sh   train.py
sub A ca-scancel-02 cancelled $C -J mlp-train   exec.sh train.py --on-sigterm raise
sub A ca-scancel-03 cancelled $C -J mlp-train   exec.sh train.py --on-sigterm kbd
sub A ca-scancel-04 cancelled $C -J mlp-srun    srun.sh train.py
sub A ca-scancel-05 cancelled $C -J mlp-ddp -n2 srun.sh train.py --on-sigterm raise
sub A ca-scancel-06 cancelled $C -J logreg      exec.sh numpy_train.py --on-sigterm kbd
sub A ca-scancel-07 cancelled $C -J mlp-trap    trap.sh train.py --on-sigterm raise

# ---- cancelled by preemption (lab A, node 2, low partition) -------------------
P="-p low -w $n2A"
sub A ca-preempt-08 cancelled $P -J mlp-train   exec.sh train.py --on-sigterm raise
sub A ca-preempt-09 cancelled $P -J mlp-srun    srun.sh train.py
sub A ca-preempt-10 cancelled $P -J logreg      fg.sh   numpy_train.py
sub A ca-preempt-11 cancelled $P -J mlp-ckpt    exec.sh train.py --on-sigterm checkpoint

# ---- cancelled by node failure (lab B, 2-node jobs, node 2 dies) -------------
sub B ca-nodefail-12 cancelled -N2 --no-requeue -J mlp-ddp srun.sh train.py
sub B ca-nodefail-13 cancelled -N2 --no-requeue -J mlp-ddp srun.sh train.py --on-sigterm raise

# ---- host_oom (lab A, node 1, cgroup memory limit) ----------------------------
O="-w $n1A"
sub A oom-numpy-01  host_oom $O --mem=100M -J logreg      fg.sh   numpy_train.py --grow-mb 4 --sleep 0.05
sub A oom-train-02  host_oom $O --mem=500M -J mlp-train   exec.sh train.py --leak-mb 16 --sleep 0.05
sub A oom-train-03  host_oom $O --mem=500M -J mlp-srun    srun.sh train.py --leak-mb 16 --sleep 0.05
sub A oom-loader-04 host_oom $O --mem=900M -J mlp-loader  exec.sh train.py --workers 2 --worker-cache-mb 1 --sleep 0.05
sub A oom-loader-05 host_oom $O --mem=900M -J mlp-loader  fg.sh   train.py --workers 2 --worker-cache-mb 2 --sleep 0.05
sub A oom-numpy-06  host_oom $O --mem=200M -J logreg      srun.sh numpy_train.py --grow-mb 8 --sleep 0.05

t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
# let the training loops get going
sleep 20
for id in $(ids_of '^ca-scancel-0[1-3]'); do A scancel "$id"; echo "+$(el) s scancel $id"; done
# preemption: a high-priority-tier job that needs all of node 2
A runuser -u "$U" -- sbatch --parsable -p high -w "$n2A" --exclusive -J urgent -D "$LAB_A/jobs" \
    -o "$LAB_A/jobs/urgent-%j.out" --wrap 'echo urgent job on $SLURMD_NODENAME; sleep 5'
sleep 8
for id in $(ids_of '^ca-scancel-0[4-7]'); do A scancel "$id"; echo "+$(el) s scancel $id"; done
# node failure: SIGKILL node 2's slurmd in lab B; slurmctld declares it dead after SlurmdTimeout
kill -KILL "$(cat "$LAB_B/run/slurmd-$n2B.pid")"
echo "+$(el) s killed slurmd $n2B (lab B)"

# wait for everything to finish (time limits take 60-90 s)
for i in $(seq 1 240); do
    a=$(A squeue -h | wc -l); b=$(B squeue -h | wc -l)
    [ "$a" = 0 ] && [ "$b" = 0 ] && break
    sleep 1
done
echo "+$(el) s all jobs done (left: A=$a B=$b)"

# ---- collect ----------------------------------------------------------------
out=$here/labels.part.tsv
rows=$work/labels.part.tsv   # replaces $out only when every job could be inspected
: >"$rows"
while read -r case class which id; do
    if [ "$which" = A ]; then L=$LAB_A; P=$PORT_A; S=A; else L=$LAB_B; P=$PORT_B; S=B; fi
    info=$($S scontrol show job "$id") || { echo "cannot inspect job $id of lab $which: giving up, nothing written" >&2; exit 1; }
    state=$(echo "$info" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    ec=$(echo "$info" | grep -o ' ExitCode=[0-9]*:[0-9]*' | cut -d= -f2)
    a=${ec%:*}; b=${ec#*:}
    if [ "$b" = 0 ]; then code=$a; else code=-$b; fi
    # Slurm reports an OUT_OF_MEMORY job as ExitCode 0:125: a marker, not a
    # signal.  Record what the batch shell itself ended with: fg.sh survives
    # its child and ends with an echo ("python exited with N"), so 0;
    # exec.sh is the program the OOM handler killed, so SIGKILL.
    if [ "$state" = OUT_OF_MEMORY ] && [ "$b" = 125 ]; then
        if grep -q '^python exited with' "$L/jobs/$case.out"; then code=0; else code=-9; fi
    fi
    ok=0
    case "$class:$state" in
        time_limit:TIMEOUT|cancelled:CANCELLED|cancelled:PREEMPTED|cancelled:NODE_FAIL|host_oom:OUT_OF_MEMORY) ok=1 ;;
        # an OOM-killed srun step: the job's own state depends on the batch script's exit
        host_oom:*) grep -q 'task [0-9]*: Out Of Memory' "$L/jobs/$case.out" && ok=1 ;;
    esac
    case $ok in
        1) ;;
        *) echo "SKIP $case: job $id ended $state ExitCode=$ec, not a $class"; continue ;;
    esac
    f=logs/$class/slurm-$case.log
    mkdir -p "$corpus/logs/$class"
    grep -q 'slurmstepd\|srun: error' "$L/jobs/$case.out" || { echo "SKIP $case: no scheduler line in the output"; continue; }
    sed -e "s#$L#/lab#g" -e "s#ga${P}n\[1-2\]#node[01-02]#g" -e "s#ga${P}n1#node01#g" -e "s#ga${P}n2#node02#g" "$L/jobs/$case.out" >"$corpus/$f"
    printf '%s\t%s\t%s\t%s\t%s\n' "$f" "$class" "$code" reproduced "gen/slurm/reproduce.sh:$case" >>"$rows"
    echo "kept $f  (job $id $state ExitCode=$ec)"
done <"$cases"
mv "$rows" "$out"
echo "+$(el) s wrote $(wc -l <"$out") rows to $out"

# Replace this generator's rows in corpus/labels.tsv (rows of the other
# generators stay), sorted by file like the rest.
{
    head -n 1 "$corpus/labels.tsv"
    { tail -n +2 "$corpus/labels.tsv" | grep -v "	gen/slurm/"; cat "$out"; } | sort -t '	' -k1,1
} >"$corpus/labels.tsv.new" && mv "$corpus/labels.tsv.new" "$corpus/labels.tsv"
echo "updated $corpus/labels.tsv"
