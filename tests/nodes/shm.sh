#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# shm beside verbs across the two-node bed (issue 17): lfverbs' RDM
# endpoints with shm as their intra-node peer (FI_LFVERBS_SHM=1, a 2.x
# core: tests/compat) and peers on both nodes. func_rdm_peers'
# test_processes, four processes of 4 endpoints each, two on this node
# and two on the other (LFV_PEER_HOST), every endpoint sends every other
# one 4 messages across the eager and rendezvous sizes, every receive's
# length, tag, source and bytes checked. What proves the split is each
# endpoint's own count, logged at INFO when it closes (lfv_rdm_shm.c):
# "N sends through shm, M connections". Of an endpoint's 15 peers, 7 are
# on its node (3 in its process, 4 in the other one there) and 8 on the
# other node: 28 sends through shm and 8 verbs connections, for each of
# the 16 endpoints: one TAP line. (Under netem loss, which
# LFV_NODES_NETEM applies to both NICs, the run fails by the connections
# soft-RoCE puts in error: faults.sh case 12, README, across the link.)
#
#   tests/bed/rxe-bed --nodes 2 -- env LFV_BUILD_DIR=build-fi2.1.0 \
#       LFV_CORE_PREFIX=PREFIX tests/nodes/shm.sh
#
#   LFV_BUILD_DIR    lfverbs and its tests built against a 2.x core
#   LFV_CORE_PREFIX  that core's install prefix (its lib/ is added to
#                    LD_LIBRARY_PATH, which ssh passes to the peers)
#   LFV_NODES_NETEM  netem settings for both NICs (tests/nodes/netem.sh)
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
build=$top/${LFV_BUILD_DIR:-build}
prog=$build/tests/func/func_rdm_peers	# what nodes_case runs

if [ "${LFV_BED_NODES:-1}" != 2 ]; then
	echo "1..0 # SKIP not on a two-node bed (tests/bed/rxe-bed --nodes 2)"
	exit 0
fi
if [ -z "${LFV_CORE_PREFIX:-}" ] || [ ! -x "$prog" ]; then
	echo "1..0 # SKIP no 2.x core and tests built against it (LFV_CORE_PREFIX, LFV_BUILD_DIR)"
	exit 0
fi
export FI_PROVIDER_PATH=$build/.libs
export LD_LIBRARY_PATH=$LFV_CORE_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
major=$(FI_PROVIDER=lfverbs "$LFV_CORE_PREFIX/bin/fi_info" --version 2>/dev/null |
	sed -n 's/^libfabric: *\([0-9]*\)\..*/\1/p')
if [ "${major:-1}" -lt 2 ]; then
	echo "1..0 # SKIP libfabric ${major:-?}.x in $LFV_CORE_PREFIX: shm cannot be lfverbs' peer"
	exit 0
fi
export LFV_PEER_HOST=$LFV_BED_PEER LFV_REQUIRE_DEVICE=1
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
echo "1..1"

# shellcheck source=tests/nodes/netem.sh
. "$here/netem.sh"

# split: every endpoint's close line says 28 sends through shm and 8
# connections, and there are 16 of them (4 processes x 4 endpoints).
split() {
	local all good
	all=$(grep -c 'RDM close: [0-9]* sends through shm' "$log/out")
	good=$(grep -c 'RDM close: 28 sends through shm, 8 connections' "$log/out")
	[ "$all" = 16 ] && [ "$good" = 16 ] && return 0
	echo "# $all endpoints said what went through shm, $good of 16 as expected:"
	grep -o 'RDM close: .*' "$log/out" | sort | uniq -c | sed 's/^/#   /'
	return 1
}

# shellcheck source=tests/nodes/lib.sh
. "$here/lib.sh"

nodes_netem
nodes_case 1 "shm on, 4 processes on 2 nodes: 28 sends an endpoint through shm, 8 verbs connections" \
	split func_rdm_peers test_processes \
	FI_LFVERBS_SHM=1 FI_LOG_LEVEL=info FI_LOG_PROV=lfverbs
