#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The RDM functional tests that have peer processes
# (tests/func/func_rdm_peers.c) across the two-node bed (tests/bed/rxe-bed
# --nodes 2): with LFV_PEER_HOST the peers of odd index run on the other
# node (started through ssh, their control channel ssh's stdin and
# stdout), the others here, so every test has traffic across the link:
# all-to-all among four processes, simultaneous first sends, echo peers
# killed with eager and rendezvous traffic in flight, a peer replaced by
# one on the other node. Each test is one TAP line. func_rdm_restart
# cannot run across and says so (its one SKIP line).
#
#   tests/bed/rxe-bed --nodes 2 -- tests/nodes/rdm.sh
#
#   LFV_NODES_NETEM   netem settings for both NICs during the run, e.g.
#                     "loss 100%" to see every case fail
#   LFV_NODES_CASES   numbers of the cases to run (default all), e.g. "1 4"
#   LFV_NODES_CASE_TIMEOUT  seconds a case may take (default 120; each took
#                     10-23 s on 2026-11-27, 169 s for the whole script)
#
# The programs and lfverbs come from the build tree ($LFV_BUILD_DIR,
# default build); build them first (make check TESTS=).
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
build=$top/${LFV_BUILD_DIR:-build}
export FI_PROVIDER_PATH=$build/.libs
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

if [ "${LFV_BED_NODES:-1}" != 2 ]; then
	echo "1..0 # SKIP not on a two-node bed (tests/bed/rxe-bed --nodes 2)"
	exit 0
fi
export LFV_PEER_HOST=$LFV_BED_PEER LFV_REQUIRE_DEVICE=1

# CASES: "program|cmocka test (LFV_RDM_PEERS_ONLY)"
CASES=(
	"func_rdm_peers|test_processes"
	"func_rdm_peers|test_simultaneous_procs"
	"func_rdm_peers|test_peer_exit"
	"func_rdm_peers|test_peer_restart"
	"func_rdm_peers|test_peer_exit_unexpected_rendezvous"
	"func_rdm_peers|test_peer_exit_fin_wait"
	"func_rdm_peers|test_peer_exit_rendezvous"
	"func_rdm_restart|"
)

# shellcheck source=tests/nodes/netem.sh
. "$here/netem.sh"
nodes_netem

# shellcheck source=tests/nodes/lib.sh
. "$here/lib.sh"

echo "1..${#CASES[@]}"
n=0
for c in "${CASES[@]}"; do
	n=$((n + 1))
	IFS='|' read -r prog t <<<"$c"
	case " ${LFV_NODES_CASES:-$n} " in
	*" $n "*) ;;
	*) echo "ok $n - $prog $t # SKIP not in LFV_NODES_CASES"; continue ;;
	esac
	nodes_case "$n" "$prog${t:+ $t}" true "$prog" "$t"
done
