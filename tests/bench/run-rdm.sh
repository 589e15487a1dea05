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
#   tests/bench/run-rdm.sh --eager-sweep   lfverbs' eager/rendezvous switch:
#       ping-pong latency and bandwidth (bench_rdm --lat-size), 1 KiB to
#       256 KiB, under several FI_LFVERBS_RDM_EAGER values, beside
#       verbs;ofi_rxm and raw RC send/receive (ib_send_lat) (rdm-sweep-*)
#   tests/bench/run-rdm.sh --mpi           Open MPI ping-pong latency and
#       bandwidth (bench_mpi) over lfverbs, verbs;ofi_rxm and ob1 (rdm-mpi-*)
#   tests/bench/run-rdm.sh --nodes         the same programs across the
#       two-node bed (tests/bed/rxe-bed --nodes 2): servers on lfv-a,
#       clients on lfv-b (tests/bench/on-peer.sh); no tcp;ofi_rxm column,
#       no callgrind (rdm-nodes-*)
#   tests/bench/run-rdm.sh --scale         the cost of scale across the two
#       nodes (bench_scale): connection time and memory per peer for 1, 8
#       and 64 peer endpoints on lfv-b, lfverbs and verbs;ofi_rxm
#       (rdm-scale-*)
#
# lfverbs runs only when its own RDM endpoint exists (fi_info -p lfverbs
# -t FI_EP_RDM answers "provider: lfverbs", not "lfverbs;ofi_rxm");
# otherwise its cells are n/a. rxm gets LFV_RDB_RXM_ENV, lfverbs nothing.
# Installs valgrind and perftest as root on Debian 12 if missing.
# Everything it writes goes to build/bench/rdm-*.
set -eu
bench_pfx=rdm
# shellcheck source=tests/bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

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
: "${LFV_RDB_STALL:=1}"		# seconds of host-stall probe per round (0: none)
# LFV_RDB_RXM_ENV: verbs;ofi_rxm's variables (bench-lib.sh).
# --eager-sweep: rounds, sizes, FI_LFVERBS_RDM_EAGER values, iterations.
: "${LFV_RDB_SWEEP_ROUNDS:=2}"
: "${LFV_RDB_SWEEP_SIZES:=1024 2048 4096 8192 16384 32768 65536 131072 262144}"
: "${LFV_RDB_SWEEP_EAGER:=2048 4096 8192 16384 32768 65536}"
: "${LFV_RDB_SWEEP_ITERS:=300}"
: "${LFV_RDB_SWEEP_ARGS:=}"	# more bench_rdm options for both sides (--desc)
: "${LFV_RDB_SWEEP_PEERS:=1}"	# 0: no rxm and raw (ib_send_lat) columns
# --scale: rounds, peer endpoints.
: "${LFV_RDB_SCALE_ROUNDS:=2}"
: "${LFV_RDB_SCALE_PEERS:=1 8 64}"
# --mpi: rounds, ping-pong iterations, bandwidth messages, sizes.
: "${LFV_RDB_MPI_ROUNDS:=2}"
: "${LFV_RDB_MPI_LAT:=200}"
: "${LFV_RDB_MPI_BW:=32}"
: "${LFV_RDB_MPI_SIZES:=64 1024 8192 65536 1048576}"
export LFV_RDB_ROUNDS LFV_RDB_WARMUP LFV_RDB_LAT LFV_RDB_RATE LFV_RDB_BW \
	LFV_RDB_BIG LFV_RDB_PT_ROUNDS LFV_RDB_PT_BIG LFV_RDB_CG_N LFV_RDB_CG_K LFV_RDB_TCP \
	LFV_RDB_SWEEP_ROUNDS LFV_RDB_SWEEP_SIZES \
	LFV_RDB_SWEEP_EAGER LFV_RDB_SWEEP_ITERS LFV_RDB_SWEEP_ARGS LFV_RDB_SWEEP_PEERS \
	LFV_RDB_MPI_ROUNDS \
	LFV_RDB_MPI_LAT LFV_RDB_MPI_BW LFV_RDB_MPI_SIZES LFV_RDB_STALL \
	LFV_RDB_SCALE_ROUNDS LFV_RDB_SCALE_PEERS
bench_stall_secs=$LFV_RDB_STALL

