# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Sourced by the scripts that build something once and keep it in the test
# bed's cache (tests/fabtests/build-fabtests.sh, tests/compat/build-core.sh),
# which set `me` (their name, for messages) first.

# The exit status that says "the sources are absent, skipped".
SKIP=77

msg() { echo "$me: $*" >&2; }
die() { msg "$*"; exit 1; }

# The cache root, chosen like tests/bed/rxe-bed's cache_dir:
# LFV_BED_CACHE, else /var/cache/lfverbs-bed, else ~/.cache/lfverbs-bed.
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

# cached_build KIND NAME STAMP BUILD: makes $cache/KIND/NAME once. BUILD is
# a function called as BUILD WORK DEST (a scratch folder, the folder to
# fill); STAMP is written to DEST/.done last, so a build that died leaves
# nothing that looks done. Prints DEST. Builds nobody used for 30 days go.
cached_build() {
	kind=$1 name=$2 stamp=$3 build_fn=$4
	cache=$(cache_root) || exit 1
	dest=$cache/$kind/$name
	# Fast path without the lock: inside the bed the cache is read-only,
	# where no lock file can be opened.
	if [ ! -f "$dest/.done" ]; then
		mkdir -p "$cache/$kind" || die "cannot create $cache/$kind"
		exec 9>"$cache/$kind/.lock" || die "cannot open $cache/$kind/.lock"
		flock 9 || die "cannot lock $cache/$kind/.lock"
		if [ ! -f "$dest/.done" ]; then
			t0=$(date +%s)
			rm -rf "$dest"
			work=$(mktemp -d "$cache/$kind/build.XXXXXX") || die "mktemp failed"
			# shellcheck disable=SC2064 # expand now
			trap "rm -rf '$work'" EXIT
			"$build_fn" "$work" "$dest"
			printf '%s\n' "$stamp" >"$dest/.done"
			rm -rf "$work"
			trap - EXIT
			msg "built in $(($(date +%s) - t0)) s"
		fi
		exec 9>&-
		find "$cache/$kind" -mindepth 2 -maxdepth 2 -name .done -mtime +30 |
			while read -r f; do rm -rf "$(dirname "$f")"; done
	fi
	touch "$dest/.done" 2>/dev/null
	echo "$dest"
}
