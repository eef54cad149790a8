#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/bench/bench-plugin.sh GPUALERT_SO GPUALERT_BIN [PORT]
#
# What gpualert costs a job, plugin on vs off, paired in the same lab and
# the same run (the plugstack line is added/removed between steps;
# slurmstepd reloads it per step), best of REPS.  Not a test: prints
# figures.  Needs root and Debian's slurm.
#   SIZE=1G       bytes written by the batch throughput tasks
#   SRUN_SIZE=256M  bytes written by the srun step throughput tasks (srun
#                 forwards a step's output over a socket at tens of MB/s)
#   REPS=5        repetitions of each throughput case (best and median
#                 reported; the order of on and off alternates, and each run
#                 starts after a sync, once the previous job has left the
#                 queue)
#   N=30          'srun true' pairs for the launch latency
#   SECS=60       seconds of the 5,000 lines/s training-log task
#   PARTS="latency anatomy batch srun cpu"   the parts to run (default); also
#                 "report", which builds variants of the plugin from this
#                 checkout (meson, a compiler)
#
# Every job starts once the previous one has left the queue and its report
# process has finished: a job still completing (its slurm_spank_exit, the
# epilog, the report) can delay the next one's allocation, and that would
# charge one side's completion to the other's launch.  The latency pairs compare plain `srun true` with
# `srun --gpualert=log true`, pipe stdout and a per-task `-o` file, and report the
# median of the paired differences: on a loaded 2-CPU machine a run's
# neighbour is a better baseline than the whole series' median.
set -u
[ $# -ge 2 ] && [ -f "$1" ] && [ -x "$2" ] ||
    { echo "usage: tests/bench/bench-plugin.sh GPUALERT_SO GPUALERT_BIN [PORT]" >&2; exit 2; }
SO=$(realpath "$1"); BIN=$(realpath "$2"); PORT=${3:-18880}
N=${N:-30}; SIZE=${SIZE:-1G}; SRUN_SIZE=${SRUN_SIZE:-256M}; REPS=${REPS:-5}; SECS=${SECS:-60}
PARTS=" ${PARTS:-latency anatomy batch srun cpu} "
part() { case "$PARTS" in *" $1 "*) return 0;; esac; return 1; }
LABSH=$(cd "$(dirname "$0")/../slurm" && pwd)/lab.sh
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
L=$(mktemp -d /tmp/ga-bench.XXXXXX); chmod 755 "$L"
export GPUALERT_LAB=$L/lab GPUALERT_LAB_PORT=$PORT GPUALERT_LAB_NODES=1 GPUALERT_LAB_CGROUP=1
trap '"$LABSH" stop >/dev/null 2>&1; rm -rf "$L"' EXIT
"$LABSH" start >"$L/start.log" 2>&1 || { cat "$L/start.log"; exit 1; }
eval "$("$LABSH" env)"
J=$GPUALERT_LAB_JOBS
install -d -m 0700 "$L/spool"
install -m 0755 "$SO" "$L/gpualert.so"
printf '[general]\nspool_dir=%s/spool\ndefault_mode=log\n' "$L" >"$L/gpualert.conf"; chmod 644 "$L/gpualert.conf"
PS=$GPUALERT_LAB/etc/plugstack.conf.d/gpualert.conf
on()  { echo "optional $L/gpualert.so config=$L/gpualert.conf" >"$PS"; }
off() { rm -f "$PS"; }
ns()  { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
best() { sort -n | head -1; }
u() { runuser -u labuser -- "$@"; }
slurmd_log() { cat "$GPUALERT_LAB"/log/slurmd*.log; }
cd "$J"
BYTES=$(numfmt --from=iec "$SIZE")
echo "# gpualert plugin benchmark, $(date -u +%FT%TZ), $(nproc) CPUs, $(uname -r)"

# Wait until no job is left in the queue (completing ones included) and no
# report process is left: a report still being written after an "on" step
# would otherwise slow whichever step comes next, "off" ones included.
idle() {
    while [ -n "$(squeue -h -o %i 2>/dev/null)" ] || pgrep -x gpualert-report >/dev/null; do
        sleep 0.02
    done
}
ms() { echo "$1/1000" | bc -l; }

latency() {  # label srun-args...: N pairs, plain srun vs --gpualert=log
    local label=$1 i s; shift
    : >"$L/lat.on"; : >"$L/lat.off"
    for i in $(seq 1 "$N"); do
        for s in $(order "$i"); do
            $s; idle
            local a=(); [ "$s" = on ] && a=(--gpualert=log)
            t0=$(ns); u srun "${a[@]}" "$@" true >/dev/null 2>&1; t1=$(ns)
            echo $(( (t1 - t0) / 1000 )) >>"$L/lat.$s"
        done
    done
    local mon moff pd bon boff
    mon=$(median <"$L/lat.on"); moff=$(median <"$L/lat.off")
    bon=$(best <"$L/lat.on"); boff=$(best <"$L/lat.off")
    pd=$(paste "$L/lat.off" "$L/lat.on" | awk '{print $2 - $1}' | median)
    printf '%s: off %.1f ms, on %.1f ms (medians; best %.1f / %.1f); added %.1f ms (median of %d paired differences)\n' \
        "$label" "$(ms "$moff")" "$(ms "$mon")" "$(ms "$boff")" "$(ms "$bon")" "$(ms "$pd")" "$N"
}
order() { if [ $(($1 % 2)) = 1 ]; then echo off on; else echo on off; fi; }
if part latency; then
    echo "== srun true, plugin off vs --gpualert=log, $N pairs, order alternating"
    latency "srun true (pipe stdout)"
    # A per-task name (%t): slurmstepd opens the file on the node and the
    # task's stdout is that file.  A plain name is written by srun itself,
    # and the task's stdout is then a pipe, like the first case.
    latency "srun -o FILE.%t true (file stdout)" -o "$J/lat-%j.%t.out"
    rm -f "$J"/lat-*.out
fi

# One step per configuration, the order rotating each round, N rounds; the
# task prints the time it ran.  setup CFG writes CFG's plugstack line and sets
# the srun options (a).
rotate() {
    local cfg i t0 tm t1 cfgs=$1 c
    for cfg in $cfgs; do : >"$L/an.$cfg"; : >"$L/an.pre.$cfg"; : >"$L/an.post.$cfg"; done
    for i in $(seq 1 "$N"); do
        c=$(echo $cfgs | tr ' ' '\n' | awk -v k="$i" '{a[NR]=$0} END {for (j = 0; j < NR; j++) print a[(j + k) % NR + 1]}')
        for cfg in $c; do
            a=()
            setup "$cfg"
            idle
            t0=$(ns); tm=$(u srun "${a[@]}" date +%s%N 2>/dev/null); t1=$(ns)
            echo $(( (t1 - t0) / 1000 )) >>"$L/an.$cfg"
            echo $(( (tm - t0) / 1000 )) >>"$L/an.pre.$cfg"
            echo $(( (t1 - tm) / 1000 )) >>"$L/an.post.$cfg"
        done
    done
    for cfg in $cfgs; do
        printf '%-10s srun %.1f ms = start -> task %.1f ms + task -> srun gone %.1f ms (medians of %d)\n' "$cfg" \
            "$(ms "$(median <"$L/an.$cfg")")" "$(ms "$(median <"$L/an.pre.$cfg")")" \
            "$(ms "$(median <"$L/an.post.$cfg")")" "$N"
    done
    off
}
setup() {
    case $1 in
    none) off ;;
    null) echo "optional $L/null.so" >"$PS" ;;
    inactive) echo "optional $L/gpualert.so config=$L/gpualert.conf general.default_mode=off" >"$PS" ;;
    active) on; a=(--gpualert=log) ;;
    *) echo "optional $L/gpualert-$1.so config=$L/gpualert.conf" >"$PS"; a=(--gpualert=log) ;;
    esac
}

