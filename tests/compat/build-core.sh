#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Builds an upstream libfabric core (and, with --fabtests, that release's
# fabtests against it) once, and prints the install prefix (one line on
# stdout; everything else goes to stderr).
#
#   tests/compat/build-core.sh [--fabtests] VERSION     e.g. 2.1.0
#
# The sources are libfabric-VERSION.tar.xz in ../shared/libfabric/ beside
# the repository, or in LFV_LIBFABRIC_SRC (a folder holding such
# tarballs). The core is small: shm, lnx (2.x), rxm, tcp and verbs, which
# are the peers and baselines lfverbs is tested against. Builds are cached
# under the test bed's cache root (LFV_BED_CACHE, else
# /var/cache/lfverbs-bed, else ~/.cache/lfverbs-bed) in
# libfabric/<key>/, where <key> covers the tarball's sha256 and this
# script's build format.
#
# Exit status: 0 with the prefix printed; 77 when the sources are absent
# (one line says so); 1 when the build fails.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
me=build-core
# shellcheck source=tests/bed/cache.sh
. "$top/tests/bed/cache.sh"

# Bump when the way cores are built changes (flags, providers, layout).
FORMAT=1

fabtests=0
if [ "${1:-}" = --fabtests ]; then
	fabtests=1
	shift
fi
ver=${1:-}
case $ver in
[0-9]*.[0-9]*.[0-9]*) ;;
*) die "usage: $0 [--fabtests] VERSION (e.g. 2.1.0)" ;;
esac

srcdir=${LFV_LIBFABRIC_SRC:-$top/../shared/libfabric}
tarball=$srcdir/libfabric-$ver.tar.xz
if [ ! -f "$tarball" ]; then
	echo "libfabric $ver: skipped ($tarball is absent)"
	exit $SKIP
fi

# The providers this release has, of those wanted (1.x has no lnx).
providers() {
	for p in shm lnx rxm tcp verbs; do
		grep -q "^FI_PROVIDER_SETUP(\[$p\])" "$1/configure.ac" &&
			echo "--enable-$p"
	done
}

# Configures, builds and installs the core from $1 into $2, then (with
# --fabtests) the fabtests of the same tree against it; logs in $1.
build() {
	(
		cd "$1" &&
			./autogen.sh &&
			# shellcheck disable=SC2046 # one word per provider
			./configure --prefix="$2" --enable-only $(providers "$1") \
				--disable-static &&
			make -j"$(nproc)" &&
			make install
	) >"$1/build.log" 2>&1 || {
		tail -n 30 "$1/build.log" >&2
		die "libfabric $ver build failed (log above)"
	}
	[ "$fabtests" = 1 ] || return 0
	(
		cd "$1/fabtests" &&
			./autogen.sh &&
			./configure --prefix="$2" --with-libfabric="$2" &&
			make -j"$(nproc)" &&
			make install
	) >"$1/fabtests.log" 2>&1 || {
		tail -n 30 "$1/fabtests.log" >&2
		die "fabtests $ver build failed (log above)"
	}
}

key=$(printf '%s\n' "$FORMAT" "$fabtests" "$(sha256sum <"$tarball" | cut -d' ' -f1)" |
	sha256sum | cut -c1-16)
# Called by cached_build: the core (and fabtests) built in $1, installed
# into $2/inst.
make_core() {
	msg "building libfabric $ver from $tarball into $2"
	tar -xf "$tarball" -C "$1" || die "cannot unpack $tarball"
	build "$1/libfabric-$ver" "$2/inst"
}
dest=$(cached_build libfabric "$ver-$key" "src $tarball" make_core) || exit 1
echo "$dest/inst"
