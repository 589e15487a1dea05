#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The load-time guard (lfv_fi_compat.h), with real cores: a plugin built
# on one system and run in another's core. TAP on stdout.
#
#   tests/compat/test_core_swap.sh OLD_BUILD NEW_BUILD NEW_CORE [NEWER_CORE]
#
# OLD_BUILD: lfverbs built against Debian 12's 1.17 (its .libs holds the
# plugin); NEW_BUILD: built against NEW_CORE (a prefix from build-core.sh,
# e.g. 2.1.0); NEWER_CORE: a core of a later peer layout (e.g. 2.6.0).
# Checked:
#  - NEW_CORE loads the 1.17 build, which warns once that it refuses
#    FI_PEER (another peer layout), and the core exits cleanly;
#  - Debian's 1.17 core does not load the newer build (the core refuses a
#    provider newer than itself) and does not crash;
#  - NEWER_CORE loads the NEW_CORE build, which warns once;
#  - NEW_CORE loads its own build without the warning.
set -u
old=${1:?OLD_BUILD} new=${2:?NEW_BUILD} core=${3:?NEW_CORE} newer=${4:-}
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # description, then a command that must succeed
	d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}

# fi_info -l of a core with a plugin folder: its output and log (warn).
list() { # core-bin plugin-dir
	FI_LOG_LEVEL=warn FI_PROVIDER_PATH=$2 LD_LIBRARY_PATH=${1%/bin}/lib \
		"$1/fi_info" -l 2>&1
	echo "status $?"
}
refusals() { grep -c "lfverbs.*FI_PEER refused"; }

echo "1..8"
out=$(list "$core/bin" "$old/.libs")
check "the new core lists the 1.17 build" sh -c 'echo "$1" | grep -q "^lfverbs:"' - "$out"
check "the 1.17 build refuses FI_PEER there, in one warning" \
	test "$(echo "$out" | refusals)" = 1
check "the new core exits cleanly" sh -c 'echo "$1" | grep -q "^status 0"' - "$out"

out=$(list /usr/bin "$new/.libs")
check "Debian's 1.17 core does not list the newer build" \
	sh -c '! echo "$1" | grep -q "^lfverbs:"' - "$out"
check "and does not crash" sh -c 'echo "$1" | grep -q "^status 0"' - "$out"

out=$(list "$core/bin" "$new/.libs")
check "the new core lists its own build" sh -c 'echo "$1" | grep -q "^lfverbs:"' - "$out"
check "without refusing FI_PEER" test "$(echo "$out" | refusals)" = 0

if [ -n "$newer" ]; then
	out=$(list "$newer/bin" "$new/.libs")
	check "a core of a later peer layout loads the build and refuses FI_PEER once" \
		sh -c 'echo "$1" | grep -q "^lfverbs:" &&
			test "$(echo "$1" | grep -c "lfverbs.*FI_PEER refused")" = 1' - "$out"
else
	ok "# SKIP no later core given"
fi
