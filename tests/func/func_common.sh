# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Sourced by the shell functional tests: TAP results and the device check.
n=0
fails=0

# ok STATUS DESCRIPTION: one TAP line.
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}

# require_lfverbs CMD PACKAGE: skip all when a Debian tool is missing; then
# skip (or bail out inside the test bed) when lfverbs finds no device.
require_lfverbs() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "1..0 # SKIP $1 not installed (Debian package $2)"
		exit 0
	fi
	if ! fi_info -p lfverbs >/dev/null 2>&1; then
		if [ -n "${LFV_REQUIRE_DEVICE:-}" ]; then
			echo "Bail out! lfverbs finds no device inside the test bed"
			exit 1
		fi
		echo "1..0 # SKIP lfverbs finds no device; run through tests/bed/rxe-bed"
		exit 0
	fi
}
