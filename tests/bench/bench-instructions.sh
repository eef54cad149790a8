#!/bin/sh
# SPDX-License-Identifier: MIT
# Count the instructions `gpualert classify` executes on bench-classify's
# two generated logs, against a baseline binary, under valgrind's
# callgrind.  Wall time on a shared VM spreads by tens of per cent between
# runs of the same binary; an instruction count is the same in every run,
# so it resolves the few per cent that a rule change costs or saves.  It
# does not see what the count leaves out (cache misses, the SIMD width),
# so bench-classify's times stay the figure for speed.  Not a test: it
# prints figures.
#
# usage: tests/bench/bench-instructions.sh BASELINE [BUILD_DIR] [SIZE_MB]
#   BASELINE   another gpualert binary (for example last round's build)
#   BUILD_DIR  a configured build directory (default: build)
#   SIZE_MB    size of each generated log (default: 24: callgrind runs a
#              program some fifty times slower)
# Environment:
#   BENCH_SEEDS  the generator's seeds, one log of each mix per seed
#                (default: 1, bench-classify's log).  Each seed is another
#                draw of the same kinds of lines: a log of 14 MiB or more is
#                classified with a prefilter tuned to its first 64 KiB, and
#                what one draw's sample favours another's may not, so a
#                change to the tuning is judged on several, with a total.
set -eu

[ $# -ge 1 ] || { echo "usage: $0 BASELINE [BUILD_DIR] [SIZE_MB]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
base=$1
build=${2:-build}
size_mb=${3:-24}
command -v valgrind >/dev/null ||
	{ echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ninja -C "$build" cli/gpualert >/dev/null
gpualert=$(cd "$build" && pwd)/cli/gpualert
${CC:-cc} -O2 -o "$dir/genlog" "$src/tests/bench/genlog.c"

# instructions CMD...: the instructions CMD executes (callgrind's Ir),
# with the built-in rules only.
instructions() {
	GPUALERT_RULES_DIR= valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "gpualert: $gpualert"
echo "baseline: $base"
seeds=${BENCH_SEEDS:-1}
printf '%-6s %4s %14s %14s %9s\n' mix seed gpualert baseline change
for mix in plain noisy; do
	for seed in $seeds; do
		"$dir/genlog" "$size_mb" "$seed" "$mix" 2>/dev/null >"$dir/$mix.log"
		new=$(instructions "$gpualert" classify "$dir/$mix.log")
		old=$(instructions "$base" classify "$dir/$mix.log")
		echo "$mix $seed $new $old"
	done | awk '{
		printf "%-6s %4s %14.0f %14.0f %+8.2f%%\n", $1, $2, $3, $4,
		       100 * ($3 - $4) / $4
		n++; tn += $3; to += $4; mix = $1 }
	END { if (n > 1) printf "%-6s %4s %14.0f %14.0f %+8.2f%%\n", mix, "all",
		tn, to, 100 * (tn - to) / to }'
done
