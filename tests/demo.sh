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
echo "demo: lfverbs on soft-RoCE (FI_PROVIDER=lfverbs, plugin from build/.libs)"
# shellcheck disable=SC2016 # expanded inside the bed
exec tests/bed/rxe-bed --workdir "$top" -- sh -c '
	export FI_PROVIDER_PATH="$PWD/build/.libs" FI_PROVIDER=lfverbs
	echo "== fi_info -p lfverbs (hostname $(hostname), device $LFV_BED_DEV at $LFV_BED_IP)"
	fi_info -p lfverbs
'
