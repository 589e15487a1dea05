#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The RDM benchmark (not a test): lfverbs FI_EP_RDM against Debian's
# "verbs;ofi_rxm" (both through bench_rdm, public libfabric API, tagged
# messages) and raw ibverbs + rdma_cm (bench_raw, the same loops, RC
# send/receive: the floor), on the same soft-RoCE device in one test-bed
# session: 64 B tagged ping-pong latency, 64 B tagged message rate (window
# 64), 1 MiB and 64 MiB bandwidth, user-space instructions per tagged
# send+completion (callgrind), a data check (bench_rdm --check), and
# "tcp;ofi_rxm" and perftest as extra columns. Prints a table with ratios
# and the targets of the RDM issue. See tests/bench/README.md.
#
#   tests/bench/run-rdm.sh [--rounds R] [--quick]
#   tests/bench/run-rdm.sh --table-only    tables of the last run again
#
# lfverbs runs only when its own RDM endpoint exists (fi_info -p lfverbs
# -t FI_EP_RDM answers "provider: lfverbs", not "lfverbs;ofi_rxm");
# otherwise its cells are n/a. rxm gets LFV_RDB_RXM_ENV, lfverbs nothing.
# Installs valgrind and perftest as root on Debian 12 if missing.
# Everything it writes goes to build/bench/rdm-*.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=$top/build/bench

# Counts; the environment may override them (they reach the bed through
# the LFV_ prefix).
: "${LFV_RDB_ROUNDS:=3}"	# interleaved rounds of the programs
: "${LFV_RDB_WARMUP:=100}"	# ping-pong warm-up
: "${LFV_RDB_LAT:=1000}"	# timed ping-pongs per round
: "${LFV_RDB_RATE:=10240}"	# 64 B messages per round
: "${LFV_RDB_BW:=32}"		# 1 MiB messages per round
: "${LFV_RDB_BIG:=2}"		# 64 MiB messages per round
: "${LFV_RDB_PT_ROUNDS:=1}"	# perftest rounds
: "${LFV_RDB_PT_BIG:=1}"	# 0: no perftest 64 MiB run (5 messages at least)
: "${LFV_RDB_CG_N:=200}"	# callgrind: N and 2N ping-pongs
: "${LFV_RDB_CG_K:=1000}"	# callgrind: K and 2K empty polls
: "${LFV_RDB_TCP:=1}"		# 0: no "tcp;ofi_rxm" column
# rxm's MSG CQ has (MSG tx + rx size) x universe size entries, 65536 by
# default, and rxe's max_cqe is 32767: fi_enable fails with -FI_EINVAL.
# FI_OFI_RXM_MSG_TX_SIZE / _RX_SIZE (64/64, 64/63, 32/64, 16/16) do not
# help on Debian's 1.17; a universe of 16 peers does (README).
: "${LFV_RDB_RXM_ENV:=FI_UNIVERSE_SIZE=16}"
export LFV_RDB_ROUNDS LFV_RDB_WARMUP LFV_RDB_LAT LFV_RDB_RATE LFV_RDB_BW \
	LFV_RDB_BIG LFV_RDB_PT_ROUNDS LFV_RDB_PT_BIG LFV_RDB_CG_N LFV_RDB_CG_K LFV_RDB_TCP \
	LFV_RDB_RXM_ENV

