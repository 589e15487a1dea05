#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Network faults between the two nodes of the bed (tests/bed/rxe-bed
# --nodes 2), survived by lfverbs' RDM endpoint (issue 17, item 3). TAP.
#
#   tests/bed/rxe-bed --nodes 2 -- tests/nodes/faults.sh
#
# A stream of numbered, checksummed tagged messages (tests/nodes/lfv_stream:
# eager and rendezvous sizes) goes from this node (lfv-a, the sender) to
# the other (lfv-b, the receiver, through ssh) while tc netem disturbs the
# link; the receiver checks that every message arrives once, in order, with
# its bytes. The cases:
#   1   the checks themselves fail on a broken stream (a flipped byte, a
#       message twice, two swapped, one missing), on this node alone
#   2, 4, 6  netem on lfv-a's NIC: 1 % loss, delay with jitter,
#       duplication: everything arrives, nothing fails
#   3, 5  10 % loss, reordering: soft-RoCE's RC crawls there, raw verbs
#       too (tests/bed/README.md, faults), but should give up nothing: the
#       stream arrives whole within 150 s, then another after the fault.
#       Case 3 failed in two CI runs of 2026-11-28 when 7 tries in a row
#       of a send each lost a packet and its QP's retries ran out; since
#       wire version 5 the QPs retry for ever on soft-RoCE, and whether
#       the peer lives is asked over the control QPs (lfv_rdm_proto.h)
#   7   the link down (100 % loss both ways) for LFV_FAULTS_DOWN s (3),
#       shorter than the liveness bound (8 s without an answer): the stream goes on whole; a new sender (a new
#       connection) then streams whole too
#   8   the link down for LFV_FAULTS_OUTAGE s (16), longer than the
#       liveness bound (about 10 s after the last completion): the
#       sends fail with error completions within the man page's bound, no
#       send that completed well is missing, nothing hangs; once the link
#       is back the same sender streams whole to the same address
#   9   the receiver killed (SIGKILL) mid-rendezvous: the sender's pending
#       sends fail within the bound; a restarted receiver (at the same
#       host and port) then gets a whole stream from the same sender
#   10  an mpirun job across both nodes whose rank on lfv-b is killed
#       ends with an error, not a hang (within LFV_FAULTS_MPI_LIMIT s)
#   11  the receiver killed while the sender's only pending sends are
#       rendezvous ones waiting for its reads (nothing on the wire, so no
#       RC retry): the probes of those connections must fail them within
#       the bound; a restarted receiver then gets a whole stream
#   12  func_rdm_peers' all-to-all (4 processes, 2 a node, 16 endpoints)
#       under 2 % loss on both NICs, LFV_FAULTS_A2A_ROUNDS times (2): the
#       bed's soft-RoCE puts connections in error under loss, so messages
#       may fail, but every receive that completes without error must
#       hold its bytes (before d1fd1f1, receives completed with zeros)
#   13  the same all-to-all under the same loss, rendezvous by write
#       (FI_LFVERBS_RDM_RNDV_WRITE=1 on every process; LFV_FAULTS_RNDV_WRITE
#       sets another value): no read then breaks a connection, so every
#       message must arrive, whole, in every round. With reads (0) it
#       fails: under loss soft-RoCE (Linux 6.1) puts QPs whose reads lost
#       packets in error (README, across the link)
#   14  MPI as applications send it under loss: mpi_coll (collectives
#       of up to 2 MiB, each result checked), 4 ranks, 2 a node, under
#       1 % loss on both NICs, must pass (LFV_FAULTS_MPI_LOSS_LIMIT s,
#       300)
#
# A CI step (tests/run-all.sh, with the two-node ping-pongs; case 3 with
# 20 messages), and cases 3, 12 and 13 again in a bed at MTU 1500
# (LFV_BED_MTU; the bed's link is at 9000). Every case passed together in
# 6 min 19 s with the bed's start on 2026-11-27 at 1500, case 3 94 s of
# it; at 9000 case 3 takes about 15 s. A failing case shows both
# sides' output and the non-zero soft-RoCE counters of each node.
#   LFV_FAULTS_LOG       FI_LOG_LEVEL for lfverbs on both sides (default
#                        none)
#   LFV_FAULTS_CRAWL_N   messages per stream of cases 3 and 5 (default 60)
#   LFV_FAULTS_CRAWL_W   their sends in flight (default 4)
#   LFV_FAULTS_N         messages per stream (default 200)
#   LFV_FAULTS_BOUND_MS  bound on an error completion after the last
#                        progress or its send's post, if later (default
#                        15000; the man page says about
#                        FI_LFVERBS_RDM_LIVE_TIMEOUT + 2 s, 8 + 2 here,
#                        5 s for a new connection's handshake)
#   LFV_FAULTS_CASES     numbers of the cases to run (default all)
#
# lfverbs is loaded from the build tree ($LFV_BUILD_DIR, default build).
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
build=$top/${LFV_BUILD_DIR:-build}
export FI_PROVIDER_PATH=$build/.libs
stream=$build/tests/nodes/lfv_stream
n=${LFV_FAULTS_N:-200}
bound=${LFV_FAULTS_BOUND_MS:-15000}
down=${LFV_FAULTS_DOWN:-3}
outage=${LFV_FAULTS_OUTAGE:-16}
mpi_limit=${LFV_FAULTS_MPI_LIMIT:-60}
crawl_n=${LFV_FAULTS_CRAWL_N:-60}
crawl_w=${LFV_FAULTS_CRAWL_W:-4}
a2a_rounds=${LFV_FAULTS_A2A_ROUNDS:-2}
log=$(mktemp -d)
mpi_loss_limit=${LFV_FAULTS_MPI_LOSS_LIMIT:-300}
NCASES=14