# ---- inside the bed: run everything, write build/bench/rdm-*.txt -----------
in_bed() {
	bench_in_bed_setup rdm
	if [ "${nodes:-0}" = 1 ]; then
		# --nodes: no tcp;ofi_rxm column (one node's).
		csrc="--src ${LFV_BED_PEER_IP:?not on a two-node bed}"
		LFV_RDB_TCP=0
	fi
	port=47700

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
		if ! bench_wait_listening "$slog" "$spid" 1200; then
			echo "run-rdm: server $tag did not start:" >&2
			cat "$slog" >&2
			wait "$spid" || true
			return 1
		fi
		# shellcheck disable=SC2086 # word lists
		if ! env $penv timeout 600 $pin_c $vg "$@" -c -P "$port" $both $client ${csrc:-} >"$clog" 2>&1; then
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

	# shellcheck disable=SC2086 # a word list
	nimpl=$(echo $rdm_impls raw | wc -w)
	both=""
	client="--warmup $LFV_RDB_WARMUP --lat $LFV_RDB_LAT --rate $LFV_RDB_RATE --bw $LFV_RDB_BW --big $LFV_RDB_BIG"
	round=1
	while [ "$round" -le "$LFV_RDB_ROUNDS" ]; do
		echo "--- round $round of $LFV_RDB_ROUNDS ($(date +%T))"
		bench_stall_probe
		# Rotate the order so no program always runs first.
		# shellcheck disable=SC2086 # word lists
		for impl in $(bench_rotate $(((round - 1) % nimpl)) $rdm_impls raw); do
			run "$(echo "$impl" | tr ';' '+').$round" "$impl"
		done
		round=$((round + 1))
	done

	# perftest (bench-lib.sh): its own defaults; the 64 MiB run wants at
	# least 5 iterations.
	big=""
	[ "$LFV_RDB_PT_BIG" = 0 ] || big=$((LFV_RDB_BIG < 5 ? 5 : LFV_RDB_BIG))
	bench_pt_rounds 300 "$LFV_RDB_PT_ROUNDS" "$LFV_RDB_LAT" "$LFV_RDB_RATE" "$LFV_RDB_BW" $big

	# Callgrind: the client only (the server runs natively). Dumps 2-5:
	# K and 2K empty polls, N and 2N ping-pongs; bench_idle_wait is not
	# collected. Instrumentation starts at the latency phase (bench_ep.h):
	# libfabric's start-up, every provider's included, takes minutes
	# when simulated under TCG. Raw: bench_raw (the same loops as
	# bench_raw_big, and a 12 MiB region instead of 256 MiB).
	if [ "${nodes:-0}" = 0 ] && command -v valgrind >/dev/null 2>&1; then
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

# ---- inside the bed, --eager-sweep: build/bench/rdm-sweep.txt --------------
# bench_rdm's tagged ping-pong (--lat-size S: median of the half round
# trips, robust to a few host stalls) over lfverbs' own RDM endpoint,
# server on CPU 0, client on CPU 1, both sides with the same
# FI_LFVERBS_RDM_EAGER. For each size every eager value runs back to back,
# so that host load hits them alike; rounds repeat the whole grid.
in_bed_sweep() {
	bench_in_bed "$out/rdm-sweep.txt"
	dev=${LFV_BED_DEV:?not in the test bed}	# for sweep_peers' perftest
	ip=${LFV_BED_IP:?not in the test bed}
	gid=1
	# One vCPU (LFV_BED_CPUS=1): both sides on it, yielding when idle.
	yield=""
	[ -n "$pin_s" ] || yield=--yield
	port=47800
	round=1
	while [ "$round" -le "$LFV_RDB_SWEEP_ROUNDS" ]; do
		echo "--- sweep round $round of $LFV_RDB_SWEEP_ROUNDS ($(date +%T))"
		bench_stall_probe
		for size in $LFV_RDB_SWEEP_SIZES; do
			for eager in $LFV_RDB_SWEEP_EAGER; do
				# shellcheck disable=SC2086 # $yield: a word or none
				sweep_run "$size" "$eager" env FI_LFVERBS_RDM_EAGER="$eager" \
					timeout 300 "$out/bench_rdm" -p lfverbs $yield \
					$LFV_RDB_SWEEP_ARGS
				sweep_lat "sweep eager=$eager" <"$clog"
			done
			sweep_peers "$size"
		done
		round=$((round + 1))
	done
}

# sweep_run SIZE TAG COMMAND...: COMMAND's server, then its client's
# tagged ping-pong of SIZE-byte messages into $clog; a failure is noted as
# "fail eager=TAG" and the session goes on.
sweep_run() {
	ssize=$1 ftag=$2
	shift 2
	port=$((port + 1))
	slog=$out/rdm-sweep-server.log clog=$out/rdm-sweep-client.log
	# shellcheck disable=SC2086 # $pin_s, $pin_c are word lists
	$pin_s "$@" -s -P "$port" >"$slog" 2>&1 &
	spid=$!
	# shellcheck disable=SC2086
	if ! bench_wait_listening "$slog" "$spid" 1200 ||
		! $pin_c "$@" -c -P "$port" --warmup 20 --lat "$LFV_RDB_SWEEP_ITERS" \
			--lat-size "$ssize" --rate 0 --bw 0 --big 0 >"$clog" 2>&1; then
		echo "fail eager=$ftag size=$ssize round=$round" | tee -a "$res"
		cat "$clog" "$slog" >&2
		kill "$spid" 2>/dev/null || true
	fi
	wait "$spid" || true
}

# sweep_lat PREFIX: the latency result lines on stdin (bench_rdm's or
# bench_pt's) as "PREFIX size= median_us= mean_us= MB_per_s= round=",
# appended to $res.
sweep_lat() {
	awk -v p="$1" -v r="$round" '/^result .*test=lat/ {
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			v[kv[1]] = kv[2]
		}
		printf "%s size=%s median_us=%s mean_us=%s MB_per_s=%.2f round=%s\n", p, v["size"], v["median_us"], v["mean_us"], v["size"] / v["median_us"], r
	}' | tee -a "$res"
}

