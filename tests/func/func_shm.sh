#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# lfverbs' RDM endpoint with shm as its intra-node peer (FI_LFVERBS_SHM=1,
# libfabric 2.x; skips on 1.x, where the parameter does nothing). Two
# processes of one host run func_lnx's cases over lfverbs (FUNC_RDM_PROV):
# tagged ping-pong 1 B..1 MiB, a message before its receive, RMA (verbs),
# all data checked. What proves the path is lfverbs' own count, logged at
# INFO when an endpoint closes: "N sends through shm".
#  1. shm on: traffic passes; the parent sent its 15 ping-pong messages
#     through shm, the child its 15 and the early one (16);
#  2. FI_PROVIDER hides shm: traffic passes through verbs, no send went
#     through shm, and lfverbs said why (once);
#  3. counters only: fabtests' fi_rdm_cntr_pingpong (on PATH where 2.x's
#     fabtests are built) reads no CQ, so its counter reads must drive shm;
#     data checked (-v), both sides' sends through shm.
#  4. FI_PROGRESS_AUTO: the same traffic, and 1 MiB sent through shm while
#     its receiver calls nothing of libfabric: the receiver's progress
#     thread must drive shm for the send to complete.
#  5. shm on in one process only: the other has no shm endpoint, so both
#     send through verbs (no send waits for good on a peer shm cannot map).
. "$(dirname "$0")/func_common.sh"
prog=$(dirname "$0")/func_lnx
[ -x "$prog" ] || prog=${LFV_TOP_BUILDDIR:-.}/tests/func/func_lnx

major=$(fi_info --version 2>/dev/null | sed -n 's/^libfabric: *\([0-9]*\)\..*/\1/p')
if [ "${major:-1}" -lt 2 ]; then
	echo "1..0 # SKIP libfabric ${major:-?}.x: shm cannot be lfverbs' peer (FI_LFVERBS_SHM does nothing)"
	exit 0
fi
require_lfverbs fi_info libfabric-bin
echo "1..5"

# run ENV...: func_lnx over lfverbs, 3 rounds; its output (with lfverbs'
# INFO log) in $out, its status in $rc.
run() {
	out=$(env FUNC_RDM_PROV=lfverbs FI_LFVERBS_SHM=1 FI_LOG_LEVEL=info \
		FI_LOG_PROV=lfverbs "$@" timeout -k 10 300 "$prog" 3 2>&1)
	rc=$?
	echo "$out" | grep -v '^libfabric:.*:core:' | sed 's/^/# /'
	echo "$out" | grep -q '^not ok' && rc=1
	echo "$out" | grep -q '^ok' || rc=1
}

run
st=$rc
echo "$out" | grep -q ' 15 sends through shm' || st=1
echo "$out" | grep -q ' 16 sends through shm' || st=1
ok $st "shm on: traffic checked, ping-pong sends went through shm"

run FI_PROVIDER=lfverbs
st=$rc
echo "$out" | grep -q 'sends through shm' && st=1
echo "$out" | grep -q 'shm peer not used: no shm provider' || st=1
ok $st "FI_PROVIDER=lfverbs hides shm: traffic through verbs, checked"

# cntr_pingpong: fi_rdm_cntr_pingpong server and client over lfverbs with
# shm on, 64 B and 64 KiB, data checked; each side's lfverbs says how many
# sends went through shm.
cntr_pingpong() {
	ip=${LFV_BED_IP:-10.77.0.1}
	log=$(mktemp -d)
	for side in server client; do
		where="-B 47790"
		[ $side = client ] && { sleep 1; where="-P 47790 $ip"; }
		# shellcheck disable=SC2086 # options and address, split
		env FI_LFVERBS_SHM=1 FI_LOG_LEVEL=info FI_LOG_PROV=lfverbs \
			timeout 60 fi_rdm_cntr_pingpong -p lfverbs -I 100 \
			-S l:64,65536 -v $where >"$log/$side" 2>&1 &
		eval "${side}_pid=\$!"
	done
	# shellcheck disable=SC2154 # set by the eval
	wait "$client_pid" && wait "$server_pid"
	st=$?
	for side in server client; do
		grep -q ' [1-9][0-9]* sends through shm' "$log/$side" || st=1
		[ $st -eq 0 ] || grep -v '^libfabric:.*:core:' "$log/$side" |
			tail -15 | sed "s/^/# $side: /"
	done
	rm -rf "$log"
	return $st
}

if command -v fi_rdm_cntr_pingpong >/dev/null 2>&1; then
	cntr_pingpong
	ok $? "counters only (fi_rdm_cntr_pingpong -v): counter reads drive shm"
else
	echo "ok 3 # SKIP fi_rdm_cntr_pingpong (2.x's fabtests) not on PATH"
	n=3
fi

run FUNC_RDM_AUTO=1
st=$rc
echo "$out" | grep -q 'ok 8 - FI_PROGRESS_AUTO' || st=1
echo "$out" | grep -q ' 1[5-9] sends through shm' || st=1
ok $st "FI_PROGRESS_AUTO: 1 MiB through shm while its receiver calls nothing"
run FUNC_RDM_CHILD_SHM=0
st=$rc
echo "$out" | grep -q ' 0 sends through shm' || st=1
echo "$out" | grep -q ' [1-9][0-9]* sends through shm' && st=1
ok $st "shm on in one process only: traffic through verbs both ways, checked"

[ $fails -eq 0 ]