if [ "${LFV_BED_NODES:-1}" != 2 ]; then
	echo "1..0 # SKIP not on a two-node bed (tests/bed/rxe-bed --nodes 2)"
	exit 0
fi
[ -x "$stream" ] || { echo "Bail out! $stream not built (make check TESTS=)"; exit 1; }
peer=$LFV_BED_PEER
dev=$LFV_BED_NETDEV
me=$LFV_BED_IP
peer_ip=$LFV_BED_PEER_IP
# Dead peers noticed 8 s after the last completion, not the default 30
# (fi_lfverbs(7)): the bound below allows for it.
FI_LFVERBS_RDM_LIVE_TIMEOUT=${FI_LFVERBS_RDM_LIVE_TIMEOUT:-8}
export FI_LFVERBS_RDM_LIVE_TIMEOUT
if [ -n "${LFV_FAULTS_LOG:-}" ]; then
	export FI_LOG_LEVEL=$LFV_FAULTS_LOG FI_LOG_PROV=lfverbs
fi
# What is exported here reaches lfv-b: the bed's ssh sends FI_* and LFV_*
# (tests/bed/README.md), as it does for the other node scripts.

netem_clear() {
	tc qdisc del dev "$dev" root 2>/dev/null
	ssh "$peer" "tc qdisc del dev $dev root" 2>/dev/null
	true
}
trap 'netem_clear; rm -rf "$log"' EXIT

# since START: seconds (with tenths) since START (date +%s.%N).
since() {
	echo "$1 $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }'
}

# recv_start PORT ARGS...: a receiver on lfv-b into $log/recv; waits (up
# to 30 s: an ssh login takes seconds under TCG) until it listens.
recv_start() {
	local port=$1 i
	shift
	: >"$log/recv"
	# shellcheck disable=SC2029  # expanded here on purpose
	ssh "$peer" "timeout 120 $stream recv -a $peer_ip -p $port $*" \
		>"$log/recv" 2>&1 &
	rpid=$!
	for i in $(seq 1 300); do
		grep -q "listening" "$log/recv" && return 0
		kill -0 $rpid 2>/dev/null || break
		sleep 0.1
	done
	echo "# the receiver did not start"
	sed 's/^/#   recv: /' "$log/recv"
	return 1
}

