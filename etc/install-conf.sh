#!/bin/sh
# SPDX-License-Identifier: MIT
# meson install script: install SRC as DEST (an absolute path) unless DEST
# already exists, so that `meson install` never overwrites a site's
# settings.  An existing DEST is left alone and the shipped version is put
# next to it as DEST.new, for the admin to compare.
set -eu
src=$1
# meson exports the prefix with and without DESTDIR; their difference is
# DESTDIR (packaging), empty for a plain `meson install`.
destdir=${MESON_INSTALL_DESTDIR_PREFIX:-}
destdir=${destdir%"${MESON_INSTALL_PREFIX:-}"}
dest=$destdir$2
mode=${3:-0644}
install -d "$(dirname "$dest")"
if [ -e "$dest" ]; then
	install -m "$mode" "$src" "$dest.new"
	echo "gpualert: kept $2 (the shipped version is $2.new)"
else
	install -m "$mode" "$src" "$dest"
fi
