#!/bin/sh
# Golden messages: render each case in tests/golden/mail and compare it
# byte for byte with the checked-in .eml.  GA_REGENERATE=1 rewrites them.
set -u
G="$SRCDIR/tests/golden/mail"
fail=0
n=0
check() {
	name=$1; shift
	n=$((n + 1))
	out=$(mktemp)
	if ! "$RENDER_MAIL" "$@" >"$out"; then
		echo "not ok $n - $name (render failed)"; fail=1; rm -f "$out"; return
	fi
	if [ "${GA_REGENERATE:-}" = 1 ]; then
		cp "$out" "$G/$name"
		echo "ok $n - $name regenerated"
	elif cmp -s "$out" "$G/$name"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name differs:"
		diff -u "$G/$name" "$out" | head -40 | sed 's/^/# /'
		fail=1
	fi
	rm -f "$out"
}
check single.eml --claim 1234.00000000000000aa "$G/single.json"
check multi.eml --claim 5678.00000000000000bb "$G/multi-0-node07.json" \
	"$G/multi-0-node08.json" "$G/multi-batch.json"
check inject.eml --claim 4242.00000000000000cc "$G/inject.json"
check utf8.eml --claim 4243.00000000000000dd "$G/utf8.json"
check array.eml --claim 900.00000000000000ee "$G/array-0.json" \
	"$G/array-1.json" "$G/array-2.json" "$G/array-3.json" "$G/array-4.json"
check budget.eml --claim 1234.00000000000000ff --budget 100 "$G/single.json"
check webhook.json --webhook --claim 1234.00000000000000aa "$G/single.json"
echo "1..$n"
exit $fail