# recv_wait: the receiver's status.
recv_wait() {
	wait "$rpid"
}

# rxe_counters [HOST]: soft-RoCE's counters, one "NAME VALUE" a line;
# HOST's over ssh, else this node's (lfv-a).
rxe_counters() {
	# shellcheck disable=SC2016  # run there
	if [ $# = 1 ]; then ssh "$1" 'rdma statistic show'; else rdma statistic show; fi 2>/dev/null |
		tr ' ' '\n' | awk '$1 ~ /^[0-9]+$/ && p != "" { print p, $1 } { p = $1 }'
}

# nonzero: rxe_counters' lines that are not zero, on one line.
nonzero() {
	awk '$2 != 0 { printf "%s %s ", $1, $2 } END { print "" }'
}

# show: both sides' output as diagnostics, and soft-RoCE's counters of
# each node that are not zero (retries, sequence errors, ...).
show() {
	sed 's/^/#   send: /' "$log/send" | cut -c1-200
	grep -v pyenv "$log/recv" | sed "s/^/#   recv: /" | cut -c1-200
	rxe_counters | nonzero | sed 's/^/#   rxe lfv-a: /'
	rxe_counters "$peer" | nonzero | sed 's/^/#   rxe lfv-b: /'
	rdma resource show qp 2>/dev/null | grep -w RC | sed 's/^/#   qp lfv-a: /'
	# shellcheck disable=SC2016  # run there
	ssh "$peer" 'rdma resource show qp' 2>/dev/null | grep -w RC |
		sed 's/^/#   qp lfv-b: /'
}

# field FILE SIDE EPOCH WORD: the number after WORD on SIDE's line of EPOCH.
field() {
	awk -v side="$2" -v e="$3" -v w="$4" '
		$1 == side && $2 == "epoch" && $3 == e ":" {
			for (i = 4; i < NF; i++) if ($i == w) { print $(i + 1); exit }
		}' "$1"
}

# expand RANGES: "0-2,5" as lines 0 1 2 5.
expand() {
	tr ',' '\n' <<<"$1" | awk -F- '$1 != "" { e = NF > 1 ? $2 : $1;
		for (i = $1; i <= e; i++) print i }'
}

# lost EPOCH: sequence numbers the sender had completed well and the
# receiver never got (must be none).
lost() {
	comm -23 <(expand "$(field "$log/send" send "$1" ok_seqs)" | sort) \
		<(expand "$(field "$log/recv" recv "$1" got_seqs)" | sort)
}

# result N NAME OK [TODO]: one TAP line; a failure that is a known
# limit says so with TAP's "# TODO" (tests/run-all.sh counts it apart).
result() {
	if [ "$3" = 1 ]; then
		echo "ok $1 - $2"
	else
		echo "not ok $1 - $2${4:+ # TODO $4}"
		show
	fi
}

# clean_stream N NAME NETEM: a stream under netem NETEM on lfv-a's NIC
# must arrive whole, and the sender see no error.
clean_stream() {
	local num=$1 name=$2 netem=$3 ok=0 src rrc t0
	recv_start $((7470 + num)) -n "$n" -t 20 || { result "$num" "$name" 0; return; }
	# shellcheck disable=SC2086  # netem's words
	tc qdisc add dev "$dev" root netem $netem ||
		{ echo "# tc netem $netem failed"; result "$num" "$name" 0; return; }
	t0=$(date +%s.%N)
	timeout 60 "$stream" send -a "$peer_ip" -p $((7470 + num)) -n "$n" \
		-T 30 >"$log/send" 2>&1
	src=$?
	tc qdisc del dev "$dev" root
	recv_wait
	rrc=$?
	echo "# $(since "$t0") s: $(grep '^send epoch' "$log/send" | cut -d' ' -f3-8)"
	[ $src = 0 ] && [ $rrc = 0 ] && ok=1
	result "$num" "$name (netem $netem on $dev of lfv-a)" $ok
}

