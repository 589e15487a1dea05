#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Everything CI runs inside the two-node bed, in one boot (each part's own
# header says what it checks): the ping-pongs, the network faults, the MPI
# suite with ranks on both nodes, the RDM tests with peers on the other
# node, the hostile peer there. Their TAP one after the other, a comment
# line before each part saying when it starts; exit status 1 when a part
# failed. One boot instead of three: a two-node boot costs about 30 s
# under TCG.
#
#   tests/bed/rxe-bed --nodes 2 -- tests/nodes/all.sh
#
# lfverbs and the programs come from the build tree (build); build them
# first (make check TESTS=).
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
status=0
t0=$(date +%s)

# part NAME COMMAND...: runs COMMAND after a line with the time since the
# start.
part() {
	t=$(($(date +%s) - t0))
	printf '# [%d:%02d] %s\n' $((t / 60)) $((t % 60)) "$1"
	shift
	"$@" || status=1
}

part "ping-pongs (tests/nodes/pingpong.sh)" "$here/pingpong.sh"
part "network faults (tests/nodes/faults.sh)" "$here/faults.sh"
# The ping-pong up to 1 MiB: its 16 and 64 MiB sizes take minutes across
# the bed's link.
part "the MPI suite, 2 ranks a node (tests/func/func_mpi.sh)" \
	env LFV_MPI_HOSTS=lfv-a:2,lfv-b:2 \
	LFV_MPI_PP_SIZES="0 1 64 4096 65536 1048576" \
	LFV_TOP_BUILDDIR="$top/build" FI_PROVIDER_PATH="$top/build/.libs" \
	LFV_REQUIRE_DEVICE=1 "$top/tests/func/func_mpi.sh"
part "RDM tests, peers on the other node (tests/nodes/rdm.sh)" "$here/rdm.sh"
part "the hostile peer on the other node (tests/nodes/hostile.sh)" \
	"$here/hostile.sh"
exit $status
