#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/bench/bench-kernel.sh GPUALERT_SO [PORT]
#
# srun's wall time with the kernel evidence off and on, paired in one lab
# and one run (the plugin's config is switched between steps; slurmstepd
# reads it per step).  Not a test: prints numbers.  Needs root and
# Debian's slurm.  Each step fails (`srun false`): only a failed step reads
# the kernel log.  Three configurations, interleaved:
#   off       kernel_log = no
#   on        kernel_log = yes, the default nvidia_gpus_dir (this node has
#             no NVIDIA driver: the step costs one access(2))
#   on+scan   kernel_log = yes with a fake driver directory: the whole
#             /dev/kmsg ring is read and parsed (what a GPU node pays)
#   N=60      pairs
set -u
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: tests/bench/bench-kernel.sh GPUALERT_SO [PORT]" >&2; exit 2; }
SO=$(realpath "$1"); PORT=${2:-18870}
N=${N:-60}
LABSH=$(cd "$(dirname "$0")/../slurm" && pwd)/lab.sh
L=$(mktemp -d /tmp/ga-bench-kernel.XXXXXX); chmod 755 "$L"
export GPUALERT_LAB=$L/lab GPUALERT_LAB_PORT=$PORT GPUALERT_LAB_NODES=1 GPUALERT_LAB_CGROUP=1
trap '"$LABSH" stop >/dev/null 2>&1; rm -rf "$L"' EXIT
"$LABSH" start >"$L/start.log" 2>&1 || { cat "$L/start.log"; exit 1; }
eval "$("$LABSH" env)"
J=$GPUALERT_LAB_JOBS
install -d -m 0700 "$L/spool"
install -m 0755 "$SO" "$L/gpualert.so"
mkdir -p "$L/gpus/0000:3b:00.0"
printf 'Bus Location:    0000:3b:00.0\nDevice Minor:    0\n' >"$L/gpus/0000:3b:00.0/information"
for c in off on scan; do
	{
		printf '[general]\nspool_dir=%s/spool\ndefault_mode=log\n' "$L"
		case $c in
		off) echo "kernel_log = no" ;;
		on) echo "kernel_log = yes" ;;
		scan) printf 'kernel_log = yes\nnvidia_gpus_dir = %s/gpus\n' "$L" ;;
		esac
	} >"$L/$c.conf"
	chmod 644 "$L/$c.conf"
done
PS=$GPUALERT_LAB/etc/plugstack.conf.d/gpualert.conf
use() { echo "optional $L/gpualert.so config=$L/$1.conf" >"$PS"; }
ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
quart() { sort -n | awk '{a[NR]=$1} END {printf "%.2f-%.2f", a[int((NR+3)/4)]/1000, a[int((3*NR+1)/4)]/1000}'; }
cd "$J"
[ -d /proc/driver/nvidia ] && echo "note: this node HAS an NVIDIA driver"
echo "kernel log: $(dmesg | wc -l) records now (dmesg)"
echo "== 'srun false' wall time, median of $N interleaved triples"
for c in off on scan; do : >"$L/lat.$c"; done
for i in $(seq 1 "$N"); do
	for c in off on scan; do
		use "$c"
		t0=$(ns); runuser -u labuser -- srun false 2>/dev/null; t1=$(ns)
		echo $(((t1 - t0) / 1000)) >>"$L/lat.$c"
	done
done
for c in off on scan; do
	printf '%-8s median %7.2f ms  (quartiles %s ms)\n' "$c" \
		"$(echo "$(median <"$L/lat.$c")/1000" | bc -l)" "$(quart <"$L/lat.$c")"
done
echo "== in the report process after the step (slurmd.log)"
grep -h 'gpualert: exit: kernel log' "$GPUALERT_LAB"/log/slurmd*.log |
	sed -n 's/.* in \([0-9.]*\) ms$/\1/p' | median |
	xargs printf 'on+scan: kernel log read and parsed in %s ms (median)\n'
grep -h 'gpualert: exit: kernel log' "$GPUALERT_LAB"/log/slurmd*.log | tail -1 | sed 's/^.*gpualert: /last: /'
