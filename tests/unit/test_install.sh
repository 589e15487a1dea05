#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# `make install` puts the plugin and its man page where they belong, the
# plugin exports only fi_prov_ini, and the core loads the installed copy.
# TAP. Installs into a scratch DESTDIR, never into the system.
: "${LFV_TOP_BUILDDIR:?run through make check}"
: "${LFV_PROVIDERDIR:?run through make check}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
echo "1..6"
make -s -C "$LFV_TOP_BUILDDIR" install DESTDIR="$tmp" >"$tmp.log" 2>&1
ok $? "make install DESTDIR=..."
so="$tmp$LFV_PROVIDERDIR/liblfverbs-fi.so"
[ -f "$so" ]; ok $? "plugin installed as $LFV_PROVIDERDIR/liblfverbs-fi.so"
syms=$(nm -D --defined-only "$so" 2>/dev/null | awk '$2 == "T" { print $3 }')
[ "$syms" = "fi_prov_ini" ]; ok $? "the plugin exports only fi_prov_ini (got: $syms)"
[ -n "$(find "$tmp" -name fi_lfverbs.7)" ]; ok $? "man page fi_lfverbs.7 installed"
if command -v fi_info >/dev/null 2>&1; then
	FI_PROVIDER_PATH="$tmp$LFV_PROVIDERDIR" fi_info -l 2>/dev/null | grep -q "^lfverbs:"
	ok $? "the core loads the installed plugin"
else
	echo "ok 5 # SKIP fi_info not installed"
fi
# With the default prefix, the plugin goes exactly where the core looks
# when FI_PROVIDER_PATH is unset (its help text names that default).
core_dir=$(fi_info -e 2>/dev/null | grep -a -A1 "^# FI_PROVIDER_PATH:" |
	sed -n 's/.*(default: \(\/[^)]*\)).*/\1/p')
fabric_libdir=$(pkg-config --variable=libdir libfabric 2>/dev/null)
if [ "$LFV_PROVIDERDIR" != "$fabric_libdir/libfabric" ]; then
	echo "ok 6 # SKIP configured with another prefix ($LFV_PROVIDERDIR)"
else
	[ -n "$core_dir" ] && [ "$core_dir" = "$LFV_PROVIDERDIR" ]
	ok $? "installs into the core's default provider directory ($core_dir)"
fi
rm -f "$tmp.log"
[ $fails -eq 0 ]
