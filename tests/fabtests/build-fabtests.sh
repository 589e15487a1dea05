#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Builds upstream fabtests once and prints the install prefix (one line on
# stdout; everything else goes to stderr).
#
# The sources are libfabric-1.17.1.tar.xz in ../shared/libfabric/ beside the
# repository (the fabtests matching Debian 12's libfabric 1.17 core), or
# LFV_FABTESTS_SRC: a tarball or an unpacked libfabric or fabtests tree.
# Builds are cached under the test bed's cache root (LFV_BED_CACHE, else
# /var/cache/lfverbs-bed, else ~/.cache/lfverbs-bed) in
# fabtests/<key>/, where <key> covers the sources' sha256, the installed
# libfabric-dev version and this script's build format, so a new Debian
# libfabric or a new tarball rebuilds and nothing else does.
#
# Exit status: 0 with the prefix printed; 77 when the sources are absent
# (one line says so); 1 when the build fails.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
me=build-fabtests
# shellcheck source=tests/bed/cache.sh
. "$top/tests/bed/cache.sh"

# Bump when the way fabtests are built changes (flags, layout).
FORMAT=1

# Where the sources are: a file (tarball) or a directory, or nothing.
find_src() {
	if [ -n "${LFV_FABTESTS_SRC:-}" ]; then
		[ -e "$LFV_FABTESTS_SRC" ] || die "LFV_FABTESTS_SRC=$LFV_FABTESTS_SRC does not exist"
		echo "$LFV_FABTESTS_SRC"
	elif [ -f "$top/../shared/libfabric/libfabric-1.17.1.tar.xz" ]; then
		echo "$top/../shared/libfabric/libfabric-1.17.1.tar.xz"
	fi
}

# The fabtests directory inside an unpacked tree (libfabric or fabtests).
fabtests_dir() {
	if [ -f "$1/fabtests/configure.ac" ]; then
		echo "$1/fabtests"
	elif [ -f "$1/configure.ac" ] && [ -d "$1/ubertest" ]; then
		echo "$1"
	else
		return 1
	fi
}

# sha256 of the sources: the tarball itself, or every file of a tree (in
# name order, so the same tree gives the same key).
src_hash() {
	if [ -f "$1" ]; then
		sha256sum <"$1" | cut -d' ' -f1
	else
		d=$(fabtests_dir "$1") || die "no fabtests sources in $1"
		(cd "$d" && find . -type f ! -path './.git/*' -print0 | LC_ALL=C sort -z |
			xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
	fi
}

# Unpacks (or copies) the fabtests sources into $1/src.
unpack() {
	if [ -f "$src" ]; then
		mkdir -p "$1/t" || die "cannot create $1/t"
		tar -xf "$src" -C "$1/t" --wildcards '*/fabtests/*' ||
			die "cannot unpack fabtests from $src"
		mv "$1"/t/*/fabtests "$1/src" || die "no fabtests/ in $src"
	else
		cp -a "$(fabtests_dir "$src")" "$1/src" || die "cannot copy $src"
	fi
}

# Configures, builds and installs into $2 from $1/src; the log is $1/build.log.
build() {
	(
		cd "$1/src" &&
			./autogen.sh &&
			./configure --prefix="$2" &&
			make -j"$(nproc)" &&
			make install
	) >"$1/build.log" 2>&1 || {
		tail -n 30 "$1/build.log" >&2
		die "fabtests build failed (log above)"
	}
}

src=$(find_src) || exit 1
if [ -z "$src" ]; then
	echo "fabtests: skipped (../shared/libfabric is absent)"
	exit $SKIP
fi
ver=$(dpkg-query -W -f='${Version}' libfabric-dev 2>/dev/null) ||
	die "libfabric-dev is not installed (tests/deps.sh installs it)"
key=$(printf '%s\n' "$FORMAT" "$(src_hash "$src")" "$ver" | sha256sum | cut -c1-16)
# Called by cached_build: the sources unpacked in $1, fabtests built and
# installed into $2/inst.
make_fabtests() {
	msg "building fabtests from $src (libfabric-dev $ver) into $2"
	unpack "$1"
	build "$1" "$2/inst"
}
dest=$(cached_build fabtests "$key" "src $src, libfabric-dev $ver" \
	make_fabtests) || exit 1
echo "$dest/inst"