# Where the added time of a step goes: the same step under four plugstack lines
# (none; a SPANK plugin that does nothing, Slurm's own price for any plugin;
# gpualert with default_mode=off and no --gpualert; gpualert with
# --gpualert=log).  The task's printed time splits each step into srun start
# -> task running (srun, slurmctld, slurmstepd start, the plugin's task_init:
# the log and the helper) and task running -> srun gone (the task's exit, the
# helper's drain, task_exit, slurm_spank_exit and the report process's start,
# slurmstepd's accounting and I/O close).
anatomy() {
    cat >"$L/null.c" <<'EOC'
#include <slurm/spank.h>
SPANK_PLUGIN(null, 1);
int slurm_spank_init(spank_t sp, int ac, char **av) { (void)sp; (void)ac; (void)av; return 0; }
EOC
    cc -shared -fPIC -O2 -o "$L/null.so" "$L/null.c" && chmod 755 "$L/null.so" ||
        { echo "anatomy: skipped: cannot build the no-op SPANK plugin (cc, slurm/spank.h)"; return 0; }
    rotate "none null inactive active"
}
if part anatomy; then
    echo "== where a step's added time goes: no plugin, a SPANK plugin that does nothing, gpualert off, gpualert on; $N rounds"
    anatomy
fi

# What the report process's start costs the step: slurm_spank_exit forks it
# from slurmstepd, and srun ends only after slurm_spank_exit.  Builds of this
# checkout's plugin whose slurm_spank_exit, in place of that fork, forks a
# child that exits at once (fork-exit), vforks one that exits at once
# (vfork-exit: the child shares slurmstepd's memory, so nothing of it is
# copied or write-protected), or starts none (no-child); none of the three
# writes a report.  Against no plugin and gpualert as it is (active).
report() {
    local v line src=$L/src
    mkdir -p "$src"
    git -C "$ROOT" ls-files -z | (cd "$ROOT" && tar --null -T - -cf -) | tar -C "$src" -xf - ||
        { echo "report: skipped: cannot copy the checkout"; return 0; }
    meson setup "$src/build" "$src" >"$L/build.log" 2>&1 ||
        { echo "report: skipped: meson setup failed ($L/build.log)"; cat "$L/build.log"; return 0; }
    # One copy and one build directory: each variant rewrites remote.c from
    # the checkout's, and ninja recompiles that file alone.
    for v in fork-exit vfork-exit no-child; do
        case $v in
        fork-exit) line='pid = fork(); if (pid == 0) _exit(0); if (pid > 0) pid = 1;' ;;
        vfork-exit) line='pid = vfork(); if (pid == 0) _exit(0); if (pid > 0) pid = 1;' ;;
        no-child) line='pid = 1;' ;;
        esac
        sed "s/^\t\tpid = fork();\$/\t\t$line/" "$ROOT/plugin/remote.c" >"$src/plugin/remote.c"
        # exactly the one line in slurm_spank_exit's path must have changed
        [ "$(git -C "$ROOT" diff --no-index --numstat "$ROOT/plugin/remote.c" "$src/plugin/remote.c" | cut -f1)" = 1 ] ||
            { echo "report: skipped: plugin/remote.c no longer has the line this part edits"; return 0; }
        ninja -C "$src/build" plugin/gpualert.so >"$L/build-$v.log" 2>&1 ||
            { echo "report: skipped: the $v build failed ($L/build-$v.log)"; cat "$L/build-$v.log"; return 0; }
        install -m 0755 "$src/build/plugin/gpualert.so" "$L/gpualert-$v.so"
    done
    rotate "none active fork-exit vfork-exit no-child"
}
if part report; then
    echo "== the report process's start: no plugin, gpualert, and builds whose slurm_spank_exit forks a child that exits at once, vforks one, or starts none; $N rounds"
    report
