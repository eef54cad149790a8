#!/bin/sh
# Build the libFuzzer targets with clang (address and undefined-behaviour
# sanitizers) into their own build directory and run each for SECONDS.
#
# usage: tests/fuzz/run.sh [SECONDS]   (default 60 per target)
# Environment: CC (default clang), FUZZ_BUILD (default build-fuzz),
# FUZZ_JOBS (parallel fuzzing processes per target, default 1).
# New inputs go to $FUZZ_BUILD/corpus-*; crashes to $FUZZ_BUILD/crash-*.
# The committed seeds in tests/fuzz/corpus/ are read, never written.
set -eu

seconds=${1:-60}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_BUILD:-$src/build-fuzz}
cc=${CC:-clang}
jobs=${FUZZ_JOBS:-1}
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"

mkdir -p "$out/common"
# The modules the parsers under test use (not the mail side, which needs
# libcurl and zlib).
core=
for m in buf classifier diag fdio ini json linereader log prefilter rules \
	status taxonomy; do
	core="$core $src/common/$m.c"
done
# Configure the core's generated files (ga-config.h, the built-in rules)
# with meson once, then compile the library and targets directly.
if [ ! -f "$out/meson/build.ninja" ]; then
	CC=$cc meson setup "$out/meson" "$src" -Dplugin=disabled >/dev/null
fi
ninja -C "$out/meson" rules/builtin-rules.c >/dev/null
pcre=$(pkg-config --cflags --libs libpcre2-8)

for target in rules classify; do
	# shellcheck disable=SC2086
	$cc $flags -std=gnu11 -D_GNU_SOURCE -I"$out/meson" -I"$src/common" \
		-o "$out/fuzz-$target" "$src/tests/fuzz/fuzz-$target.c" \
		$core "$out/meson/rules/builtin-rules.c" $pcre
done

status=0
for target in rules classify; do
	mkdir -p "$out/corpus-$target"
	echo "fuzz-$target: ${seconds}s"
	par=
	[ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"
	# shellcheck disable=SC2086
	(cd "$out" && ./fuzz-$target -max_total_time="$seconds" \
		-max_len=65536 -timeout=10 -rss_limit_mb=2048 $par \
		-print_final_stats=1 \
		"$out/corpus-$target" "$src/tests/fuzz/corpus/$target") ||
		status=1
done
exit $status
