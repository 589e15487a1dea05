#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The cost of least exposure (issue 14, item 3; not a test): lfverbs' RDM
# rendezvous before and after the change, in one test-bed session, with
# the registration cache off and on, with and without the application's
# descriptor (bench_rdm --desc; its region is registered FI_SEND |
# FI_RECV, so after the change each rendezvous source is registered for
# remote read for that send alone). Phases of bench_rdm: 1 MiB bandwidth
# (window 4) and a 64 KiB tagged ping-pong, both rendezvous.
#
#   tests/bench/run-exposure.sh [--rounds R]
#   tests/bench/run-exposure.sh --table-only
#   tests/bench/run-exposure.sh --prepare   builds only (no bed session)
#
# "before" is the plugin built from LFV_XP_BEFORE (default: the parent of
# the commit "Issue 14, item 3: least exposure ..."), into
# build/bench/xp-before; "after" is build/.libs (tests/build.sh). Rounds
# run every combination, in an order rotated each round. Everything goes
# to build/bench/xp-*. See tests/bench/README.md.
set -eu
bench_pfx=xp
# shellcheck source=tests/bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

: "${LFV_XP_ROUNDS:=3}"		# rounds of every combination
: "${LFV_XP_LAT:=200}"		# 64 KiB ping-pongs per run
: "${LFV_XP_BW:=32}"		# 1 MiB messages per run
: "${LFV_XP_CACHE:=1024}"	# FI_LFVERBS_MR_CACHE of the "cache on" runs
export LFV_XP_ROUNDS LFV_XP_LAT LFV_XP_BW LFV_XP_CACHE
bench_stall_secs=0
before=$out/xp-before

# ---- inside the bed: build/bench/xp-results.txt ----------------------------
in_bed() {
	: "${LFV_BED_IP:?not in the test bed}"
	bench_in_bed "$out/xp-results.txt"
	port=47900
	combos=""
	for build in before after; do
		for cache in 0 "$LFV_XP_CACHE"; do
			for desc in 0 1; do
				combos="$combos $build:$cache:$desc"
			done
		done
	done
	# shellcheck disable=SC2086 # a word list
	n=$(echo $combos | wc -w)
	round=1
	while [ "$round" -le "$LFV_XP_ROUNDS" ]; do
		echo "--- round $round of $LFV_XP_ROUNDS ($(date +%T))"
		# shellcheck disable=SC2086 # a word list
		for combo in $(bench_rotate $(((round - 1) * 3 % n)) $combos); do
			xp_pair "$combo" || echo "fail $combo round=$round" | tee -a "$res"
		done
		round=$((round + 1))
	done
}

