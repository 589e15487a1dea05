#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# fi_info (Debian's libfabric-bin) sees lfverbs through the real core.
# TAP output; skips when lfverbs finds no device.
dev=${LFV_BED_DEV:-rxe0}
ip=${LFV_BED_IP:-10.77.0.1}

# shellcheck source=tests/func/func_common.sh
. "$(dirname "$0")/func_common.sh"
require_lfverbs fi_info libfabric-bin

echo "1..13"
out=$(fi_info -p lfverbs)
echo "$out" | grep -q "provider: lfverbs"; ok $? "fi_info -p lfverbs names the provider"
echo "$out" | grep -q "domain: $dev"; ok $? "fi_info -p lfverbs lists $dev"

out=$(fi_info -p lfverbs -t FI_EP_MSG)
echo "$out" | grep -q "type: *FI_EP_MSG" && ! echo "$out" | grep -q "FI_EP_DGRAM"
ok $? "-t FI_EP_MSG lists MSG endpoints only"

out=$(fi_info -p lfverbs -v)
echo "$out" | grep -q "FI_PROTO_RDMA_CM_IB_RC"; ok $? "verbose output shows the RC protocol"

fi_info -e 2>/dev/null | grep -q "FI_LFVERBS_DEVICE_NAME"; ok $? "fi_info -e lists FI_LFVERBS_DEVICE_NAME"

! FI_LFVERBS_DEVICE_NAME=nosuch0 fi_info -p lfverbs >/dev/null 2>&1
ok $? "FI_LFVERBS_DEVICE_NAME=nosuch0 finds nothing"

out=$(FI_LFVERBS_DEVICE_NAME="nosuch0,$dev" fi_info -p lfverbs)
echo "$out" | grep -q "domain: $dev"; ok $? "FI_LFVERBS_DEVICE_NAME selects $dev"

out=$(fi_info -p lfverbs -n "$ip" -P 7471 -t FI_EP_MSG)
echo "$out" | grep -q "domain: $dev"; ok $? "a destination node resolves to $dev"

out=$(fi_info -p lfverbs -s "$ip" -P 7471 -t FI_EP_MSG)
echo "$out" | grep -q "domain: $dev"; ok $? "a source address selects $dev"

! fi_info -p lfverbs -n 192.0.2.1 -P 7471 -t FI_EP_MSG >/dev/null 2>&1
ok $? "an address no RDMA device reaches finds nothing"

# lfverbs has its own RDM endpoints: the core does not stack ofi_rxm (or
# the other utility providers) over lfverbs unless asked by name.
out=$(fi_info -t FI_EP_RDM 2>/dev/null)
echo "$out" | grep -q "provider: lfverbs$"; ok $? "RDM answers include lfverbs' own"
! echo "$out" | grep -q "provider: lfverbs;"; ok $? "no utility provider is layered over lfverbs"

# Our own log lines at info level: present, and none at warn level.
lines=$(FI_LOG_LEVEL=warn fi_info -p lfverbs 2>&1 >/dev/null | grep -c ":lfverbs:")
[ "$lines" -eq 0 ]; ok $? "no lfverbs warnings in a normal run ($lines)"

[ $fails -eq 0 ]