# ---- inside the bed: run everything, write build/bench/rdm-*.txt -----------
in_bed() {
	dev=${LFV_BED_DEV:?not in the test bed}
	ip=${LFV_BED_IP:?not in the test bed}
	gid=1	# the IPv4-mapped RoCE v2 GID (tests/bed/README.md)
	res=$out/rdm-results.txt
	: >"$res"
	# Every libfabric run loads the same providers, lfverbs included.
	FI_PROVIDER_PATH=$top/build/.libs
	export FI_PROVIDER_PATH
	port=47700
	# Server on CPU 0, client on CPU 1 (run-endpoints.sh says why).
	pin_s="" pin_c=""
	if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
		pin_s="taskset -c 0" pin_c="taskset -c 1"
	fi

	# lfverbs' own RDM endpoint, not rxm layered over its MSG one.
	lfv_rdm=0
	if fi_info -p lfverbs -t FI_EP_RDM 2>/dev/null | grep -qx 'provider: lfverbs'; then
		lfv_rdm=1
	fi
	echo "avail impl=lfverbs rdm=$lfv_rdm" | tee -a "$res"
	echo "env impl=verbs;ofi_rxm $LFV_RDB_RXM_ENV" | tee -a "$res"
	rdm_impls="verbs;ofi_rxm"
	[ "$lfv_rdm" = 0 ] || rdm_impls="lfverbs $rdm_impls"
	[ "$LFV_RDB_TCP" = 0 ] || rdm_impls="$rdm_impls tcp;ofi_rxm"

	rdm="$out/bench_rdm"
	raw="$out/bench_raw_big"

	# pair TAG ENV VALGRIND PROGRAM ARGS...: server, then client. ENV
	# (VAR=VALUE words) applies to both, VALGRIND (a command prefix) to
	# the client; either may be empty. $both goes to both, $client to
	# the client. Keeps the client's result lines and both sides'
	# check and retry lines.
	pair() {
		tag=$1 penv=$2 vg=$3
		shift 3
		port=$((port + 1))
		slog=$out/rdm-server.$tag.log
		clog=$out/rdm-client.$tag.log
		# shellcheck disable=SC2086 # word lists
		env $penv timeout 600 $pin_s "$@" -s -P "$port" $both >"$slog" 2>&1 &
		spid=$!
		i=0
		until grep -q '^listening' "$slog" 2>/dev/null; do
			i=$((i + 1))
			if [ "$i" -gt 1200 ] || ! kill -0 "$spid" 2>/dev/null; then
				echo "run-rdm: server $tag did not start:" >&2
				cat "$slog" >&2
				wait "$spid" || true
				return 1
			fi
			sleep 0.05
		done
		# shellcheck disable=SC2086 # word lists
		if ! env $penv timeout 600 $pin_c $vg "$@" -c -P "$port" $both $client >"$clog" 2>&1; then
			echo "run-rdm: client $tag failed:" >&2
			cat "$clog" "$slog" >&2
			kill "$spid" 2>/dev/null || true
			wait "$spid" || true
			return 1
		fi
		if ! wait "$spid"; then
			echo "run-rdm: server $tag failed:" >&2
			cat "$slog" >&2
			return 1
		fi
		{
			grep -E '^(result|callgrind|info|note|retry|check)' "$clog" || true
			grep -E '^(retry|check)' "$slog" || true
		} | sed "s/\$/ round=$round/" | tee -a "$res"
	}

	# run TAG IMPL: one program of a round; a failure is noted, the
	# session goes on.
	run() {
		case $2 in
		raw) pair "$1" "" "$vg" "$raw" ;;
		verbs\;ofi_rxm) pair "$1" "$LFV_RDB_RXM_ENV" "$vg" "$rdm" -p "$2" ;;
		*) pair "$1" "" "$vg" "$rdm" -p "$2" ;;
		esac || echo "fail impl=$2 tag=$1 round=$round" | tee -a "$res"
	}

	# Data check first, small: every payload verified on both sides.
	vg=""
	both="--check"
	client="--warmup 10 --lat 100 --rate 1024 --bw 4 --big 1"
	round=check
	for impl in $rdm_impls; do
		echo "--- check $impl ($(date +%T))"
		run "check.$(echo "$impl" | tr ';' '+')" "$impl"
	done

	# rotate K WORDS...: the words, the first K moved to the end.
	rotate() {
		k=$1
		shift
		while [ "$k" -gt 0 ]; do
			set -- "$@" "$1"
			shift
			k=$((k - 1))
		done
		echo "$@"
	}
	# shellcheck disable=SC2086 # a word list
	nimpl=$(echo $rdm_impls raw | wc -w)
	both=""
	client="--warmup $LFV_RDB_WARMUP --lat $LFV_RDB_LAT --rate $LFV_RDB_RATE --bw $LFV_RDB_BW --big $LFV_RDB_BIG"
	round=1
	while [ "$round" -le "$LFV_RDB_ROUNDS" ]; do
		echo "--- round $round of $LFV_RDB_ROUNDS ($(date +%T))"
		# Rotate the order so no program always runs first.
		# shellcheck disable=SC2086 # word lists
		for impl in $(rotate $(((round - 1) % nimpl)) $rdm_impls raw); do
			run "$(echo "$impl" | tr ';' '+').$round" "$impl"
		done
		round=$((round + 1))
	done

	# perftest: its own defaults (inline sends, unsignaled sends in bw).
	# ib_*_lat prints half round trips; MB there is MiB.
	pt() { # TAG PROGRAM ARGS...
		tag=$1
		shift
		# shellcheck disable=SC2086 # $pin_s is a word list
		timeout 300 $pin_s "$@" >"$out/rdm-pt-server.log" 2>&1 &
		spid=$!
		try=0
		sleep 0.5
		# shellcheck disable=SC2086 # $pin_c is a word list
		until timeout 300 $pin_c "$@" "$ip" >"$out/rdm-pt-client.log" 2>&1; do
			try=$((try + 1))
			if [ "$try" -ge 10 ] || ! kill -0 "$spid" 2>/dev/null; then
				echo "run-rdm: perftest $tag failed:" >&2
				cat "$out/rdm-pt-client.log" "$out/rdm-pt-server.log" >&2
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
			}' "$out/rdm-pt-client.log" | tee -a "$res"
	}
	if command -v ib_send_lat >/dev/null 2>&1; then
		round=1
		while [ "$round" -le "$LFV_RDB_PT_ROUNDS" ]; do
			echo "--- perftest round $round of $LFV_RDB_PT_ROUNDS ($(date +%T))"
			pt lat ib_send_lat -d "$dev" -x "$gid" -F -s 64 -n "$LFV_RDB_LAT"
			pt rate ib_send_bw -d "$dev" -x "$gid" -F -s 64 -t 64 -n "$LFV_RDB_RATE"
			pt bw ib_send_bw -d "$dev" -x "$gid" -F -s 1048576 -t 4 -n "$LFV_RDB_BW"
			# perftest wants at least 5 iterations.
			[ "$LFV_RDB_PT_BIG" = 0 ] ||
				pt big ib_send_bw -d "$dev" -x "$gid" -F -s 67108864 -t 2 \
					-n $((LFV_RDB_BIG < 5 ? 5 : LFV_RDB_BIG))
			round=$((round + 1))
		done
	fi

	# Callgrind: the client only (the server runs natively). Dumps 2-5:
	# K and 2K empty polls, N and 2N ping-pongs; bench_idle_wait is not
	# collected. Instrumentation starts at the latency phase (bench_ep.h):
	# libfabric's start-up, every provider's included, takes minutes
	# when simulated under TCG. Raw: bench_raw (the same loops as
	# bench_raw_big, and a 12 MiB region instead of 256 MiB).
	if command -v valgrind >/dev/null 2>&1; then
		client="--warmup 50 --callgrind $LFV_RDB_CG_N,$LFV_RDB_CG_K"
		round=0
		raw="$out/bench_raw"
		for impl in $rdm_impls raw; do
			[ "$impl" != "tcp;ofi_rxm" ] || continue
			short=$(echo "$impl" | tr ';' '+')
			echo "--- callgrind $impl ($(date +%T))"
			rm -f "$out/rdm-cg.$short" "$out/rdm-cg.$short".*
			vg="valgrind --tool=callgrind --instr-atstart=no --toggle-collect=bench_idle_wait --collect-atstart=yes --callgrind-out-file=$out/rdm-cg.$short"
			run "cg.$short" "$impl"
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
	--rounds) LFV_RDB_ROUNDS=$2; shift 2 ;;
	--table-only) table_only=1; shift ;;
	--quick)
		LFV_RDB_ROUNDS=1 LFV_RDB_PT_ROUNDS=1 LFV_RDB_PT_BIG=0
		LFV_RDB_LAT=200 LFV_RDB_RATE=2048 LFV_RDB_BW=8 LFV_RDB_BIG=2
		LFV_RDB_CG_N=50 LFV_RDB_CG_K=200
		shift ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
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
	gcc $CFLAGS tests/bench/bench_rdm.c $(pkg-config --cflags --libs libfabric) \
		-o "$out/bench_rdm"
	# bench_raw with bench_rdm's 64 MiB phase, and without it (callgrind).
	# shellcheck disable=SC2086
	gcc $CFLAGS '-DBENCH_BIG_SIZE=((size_t)64 << 20)' tests/bench/bench_raw.c \
		-libverbs -lrdmacm -o "$out/bench_raw_big"
	# shellcheck disable=SC2086
	gcc $CFLAGS tests/bench/bench_raw.c -libverbs -lrdmacm -o "$out/bench_raw"
	rm -f "$out"/rdm-*

	start=$(date +%s)
	echo "host load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/rdm-load.txt"
	{
		st=0
		tests/bed/rxe-bed --workdir "$top" -- sh tests/bench/run-rdm.sh --in-bed || st=$?
		echo "$st" >"$out/rdm-bed.status"
	} | tee "$out/rdm-bed.log"
	echo "host load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/rdm-load.txt"
	echo "(bed session: $(($(date +%s) - start)) s, $(date -u '+%Y-%m-%d %H:%M UTC'))" >>"$out/rdm-load.txt"
	cat "$out/rdm-load.txt"
	st=$(cat "$out/rdm-bed.status")
	[ "$st" = 0 ] || echo "run-rdm: the bed session failed ($st); the tables are partial" >&2
fi

res=$out/rdm-results.txt
cg=$out/rdm-callgrind.txt
: >"$cg"
for short in lfverbs verbs+ofi_rxm raw; do
	f=$out/rdm-cg.$short
	[ -f "$f.5" ] || continue
	impl=$(echo "$short" | tr '+' ';')
	line=$(grep "^callgrind impl=$impl " "$res" || true)
	[ -n "$line" ] || continue
	# Dumps 2-5: K and 2K empty polls, N and 2N ping-pongs (1 settles).
	for k in 2 3 4 5; do
		awk -f tests/bench/cg-costs.awk "$f.$k" | sed "s/^/$short $((k - 1)) /" >>"$cg"
	done
	echo "$line" >>"$cg"
done

awk -v cgfile="$cg" -f tests/bench/rdm-table.awk "$res" "$cg" | tee "$out/rdm-table.txt"
