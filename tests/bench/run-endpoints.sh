#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The endpoint benchmark (not a test): lfverbs MSG against Debian's verbs
# MSG (both through bench_msg, public libfabric API) and raw ibverbs +
# rdma_cm (bench_raw, the same loops), on the same soft-RoCE device in one
# test-bed session: 64 B ping-pong latency, 64 B message rate (window 64),
# 1 MiB bandwidth, perftest (ib_send_lat / ib_send_bw) as an extra column,
# and user-space instructions per send+completion (callgrind). Prints a
# table with ratios and the targets of issue 4. See tests/bench/README.md.
#
#   tests/bench/run-endpoints.sh [--rounds R] [--quick]
#   tests/bench/run-endpoints.sh --table-only    tables of the last run again
#
# Installs what it needs beyond tests/deps.sh (valgrind, perftest) when run
# as root on Debian 12. Everything it writes goes to build/bench/.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=$top/build/bench

# Counts; the environment may override them (they reach the bed through
# the LFV_ prefix).
: "${LFV_EPB_ROUNDS:=5}"	# interleaved rounds of the three programs
: "${LFV_EPB_WARMUP:=100}"	# ping-pong warm-up
: "${LFV_EPB_LAT:=1000}"	# timed ping-pongs per round
: "${LFV_EPB_RATE:=10240}"	# 64 B messages per round
: "${LFV_EPB_BW:=32}"		# 1 MiB messages per round
: "${LFV_EPB_PT_ROUNDS:=3}"	# perftest rounds
: "${LFV_EPB_CG_N:=200}"	# callgrind: N and 2N ping-pongs
: "${LFV_EPB_CG_K:=1000}"	# callgrind: K and 2K empty polls
export LFV_EPB_ROUNDS LFV_EPB_WARMUP LFV_EPB_LAT LFV_EPB_RATE LFV_EPB_BW \
	LFV_EPB_PT_ROUNDS LFV_EPB_CG_N LFV_EPB_CG_K