# sweep_peers SIZE: the same ping-pong over verbs;ofi_rxm (its defaults
# and LFV_RDB_RXM_ENV), and raw RC send/receive (perftest's ib_send_lat,
# its typical half round trip), beside lfverbs' eager values: what rxm
# and the device itself take at that size (LFV_RDB_SWEEP_PEERS=0: none).
sweep_peers() {
	[ "$LFV_RDB_SWEEP_PEERS" != 0 ] || return 0
	# shellcheck disable=SC2086 # word lists
	sweep_run "$1" rxm env $LFV_RDB_RXM_ENV timeout 300 "$out/bench_rdm" \
		-p "verbs;ofi_rxm" $yield $LFV_RDB_SWEEP_ARGS
	sweep_lat "sweep-peer impl=rxm" <"$clog"
	command -v ib_send_lat >/dev/null 2>&1 || return 0
	bench_pt 300 lat ib_send_lat -d "$dev" -x "$gid" -F -s "$1" \
		-n "$LFV_RDB_SWEEP_ITERS" >/dev/null
	tail -n 1 "$res" | sweep_lat "sweep-peer impl=raw"
}

# ---- inside the bed, --mpi: build/bench/rdm-mpi.txt --------------------------
# bench_mpi, 2 ranks, over lfverbs, verbs;ofi_rxm and ob1 (bench-lib.sh's
# bench_mpi: the Open MPI settings). Rounds rotate the order.
in_bed_mpi() {
	bench_in_bed "$out/rdm-mpi.txt"	# mpirun binds the ranks itself
	args="-i $LFV_RDB_MPI_LAT -w 100 -b $LFV_RDB_MPI_BW $LFV_RDB_MPI_SIZES"
	round=1
	while [ "$round" -le "$LFV_RDB_MPI_ROUNDS" ]; do
		bench_stall_probe
		for impl in $(bench_rotate $(((round - 1) % 3)) lfverbs rxm ob1); do
			echo "--- mpi $impl round $round ($(date +%T))"
			log=$out/rdm-mpi.$impl.$round.log
			# shellcheck disable=SC2086 # a word list
			bench_mpi "$impl" 2 "$log" "$out/bench_mpi" -n "$impl" $args ||
				echo "fail impl=$impl round=$round" | tee -a "$res"
			grep '^result ' "$log" | sed "s/\$/ round=$round/" | tee -a "$res"
		done
		round=$((round + 1))
	done
}

# ---- inside the two-node bed, --scale: build/bench/rdm-scale.txt -----------
# bench_scale: its server here (lfv-a), its client with N peer endpoints on
# lfv-b (on-peer.sh), for lfverbs and verbs;ofi_rxm, N in
# LFV_RDB_SCALE_PEERS, LFV_RDB_SCALE_ROUNDS rounds.
in_bed_scale() {
	bench_in_bed "$out/rdm-scale.txt"
	pin_s="" pin_c="$top/tests/bench/on-peer.sh"
	port=47900
	round=1
	while [ "$round" -le "$LFV_RDB_SCALE_ROUNDS" ]; do
		for n in $LFV_RDB_SCALE_PEERS; do
			for impl in $(bench_rotate $(((round - 1) % 2)) lfverbs "verbs;ofi_rxm"); do
				echo "--- scale $impl $n peers, round $round ($(date +%T))"
				port=$((port + 1))
				penv=""
				[ "$impl" = lfverbs ] || penv=$LFV_RDB_RXM_ENV
				slog=$out/rdm-scale-server.log clog=$out/rdm-scale-client.log
				# shellcheck disable=SC2086 # word lists
				env $penv timeout 300 "$out/bench_scale" -p "$impl" -s -P "$port" >"$slog" 2>&1 &
				spid=$!
				# shellcheck disable=SC2086 # word lists
				if ! bench_wait_listening "$slog" "$spid" 1200 ||
					! env $penv timeout 300 $pin_c "$out/bench_scale" -p "$impl" -c -n "$n" \
						--src "$LFV_BED_PEER_IP" -P "$port" >"$clog" 2>&1; then
					echo "fail impl=$impl peers=$n round=$round" | tee -a "$res"
					cat "$clog" "$slog" >&2
					kill "$spid" 2>/dev/null || true
				fi
				wait "$spid" || true
				grep '^result ' "$clog" | sed "s/\$/ round=$round/" | tee -a "$res"
			done
		done
		round=$((round + 1))
	done
}

