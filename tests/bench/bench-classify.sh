#!/bin/sh
# Benchmark `gpualert classify` on a large training-style log.  Not a test:
# it prints figures.
#
# usage: tests/bench/bench-classify.sh [BUILD_DIR] [SIZE_MB]
#   BUILD_DIR  a configured build directory (default: build)
#   SIZE_MB    size of the generated log (default: 400)
# Environment: BENCH_DIR (default: $TMPDIR or /tmp) holds the generated
# files; they are removed at the end unless BENCH_KEEP=1.
#
# Prints: best-of-3 wall time of `wc -l`, `gpualert classify` and
# `grep -E` with a dozen patterns on the cached file, the classify/wc
# ratio (target: <= 5), and the peak RSS of gpualert classify on a 10 MB
# file and on 1 GB streamed through stdin (target: flat, <= 8 MiB).
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
size_mb=${2:-400}
dir=${BENCH_DIR:-${TMPDIR:-/tmp}}/gpualert-bench.$$
mkdir -p "$dir"
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$dir"; }
trap cleanup EXIT

ninja -C "$build" cli/gpualert >/dev/null
gpualert=$(cd "$build" && pwd)/cli/gpualert
${CC:-cc} -O2 -o "$dir/genlog" "$src/tests/bench/genlog.c"

log=$dir/train.log
echo "generating a ${size_mb} MB log in $dir ..."
"$dir/genlog" "$size_mb" >"$log"
bytes=$(wc -c <"$log")
lines=$(wc -l <"$log")
cat "$log" >/dev/null   # into the page cache

now() { date +%s.%N; }
# best_of3 CMD...: the best wall time of three runs, in seconds.
best_of3() {
	best=
	for _ in 1 2 3; do
		t0=$(now)
		"$@" >/dev/null
		t1=$(now)
		best=$(echo "$t0 $t1 ${best:-999999}" |
		       awk '{ d = $2 - $1; print (d < $3 ? d : $3) }')
	done
	echo "$best"
}

# best_cpu3 CMD...: the least CPU time (user + system) of three runs: on a
# shared, busy machine this moves far less than wall time.
best_cpu3() {
	best=
	for _ in 1 2 3; do
		t=$(/usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -n 1 |
		    awk '{ print $1 + $2 }')
		best=$(echo "$t ${best:-999999}" |
		       awk '{ print ($1 < $2 ? $1 : $2) }')
	done
	echo "$best"
}

t_wc=$(best_of3 wc -l "$log")
t_ga=$(best_of3 "$gpualert" classify --exit-code 1 "$log")
t_grep=$(best_of3 grep -E -c \
	-e 'CUDA out of memory' -e 'CUDA error: out of memory' \
	-e 'Watchdog caught collective operation timeout' \
	-e 'NCCL error' -e 'No space left on device' -e 'MemoryError' \
	-e 'Segmentation fault' -e 'Traceback \(most recent call last\)' \
	-e 'device-side assert' -e 'illegal memory access' \
	-e 'CANCELLED AT \S+ DUE TO TIME LIMIT' -e 'Xid \([^)]*\): [0-9]+' \
	"$log")

echo
echo "input: $bytes bytes, $lines lines"
"$gpualert" classify --exit-code 1 "$log" | sed -n '1,3p'
printf '%-34s %8.3f s  %7.0f MB/s\n' "wc -l" "$t_wc" \
	"$(echo "$bytes $t_wc" | awk '{ print $1 / $2 / 1e6 }')"
printf '%-34s %8.3f s  %7.0f MB/s\n' "gpualert classify" "$t_ga" \
	"$(echo "$bytes $t_ga" | awk '{ print $1 / $2 / 1e6 }')"
printf '%-34s %8.3f s  %7.0f MB/s\n' "grep -E (12 patterns)" "$t_grep" \
	"$(echo "$bytes $t_grep" | awk '{ print $1 / $2 / 1e6 }')"
echo "ratio classify / wc -l:  $(echo "$t_ga $t_wc" | awk '{ printf "%.2f", $1 / $2 }') (target <= 5)"
echo "ratio classify / grep:   $(echo "$t_ga $t_grep" | awk '{ printf "%.2f", $1 / $2 }')"
if [ -x /usr/bin/time ]; then
	c_wc=$(best_cpu3 wc -l "$log")
	c_ga=$(best_cpu3 "$gpualert" classify --exit-code 1 "$log")
	echo "cpu time: wc -l ${c_wc} s, classify ${c_ga} s, ratio $(echo "$c_ga $c_wc" |
		awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "n/a" }') (best of 3, user + system)"
fi

# Peak RSS.  /usr/bin/time is the Debian package "time".
if [ -x /usr/bin/time ]; then
	small=$dir/small.log
	head -c 10485760 "$log" >"$small"
	rss_small=$(/usr/bin/time -v "$gpualert" classify --exit-code 1 "$small" \
		2>&1 >/dev/null | awk -F: '/Maximum resident/ { print $2 + 0 }')
	# 1 GiB through stdin, never on disk: repeat the log as needed.
	rss_big=$( (while :; do cat "$log"; done) 2>/dev/null | head -c 1073741824 |
		/usr/bin/time -v "$gpualert" classify --exit-code 1 - \
		2>&1 >/dev/null | awk -F: '/Maximum resident/ { print $2 + 0 }')
	echo "peak RSS, 10 MB file:    ${rss_small} KiB"
	echo "peak RSS, 1 GiB stdin:   ${rss_big} KiB (target <= 8192 KiB, flat)"
else
	echo "peak RSS: /usr/bin/time not found (apt-get install time)"
fi
