#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Ping-pongs across the two-node bed (tests/bed/rxe-bed --nodes 2): the
# server on the other node (through ssh), the client here, with
# fi_pingpong's data checks (-c), a small size and one past lfverbs' eager
# limit (rendezvous on RDM). TAP output.
#
#   tests/bed/rxe-bed --nodes 2 -- tests/nodes/pingpong.sh
#
#   LFV_NODES_ITERS   iterations per size (default 10)
#   LFV_NODES_NETEM   netem settings for both NICs during the run, e.g.
#                     "loss 100%" to see every case fail
#   LFV_NODES_CASES   numbers of the cases to run (default all), e.g. "1 4"
#
# The last cases run with the other node's link at MTU 1500 (soft-RoCE's
# 1024) and ours at the bed's (LFV_BED_MTU, 9000: 4096): lfverbs' RDM
# connections take the smaller of the two ends' MTUs (wire version 7).
# Skipped when the bed's link is at 1500 or less.
#
# lfverbs is loaded from the build tree ($LFV_BUILD_DIR, default build).
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
export FI_PROVIDER_PATH=$top/${LFV_BUILD_DIR:-build}/.libs
iters=${LFV_NODES_ITERS:-10}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

if [ "${LFV_BED_NODES:-1}" != 2 ]; then
	echo "1..0 # SKIP not on a two-node bed (tests/bed/rxe-bed --nodes 2)"
	exit 0
fi
peer=$LFV_BED_PEER

# CASES: "name|server provider|client provider|fi_pingpong options|sizes
# [|mtu1500]" (mtu1500: the other node's link at 1500 during the case)
CASES=(
	"lfverbs MSG|lfverbs|lfverbs|-e msg|64 65536"
	"lfverbs RDM|lfverbs|lfverbs|-e rdm|64 65536"
	"lfverbs RDM tagged|lfverbs|lfverbs|-e rdm -m tagged|64 65536"
	"lfverbs DGRAM|lfverbs|lfverbs|-e dgram|64 1024"
	"lfverbs MSG client, Debian's verbs server|verbs|lfverbs|-e msg|64 65536"
	"Debian's verbs MSG client, lfverbs server|lfverbs|verbs|-e msg|64 65536"
	"lfverbs RDM, the nodes' MTUs 1024 and 4096, rendezvous by read|lfverbs|lfverbs|-e rdm|64 65536 1048576|mtu1500"
	"lfverbs RDM tagged, the nodes' MTUs 1024 and 4096, rendezvous by write|lfverbs|lfverbs|-e rdm -m tagged|64 65536 1048576|mtu1500 write"
)

# shellcheck source=tests/nodes/netem.sh
. "$here/netem.sh"
nodes_netem

# pingpong SPROV CPROV OPTS SIZE: one ping-pong, its client's output in
# $log/client and its server's in $log/server. The server gets 120 s; the
# client tries to connect for up to 30 s (under TCG an ssh login takes
# seconds before the server listens). Fails unless both sides succeed.
pingpong() {
	local sprov=$1 cprov=$2 opts=$3 size=$4 i src crc
	# shellcheck disable=SC2029  # expanded here on purpose
	ssh "$peer" "timeout 120 fi_pingpong -p '$sprov' $opts -c -I $iters -S $size" \
		>"$log/server" 2>&1 &
	local spid=$!
	for i in $(seq 1 30); do
		sleep 1
		# shellcheck disable=SC2086
		timeout 120 fi_pingpong -p "$cprov" $opts -c -I "$iters" -S "$size" \
			"$LFV_BED_PEER_IP" >"$log/client" 2>&1
		crc=$?
		grep -qi "refused" "$log/client" || break
	done
	wait "$spid"
	src=$?
	[ "$crc" = 0 ] && [ "$src" = 0 ] && grep -q "usec/xfer" "$log/client" && return 0
	echo "# $size B: client status $crc, server status $src"
	sed 's/^/#   client: /' "$log/client" | tail -8
	sed 's/^/#   server: /' "$log/server" | grep -v pyenv | tail -8
	return 1
}

# peer_mtu MTU: the other node's link (and so its rxe0) at MTU.
peer_mtu() {
	# shellcheck disable=SC2029  # expanded here on purpose
	ssh "$peer" "ip link set $LFV_BED_NETDEV mtu $1" && sleep 1
}

# run_case N NAME SPROV CPROV OPTS SIZES: one TAP line for all SIZES.
run_case() {
	local n=$1 name=$2 sprov=$3 cprov=$4 opts=$5 sizes=$6 size ok=1
	for size in $sizes; do
		if pingpong "$sprov" "$cprov" "$opts" "$size"; then
			grep -A1 "usec/xfer" "$log/client" | tail -1 | sed 's/^/# /'
		else
			ok=0
		fi
	done
	if [ $ok = 1 ]; then
		echo "ok $n - $name ($sizes B), $LFV_BED_HOSTS"
	else
		echo "not ok $n - $name ($sizes B), $LFV_BED_HOSTS"
	fi
}

echo "1..${#CASES[@]}"
n=0
for c in "${CASES[@]}"; do
	n=$((n + 1))
	IFS='|' read -r name sprov cprov opts sizes setup <<<"$c"
	case " ${LFV_NODES_CASES:-$n} " in
	*" $n "*) ;;
	*) echo "ok $n - $name # SKIP not in LFV_NODES_CASES"; continue ;;
	esac
	case $setup in
	mtu1500*)
		if [ "${LFV_BED_MTU:-1500}" -le 1500 ]; then
			echo "ok $n - $name # SKIP the link is at MTU ${LFV_BED_MTU:-1500}"
			continue
		fi
		peer_mtu 1500 || { echo "not ok $n - $name: ip link failed"; continue; }
		case $setup in
		*write) export FI_LFVERBS_RDM_RNDV_WRITE=1 ;; # ssh sends FI_*
		esac
		run_case "$n" "$name" "$sprov" "$cprov" "$opts" "$sizes"
		unset FI_LFVERBS_RDM_RNDV_WRITE
		peer_mtu "$LFV_BED_MTU" || echo "Bail out! the link's MTU not restored"
		;;
	*) run_case "$n" "$name" "$sprov" "$cprov" "$opts" "$sizes" ;;
	esac
done
