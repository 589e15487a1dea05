#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The main job, from a fresh Debian 12 machine: install what is needed,
# build lfverbs, and show it on a real verbs device (soft-RoCE rxe0, in a
# throwaway VM when the kernel here has no rdma_rxe).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tests/deps.sh
tests/build.sh
echo "demo: a ping-pong over lfverbs on soft-RoCE (plugin from build/.libs)"
# shellcheck disable=SC2016 # expanded inside the bed
exec tests/bed/rxe-bed --workdir "$top" -- sh -c '
	export FI_PROVIDER_PATH="$PWD/build/.libs"
	echo "== lfverbs on $LFV_BED_DEV at $LFV_BED_IP (host $(hostname))"
	fi_info -p lfverbs -t FI_EP_MSG | head -14
	for ep in msg dgram; do
		echo "== fi_pingpong -p lfverbs -e $ep -c (server and client)"
		fi_pingpong -p lfverbs -e $ep -c -I 100 >/tmp/srv.log 2>&1 &
		srv=$!
		sleep 1
		timeout 120 fi_pingpong -p lfverbs -e $ep -c -I 100 "$LFV_BED_IP" ||
			{ echo "client failed"; cat /tmp/srv.log; exit 1; }
		wait $srv || { echo "server failed"; cat /tmp/srv.log; exit 1; }
	done
	echo "demo: ok"
'
