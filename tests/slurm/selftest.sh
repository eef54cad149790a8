#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/slurm/selftest.sh -- start a lab, run srun/sbatch/multi-node jobs, stop it.
# Uses the same GPUALERT_LAB* variables as lab.sh.  Exit 0 when all checks pass.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lab=$here/lab.sh
fail=0
now() { date +%s%N; }
since() { local c=$(( ($(now) - $1) / 10000000 )); printf '%d.%02d' $((c / 100)) $((c % 100)); }
check() { local what=$1; shift; if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi; }

t=$(now); "$lab" start; echo "start: $(since "$t") s"
trap '"$lab" stop' EXIT
eval "$("$lab" env)"
U=$GPUALERT_LAB_USER

check "srun hostname" test "$(srun hostname)" = "$(hostname -s)"
check "srun as $U" test "$(runuser -u "$U" -- srun id -un)" = "$U"

t=$(now)
rc=0; runuser -u "$U" -- sbatch -Q --wait -D "$GPUALERT_LAB_JOBS" -o rc3-%j.out --wrap 'echo batch-ok; exit 3' || rc=$?
echo "sbatch --wait: $(since "$t") s"
check "sbatch --wait rc=3" test "$rc" = 3
check "batch output" grep -q batch-ok "$GPUALERT_LAB_JOBS"/rc3-*.out
check "sacct -c sees FAILED 3:0" sh -c 'sacct -c -n -o State,ExitCode | grep -q "FAILED *3:0"'

if [ "$GPUALERT_LAB_NODES" = 2 ]; then
    out=$(runuser -u "$U" -- srun -N2 -l bash -c 'echo $SLURMD_NODENAME' | sort)
    check "srun -N2 -l" test "$out" = "0: ga${GPUALERT_LAB_PORT}n1
1: ga${GPUALERT_LAB_PORT}n2"
fi

if [ "$GPUALERT_LAB_CGROUP" = 1 ]; then
    rc=0; out=$(runuser -u "$U" -- srun --mem=50M /usr/bin/python3 -c 'b=bytearray(300<<20)' 2>&1) || rc=$?
    check "cgroup OOM detected (rc=$rc)" sh -c "echo '$out' | grep -q 'oom-kill event'"
fi

# several jobs at once
t=$(now)
for i in 1 2; do runuser -u "$U" -- sbatch -Q -D "$GPUALERT_LAB_JOBS" -o par-%j.out --wrap 'sleep 10'; done
for i in $(seq 1 50); do [ "$(squeue -h -t R | wc -l)" -ge 2 ] && break; sleep 0.2; done
check "2 jobs running at once" test "$(squeue -h -t R | wc -l)" -ge 2

trap - EXIT
t=$(now); "$lab" stop; echo "stop: $(since "$t") s"
[ $fail = 0 ] && echo "selftest: all ok" || echo "selftest: FAILED"
exit $fail
