#!/bin/sh
# SPDX-License-Identifier: MIT
# What the prefilter of the built-in rules lets through on bench-classify's
# generated logs: the share of positions some bucket accepts, and of those
# the share the bit table keeps, with the ruleset's own tables and with
# tables tuned to the log's first 64 KiB, paired in the same run.  The
# buckets' and the bit table's work is most of what a classification
# costs beyond reading the log, and where a literal is placed decides it.
# Counts positions, so the figures are the same on every machine.  Not a
# test: it prints figures.
#
# usage: tests/bench/bench-prefilter.sh [BUILD_DIR] [SIZE_MB]
#   BUILD_DIR  a configured build directory (default: build)
#   SIZE_MB    size of each generated log (default: 24)
# Environment:
#   BENCH_SEEDS  the generator's seeds, one log of each mix per seed
#                (default: 1, bench-classify's log)
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
size_mb=${2:-24}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ninja -C "$build" tests/bench/prefilter-cost >/dev/null
cost=$(cd "$build" && pwd)/tests/bench/prefilter-cost
${CC:-cc} -O2 -o "$dir/genlog" "$src/tests/bench/genlog.c"

echo "prefilter-cost: $cost"
echo "buckets: share of positions some bucket accepts; bits: share of those"
echo "the bit table keeps; own: the ruleset's tables; tuned: tuned to 64 KiB"
printf '%-6s %4s %10s %10s %10s %10s %10s\n' mix seed positions \
	own-bucket own-bits tuned-bucket tuned-bits
for mix in plain noisy; do
	for seed in ${BENCH_SEEDS:-1}; do
		"$dir/genlog" "$size_mb" "$seed" "$mix" 2>/dev/null >"$dir/log"
		echo "$mix $seed $("$cost" "$dir/log")"
	done
done | awk '{
	printf "%-6s %4s %10.0f %9.2f%% %9.1f%% %11.2f%% %9.1f%%\n",
	       $1, $2, $3, 100 * $4 / $3, 100 * $5 / ($4 ? $4 : 1),
	       100 * $6 / $3, 100 * $7 / ($6 ? $6 : 1) }'