# streaming PID: waits (at most 60 s) until the sender writing $log/send
# said its first message went through (the connection is up), or ended.
streaming() {
	local i
	for i in $(seq 1 600); do
		grep -q '^streaming' "$log/send" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# link_down SECONDS: 100 % loss on lfv-a's NIC for SECONDS, from now on:
# nothing of lfv-a reaches lfv-b (data, acknowledgements, read responses,
# control datagrams), as when the link goes down; lfv-b's NIC is left
# alone so that ssh to it keeps working.
link_down() {
	tc qdisc add dev "$dev" root netem loss 100%
	(sleep "$1"; tc qdisc del dev "$dev" root) </dev/null >/dev/null 2>&1 &
}

# The receiver's checks must fail on a broken stream: every kind of
# breakage once, sender and receiver on this node.
case_checks() {
	local x ok=1 rc
	for x in flip dup swap skip; do
		"$stream" recv -a "$me" -p 7470 -n 20 -t 3 >"$log/recv" 2>&1 &
		sleep 0.5
		"$stream" send -a "$me" -p 7470 -n 20 -x $x >"$log/send" 2>&1
		wait $!
		rc=$?
		if [ $rc = 1 ] && grep -q "FAIL" "$log/recv"; then
			echo "# -x $x: $(grep -m1 FAIL "$log/recv")"
		else
			echo "# -x $x: the receiver did not fail (exit $rc)"
			ok=0
		fi
	done
	result 1 "the stream's checks fail on a flipped byte, a duplicate, a swap, a loss" $ok
}

# Heavy loss or reordering: soft-RoCE's reliable connections crawl there,
# raw verbs too (tests/bed/README.md, faults: its go-back-N resends every
# read in flight, the responder replays each whole, and a loss in the last
# response of a read costs a ~1 s timeout), but they do not give up: the
# stream (epoch 0, under netem, LFV_FAULTS_CRAWL_W sends in flight) must
# arrive whole, once, in order, every byte checked, within 150 s; once
# netem is gone, epoch 1 must too.
# crawl N NAME NETEM
crawl() {
	local num=$1 name=$2 netem=$3 ok=0 src rrc t0 gone spid m=$crawl_n
	recv_start $((7470 + num)) -n "$m" -E 2 -t 90 ||
		{ result "$num" "$name" 0; return; }
	# shellcheck disable=SC2086  # netem's words
	tc qdisc add dev "$dev" root netem $netem ||
		{ echo "# tc netem $netem failed"; result "$num" "$name" 0; return; }
	t0=$(date +%s.%N)
	timeout 300 "$stream" send -a "$peer_ip" -p $((7470 + num)) -n "$m" \
		-w "$crawl_w" -E 2 -g 5 -T 150 >"$log/send" 2>&1 &
	spid=$!
	for _ in $(seq 1 3000); do
		grep -q '^send epoch 0' "$log/send" && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	tc qdisc del dev "$dev" root
	wait $spid
	src=$?
	recv_wait
	rrc=$?
	gone=$(lost 0 | tr '\n' ' ')
	echo "# $(since "$t0") s: $(grep '^send epoch 0' "$log/send" | cut -d' ' -f1-16)"
	echo "# epoch 1: $(grep '^send epoch 1' "$log/send" | cut -d' ' -f4-8)"
	[ -z "$gone" ] || echo "# sent well but never received: $gone"
	[ $src = 0 ] && [ $rrc = 0 ] && [ -z "$gone" ] &&
		[ "$(field "$log/send" send 0 ok)" = "$m" ] &&
		[ "$(field "$log/send" send 0 errors)" = 0 ] &&
		[ "$(field "$log/recv" recv 0 got)" = "$m" ] && ok=1
	result "$num" "$name (netem $netem on $dev of lfv-a): the stream arrives whole, slowly; then another" $ok
}

# The link down shorter than the retries: nothing fails; then a new
# sender (new endpoint, new connection) streams whole.
case_down() {
	local ok=0 src src2 rrc t0
	recv_start 7477 -n "$n" -E 2 -t 40 || { result 7 "link down" 0; return; }
	t0=$(date +%s.%N)
	timeout 90 "$stream" send -a "$peer_ip" -p 7477 -n "$n" -w 4 -T 60 \
		>"$log/send" 2>&1 &
	local spid=$!
	streaming $spid
	link_down "$down"
	wait $spid
	src=$?
	timeout 60 "$stream" send -a "$peer_ip" -p 7477 -n "$n" -e 1 -T 30 \
		>>"$log/send" 2>&1
	src2=$?
	recv_wait
	rrc=$?
	echo "# $(since "$t0") s: $(grep '^send epoch' "$log/send" | cut -d' ' -f1-9 | tr '\n' ' ')"
	[ $src = 0 ] && [ $src2 = 0 ] && [ $rrc = 0 ] &&
		[ "$(field "$log/recv" recv 0 got)" = "$n" ] && ok=1
	result 7 "link down ${down} s mid-stream: the stream arrives whole; a new connection then too" $ok
}

# The link down longer than the retries: error completions within the
# bound, no lost message, no hang; then the same sender streams whole.
case_outage() {
	local ok=0 src rrc t0 errs gone
	recv_start 7478 -n "$n" -E 2 -t 60 || { result 8 "outage" 0; return; }
	t0=$(date +%s.%N)
	# 20 ms between sends: epoch 0 lasts at least 4 s. Unpaced, its 200
	# messages could all be through before the link went down (the
	# outage starts a poll and a tc after the first one), and epoch 1,
	# started within the outage, outlived it on RC's retries: no error.
	timeout 120 "$stream" send -a "$peer_ip" -p 7478 -n "$n" -w 4 -E 2 \
		-i 20 -g $((outage - 4)) -b "$bound" -T 40 >"$log/send" 2>&1 &
	local spid=$!
	# Mid-stream: an outage during the address's resolution (rdma_cm,
	# before any message) fails the resolution instead.
	streaming $spid
	link_down "$outage"
	wait $spid
	src=$?
	recv_wait
	rrc=$?
	errs=$(field "$log/send" send 0 errors)
	gone=$(lost 0 | tr '\n' ' ')
	echo "# $(since "$t0") s: $(grep '^send epoch 0' "$log/send" | cut -d' ' -f1-16)"
	echo "# epoch 1: $(grep '^send epoch 1' "$log/send" | cut -d' ' -f4-8)"
	[ -z "$gone" ] || echo "# sent well but never received: $gone"
	[ $src = 0 ] && [ $rrc = 0 ] && [ "${errs:-0}" -gt 0 ] && [ -z "$gone" ] &&
		ok=1
	result 8 "link down ${outage} s: error completions within $bound ms, none lost, no hang; then a whole stream" $ok
}

# kill_and_restart NUM PORT M K SEND_ARGS DESCRIPTION: a receiver of M
# messages dies (SIGKILL) once it has K; the sender's pending sends must
# fail, each within the bound; after its gap, the same sender must get
# its second epoch whole to a receiver restarted at the same port.
kill_and_restart() {
	local num=$1 port=$2 m=$3 k=$4 sargs=$5 desc=$6
	local ok=0 src rrc rrc2 t0 errs spid
	recv_start "$port" -n "$m" -k "$k" -t 30 || { result "$num" "$desc" 0; return; }
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # SEND_ARGS are words
	timeout 120 "$stream" send -a "$peer_ip" -p "$port" -n "$m" $sargs \
		-E 2 -g 2 -R -b "$bound" -T 40 >"$log/send" 2>&1 &
	spid=$!
	recv_wait
	rrc=$?
	mv "$log/recv" "$log/recv.killed"
	recv_start "$port" -n "$m" -e 1 -t 60 || { result "$num" "$desc" 0; kill $spid; return; }
	wait $spid
	src=$?
	recv_wait
	rrc2=$?
	cat "$log/recv.killed" "$log/recv" >"$log/recv.all" && mv "$log/recv.all" "$log/recv"
	errs=$(field "$log/send" send 0 errors)
	echo "# $(since "$t0") s, receiver killed (exit $rrc): $(grep '^send epoch 0' "$log/send" | cut -d' ' -f1-16)"
	echo "# epoch 1 to the restarted receiver: $(grep '^send epoch 1' "$log/send" | cut -d' ' -f4-8)"
	[ $src = 0 ] && [ $rrc2 = 0 ] && [ "${errs:-0}" -gt 0 ] && ok=1
	result "$num" "$desc" $ok
}

# The receiver killed mid-rendezvous, a quarter into the stream, the
# sender still posting: its new sends fail on RC's retries.
case_kill() {
	kill_and_restart 9 7479 "$n" $((n / 4)) "" \
		"receiver killed mid-rendezvous: pending sends fail within $bound ms; a restarted one is reachable"
}

# The receiver killed while the sender only waits for it: the whole
# stream is posted at once (as many in flight as messages), its eager
# messages complete, its rendezvous ones wait for the receiver's reads;
# the receiver dies after its first message, with nothing of the sender's
# on the wire, so RC's own retries never start (unlike case 9). Only the
# probes of connections that a rendezvous send waits on find the peer
# gone: without them the sends wait for ever (the sender's -T limit then
# calls it a hang).
case_kill_waiting() {
	kill_and_restart 11 7480 10 1 "-w 10" \
		"receiver killed while the sender only waits for its reads: the probes find it gone within $bound ms; a restarted one is reachable"
}

# mpi_nodes N LIMIT HOSTS VARS NP PROGRAM [ARGS...]: PROGRAM of
# tests/func/mpi under mpirun over lfverbs (pml cm, mtl ofi), NP ranks on
# HOSTS by node, within LIMIT s, the variables named in VARS passed to
# every rank (-x); its output in $log/send, its time in mpi_secs, and
# mpirun's status. Case N is reported skipped (77) without mpirun or the
# program.
mpi_nodes() {
	local num=$1 limit=$2 hosts=$3 vars=$4 np=$5 prog=$build/tests/func/mpi/$6
	local v xvars="-x FI_PROVIDER_PATH" rc t0
	shift 6
	if ! command -v mpirun >/dev/null || [ ! -x "$prog" ]; then
		echo "ok $num # SKIP no mpirun or $prog"
		return 77
	fi
	for v in $vars; do
		xvars="$xvars -x $v"
	done
	t0=$(date +%s)
	# shellcheck disable=SC2086 # xvars is a word list
	timeout -k 10 "$limit" mpirun --allow-run-as-root --oversubscribe \
		--bind-to none --mca mpi_yield_when_idle 1 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include lfverbs \
		--host "$hosts" --map-by node --mca oob_tcp_if_include "$dev" \
		$xvars -np "$np" "$prog" "$@" </dev/null >"$log/send" 2>&1
	rc=$?
	mpi_secs=$(($(date +%s) - t0))
	: >"$log/recv"
	echo "# mpirun exit $rc after $mpi_secs s"
	return $rc
}

# An MPI job across the nodes whose rank on lfv-b (rank 1: ranks by node)
# kills itself mid-ping-pong must end in an error within the limit.
case_mpi() {
	local rc
	LFV_MPI_FAULT=kill mpi_nodes 10 "$mpi_limit" lfv-a:1,lfv-b:1 \
		LFV_MPI_FAULT 2 mpi_pingpong -s 1,4k,1m -n 100
	rc=$?
	[ $rc = 77 ] && return
	grep -m3 -i "killing itself\|exited on signal\|error" "$log/send" | sed 's/^/#   /'
	# (mpirun exits with the killed rank's 137 too: the time tells a hang)
	[ $rc != 0 ] && [ $rc != 124 ] && [ $mpi_secs -lt "$mpi_limit" ] ||
		{ result 10 "mpirun job whose remote rank is killed ends in an error, not a hang" 0; return; }
	grep -q "killing itself" "$log/send"
	result 10 "mpirun job whose remote rank is killed ends in an error, not a hang ($mpi_secs s)" \
		$([ $? = 0 ] && echo 1 || echo 0)
}

# a2a_round I ENV...: one round of func_rdm_peers' all-to-all with ENV
# (FI_* reaches the peers on lfv-b through its ssh), its output in
# $log/send; its exit status, and the tail of its output when it fails.
a2a_round() {
	local i=$1 rc
	shift
	env "$@" LFV_PEER_HOST="$peer" LFV_REQUIRE_DEVICE=1 \
		LFV_RDM_PEERS_ONLY=test_processes CMOCKA_MESSAGE_OUTPUT=TAP \
		timeout 150 "$build/tests/func/func_rdm_peers" >"$log/send" 2>&1
	rc=$?
	[ $rc = 0 ] && return 0
	echo "# round $i: exit $rc"
	grep -v -e pyenv -e "lossy:" "$log/send" | tail -40 | sed 's/^/#   /'
	return $rc
}

# a2a_lossy_link N NAME: 2 % loss on both NICs, for case N; false (and N
# reported failed) when that cannot be.
a2a_lossy_link() {
	: >"$log/recv"
	: >"$log/send"
	[ -x "$build/tests/func/func_rdm_peers" ] ||
		{ echo "# no func_rdm_peers"; result "$1" "$2" 0; return 1; }
	tc qdisc add dev "$dev" root netem loss 2% &&
		ssh "$peer" "tc qdisc add dev $dev root netem loss 2%" ||
		{ echo "# tc netem failed"; result "$1" "$2" 0; return 1; }
}

# Case 12: the all-to-all under loss (func_rdm_peers, LFV_A2A_LOSSY: a
# message may fail or not come within 30 s; one received without error
# is checked whole). Soft-RoCE of the bed's kernel (6.1) completes a read
# with success on the path that then puts its QP in error, its data
# partly written (README, across the link): lfverbs believes a read only
# once a later request on the QP succeeded. At least one rendezvous
# receive must have completed well over the rounds, or nothing was shown.
case_a2a_lossy() {
	local i ok=1 rndv=0 n_rndv
	local name="all-to-all under 2 % loss on both NICs: every receive that completed without error holds its bytes"
	a2a_lossy_link 12 "$name" || return
	for i in $(seq 1 "$a2a_rounds"); do
		a2a_round "$i" LFV_A2A_LOSSY=30 || ok=0
		grep "lossy:" "$log/send" | sed "s/^/#   round $i: /"
		n_rndv=$(awk '/lossy: checked/ { s += $9 } END { print s + 0 }' "$log/send")
		rndv=$((rndv + n_rndv))
	done
	if [ "$rndv" = 0 ]; then
		echo "# no rendezvous receive completed without error: nothing was checked"
		ok=0
	fi
	: >"$log/send"
	result 12 "$name ($rndv rendezvous receives checked in $a2a_rounds rounds)" $ok
}

# Case 13: the same, rendezvous by write, and every message must arrive.
case_a2a_write() {
	local i ok=1 mode=${LFV_FAULTS_RNDV_WRITE:-1}
	local name="all-to-all under 2 % loss on both NICs, rendezvous by write ($mode): every message arrives whole"
	a2a_lossy_link 13 "$name" || return
	for i in $(seq 1 "$a2a_rounds"); do
		# A round that times out names every unfinished pair, and
		# lfverbs' warnings (none when all goes well) show beside.
		a2a_round "$i" FI_LFVERBS_RDM_RNDV_WRITE="$mode" \
			LFV_A2A_DEBUG=1 FI_LOG_LEVEL=warn FI_LOG_PROV=lfverbs ||
			ok=0
	done
	: >"$log/send"
	# At the old link's MTU (CI's step at 1500) a round can fail: on
	# 2026-11-30, 12 rounds in a row failed 4 times with this case's
	# 8 s liveness timeout, 2 with the default 30 s. Seen: soft-RoCE's
	# responder failing a receive of a message that fit (a local QP
	# operation error) or refusing a request (FI_EREMOTEIO), after which the
	# connection's sends flush (FI_ECANCELED). The bed's link (9000)
	# must pass.
	result 13 "$name ($a2a_rounds rounds)" $ok \
		"$([ "${LFV_BED_MTU:-9000}" -ge 9000 ] ||
			echo "at MTU ${LFV_BED_MTU:-}, soft-RoCE fails a receive or a request under loss and the connection's sends flush")"
}

