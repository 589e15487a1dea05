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
#     message; all data checked) over both. RMA skips with 2.1's lnx,
#     which has no fi_mr_reg (-FI_ENOSYS). Upstream's own link shm+tcp
#     runs the same program as a reference, printed below.
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

# run_prog ARG ENV...: the program's status; its output as comments. A
# skipped case passes; a program that skips everything (1..0) fails.
run_prog() {
	arg=$1
	shift
	out=$(env "$@" timeout -k 10 300 "$prog" "$arg" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	echo "$out" | grep -q '^not ok\|^1\.\.0' && rc=1
	echo "$out" | grep -q '^ok' || rc=1
	return $rc
}

run_prog open FI_LNX_PROV_LINKS=shm+lfverbs
ok $? "lnx shm+lfverbs: endpoints open (lfverbs imports lnx's SRX and CQ)"
run_prog open FI_LNX_PROV_LINKS=shm+lfverbs FI_LNX_DISABLE_SHM=1
ok $? "lnx shm+lfverbs, shm disabled: endpoints open"

run_prog 3 FI_LNX_PROV_LINKS=shm+lfverbs
ok $? "lnx shm+lfverbs: tagged traffic, data checked"
run_prog 3 FI_LNX_PROV_LINKS=shm+lfverbs FI_LNX_DISABLE_SHM=1
ok $? "lnx shm+lfverbs, shm disabled: tagged traffic through lfverbs, data checked"
echo "# reference: upstream's own link, lnx shm+tcp;ofi_rxm"
FI_LNX_PROV_LINKS='shm+tcp;ofi_rxm' timeout -k 10 300 "$prog" 3 2>&1 |
	sed 's/^/#   /'
[ $fails -eq 0 ]