# ---- inside the bed: run everything, write build/bench/ep-*.txt -------------
in_bed() {
	dev=${LFV_BED_DEV:?not in the test bed}
	ip=${LFV_BED_IP:?not in the test bed}
	# The IPv4-mapped RoCE v2 GID of the bed's device (tests/bed/README.md).
	gid=1
	res=$out/ep-results.txt
	: >"$res"
	# The same provider path for both libfabric runs: identical loading.
	FI_PROVIDER_PATH=$top/build/.libs
	export FI_PROVIDER_PATH
	port=47600
	# Server on CPU 0, client on CPU 1. Unpinned, the scheduler sometimes
	# leaves both busy-polling processes on one vCPU, and every message
	# then waits for the other process's time slice (a 4 ms tick).
	pin_s="" pin_c=""
	if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
		pin_s="taskset -c 0" pin_c="taskset -c 1"
	fi

	# pair TAG [VALGRIND...] -- PROGRAM ARGS...: server, then client.
	pair() {
		tag=$1
		shift
		vg=""
		while [ "$1" != "--" ]; do
			vg="$vg $1"
			shift
		done
		shift
		port=$((port + 1))
		slog=$out/ep-server.$tag.log
		# shellcheck disable=SC2086 # $pin_s is a word list
		timeout 300 $pin_s "$@" -s -P "$port" >"$slog" 2>&1 &
		spid=$!
		i=0
		until grep -q '^listening' "$slog" 2>/dev/null; do
			i=$((i + 1))
			if [ "$i" -gt 200 ] || ! kill -0 "$spid" 2>/dev/null; then
				echo "run-endpoints: server $tag did not start:" >&2
				cat "$slog" >&2
				return 1
			fi
			sleep 0.05
		done
		# shellcheck disable=SC2086 # $pin_c, $vg and $client are word lists
		if ! timeout 300 $pin_c $vg "$@" -c -P "$port" $client >"$out/ep-client.$tag.log" 2>&1; then
			echo "run-endpoints: client $tag failed:" >&2
			cat "$out/ep-client.$tag.log" "$slog" >&2
			kill "$spid" 2>/dev/null || true
			wait "$spid" || true
			return 1
		fi
		wait "$spid" || { echo "run-endpoints: server $tag failed:" >&2; cat "$slog" >&2; return 1; }
		grep -E '^(result|callgrind|info)' "$out/ep-client.$tag.log" |
			sed "s/\$/ round=$round/" | tee -a "$res"
	}

	msg="$out/bench_msg"
	raw="$out/bench_raw"
	client="--warmup $LFV_EPB_WARMUP --lat $LFV_EPB_LAT --rate $LFV_EPB_RATE --bw $LFV_EPB_BW"
	round=1
	while [ "$round" -le "$LFV_EPB_ROUNDS" ]; do
		echo "--- round $round of $LFV_EPB_ROUNDS ($(date +%T))"
		# Rotate the order so no program always runs first.
		case $((round % 3)) in
		1) order="lfverbs verbs raw" ;;
		2) order="verbs raw lfverbs" ;;
		0) order="raw lfverbs verbs" ;;
		esac
		for impl in $order; do
			case $impl in
			raw) pair "raw.$round" -- "$raw" ;;
			*) pair "$impl.$round" -- "$msg" -p "$impl" ;;
			esac
		done
		round=$((round + 1))
	done

	# perftest: its own defaults (inline sends, unsignaled sends in bw).
	# ib_*_lat prints half round trips like bench_msg; MB there is MiB.
	pt() { # TAG PROGRAM ARGS...
		tag=$1
		shift
		# shellcheck disable=SC2086 # $pin_s is a word list
		timeout 120 $pin_s "$@" >"$out/ep-pt-server.log" 2>&1 &
		spid=$!
		# The server has no ready message: retry while it is coming up.
		try=0
		sleep 0.5
		# shellcheck disable=SC2086 # $pin_c is a word list
		until timeout 120 $pin_c "$@" "$ip" >"$out/ep-pt-client.log" 2>&1; do
			try=$((try + 1))
			if [ "$try" -ge 10 ] || ! kill -0 "$spid" 2>/dev/null; then
				echo "run-endpoints: perftest $tag failed:" >&2
				cat "$out/ep-pt-client.log" "$out/ep-pt-server.log" >&2
				kill "$spid" 2>/dev/null || true
				wait "$spid" || true
				return 0
			fi
			sleep 1
		done
		wait "$spid" || true
		awk -v tag="$tag" -v round="$round" '
			$1 ~ /^[0-9]+$/ && NF >= 5 {
				if (tag == "lat")
					printf "result impl=perftest test=lat size=%s iters=%s median_us=%s mean_us=%s round=%d\n", $1, $2, $5, $6, round
				else if (tag == "rate")
					printf "result impl=perftest test=rate size=%s msgs=%s msgs_per_s=%.1f round=%d\n", $1, $2, $5 * 1e6, round
				else
					printf "result impl=perftest test=bw size=%s msgs=%s MB_per_s=%.2f round=%d\n", $1, $2, $4 * 1.048576, round
			}' "$out/ep-pt-client.log" | tee -a "$res"
	}
	if command -v ib_send_lat >/dev/null 2>&1; then
		round=1
		while [ "$round" -le "$LFV_EPB_PT_ROUNDS" ]; do
			echo "--- perftest round $round of $LFV_EPB_PT_ROUNDS ($(date +%T))"
			pt lat ib_send_lat -d "$dev" -x "$gid" -F -s 64 -n "$LFV_EPB_LAT"
			pt rate ib_send_bw -d "$dev" -x "$gid" -F -s 64 -t 64 -n "$LFV_EPB_RATE"
			pt bw ib_send_bw -d "$dev" -x "$gid" -F -s 1048576 -t 4 -n "$LFV_EPB_BW"
			round=$((round + 1))
		done
	fi

	# Callgrind: the client only (the server runs natively). Dumps 2-5:
	# K and 2K empty polls, N and 2N ping-pongs; bench_idle_wait (a sleep
	# before each poll, so that polls are rarely empty) is not collected.
	if command -v valgrind >/dev/null 2>&1; then
		client="--warmup 50 --callgrind $LFV_EPB_CG_N,$LFV_EPB_CG_K"
		round=0
		for impl in lfverbs verbs raw; do
			echo "--- callgrind $impl ($(date +%T))"
			rm -f "$out/ep-cg.$impl" "$out/ep-cg.$impl".*
			vg="valgrind --tool=callgrind --toggle-collect=bench_idle_wait --collect-atstart=yes --callgrind-out-file=$out/ep-cg.$impl"
			# shellcheck disable=SC2086 # $vg is a word list
			case $impl in
			raw) pair "cg.raw" $vg -- "$raw" ;;
			*) pair "cg.$impl" $vg -- "$msg" -p "$impl" ;;
			esac
		done
	fi
}

