#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark `gpualert classify` against `wc -l` on large training logs.
# Not a test: it prints figures.
#
# usage: tests/bench/bench-classify.sh [BUILD_DIR] [SIZE_MB]
#   BUILD_DIR  a configured build directory (default: build)
#   SIZE_MB    size of each generated log (default: 400)
# Environment:
#   BENCH_BASELINE  another gpualert binary (for example one built from
#                   main) measured in the same rounds, for before/after
#   BENCH_DIR       where the logs go (default: $TMPDIR or /tmp); removed
#                   at the end unless BENCH_KEEP=1
#   BENCH_ROUNDS    interleaved rounds per log (default: 3, the
#                   acceptance's best of 3; more on a busy machine)
#   BENCH_SEED      the generator's seed (default: 1): another draw of
#                   the same kinds of lines.  A log of 14 MiB or more is
#                   read with literals chosen for its first 64 KiB, so one
#                   draw can favour one build's choice and the next draw
#                   the other's: compare builds on several.
#
# Two logs from tests/bench/genlog.c: "plain" (training lines, tqdm bars,
# logging timestamps, rank prefixes) and "noisy" (the same with 15 % NCCL
# INFO lines and 10 % Python warnings).  For each, on the cached file,
# BENCH_ROUNDS interleaved rounds of `wc -l`, `gpualert classify` (and
# the baseline); the best wall time and the least CPU time (user +
# system) of each, their ratios to `wc -l` (target: classify <= 3x), the
# median wall time of each (a second opinion when the machine is busy:
# the best of a few runs may be one lucky run), and the peak
# RSS of classify (target: <= 8 MiB).  Last, the peak RSS on 1 GiB
# streamed through stdin.
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
size_mb=${2:-400}
dir=${BENCH_DIR:-${TMPDIR:-/tmp}}/gpualert-bench.$$
base=${BENCH_BASELINE:-}
rounds=${BENCH_ROUNDS:-3}
mkdir -p "$dir"
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$dir"; }
trap cleanup EXIT

[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
ninja -C "$build" cli/gpualert >/dev/null
gpualert=$(cd "$build" && pwd)/cli/gpualert
${CC:-cc} -O2 -o "$dir/genlog" "$src/tests/bench/genlog.c"

now() { date +%s.%N; }

# run NAME CMD...: one timed run; appends "NAME wall cpu rss_kib" to $dir/runs.
run() {
	name=$1
	shift
	t0=$(now)
	/usr/bin/time -f '%U %S %M' -o "$dir/time" "$@" >/dev/null
	t1=$(now)
	awk -v n="$name" -v t0="$t0" -v t1="$t1" \
		'{ printf "%s %.4f %.2f %d\n", n, t1 - t0, $1 + $2, $3 }' \
		"$dir/time" >>"$dir/runs"
}

# best NAME FIELD: the least value of FIELD (2 wall, 3 cpu, 4 rss) of NAME.
best() {
	awk -v n="$1" -v f="$2" '$1 == n && (b == "" || $f < b) { b = $f }
		END { print b }' "$dir/runs"
}
# median NAME: the median wall time of NAME.
median() {
	awk -v n="$1" '$1 == n { print $2 }' "$dir/runs" | sort -n |
		awk '{ v[NR] = $1 } END {
			if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
peak() {
	awk -v n="$1" '$1 == n && $4 > m { m = $4 } END { print m }' "$dir/runs"
}
ratio() { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "n/a" }'; }

echo "gpualert: $gpualert"
[ -n "$base" ] && echo "baseline: $base"
echo "seed: ${BENCH_SEED:-1}"
for mix in plain noisy; do
	log=$dir/$mix.log
	"$dir/genlog" "$size_mb" "${BENCH_SEED:-1}" "$mix" 2>"$dir/mix" >"$log"
	cat "$log" >/dev/null # into the page cache
	: >"$dir/runs"
	for _ in $(seq 1 "$rounds"); do
		run wc wc -l "$log"
		run ga "$gpualert" classify --exit-code 1 "$log"
		[ -z "$base" ] || run base "$base" classify --exit-code 1 "$log"
	done
	echo
	sed 's/^genlog: //' "$dir/mix"
	"$gpualert" classify --exit-code 1 "$log" | sed -n '1p'
	w=$(best wc 2)
	c=$(best wc 3)
	bytes=$(wc -c <"$log")
	mw=$(median wc)
	printf '  %-22s %8s %8s %8s %8s %9s %10s\n' "" "wall s" "x wc" "cpu s" "x wc" \
		"peak RSS" "median x"
	printf '  %-22s %8.3f %8s %8.2f %8s %9s %10s\n' "wc -l" "$w" 1 "$c" 1 \
		"$(peak wc) KiB" 1
	for who in ga base; do
		[ "$who" = base ] && [ -z "$base" ] && continue
		label="gpualert classify"
		[ "$who" = base ] && label="baseline classify"
		bw=$(best "$who" 2)
		bc=$(best "$who" 3)
		printf '  %-22s %8.3f %8s %8.2f %8s %9s %10s  %5.0f MB/s\n' \
			"$label" "$bw" "$(ratio "$bw" "$w")" "$bc" \
			"$(ratio "$bc" "$c")" "$(peak "$who") KiB" \
			"$(ratio "$(median "$who")" "$mw")" \
			"$(echo "$bytes $bw" | awk '{ print $1 / $2 / 1e6 }')"
	done
	rm -f "$log"
done

# Peak RSS on 1 GiB through stdin, never on disk: repeat a log as needed.
echo
"$dir/genlog" 64 2 noisy 2>/dev/null >"$dir/seed.log"
# A bounded number of copies: an endless "while :; do cat; done" outlives
# head (each cat dies of SIGPIPE, the loop starts the next), and the
# command substitution waits for it forever.
copies=$(( 1073741824 / $(stat -c %s "$dir/seed.log") + 1 ))
rss=$( (for i in $(seq 1 "$copies"); do cat "$dir/seed.log"; done) 2>/dev/null | head -c 1073741824 |
	/usr/bin/time -f '%M' "$gpualert" classify --exit-code 1 - 2>&1 >/dev/null |
	tail -n 1)
echo "peak RSS, 1 GiB (noisy mix) through stdin: ${rss} KiB (target <= 8192 KiB)"
