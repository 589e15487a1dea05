#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The intra-node benchmark of issue 16 (not a test): fabtests'
# fi_rdm_tagged_pingpong of a libfabric 2.x core, 64 B and 1 MiB, between
# two processes of one soft-RoCE bed, for
#   lfverbs+shm    lfverbs with shm as its intra-node peer (FI_LFVERBS_SHM=1)
#   lfverbs        lfverbs over the verbs device (FI_LFVERBS_SHM=0)
#   shm            upstream shm alone
#   verbs;ofi_rxm  upstream verbs with rxm (FI_UNIVERSE_SIZE=16: README)
# in R interleaved rounds of one bed session (server pinned to CPU 0, client
# to CPU 1), and prints per column the median usec/xfer with the spread
# (min-max) over the rounds, and the ratios of the issue's targets:
# lfverbs+shm within 1.2 times shm at 64 B, and at least 5 times faster
# than lfverbs over verbs.
#
#   tests/bench/run-shm.sh [--rounds R] [--iters N] [--core VERSION]
#
# The core (default 2.1.0) and its fabtests come from tests/compat/
# build-core.sh (cached); lfverbs is built against it in build-fiVERSION.
# Writes build/bench/shm-results.txt (one line per run) and shm-table.md.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$top"
rounds=3 iters=1000 ver=2.1.0
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--core) ver=$2; shift 2 ;;
	--in-bed) inbed=1; shift ;;
	*) echo "usage: $0 [--rounds R] [--iters N] [--core VERSION]" >&2; exit 2 ;;
	esac
done
out=$top/build/bench
mkdir -p "$out"
res=$out/shm-results.txt

if [ "${inbed:-0}" = 0 ]; then
	core=$(tests/compat/build-core.sh --fabtests "$ver") || {
		echo "run-shm: no libfabric $ver core ($core)" >&2
		exit 1
	}
	[ -f "build-fi$ver/.libs/liblfverbs-fi.so" ] ||
		LFV_BUILD_DIR=build-fi$ver tests/build.sh --with-libfabric="$core" >/dev/null ||
		exit 1
	LFV_SHM_CORE=$core LFV_SHM_BUILD=build-fi$ver \
		tests/bed/rxe-bed --workdir "$top" -- \
		"$0" --in-bed --rounds "$rounds" --iters "$iters" --core "$ver" || exit 1
	awk -f - "$res" <<'AWK' | tee "$out/shm-table.md"
	function median(k,   n, i, j, t, a) {
		n = split(v[k], a, " ")
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		lo[k] = a[1]; hi[k] = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	$1 == "result" { k = $2 SUBSEP $3; v[k] = v[k] " " $4; seen[$2] = 1 }
	END {
		split("lfverbs+shm lfverbs shm verbs;ofi_rxm", impl, " ")
		split("64 1048576", size, " ")
		print "| usec/xfer (median, min-max) | 64 B | 1 MiB |"
		print "| --- | --- | --- |"
		for (i = 1; i <= 4; i++) {
			line = "| " impl[i]
			for (j = 1; j <= 2; j++) {
				k = impl[i] SUBSEP size[j]
				if (v[k] == "") { line = line " | n/a"; continue }
				m[k] = median(k)
				line = line sprintf(" | %.2f (%.2f-%.2f)", m[k], lo[k], hi[k])
			}
			print line " |"
		}
		a = m["lfverbs+shm" SUBSEP 64]; b = m["shm" SUBSEP 64]
		c = m["lfverbs" SUBSEP 64]
		if (a && b) printf "\nlfverbs+shm / shm at 64 B: %.2f (target <= 1.2)\n", a / b
		if (a && c) printf "lfverbs over verbs / lfverbs+shm at 64 B: %.1f (target >= 5)\n", c / a
		a = m["lfverbs+shm" SUBSEP 1048576]; c = m["lfverbs" SUBSEP 1048576]
		if (a && c) printf "lfverbs over verbs / lfverbs+shm at 1 MiB: %.1f\n", c / a
	}
AWK
	exit 0
fi

# In the bed.
export LD_LIBRARY_PATH=$LFV_SHM_CORE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FI_PROVIDER_PATH=$top/$LFV_SHM_BUILD/.libs
bin=$LFV_SHM_CORE/bin/fi_rdm_tagged_pingpong
: >"$res"
pin_s= pin_c=
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin_s="taskset -c 0" pin_c="taskset -c 1"
fi
# run IMPL PROVIDER ENV...: one ping-pong of both sizes, a result line each.
run() {
	impl=$1 prov=$2
	shift 2
	# shellcheck disable=SC2086
	env "$@" timeout 120 $pin_s "$bin" -E -p "$prov" -S l:64,1048576 \
		-I "$iters" >"$out/shm-server.log" 2>&1 &
	spid=$!
	sleep 2
	# shellcheck disable=SC2086
	if env "$@" timeout 120 $pin_c "$bin" -E -p "$prov" -S l:64,1048576 \
		-I "$iters" "$LFV_BED_IP" >"$out/shm-client.log" 2>&1 && wait "$spid"; then
		awk -v impl="$impl" '$1 == "64" || $1 == "1m" {
			print "result", impl, ($1 == "1m" ? 1048576 : 64), $6 }' \
			"$out/shm-client.log" >>"$res"
	else
		wait "$spid" || true
		echo "run-shm: $impl failed:" >&2
		tail -5 "$out/shm-client.log" "$out/shm-server.log" >&2
	fi
}
r=0
while [ $r -lt "$rounds" ]; do
	r=$((r + 1))
	echo "run-shm: round $r of $rounds" >&2
	run lfverbs+shm lfverbs FI_LFVERBS_SHM=1
	run lfverbs lfverbs FI_LFVERBS_SHM=0
	run shm shm
	run "verbs;ofi_rxm" "verbs;ofi_rxm" FI_UNIVERSE_SIZE=16
done