# Case 14: MPI as applications send it, across the lossy link: mpi_coll
# (tests/func/mpi: Allreduce of 1 and 2 MiB, Alltoall of 70000-byte
# blocks, Bcast of 1 MiB from every root, each result checked) with 4
# ranks, 2 a node, under 1 % loss on both NICs, must pass within
# LFV_FAULTS_MPI_LOSS_LIMIT s (300). Every rank talks to the three others
# at once, in both directions, eager and rendezvous, while packets go
# missing: the handshakes retry over UD, and the RC QPs retry for ever
# (lfv_rdm_conn.c). With a QP that gives up after one retry it fails.
case_mpi_loss() {
	local rc
	local name="MPI collectives (mpi_coll, 4 ranks on both nodes) under 1 % loss on both NICs: every result checked"
	tc qdisc add dev "$dev" root netem loss 1% &&
		ssh "$peer" "tc qdisc add dev $dev root netem loss 1%" ||
		{ echo "# tc netem failed"; result 14 "$name" 0; return; }
	FI_PROVIDER="^ofi_rxm,ofi_rxd,ofi_mrail" mpi_nodes 14 \
		"$mpi_loss_limit" lfv-a:2,lfv-b:2 FI_PROVIDER 4 mpi_coll
	rc=$?
	[ $rc = 77 ] && return
	[ $rc = 0 ] && grep -q "^mpi_coll: .*: ok\$" "$log/send"
	result 14 "$name ($mpi_secs s)" "$([ $? = 0 ] && echo 1 || echo 0)"
}

echo "1..$NCASES"
for num in $(seq 1 $NCASES); do
	case " ${LFV_FAULTS_CASES:-$num} " in
	*" $num "*) ;;
	*) echo "ok $num # SKIP not in LFV_FAULTS_CASES"; continue ;;
	esac
	case $num in
	1) case_checks ;;
	2) clean_stream 2 "1 % loss" "loss 1%" ;;
	3) crawl 3 "10 % loss" "loss 10%" ;;
	4) clean_stream 4 "delay with jitter" "delay 2ms 1ms rate 1gbit" ;;
	5) crawl 5 "reordering" "delay 2ms reorder 25% 50%" ;;
	6) clean_stream 6 "duplication" "duplicate 5%" ;;
	7) case_down ;;
	8) case_outage ;;
	9) case_kill ;;
	10) case_mpi ;;
	11) case_kill_waiting ;;
	12) case_a2a_lossy ;;
	13) case_a2a_write ;;
	14) case_mpi_loss ;;
	esac
	netem_clear
done
