#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The layers (README, Layout): the transport-independent core in src/ and
# include/ never includes a header of prov/ and never names what prov/
# defines (checked on the built objects, nm, and the #include lines); no
# file's #include lines come back to it; and the transport's modules (a .c
# and its .h) use each other by name in cycles of at most
# LFV_MODULE_CYCLE_MAX (tests/unit/modgraph.py). TAP; run from the build
# directory, after the library is built.
top=${srcdir:-.}/
[ -d "${top}src" ] || top=$(dirname "$0")/../../
objs=.libs
echo "1..4"

bad=$(for f in "${top}"src/*.c "${top}"include/*.h; do
	sed -n 's/^#include "\(.*\)"/\1/p' "$f" | while read -r inc; do
		[ -f "${top}prov/lfverbs/$inc" ] && echo "$(basename "$f") includes $inc"
	done
done)
if [ -z "$bad" ]; then
	echo "ok 1 - src/ and include/ include no header of prov/"
else
	echo "$bad" | sed 's/^/# /'
	echo "not ok 1 - src/ and include/ include no header of prov/"
fi

src_o=$(ls src/$objs/liblfverbs_core_la-*.o 2>/dev/null)
prov_o=$(ls prov/lfverbs/$objs/liblfverbs_core_la-*.o 2>/dev/null)
if [ -z "$src_o" ] || [ -z "$prov_o" ]; then
	echo "not ok 2 - no objects under src/$objs and prov/lfverbs/$objs"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086 # lists of files
nm -u $src_o | awk 'NF == 2 { print $2 }' | sort -u >"$tmp/used"
# shellcheck disable=SC2086
nm --defined-only $prov_o | awk '$2 ~ /^[TDBRV]$/ { print $3 }' |
	sort -u >"$tmp/defined"
names=$(comm -12 "$tmp/used" "$tmp/defined")
if [ -z "$names" ]; then
	echo "ok 2 - src/ names nothing that prov/ defines"
else
	echo "$names" | sed 's/^/# src\/ uses /'
	echo "not ok 2 - src/ names nothing that prov/ defines"
fi

# The module graph needs python3 and Universal Ctags (tests/deps.sh).
modgraph="python3 ${top}tests/unit/modgraph.py"
if ! command -v python3 >/dev/null || ! ctags --version 2>/dev/null |
	grep -q Universal; then
	echo "ok 3 # SKIP no python3 or Universal Ctags"
	echo "ok 4 # SKIP no python3 or Universal Ctags"
	exit 0
fi
# shellcheck disable=SC2086 # lists of files
if out=$($modgraph --includes "${top}"prov/lfverbs/*.[ch] "${top}"src/*.c \
	"${top}"include/*.h) && echo "$out" | grep -q "^largest cycle: 1 "; then
	echo "ok 3 - no file's #include lines come back to it"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 3 - no file's #include lines come back to it"
fi
# At most 3 modules in a cycle of name use in prov/lfverbs/ (issue 15).
max=${LFV_MODULE_CYCLE_MAX:-3}
# shellcheck disable=SC2086
if out=$($modgraph --max-scc "$max" "${top}"prov/lfverbs/*.[ch]); then
	echo "ok 4 - prov/lfverbs/ modules use each other in cycles of at most $max"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 4 - prov/lfverbs/ modules use each other in cycles of at most $max"
fi