if [ "${1:-}" = "--in-bed" ]; then
	in_bed
	exit 0
fi

table_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) LFV_EPB_ROUNDS=$2; shift 2 ;;
	--table-only) table_only=1; shift ;;
	--quick)
		LFV_EPB_ROUNDS=1 LFV_EPB_PT_ROUNDS=1 LFV_EPB_LAT=200
		LFV_EPB_RATE=2048 LFV_EPB_BW=8 LFV_EPB_CG_N=50 LFV_EPB_CG_K=200
		shift ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "usage: $0 [--rounds R] [--quick] [--table-only]" >&2; exit 2 ;;
	esac
done

# ---- on the host: dependencies, build, one bed session, the table ----------
if [ "$table_only" = 0 ]; then
	need=""
	for p in valgrind perftest; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			need="$need $p"
	done
	if [ -n "$need" ]; then
		if [ "$(id -u)" -eq 0 ]; then
			echo "bench: installing$need"
			# shellcheck disable=SC2086 # one word per package
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need >/dev/null
		else
			echo "bench: missing$need (apt-get install as root); those parts are skipped" >&2
		fi
	fi
	tests/deps.sh
	tests/build.sh
	mkdir -p "$out"
	CFLAGS="-std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers -O2 -g"
	# shellcheck disable=SC2046,SC2086 # pkg-config output is a word list
	gcc $CFLAGS tests/bench/bench_msg.c $(pkg-config --cflags --libs libfabric) \
		-o "$out/bench_msg"
	# shellcheck disable=SC2086
	gcc $CFLAGS tests/bench/bench_raw.c -libverbs -lrdmacm -o "$out/bench_raw"
	rm -f "$out"/ep-*

	start=$(date +%s)
	# Other work on the host shows in every number: note how busy it was.
	echo "host load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/ep-load.txt"
	{
		st=0
		tests/bed/rxe-bed --workdir "$top" -- sh tests/bench/run-endpoints.sh --in-bed || st=$?
		echo "$st" >"$out/ep-bed.status"
	} | tee "$out/ep-bed.log"
	echo "host load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/ep-load.txt"
	echo "(bed session: $(($(date +%s) - start)) s, $(date -u '+%Y-%m-%d %H:%M UTC'))" >>"$out/ep-load.txt"
	cat "$out/ep-load.txt"
	st=$(cat "$out/ep-bed.status")
	[ "$st" = 0 ] || echo "run-endpoints: the bed session failed ($st); the tables are partial" >&2
fi

# Self cost per object and per function of one callgrind dump:
# "total COST", "ob COST OBJECT" and "fn COST OBJECT<TAB>FUNCTION" lines.
cg_costs() {
	awk -f tests/bench/cg-costs.awk "$1"
}

res=$out/ep-results.txt
cg=$out/ep-callgrind.txt
: >"$cg"
for impl in lfverbs verbs raw; do
	f=$out/ep-cg.$impl
	[ -f "$f.5" ] || continue
	line=$(grep "^callgrind impl=$impl " "$res" || true)
	[ -n "$line" ] || continue
	# Dumps 2-5: K and 2K empty polls, N and 2N ping-pongs (1 settles).
	for k in 2 3 4 5; do
		cg_costs "$f.$k" | sed "s/^/$impl $((k - 1)) /" >>"$cg"
	done
	echo "$line" >>"$cg"
done

# The table (tests/bench/ep-table.awk).
awk -v cgfile="$cg" -f tests/bench/ep-table.awk "$res" "$cg" | tee "$out/ep-table.txt"
