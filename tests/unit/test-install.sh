#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/unit/test-install.sh BUILD_DIR SYSCONFDIR
# `meson install` twice into a scratch DESTDIR, with the settings edited in
# between: the second install keeps the edits (gpualert.conf and the
# plugstack snippet) and puts the shipped versions next to them as .new.
# Prints TAP.
set -u
BUILD=$1; ETC=$2
. "$(dirname "$0")/../tap.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
conf=$tmp$ETC/gpualert/gpualert.conf
plug=$tmp$ETC/slurm/plugstack.conf.d/gpualert.conf
if meson install -C "$BUILD" --no-rebuild --destdir "$tmp" >"$tmp.log" 2>&1; then
	ok "meson install into a scratch DESTDIR"
else
	nok "meson install failed: $(tail -3 "$tmp.log")"
fi
[ -f "$conf" ] && [ ! -e "$conf.new" ] && ok "first install: gpualert.conf" || nok "first install: no $conf"
echo "; site edit" >>"$conf"
[ -f "$plug" ] && echo "optional /site/gpualert.so" >>"$plug"
meson install -C "$BUILD" --no-rebuild --destdir "$tmp" >"$tmp.log" 2>&1
grep -q '^; site edit$' "$conf" && ok "second install keeps the edited gpualert.conf" || nok "gpualert.conf overwritten"
cmp -s "$conf.new" "$(dirname "$0")/../../etc/gpualert.conf" && ok "... and puts the shipped one next to it (.new)" ||
	nok "no gpualert.conf.new"
if [ -f "$plug" ]; then
	grep -q '^optional /site/gpualert.so$' "$plug" && ok "second install keeps the edited plugstack snippet" ||
		nok "plugstack snippet overwritten"
fi
rm -f "$tmp.log"
tap_done
