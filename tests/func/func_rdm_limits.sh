#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# func_rdm's test_limits: what one peer can make an RDM receiver hold
# (fi_lfverbs(7), INPUT FROM THE NETWORK), with limits small enough to
# reach. The provider reads its parameters once, when it loads: hence a
# process of its own. Run from the build directory, like every test.
# Its 64 KiB messages are rendezvous (FI_LFVERBS_RDM_SAR=0: not segmented
# eager), whose refusal and per-peer limit it checks.
export FI_LFVERBS_RDM_UNEXP_MAX=8 FI_LFVERBS_RDM_RNDV_PEER_MAX=2
export FI_LFVERBS_RDM_SAR=0
export LFV_RDM_LIMITS=1 LFV_RDM_ONLY=test_limits
exec ./tests/func/func_rdm
