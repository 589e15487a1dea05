#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Debian's fi_pingpong (libfabric-bin) over lfverbs, with data checks (-c):
# MSG, DGRAM and RDM between two lfverbs processes, and MSG between lfverbs
# and Debian's verbs provider in both directions (same wire: RC over
# rdma_cm).
# TAP output; skips when lfverbs finds no device.
ip=${LFV_BED_IP:-10.77.0.1}
port=47700
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# shellcheck source=tests/func/func_common.sh
. "$(dirname "$0")/func_common.sh"
require_lfverbs fi_pingpong libfabric-bin

# pingpong SERVER_PROV CLIENT_PROV EP_TYPE ARGS...: both sides must pass.
pingpong() {
	sprov=$1 cprov=$2 ep=$3
	shift 3
	port=$((port + 1))
	timeout 120 fi_pingpong -p "$sprov" -e "$ep" -B "$port" "$@" \
		>"$log/server" 2>&1 &
	spid=$!
	sleep 1
	timeout 120 fi_pingpong -p "$cprov" -e "$ep" -P "$port" "$@" "$ip" \
		>"$log/client" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		echo "# client ($cprov, rc $crc):"; sed 's/^/#   /' "$log/client"
		echo "# server ($sprov, rc $src):"; sed 's/^/#   /' "$log/server"
		return 1
	fi
	# Every size line shows as many acks as messages sent.
	grep -Eq '^[0-9]+[kmg]? +[0-9]+ +=[0-9]+' "$log/client"
}

echo "1..8"
pingpong lfverbs lfverbs msg -c -I 50
ok $? "fi_pingpong -e msg -c, all sizes, lfverbs to lfverbs"
pingpong lfverbs lfverbs dgram -c -I 50
ok $? "fi_pingpong -e dgram -c, all sizes up to the MTU, lfverbs to lfverbs"
pingpong verbs lfverbs msg -c -I 20 -S 4096
ok $? "fi_pingpong -e msg -c: lfverbs client, verbs server"
pingpong lfverbs verbs msg -c -I 20 -S 4096
ok $? "fi_pingpong -e msg -c: verbs client, lfverbs server"
pingpong verbs lfverbs msg -c -I 20 -S 65536
ok $? "fi_pingpong -e msg -c, 64 KiB: lfverbs client, verbs server"
pingpong lfverbs lfverbs msg -c -I 20 -S 1048576
ok $? "fi_pingpong -e msg -c, 1 MiB, lfverbs to lfverbs"
pingpong lfverbs lfverbs rdm -c -I 50
ok $? "fi_pingpong -e rdm -c, all sizes, lfverbs to lfverbs"
pingpong lfverbs lfverbs rdm -c -I 10 -S 4194304
ok $? "fi_pingpong -e rdm -c, 4 MiB (rendezvous), lfverbs to lfverbs"
[ $fails -eq 0 ]
