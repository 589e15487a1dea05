#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# lfverbs linked into upstream's lnx provider (libfabric 2.x) as its peer:
# func_lnx (tagged ping-pong at 1 B..1 MiB, an unexpected message, RMA
# write and read back, all checked) between two processes, with lnx owning
# the receive queue and the CQ. Three links:
#  - shm+lfverbs: same-host peers go through shm, lnx still owns both;
#  - shm+lfverbs with FI_LNX_DISABLE_SHM=1: every byte through lfverbs as
#    lnx's peer (the peer SRX, CQ and AV paths of fi_peer(3));
#  - shm+tcp: upstream's own link, the reference (not counted: it says
#    where lnx itself is the limit).
# Skips on a core without lnx (1.x).
. "$(dirname "$0")/func_common.sh"
prog=$(dirname "$0")/func_lnx
[ -x "$prog" ] || prog=${LFV_TOP_BUILDDIR:-.}/tests/func/func_lnx

if ! fi_info -l 2>/dev/null | grep -q '^lnx:'; then
	echo "1..0 # SKIP this libfabric core has no lnx provider (2.x has)"
	exit 0
fi
require_lfverbs fi_info libfabric-bin
echo "1..2"

# case DESCRIPTION ENV...: one TAP line; the program's output as comments.
case_() {
	d=$1
	shift
	out=$(env "$@" timeout -k 10 300 "$prog" 10 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	echo "$out" | grep -q '^not ok\|SKIP' && rc=1
	echo "$out" | grep -q '^ok' || rc=1
	ok "$rc" "$d"
}

case_ "lnx shm+lfverbs: tagged, unexpected and RMA, data checked" \
	FI_LNX_PROV_LINKS=shm+lfverbs
case_ "lnx shm+lfverbs, shm disabled: every byte through lfverbs as lnx's peer" \
	FI_LNX_PROV_LINKS=shm+lfverbs FI_LNX_DISABLE_SHM=1
echo "# reference, not counted: lnx shm+tcp;ofi_rxm"
FI_LNX_PROV_LINKS='shm+tcp;ofi_rxm' FI_LNX_DISABLE_SHM=1 timeout -k 10 300 \
	"$prog" 10 2>&1 | sed 's/^/#   /'
[ $fails -eq 0 ]
