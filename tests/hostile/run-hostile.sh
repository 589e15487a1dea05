#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The hostile-peer cases (tests/hostile/README.md), TAP: for each, what a
# hostile peer (lfv_hostile: raw rdma_cm/ibverbs) does to lfverbs
# endpoints of lfv_victim, what lfverbs must do about it, and that its
# traffic with a well-behaved lfverbs peer goes on, every byte checked.
# Skips when lfverbs finds no device.
here=$(dirname "$0")
ip=${LFV_BED_IP:-10.77.0.1}
port=47800
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# Built in the build tree: `make check` runs this from there.
bin=tests/hostile
[ -x "$bin/lfv_hostile" ] || bin=$here
hostile=$bin/lfv_hostile
victim=$bin/lfv_victim
# LFV_HOSTILE_HOST=HOST: the hostile peer runs on HOST (the two-node bed's
# other node, through ssh: tests/nodes/hostile.sh), so that what it sends
# crosses the wire; the victims stay here.
# LFV_HOSTILE_IP is then HOST's address, where the hostile MSG server
# listens.
hip=$ip
if [ -n "${LFV_HOSTILE_HOST:-}" ]; then
	hip=${LFV_HOSTILE_IP:?LFV_HOSTILE_HOST needs LFV_HOSTILE_IP}
	case $hostile in /*) ;; *) hostile=$PWD/$hostile ;; esac
	# on-peer.sh quotes each argument for the remote shell.
	printf '#!/bin/sh\nLFV_BED_PEER=%s exec %s %s "$@"\n' \
		"$LFV_HOSTILE_HOST" "$(cd "$here/../bench" && pwd)/on-peer.sh" "$hostile" \
		>"$log/hostile.sh"
	chmod +x "$log/hostile.sh"
	hostile=$log/hostile.sh
fi
# LFV_VICTIM_ASAN=DIR:RUNTIME: the victims load the lfverbs in DIR, built
# with AddressSanitizer, and preload its RUNTIME (libasan.so); nothing
# else here does (the leak checker would judge the other programs).
if [ -n "${LFV_VICTIM_ASAN:-}" ]; then
	case $victim in /*) ;; *) victim=$PWD/$victim ;; esac
	printf '#!/bin/sh\nFI_PROVIDER_PATH=%s LD_PRELOAD=%s exec %s "$@"\n' \
		"${LFV_VICTIM_ASAN%%:*}" "${LFV_VICTIM_ASAN#*:}" "$victim" \
		>"$log/victim.sh"
	chmod +x "$log/victim.sh"
	victim=$log/victim.sh
fi

# shellcheck source=tests/func/func_common.sh
. "$here/../func/func_common.sh"
require_lfverbs fi_info libfabric-bin

# show NAME...: the logs of a failed case.
show() {
	for f in "$@"; do
		echo "# $f:"
		sed 's/^/#   /' "$log/$f"
	done
}

# wait_line FILE PID PATTERN: until the program (PID) writing FILE has
# printed a line matching PATTERN (at most 30 s).
wait_line() {
	i=0
	while ! grep -q "$3" "$1" 2>/dev/null; do
		kill -0 "$2" 2>/dev/null || return 1
		i=$((i + 1))
		[ $i -lt 300 ] || return 1
		sleep 0.1
	done
}

wait_listening() { wait_line "$1" "$2" '^listening'; }

# selected DESCRIPTION: whether to run that case. LFV_HOSTILE_ONLY=TEXT
# runs only the cases whose description has TEXT (the others are reported
# skipped): a quick way to rerun one.
selected() {
	case $1 in *"${LFV_HOSTILE_ONLY:-}"*) return 0 ;; esac
	n=$((n + 1))
	echo "ok $n - $1 # SKIP not selected (LFV_HOSTILE_ONLY)"
	return 1
}

# rc_qps PID: the RC queue pairs the process PID has on the device.
rc_qps() {
	rdma resource show qp 2>/dev/null |
		grep -c "type RC .*pid $1 " || true
}

# name_of FILE PID: the "name HEX" line a victim prints, once it is there.
name_of() {
	wait_line "$1" "$2" '^name ' || return 1
	sed -n 's/^name //p' "$1" | head -1
}

# case_result STATUS DESCRIPTION LOG...: waits for the victim server
# (spid) and reports the case: ok when STATUS (the case's own checks), the
# client (crc), the hostile peer (hrc) and the server all say 0; else
# shows the LOGs.
case_result() {
	r=$1 desc=$2
	shift 2
	wait $spid; src=$?
	[ "$r" -eq 0 ] && [ $crc -eq 0 ] && [ $hrc -eq 0 ] && [ $src -eq 0 ]
	r=$?
	[ $r -eq 0 ] || show "$@"
	ok $r "$desc"
}

# msg_server PORT ARGS...: a MSG victim server on PORT in the background
# (spid), its output in the server log.
msg_server() {
	timeout 60 "$victim" msg-server "$ip" "$@" >"$log/server" 2>&1 &
	spid=$!
}

# rdm_case DESCRIPTION CASE_ARGS DROPS...: an RDM victim server and a
# well-behaved RDM client in echo sessions; meanwhile lfv_hostile runs
# CASE (VICTIM and OTHER in its arguments become the server's and the
# client's names); the server's drops must reach DROPS. The client goes
# on (at least CLIENT_MS) until the hostile peer is done and QPS_AFTER
# checked: the server ends with the client's bye, and must be there for
# every hostile send, however long the hostile peer takes to start (its
# first ssh to the other node takes seconds under load).
rdm_case() {
	desc=$1 hcase=$2
	shift 2
	selected "$desc" || return 0
	# Niced: two busy-polling victims on the bed's two CPUs starve
	# soft-RoCE, which then loses the hostile peer's datagrams.
	nice -n 10 "$victim" rdm-server "$@" >"$log/server" \
		2>"$log/server.err" &
	spid=$!
	sname=$(name_of "$log/server" $spid)
	rm -f "$log/hostile.done"
	LFV_VICTIM_UNTIL=$log/hostile.done timeout 60 nice -n 10 \
		"$victim" rdm-client "$sname" "${CLIENT_MS:-1000}" \
		>"$log/client" 2>&1 &
	cpid=$!
	cname=$(name_of "$log/client" $cpid)
	sleep 0.5	# the client is connected and in session
	# shellcheck disable=SC2086 # CASE_ARGS are words
	set -- $(echo "$hcase" | sed "s/VICTIM/$sname/; s/OTHER/$cname/")
	echo "args: $*" >"$log/hostile.args"
	timeout 60 "$hostile" "$@" >"$log/hostile" 2>&1
	hrc=$?
	# QPS_AFTER="S N": S seconds later the server has at most N RC QPs
	# (connections that failed were given back).
	qrc=0
	if [ -n "${QPS_AFTER:-}" ]; then
		sleep "${QPS_AFTER% *}"
		qps=$(rc_qps $spid)
		echo "server's RC QPs ${QPS_AFTER% *} s later: $qps" \
			>>"$log/hostile"
		[ "$qps" -le "${QPS_AFTER#* }" ] || qrc=1
	fi
	touch "$log/hostile.done"
	wait $cpid; crc=$?
	( sleep 60; kill $spid 2>/dev/null ) &
	[ -n "$sname" ] && [ -n "$cname" ] && [ $qrc -eq 0 ]
	case_result $? "$desc" hostile.args hostile client server server.err
}

echo "1..13"

# A connect reply whose length byte claims 195 bytes of connection data:
# the lfverbs client aborts that connection (no copy past its 55 bytes),
# counts one drop, and then talks to a well-behaved server.
msg_reply_case() {
	hport=$((port + 1)) gport=$((port + 2))
	timeout 60 "$hostile" cm-accept-oversize "$hip" $hport >"$log/hostile" 2>&1 &
	hpid=$!
	msg_server $gport 1
	wait_listening "$log/hostile" $hpid && wait_listening "$log/server" $spid
	timeout 60 "$victim" msg-client --drops 1 "$hip:$hport:aborted" \
		"$ip:$gport:ok" >"$log/client" 2>&1
	crc=$?
	wait $hpid; hrc=$?
	case_result 0 "$1" client hostile server
}
desc="an oversized connect reply aborts that connection only"
! selected "$desc" || msg_reply_case "$desc"

# A connect request whose length byte claims more than it holds: the
# lfverbs server rejects it, counts one drop, and serves a good client.
msg_request_case() {
	sport=$((port + 3))
	msg_server $sport 1 1
	wait_listening "$log/server" $spid
	timeout 60 "$hostile" cm-connect-oversize "$ip" $sport >"$log/hostile" 2>&1
	hrc=$?
	timeout 60 "$victim" msg-client "$ip:$sport:ok" >"$log/client" 2>&1
	crc=$?
	case_result 0 "$1" hostile client server
}
desc="an oversized connect request is rejected, the next one served"
! selected "$desc" || msg_request_case "$desc"

rdm_case "forged RDM handshakes naming a connected peer are dropped" \
	"rdm-forged VICTIM OTHER" forged=1
# Liveness (wire version 5), eight rounds: a PONG and a GONE nobody asked
# for change nothing; a PING naming the good client, sent from the
# hostile peer's address, is forged (8; at least 4 counted: rxe may lose a
# datagram); the hostile peer's PINGs get a PONG for its connection and a
# GONE for another incarnation, each round (it checks).
rdm_case "liveness PINGs are answered, forged and unasked ones change nothing" \
	"rdm-live VICTIM OTHER" forged=4
# Eight rounds of two truncated, one of another version, one of another
# eager size, five malformed (two of them REQs with an MTU of 0 and of 6,
# wire version 7): more than 8 VERSION drops shows that the eager size is
# checked, more than 24 MALFORMED that the MTU is (rxe may lose a
# datagram now and then).
rdm_case "truncated, other-version and malformed handshakes are dropped" \
	"rdm-bad-ctrl VICTIM" truncated=1 version=9 malformed=25
# The handshakes it accepted time out (5 s without the requester's RTU)
# and their QPs are given back: 8 s later the server has one RC QP left,
# the good client's.
QPS_AFTER="8 1" FI_LFVERBS_RDM_HANDSHAKES_MAX=4 rdm_case \
	"a flood of handshakes from new names stops at the limit, its QPs given back" \
	"rdm-flood VICTIM 16" limit=12
# Eight receive buffers, twelve messages longer than one: each must come
# back to the SRQ, or the well-behaved client waits for receivers forever.
FI_LFVERBS_RDM_RX_BUFS=8 rdm_case \
	"messages longer than a receive buffer give the buffer back" \
	"rdm-oversize VICTIM 12 20000" too_long=1
# The client's messages go by rendezvous (32 KiB, segmented eager off:
# FI_LFVERBS_RDM_SAR=0, as in the next two cases); a hostile peer
# connected to the client sends FINs with guessed cookies: the client must
# take a FIN only from the server its request went to, or it would reuse
# its buffer while the server still reads it (the echo then differs). The
# guesses hit a waiting rendezvous in most runs, not all: the client's
# FORGED count is shown, not required.
LFV_VICTIM_SIZE=32768 FI_LFVERBS_RDM_SAR=0 rdm_case \
	"FINs from a peer a rendezvous did not go to are dropped" \
	"rdm-fin OTHER 2500"
# Eight rounds on a connection made by a real handshake: a write with
# immediate data into the shared receive queue, an unknown op, a length
# that lies, a FIN with a payload (all MALFORMED), a HELD nobody asked
# for, five segmented messages that break their rules (a segment with no
# message, totals past max_msg_size and not past the first segment, a
# first segment cutting one short, a segment out of place: MALFORMED
# each), and a rendezvous of 2^50 bytes, which the server must refuse at
# once with a FIN saying FI_EMSGSIZE (TOO_LONG); the hostile peer checks
# that it got all eight refusals.
rdm_case "bad messages on a connection are dropped, an impossible rendezvous refused" \
	"rdm-bad-msg VICTIM" malformed=72 too_long=8
# A rendezvous the server reads and echoes back by rendezvous (its 20000
# bytes would go as segmented eager otherwise) to a peer
# that never answers: the server asks after the timeout (2 s here) and,
# with no answer, fails that send (FI_ETIMEDOUT) instead of holding it for
# ever; its echo sessions with the good client go on.
FI_LFVERBS_RDM_RNDV_TIMEOUT=2 LFV_VICTIM_TIMEOUTS=1 FI_LFVERBS_RDM_SAR=0 rdm_case \
	"a rendezvous whose receiver never answers fails after its timeout" \
	"rdm-no-fin VICTIM 9000"
# The same echo, whose cookie the hostile peer now knows: a FIN for it
# from a second connection and a HELD nobody asked for are refused (two
# FORGED, every time), the real FIN then finishes the send.
FI_LFVERBS_RDM_SAR=0 rdm_case "a FIN from another connection and an unasked HELD are refused" \
	"rdm-fin-forged VICTIM" forged=2
# rdm-bad-rts: eight rounds, each on a fresh connection, of rendezvous
# requests that cannot be followed: one cut short and one with bytes past
# it (the header's length disagrees with an RTS: 16 MALFORMED), one whose
# buffer wraps past the end of the address space, which the server must
# refuse at once with a FIN saying FI_EINVAL (8 MALFORMED; the hostile
# peer checks the eight refusals), and one naming memory outside the
# hostile peer's registration (past its end, or a wrong key): that read
# fails, the receive it met completes in error, never with data
# (LFV_VICTIM_RECV_ERRORS; an echo of the hostile's bytes would fail the
# server), and is counted (8 MALFORMED). The client's sessions run on
# after the last round.
LFV_VICTIM_RECV_ERRORS=8 rdm_case \
	"rendezvous requests of lying length, wrapping or outside any registration are refused" \
	"rdm-bad-rts VICTIM" malformed=32
# rdm-cts: rendezvous by write (FI_LFVERBS_RDM_RNDV_WRITE=1), both ways.
# The server receives the hostile peer's rendezvous by write: a WDONE from
# a second connection and one for an rcookie it never gave are dropped
# (FORGED); a write just past the bytes its CTS offered, from a third
# connection, fails at the server's device; the hostile peer's write then
# a WDONE for one byte less fails that receive (FI_EIO, MALFORMED; no
# echo), and the WDONE again is dropped (FORGED). On a second rendezvous,
# received whole, the server echoes by rendezvous: a CTS from the second
# connection, one for a byte more than the echo, one naming another use of
# its request are dropped (FORGED); the right one has the echo written and
# WDONE sent (the hostile peer checks the bytes), and a replay of it is
# dropped (FORGED): 7 FORGED and 1 MALFORMED, every run.
FI_LFVERBS_RDM_RNDV_WRITE=1 FI_LFVERBS_RDM_SAR=0 LFV_VICTIM_RECV_ERRORS=1 rdm_case \
	"rendezvous by write: CTS and WDONE only from their connection, once, for the bytes agreed" \
	"rdm-cts VICTIM" forged=7 malformed=1

[ $fails -eq 0 ]
