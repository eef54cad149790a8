#!/bin/bash
# tests/bench/bench-plugin.sh GPUALERT_SO GPUALERT_BIN [PORT]
#
# Paired figures, plugin on vs off in the same lab and the same run (the
# plugstack line is added/removed between steps; slurmstepd reloads it per
# step).  Not a test: prints numbers.  Needs root and Debian's slurm.
#   N=50      srun true pairs for launch latency
#   SIZE=1G   bytes written by the throughput task
#   REPS=3    throughput repetitions (median reported)
set -u
SO=$(realpath "$1"); BIN=$(realpath "$2"); PORT=${3:-18870}
N=${N:-50}; SIZE=${SIZE:-1G}; REPS=${REPS:-3}
LABSH=$(cd "$(dirname "$0")/../slurm" && pwd)/lab.sh
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
u() { runuser -u labuser -- "$@"; }
cd "$J"

echo "== srun launch latency: median of $N 'srun true', on/off interleaved"
: >"$L/lat.on"; : >"$L/lat.off"
for i in $(seq 1 "$N"); do
    for s in off on; do
        $s; t0=$(ns); u srun true; t1=$(ns)
        echo $(( (t1 - t0) / 1000 )) >>"$L/lat.$s"
    done
done
mon=$(median <"$L/lat.on"); moff=$(median <"$L/lat.off")
printf 'srun true: off %.2f ms, on %.2f ms, added %.2f ms (median)\n' \
    "$(echo "$moff/1000" | bc -l)" "$(echo "$mon/1000" | bc -l)" "$(echo "($mon-$moff)/1000" | bc -l)"

tp() {  # label command: a batch task writing to its .out file (the
        # common case); the task times its own writes, so sbatch's polling
        # does not blur the figure
    local label=$1 cmd=$2
    printf '#!/bin/bash\nt0=$(date +%%s%%N)\n%s\nt1=$(date +%%s%%N)\necho $(( (t1 - t0) / 1000000 )) >%s/tp.ms\n' \
        "$cmd" "$J" >"$J/tp.sh"
    chmod 755 "$J/tp.sh"
    for s in off on; do
        : >"$L/tp.$s"
        for r in $(seq 1 "$REPS"); do
            $s; rm -f "$J"/tp.out "$J"/gpualert-*.log "$J/tp.ms"
            u sbatch --wait -Q -o "$J/tp.out" "$J/tp.sh" >/dev/null
            cat "$J/tp.ms" >>"$L/tp.$s"
        done
    done
    local a b
    a=$(median <"$L/tp.off"); b=$(median <"$L/tp.on")
    printf '%s: off %d ms (%.0f MB/s), on %d ms (%.0f MB/s) -> on = %.1f %% of off throughput\n' \
        "$label" "$a" "$(echo "$BYTES/1000/$a" | bc -l)" "$b" "$(echo "$BYTES/1000/$b" | bc -l)" \
        "$(echo "100*$a/$b" | bc -l)"
}
BYTES=$(numfmt --from=iec "$SIZE")
echo "== throughput: a batch task writing $SIZE to its .out file (median of $REPS)"
tp "$SIZE of zeros (64 KiB writes, no newlines)" "dd if=/dev/zero bs=64k count=$((BYTES / 65536)) status=none"
tp "$SIZE of 45-byte log lines" "yes 'epoch 3 step 1200 loss 0.3312 lr 0.0001 ok' | head -c $SIZE"
on
echo "== helper peak RSS and collector wait (slurmd.log)"
grep -h 'helper peak RSS' "$GPUALERT_LAB"/log/slurmd*.log | tail -4 | sed 's/^.*gpualert: //'
grep -h 'gpualert: exit' "$GPUALERT_LAB"/log/slurmd*.log | sed -n 's/.*report spooled in \([0-9.]*\) ms.*/\1/p' |
    median | xargs printf 'slurm_spank_exit report (rules + verdicts + spool fsync): median %s ms\n'
grep -h 'gpualert: exit' "$GPUALERT_LAB"/log/slurmd*.log | tail -1 | sed 's/^.*gpualert: /last: /'

echo "== gpualert run -- true vs true (median of $N)"
: >"$L/run.on"; : >"$L/run.off"
for i in $(seq 1 "$N"); do
    t0=$(ns); true; /bin/true; t1=$(ns); echo $(( (t1 - t0) / 1000 )) >>"$L/run.off"
    t0=$(ns); "$BIN" run --config "$L/gpualert.conf" --log "$L/run.log" -- /bin/true; t1=$(ns)
    echo $(( (t1 - t0) / 1000 )) >>"$L/run.on"
done
printf 'gpualert run -- true: %.2f ms; /bin/true: %.2f ms (median)\n' \
    "$(echo "$(median <"$L/run.on")/1000" | bc -l)" "$(echo "$(median <"$L/run.off")/1000" | bc -l)"
