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
#   tests/bench/run-endpoints.sh --nodes [...]  across the two-node bed:
#       servers on lfv-a, clients on lfv-b (on-peer.sh), no callgrind
#
# Installs what it needs beyond tests/deps.sh (valgrind, perftest) when run
# as root on Debian 12. Everything it writes goes to build/bench/.
set -eu
bench_pfx=ep
# shellcheck source=tests/bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

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
: "${LFV_EPB_STALL:=1}"		# seconds of host-stall probe per round (0: none)
export LFV_EPB_ROUNDS LFV_EPB_WARMUP LFV_EPB_LAT LFV_EPB_RATE LFV_EPB_BW \
	LFV_EPB_PT_ROUNDS LFV_EPB_CG_N LFV_EPB_CG_K LFV_EPB_STALL
bench_stall_secs=$LFV_EPB_STALL

# ---- inside the bed: run everything, write build/bench/ep-*.txt -------------
in_bed() {
	bench_in_bed_setup ep
	port=47600

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
		if ! bench_wait_listening "$slog" "$spid" 200; then
			echo "run-endpoints: server $tag did not start:" >&2
			cat "$slog" >&2
			return 1
		fi
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
		bench_stall_probe
		# Rotate the order so no program always runs first.
		for impl in $(bench_rotate $(((round - 1) % 3)) lfverbs verbs raw); do
			case $impl in
			raw) pair "raw.$round" -- "$raw" ;;
			*) pair "$impl.$round" -- "$msg" -p "$impl" ;;
			esac
		done
		round=$((round + 1))
	done

	# perftest (bench-lib.sh): its own defaults.
	bench_pt_rounds 120 "$LFV_EPB_PT_ROUNDS" "$LFV_EPB_LAT" "$LFV_EPB_RATE" "$LFV_EPB_BW"

	# Callgrind: the client only (the server runs natively). Dumps 2-5:
	# K and 2K empty polls, N and 2N ping-pongs; bench_idle_wait (a sleep
	# before each poll, so that polls are rarely empty) is not collected.
	if [ "${nodes:-0}" = 0 ] && command -v valgrind >/dev/null 2>&1; then
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

case ${1:-} in
--in-bed) in_bed; exit 0 ;;
--in-bed-nodes) nodes=1; in_bed; exit 0 ;;
esac

table_only=0
nodes=0
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) LFV_EPB_ROUNDS=$2; shift 2 ;;
	--table-only) table_only=1; shift ;;
	--nodes) nodes=1; shift ;;
	--quick)
		LFV_EPB_ROUNDS=1 LFV_EPB_PT_ROUNDS=1 LFV_EPB_LAT=200
		LFV_EPB_RATE=2048 LFV_EPB_BW=8 LFV_EPB_CG_N=50 LFV_EPB_CG_K=200
		shift ;;
	*) bench_help_or_usage "$1" 2,16 "[--rounds R] [--quick] [--table-only] [--nodes]" ;;
	esac
done

# ---- on the host: dependencies, build, one bed session, the table ----------
if [ "$table_only" = 0 ]; then
	bench_host_deps
	bench_cc_fi bench_msg
	bench_cc_raw bench_raw
	if [ "$nodes" = 1 ]; then
		rm -f "$out"/ep-nodes*
		bench_bed_args="--nodes 2"
		LFV_BED_CPUS=${LFV_BED_CPUS:-2}
		export LFV_BED_CPUS
		bench_bed -nodes tests/bench/run-endpoints.sh --in-bed-nodes
	else
		for f in "$out"/ep-*; do
			case $f in "$out"/ep-nodes*) ;; *) rm -f "$f" ;; esac
		done
		bench_bed "" tests/bench/run-endpoints.sh --in-bed
	fi
fi

# The table (tests/bench/ep-table.awk).
if [ "$nodes" = 1 ]; then
	awk -v cgfile=/dev/null -f tests/bench/bench-lib.awk -f tests/bench/ep-table.awk "$out/ep-nodes.txt" | tee "$out/ep-nodes-table.txt"
	exit 0
fi
bench_cg_table lfverbs verbs raw
