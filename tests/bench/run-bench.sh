#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Runs the benchmarks (not tests): the completion ring against DPDK's
# rte_ring, Concurrency Kit's ck_ring and a mutex ring (bench_ring), and
# lfverbs' CQ through fi_cq_read (bench_cq), each in ns and, with callgrind,
# in instructions per operation (the difference between N and 2N runs).
# Installs what it needs (dpdk-dev, libck-dev, valgrind) on Debian 12.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

need=""
for p in dpdk-dev libck-dev valgrind; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		need="$need $p"
done
if [ -n "$need" ]; then
	echo "bench: installing$need"
	# shellcheck disable=SC2086 # one word per package
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need >/dev/null
fi
tests/deps.sh
tests/build.sh

out=build/bench
mkdir -p "$out"
CFLAGS="-std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers -O2 -g"
# shellcheck disable=SC2046,SC2086 # pkg-config output is a word list
gcc $CFLAGS -Iinclude tests/bench/bench_ring.c src/lfv_ring.c \
	$(pkg-config --cflags --libs libdpdk ck) -lpthread -o "$out/bench_ring"
# shellcheck disable=SC2086
gcc $CFLAGS -Iinclude -Ibuild tests/bench/bench_cq.c \
	build/.libs/liblfverbs-core.a -lfabric -libverbs -lrdmacm -lhwloc \
	-lpthread -o "$out/bench_cq"

# Instructions per operation: callgrind's total for 2N minus for N, over N.
per_op() {
	n=$1
	shift
	a=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" "$n" 2>&1 |
		sed -n 's/.*Collected : //p')
	b=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" $((2 * n)) 2>&1 |
		sed -n 's/.*Collected : //p')
	echo $(((b - a) / n))
}

echo "=== lfverbs CQ (bench_cq)"
"$out/bench_cq"
echo
echo "instructions per operation (callgrind, 2N - N):"
printf '%-10s %s\n' op instructions
for op in empty one batch32; do
	printf '%-10s %s\n' "$op" "$(per_op 100000 "$out/bench_cq" --callgrind-op "$op")"
done
echo "(each includes the benchmark loop: about 11 instructions for 'empty')"
echo
echo "=== completion ring vs rte_ring, ck_ring, mutex ring (bench_ring)"
"$out/bench_ring" "$@"
echo
echo "instructions per write+read of one 48-byte entry (callgrind, 2N - N):"
for impl in lfv rte-s ck-s mutex; do
	printf '%-10s %s\n' "$impl" \
		"$(per_op 100000 "$out/bench_ring" --callgrind-op "$impl:st1:48")"
done
