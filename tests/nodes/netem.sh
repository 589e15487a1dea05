# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# shellcheck shell=bash
# Sourced by the tests of tests/nodes: nodes_netem applies
# $LFV_NODES_NETEM (netem settings, e.g. "loss 100%") to both nodes' NICs
# for the rest of the run, or does nothing when it is unset. Exits with a
# TAP "Bail out!" when tc fails.
nodes_netem() {
	[ -n "${LFV_NODES_NETEM:-}" ] || return 0
	# The other node's first, a second after its ssh session ends: with
	# heavy loss on either NIC, the session could not finish.
	# shellcheck disable=SC2086,SC2029,SC2015  # netem's words, expanded here
	ssh "$LFV_BED_PEER" "tc qdisc add dev $LFV_BED_NETDEV root netem $LFV_NODES_NETEM &&
		tc qdisc del dev $LFV_BED_NETDEV root || exit 1
		(sleep 1; tc qdisc add dev $LFV_BED_NETDEV root netem $LFV_NODES_NETEM) \
		</dev/null >/dev/null 2>&1 &" &&
		sleep 2 && tc qdisc add dev "$LFV_BED_NETDEV" root netem $LFV_NODES_NETEM ||
		{ echo "Bail out! tc netem $LFV_NODES_NETEM failed"; exit 1; }
	echo "# netem $LFV_NODES_NETEM on both NICs"
}
