#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# lfverbs linked into upstream's lnx provider (libfabric 2.x) as its peer:
# lnx owns the receive queue (the peer SRX) and the CQ, lfverbs imports
# them (fi_peer(3)). Skips on a core without lnx (1.x).
#  1. fi_info -p lnx with FI_LNX_PROV_LINKS=shm+lfverbs lists the link;
#  2. two processes open lnx endpoints over it (lfverbs' RDM endpoint
#     binds lnx's peer CQ, imports its SRX and enables) and swap names;
#  3. the same with FI_LNX_DISABLE_SHM=1 (same-host peers through lfverbs);
#  4-5. func_lnx's traffic (tagged ping-pong 1 B..1 MiB, an unexpected
#     message, RMA; all data checked) over both: TODO. With 2.1's lnx the
#     first exchange is lost with every link, upstream's own shm+tcp too
#     (printed below as the reference), so these are expected to fail
#     until that is understood; a pass shows as a bonus, not a failure.
. "$(dirname "$0")/func_common.sh"
prog=$(dirname "$0")/func_lnx
[ -x "$prog" ] || prog=${LFV_TOP_BUILDDIR:-.}/tests/func/func_lnx

if ! fi_info -l 2>/dev/null | grep -q '^lnx:'; then
	echo "1..0 # SKIP this libfabric core has no lnx provider (2.x has)"
	exit 0
fi
require_lfverbs fi_info libfabric-bin
echo "1..5"

FI_LNX_PROV_LINKS=shm+lfverbs fi_info -p lnx 2>/dev/null |
	grep -q 'provider: shm+lfverbs:lnx'
ok $? "fi_info -p lnx lists shm+lfverbs"

# run_prog ARG ENV...: the program's status; its output as comments.
run_prog() {
	arg=$1
	shift
	out=$(env "$@" timeout -k 10 300 "$prog" "$arg" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	echo "$out" | grep -q '^not ok\|SKIP' && rc=1
	echo "$out" | grep -q '^ok' || rc=1
	return $rc
}

run_prog open FI_LNX_PROV_LINKS=shm+lfverbs
ok $? "lnx shm+lfverbs: endpoints open (lfverbs imports lnx's SRX and CQ)"
run_prog open FI_LNX_PROV_LINKS=shm+lfverbs FI_LNX_DISABLE_SHM=1
ok $? "lnx shm+lfverbs, shm disabled: endpoints open"

# todo STATUS DESCRIPTION: a TAP TODO line (an expected failure).
todo() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2 # TODO passes now"; else echo "not ok $n - $2 # TODO 2.1's lnx loses the first exchange"; fi
}
run_prog 3 FI_LNX_PROV_LINKS=shm+lfverbs
todo $? "lnx shm+lfverbs: traffic, data checked"
run_prog 3 FI_LNX_PROV_LINKS=shm+lfverbs FI_LNX_DISABLE_SHM=1
todo $? "lnx shm+lfverbs, shm disabled: traffic through lfverbs, data checked"
echo "# reference: upstream's own link, lnx shm+tcp;ofi_rxm"
FI_LNX_PROV_LINKS='shm+tcp;ofi_rxm' timeout -k 10 300 "$prog" 3 2>&1 |
	sed 's/^/#   /'
[ $fails -eq 0 ]
