#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The fuzz targets (tests/fuzz/README.md), each for LFV_FUZZ_SECONDS
# (default 60) from its committed corpus, built with clang's libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer. TAP; a finding fails and
# leaves its input in build/fuzz/. Skips when clang has no libFuzzer.
# Needs the configured build ($LFV_BUILD_DIR, default build) for config.h.
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${LFV_FUZZ_OUT:-$top/build/fuzz}
secs=${LFV_FUZZ_SECONDS:-60}
cc=${LFV_FUZZ_CC:-clang}
mkdir -p "$out"
targets="wire"
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}' |
	"$cc" -x c -fsanitize=fuzzer - -o "$out/probe" >/dev/null 2>&1; then
	echo "1..0 # SKIP $cc with libFuzzer not installed (Debian package clang)"
	exit 0
fi
set -- $targets
echo "1..$#"
n=0 fails=0
for t in $targets; do
	n=$((n + 1))
	bin=$out/fuzz_$t
	# shellcheck disable=SC2046 # pkg-config prints words
	if ! "$cc" -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -Wall -Wextra -Werror \
		-I"$top/include" -I"$top/prov/lfverbs" \
		-I"$top/${LFV_BUILD_DIR:-build}" \
		$(pkg-config --cflags libfabric) \
		"$top/tests/fuzz/fuzz_$t.c" "$top/prov/lfverbs/lfv_$t.c" \
		-o "$bin" >"$out/$t.build" 2>&1; then
		sed 's/^/# /' "$out/$t.build"
		echo "not ok $n - fuzz_$t builds"
		fails=$((fails + 1))
		continue
	fi
	# New inputs go to a scratch copy; the committed corpus stays as is.
	rm -rf "$out/$t.corpus"
	cp -r "$top/tests/fuzz/corpus/$t" "$out/$t.corpus"
	if (cd "$out" && "$bin" -max_total_time="$secs" -timeout=10 \
		-print_final_stats=1 "$t.corpus" >"$t.log" 2>&1); then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' \
			"$out/$t.log")
		echo "ok $n - fuzz_$t: no finding in ${secs} s (${runs:-?} runs)"
	else
		tail -30 "$out/$t.log" | sed 's/^/# /'
		echo "not ok $n - fuzz_$t: a finding (input in $out)"
		fails=$((fails + 1))
	fi
done
[ $fails -eq 0 ]