# xp_pair BUILD:CACHE:DESC: one server and client pair, the client's
# result lines tagged and appended to $res.
xp_pair() {
	build=${1%%:*} rest=${1#*:}
	cache=${rest%%:*} desc=${rest#*:}
	lib=$top/build/.libs
	[ "$build" = after ] || lib=$before/build/.libs
	d=""
	[ "$desc" = 0 ] || d=--desc
	port=$((port + 1))
	slog=$out/xp-server.log clog=$out/xp-client.log
	set -- env FI_PROVIDER_PATH="$lib" FI_LFVERBS_MR_CACHE="$cache" \
		timeout 300
	# shellcheck disable=SC2086 # word lists
	"$@" $pin_s "$out/bench_rdm" -p lfverbs $d -s -P "$port" >"$slog" 2>&1 &
	spid=$!
	if ! bench_wait_listening "$slog" "$spid" 1200; then
		cat "$slog" >&2
		wait "$spid" || true
		return 1
	fi
	# shellcheck disable=SC2086 # word lists
	if ! "$@" $pin_c "$out/bench_rdm" -p lfverbs $d -c -P "$port" \
		--warmup 20 --lat "$LFV_XP_LAT" --lat-size 65536 --rate 0 \
		--bw "$LFV_XP_BW" --big 0 >"$clog" 2>&1; then
		cat "$clog" "$slog" >&2
		kill "$spid" 2>/dev/null || true
		wait "$spid" || true
		return 1
	fi
	wait "$spid" || return 1
	grep '^result' "$clog" |
		sed "s/\$/ build=$build cache=$cache desc=$desc round=$round/" |
		tee -a "$res"
}

# ---- on the host ------------------------------------------------------------
# The plugin as it was before the change, built once per revision.
build_before() {
	rev=${LFV_XP_BEFORE:-}
	if [ -z "$rev" ]; then
		rev=$(git log --format=%H -1 \
			--grep='^Issue 14, item 3: least exposure' HEAD)^
	fi
	rev=$(git rev-parse "$rev")
	if [ "$(cat "$before/rev" 2>/dev/null)" = "$rev" ] &&
	   [ -f "$before/build/.libs/liblfverbs-fi.so" ]; then
		return 0
	fi
	echo "run-exposure: building the plugin of $rev (before)"
	rm -rf "$before"
	mkdir -p "$before/src" "$before/build"
	git archive "$rev" | tar -x -C "$before/src"
	(cd "$before/src" && ./autogen.sh >/dev/null 2>&1)
	(cd "$before/build" && "$before/src/configure" -q >/dev/null &&
	 make -s -j"$(nproc)" liblfverbs-fi.la >/dev/null)
	echo "$rev" >"$before/rev"
}

table() {
	awk -v on="$LFV_XP_CACHE" '
	/^result/ {
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			v[kv[1]] = kv[2]
		}
		val = v["test"] == "bw" ? v["MB_per_s"] : v["median_us"]
		k = v["test"] SUBSEP v["cache"] SUBSEP v["desc"] SUBSEP v["build"]
		x[k, ++n[k]] = val
	}
	# s[1..n[k]]: the values of k, sorted.
	function sorted(k,   i, j, t) {
		for (i = 1; i <= n[k]; i++)
			s[i] = x[k, i]
		for (i = 2; i <= n[k]; i++)
			for (j = i; j > 1 && s[j - 1] > s[j]; j--) {
				t = s[j]; s[j] = s[j - 1]; s[j - 1] = t
			}
	}
	function med(k) {
		sorted(k)
		return n[k] % 2 ? s[(n[k] + 1) / 2] : (s[n[k] / 2] + s[n[k] / 2 + 1]) / 2
	}
	function cell(k,   m) {
		if (!n[k])
			return "n/a"
		m = med(k)
		return sprintf("%.1f (%.1f-%.1f)", m, s[1], s[n[k]])
	}
	END {
		print "| test | cache | desc | before | after | after/before |"
		print "| --- | --- | --- | --- | --- | --- |"
		split("bw lat", tests, " ")
		split("0 " on, caches, " ")
		for (ti = 1; ti <= 2; ti++)
			for (ci = 1; ci <= 2; ci++)
				for (d = 0; d <= 1; d++) {
					t = tests[ti]; c = caches[ci]
					kb = t SUBSEP c SUBSEP d SUBSEP "before"
					ka = t SUBSEP c SUBSEP d SUBSEP "after"
					r = (n[kb] && n[ka] && med(kb)) ? sprintf("%.2f", med(ka) / med(kb)) : "n/a"
					printf "| %s | %s | %s | %s | %s | %s |\n", t == "bw" ? "bw 1 MiB, MB/s" : "lat 64 KiB, us", c ? "on" : "off", d ? "yes" : "no", cell(kb), cell(ka), r
				}
		print ""
		print "Median of the rounds (min-max). bw: 1 MiB messages, window 4, higher is better; lat: median half round trip of a 64 KiB tagged ping-pong, lower is better."
	}' "$1"
}

mode=run
while [ $# -gt 0 ]; do
	case $1 in
	--in-bed) in_bed; exit 0 ;;
	--rounds) LFV_XP_ROUNDS=$2; shift 2 ;;
	--table-only) mode=table; shift ;;
	--prepare) mode=prepare; shift ;;
	*) bench_help_or_usage "$1" 2,20 "[--rounds R] [--table-only | --prepare]" ;;
	esac
done

if [ "$mode" != table ]; then
	bench_host_deps
	bench_cc_fi bench_rdm
	build_before
	[ "$mode" = prepare ] && exit 0
	bench_bed "" tests/bench/run-exposure.sh --in-bed
fi
table "$out/xp-results.txt" | tee "$out/xp-table.txt"