case ${1:-} in
--in-bed) in_bed; exit 0 ;;
--in-bed-scale) in_bed_scale; exit 0 ;;
--in-bed-nodes) nodes=1; in_bed; exit 0 ;;
--in-bed-sweep) in_bed_sweep; exit 0 ;;
--in-bed-mpi) in_bed_mpi; exit 0 ;;
esac

table_only=0
mode=""
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) LFV_RDB_ROUNDS=$2; shift 2 ;;
	--table-only) table_only=1; shift ;;
	--eager-sweep) mode=-sweep; shift ;;
	--mpi) mode=-mpi; shift ;;
	--nodes) mode=-nodes; shift ;;
	--scale) mode=-scale; shift ;;
	--quick)
		LFV_RDB_ROUNDS=1 LFV_RDB_PT_ROUNDS=1 LFV_RDB_PT_BIG=0
		LFV_RDB_LAT=200 LFV_RDB_RATE=2048 LFV_RDB_BW=8 LFV_RDB_BIG=2
		LFV_RDB_CG_N=50 LFV_RDB_CG_K=200
		shift ;;
	*) bench_help_or_usage "$1" 2,33 "[--rounds R] [--quick] [--table-only] [--eager-sweep | --mpi | --nodes | --scale]" ;;
	esac
done

# ---- on the host: dependencies, build, one bed session, the table ----------
if [ "$table_only" = 0 ]; then
	bench_host_deps
	bench_cc_fi bench_rdm
	# bench_raw with bench_rdm's 64 MiB phase, and without it (callgrind).
	bench_cc_raw bench_raw_big '-DBENCH_BIG_SIZE=((size_t)64 << 20)'
	bench_cc_raw bench_raw
	if [ "$mode" = -mpi ]; then
		# shellcheck disable=SC2086
		mpicc $CFLAGS tests/bench/bench_mpi.c -o "$out/bench_mpi"
	fi
	# Each mode keeps the other modes' files.
	for f in "$out"/rdm-*; do
		case $f in
		"$out"/rdm-sweep* | "$out"/rdm-mpi* | "$out"/rdm-nodes* | "$out"/rdm-scale*) [ "${f#"$out"/rdm"$mode"}" = "$f" ] || rm -f "$f" ;;
		*) [ -n "$mode" ] || rm -f "$f" ;;
		esac
	done

	[ "$mode" != -scale ] || bench_cc_fi bench_scale
	if [ "$mode" = -nodes ] || [ "$mode" = -scale ]; then
		bench_bed_args="--nodes 2"
		LFV_BED_CPUS=${LFV_BED_CPUS:-2}
		export LFV_BED_CPUS
	fi
	bench_bed "$mode" tests/bench/run-rdm.sh --in-bed"$mode"
fi

case $mode in
-sweep)
	awk -f tests/bench/bench-lib.awk -f tests/bench/sweep-table.awk "$out/rdm-sweep.txt" | tee "$out/rdm-sweep-table.txt"
	exit 0 ;;
-mpi)
	awk -f tests/bench/bench-lib.awk -f tests/bench/mpi-table.awk "$out/rdm-mpi.txt" | tee "$out/rdm-mpi-table.txt"
	exit 0 ;;
-scale)
	awk -f tests/bench/bench-lib.awk -f tests/bench/scale-table.awk "$out/rdm-scale.txt" | tee "$out/rdm-scale-table.txt"
	exit 0 ;;
-nodes)
	awk -v cgfile=/dev/null -f tests/bench/bench-lib.awk -f tests/bench/rdm-table.awk "$out/rdm-nodes.txt" | tee "$out/rdm-nodes-table.txt"
	exit 0 ;;
esac

bench_cg_table lfverbs verbs+ofi_rxm raw
