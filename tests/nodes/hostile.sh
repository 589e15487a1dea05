#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The hostile-peer cases (tests/hostile/run-hostile.sh, TAP) with the
# hostile peer on the other node of the two-node bed (tests/bed/rxe-bed
# --nodes 2): everything it sends, raw through rdma_cm and ibverbs,
# crosses the wire to the lfverbs victims here (issue 17, item 4).
#
#   tests/bed/rxe-bed --nodes 2 -- tests/nodes/hostile.sh
#
# lfverbs and the programs come from the build tree ($LFV_BUILD_DIR,
# default build); build them first (make check TESTS=).
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
if [ "${LFV_BED_NODES:-1}" != 2 ]; then
	echo "1..0 # SKIP not on a two-node bed (tests/bed/rxe-bed --nodes 2)"
	exit 0
fi
cd "$top/${LFV_BUILD_DIR:-build}" || exit 1
FI_PROVIDER_PATH=$PWD/.libs LFV_HOSTILE_HOST=$LFV_BED_PEER \
	LFV_HOSTILE_IP=$LFV_BED_PEER_IP exec sh "$top/tests/hostile/run-hostile.sh"