fi

# A task that times its own writes (so sbatch's polling does not blur the
# figure) and writes the time to tp.ms.
timed() { printf '#!/bin/bash\nt0=$(date +%%s%%N)\n%s\nt1=$(date +%%s%%N)\necho $(( (t1 - t0) / 1000000 )) >%s/tp.ms\n' "$1" "$J"; }
ratio() {  # label offms onms (best), offms onms (median)
    printf '%s: best off %d ms (%.0f MB/s), on %d ms (%.0f MB/s) -> on = %.1f %% of off; median %d / %d ms -> %.1f %%\n' \
        "$1" "$2" "$(echo "$BYTES/1000/$2" | bc -l)" "$3" "$(echo "$BYTES/1000/$3" | bc -l)" \
        "$(echo "100*$2/$3" | bc -l)" "$4" "$5" "$(echo "100*$4/$5" | bc -l)"
}
batch() {  # label command: a batch task writing to its .out (best of REPS)
    local label=$1 s r extra=0 e
    timed "$2" >"$J/tp.sh"; chmod 755 "$J/tp.sh"
    for s in off on; do : >"$L/tp.$s"; done
    for r in $(seq 1 "$REPS"); do
        for s in $(order $r); do
            $s; idle; rm -rf "$J"/tp.out "$J"/gpualert-* "$J/tp.ms"; sync
            u sbatch --wait -Q -o "$J/tp.out" "$J/tp.sh" >/dev/null
            cat "$J/tp.ms" >>"$L/tp.$s"
            if [ $s = on ]; then
                e=$(du -sb --exclude=tp.out --exclude=tp.sh --exclude=tp.ms "$J" | cut -f1)
                e=$((e - $(stat -c %s "$J")))   # the directory itself
                [ "$e" -gt "$extra" ] && extra=$e
            fi
        done
    done
    ratio "$label" "$(best <"$L/tp.off")" "$(best <"$L/tp.on")" \
        "$(median <"$L/tp.off")" "$(median <"$L/tp.on")"
    echo "  files gpualert left in the working directory: $extra bytes"
}
step() {  # label command: an srun step writing through its pipe (best of REPS)
    local label=$1 s r
    timed "$2" >"$J/tp.sh"; chmod 755 "$J/tp.sh"
    for s in off on; do : >"$L/tp.$s"; done
    for r in $(seq 1 "$REPS"); do
        for s in $(order $r); do
            $s; idle; rm -rf "$J"/gpualert-* "$J/tp.ms"; sync
            u srun "$J/tp.sh" >/dev/null
            cat "$J/tp.ms" >>"$L/tp.$s"
        done
    done
    ratio "$label" "$(best <"$L/tp.off")" "$(best <"$L/tp.on")" \
        "$(median <"$L/tp.off")" "$(median <"$L/tp.on")"
}

