#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# on-peer.sh PROGRAM ARGS...: PROGRAM run on the two-node bed's other node
# ($LFV_BED_PEER) through ssh, each argument quoted for the remote shell
# ("verbs;ofi_rxm" stays one word). The bed's ssh sends FI_* and LFV_*
# (tests/bed/README.md): the caller's LFV_BED_IP, this node's address,
# becomes the peer's address to connect to. The benchmarks' client prefix
# (pin_c) across the nodes.
set -eu
q=""
for a in "$@"; do
	q="$q '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"
done
exec ssh -o BatchMode=yes "${LFV_BED_PEER:?not on a two-node bed}" "$q"
