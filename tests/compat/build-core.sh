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

# Bump when the way cores are built changes (flags, providers, layout).
FORMAT=1
SKIP=77

top=$(cd "$(dirname "$0")/../.." && pwd)

msg() { echo "build-core: $*" >&2; }
die() { msg "$*"; exit 1; }

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

cache_root() {
	d=${LFV_BED_CACHE:-}
	if [ -z "$d" ]; then
		d=/var/cache/lfverbs-bed
		if ! mkdir -p "$d" 2>/dev/null || [ ! -w "$d" ]; then
			d=${XDG_CACHE_HOME:-$HOME/.cache}/lfverbs-bed
		fi
	fi
	mkdir -p "$d" || die "cannot create cache directory $d"
	(cd "$d" && pwd -P)
}

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
cache=$(cache_root) || exit 1
dest=$cache/libfabric/$ver-$key

# Fast path without the lock: the stamp is written last, and inside the
# bed the cache is read-only, where no lock file can be opened.
if [ ! -f "$dest/.done" ]; then
	mkdir -p "$cache/libfabric" || die "cannot create $cache/libfabric"
	exec 9>"$cache/libfabric/.lock" || die "cannot open $cache/libfabric/.lock"
	flock 9 || die "cannot lock $cache/libfabric/.lock"
	if [ ! -f "$dest/.done" ]; then
		msg "building libfabric $ver from $tarball into $dest"
		t0=$(date +%s)
		rm -rf "$dest"
		work=$(mktemp -d "$cache/libfabric/build.XXXXXX") || die "mktemp failed"
		# shellcheck disable=SC2064 # expand now
		trap "rm -rf '$work'" EXIT
		tar -xf "$tarball" -C "$work" || die "cannot unpack $tarball"
		build "$work/libfabric-$ver" "$dest/inst"
		printf 'src %s\n' "$tarball" >"$dest/.done"
		rm -rf "$work"
		trap - EXIT
		msg "built in $(($(date +%s) - t0)) s"
	fi
	exec 9>&-
	# Drop builds that no run has used for 30 days.
	find "$cache/libfabric" -mindepth 2 -maxdepth 2 -name .done -mtime +30 |
		while read -r f; do rm -rf "$(dirname "$f")"; done
fi
touch "$dest/.done" 2>/dev/null
echo "$dest/inst"