if part batch; then
    echo "== a batch task writing $SIZE to its .out file ($REPS runs each)"
    batch "batch, $SIZE in 64 KiB writes" "dd if=/dev/zero bs=64k count=$((BYTES / 65536)) status=none"
    batch "batch, $SIZE of 50-byte lines" "yes 'epoch 3 step 1200 loss 0.3312 lr 0.0001 ok .....' | head -c $SIZE"
fi
BYTES=$(numfmt --from=iec "$SRUN_SIZE")
if part srun; then
    echo "== an srun step writing $SRUN_SIZE through its pipe to srun ($REPS runs each)"
    step "srun, $SRUN_SIZE in 64 KiB writes" "dd if=/dev/zero bs=64k count=$((BYTES / 65536)) status=none"
    step "srun, $SRUN_SIZE of 50-byte lines" "yes 'epoch 3 step 1200 loss 0.3312 lr 0.0001 ok .....' | head -c $SRUN_SIZE"
fi
part cpu || exit 0

echo "== CPU of gpualert per CPU of a task printing 5,000 flushed lines/s for $SECS s"
cat >"$J/trainlog.py" <<'EOP'
import os, sys, time
secs = float(sys.argv[1]); n = 0; t0 = time.monotonic()
while time.monotonic() - t0 < secs:
    n += 1
    print(f"[rank 0] epoch 3 step {n} loss {1.0 / (1 + n % 97):.4f} lr 0.0001 grad_norm 1.23", flush=True)
    if n % 50 == 0:
        time.sleep(max(0.0, n / 5000 - (time.monotonic() - t0)))
t = os.times()
open(sys.argv[2], "w").write(f"{(t.user + t.system) * 1000:.0f}\n")
EOP
on
records() { slurmd_log | grep -c 'gpualert: task 0: record'; }
cpu() {  # label count: how the task ran, once slurmd.log has record line COUNT
    local task_ms g i
    for i in $(seq 1 300); do [ "$(records)" -ge "$2" ] && break; sleep 0.1; done
    task_ms=$(cat "$J/task.cpu")
    g=$(slurmd_log | grep 'gpualert: task 0: record' | tail -1 |
        sed -n 's/.* in \([0-9.]*\) ms CPU; helper \([0-9]*\) ms CPU/\1 \2/p')
    read -r cls hlp <<<"$g"
    printf '%s: task %d ms CPU; gpualert: read-back %.1f ms + helper %d ms -> %.4f CPU-s per CPU-s\n' \
        "$1" "$task_ms" "$cls" "$hlp" "$(echo "($cls + $hlp) / $task_ms" | bc -l)"
}
# (the count is taken right before each job: its record is the next line,
# which the report process writes a second or so after the step)
n0=$(records)
u sbatch --wait -Q -o "$J/train.out" --wrap "python3 $J/trainlog.py $SECS $J/task.cpu" >/dev/null
cpu "batch (.out file)" $((n0 + 1))
n0=$(records)
u srun python3 "$J/trainlog.py" "$SECS" "$J/task.cpu" >/dev/null
cpu "srun (pipe)" $((n0 + 1))

echo "== the report process after each step (read-back, verdicts, spool fsync; the step does not wait for it), from slurmd.log"
slurmd_log | grep 'gpualert: exit' | sed -n 's/.*report spooled in \([0-9.]*\) ms.*/\1/p' |
    sort -n | awk '{a[NR]=$1} END {if (NR) printf "median %s ms, max %s ms over %d steps\n", a[int((NR+1)/2)], a[NR], NR}'
echo "== helper peak RSS (srun steps)"
slurmd_log | grep -h 'helper peak RSS' | sed -n 's/.*helper peak RSS \([0-9]*\) KiB.*/\1/p' | sort -n | tail -1 |
    xargs -r printf 'max %s KiB\n'
