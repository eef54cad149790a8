#!/bin/sh
# SPDX-License-Identifier: MIT
# What loading gpualert.so costs every srun, sbatch and salloc once its
# plugstack line is on (slurmstepd pays the same load): dlopen plus
# slurm_spank_init in the local context without --gpualert, each in a
# fresh process (tests/bench/plugin-load.c), against a baseline plugin in
# the same run, the two alternating.  Not a test: prints figures.
#
# usage: tests/bench/bench-load.sh PLUGIN BASELINE_PLUGIN [N]
#   BASELINE_PLUGIN  another build's gpualert.so, for example the one of
#                    an earlier commit (git worktree add, meson setup,
#                    ninja plugin/gpualert.so)
#   N                rounds (default 100)
# The plugstack argument is config=etc/gpualert.conf of this tree.
set -eu
so=$(realpath "$1")
base=$(realpath "$2")
n=${3:-100}
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/ga-bench-load.XXXXXX)
trap 'rm -rf "$dir"' EXIT
${CC:-cc} -O2 -rdynamic -o "$dir/plugin-load" "$src/tests/bench/plugin-load.c" -ldl
conf="config=$src/etc/gpualert.conf"
i=0
while [ "$i" -lt "$n" ]; do
	"$dir/plugin-load" "$base" "$conf" >>"$dir/base"
	"$dir/plugin-load" "$so" "$conf" >>"$dir/new"
	i=$((i + 1))
done
echo "# gpualert plugin load, $(date -u +%FT%TZ), $(nproc) CPUs, $(uname -r), $n alternating rounds"
python3 - "$dir/base" "$dir/new" <<'PY'
import statistics as s, sys
def rows(p):
    return [list(map(float, l.split())) for l in open(p)]
b, n = rows(sys.argv[1]), rows(sys.argv[2])
def show(name, r):
    load = [x[0] for x in r]; init = [x[1] for x in r]
    tot = [x[0] + x[1] for x in r]
    print("%-9s load %.3f ms + init %.3f ms = %.3f ms (medians); faults %d + %d"
          % (name, s.median(load), s.median(init), s.median(tot),
             s.median([x[2] for x in r]), s.median([x[3] for x in r])))
show("baseline", b)
show("plugin", n)
d = [y[0] + y[1] - x[0] - x[1] for x, y in zip(b, n)]
print("plugin - baseline: %+.3f ms (median of %d paired differences)" % (s.median(d), len(d)))
PY
