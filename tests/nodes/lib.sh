# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# shellcheck shell=bash
# Sourced by rdm.sh and shm.sh (tests/nodes): one case of a cmocka test
# program with peers on both nodes, as one TAP line. The caller sets
# $build (the build tree) and $log (a scratch directory).

# nodes_case N WHAT CHECK PROG TEST [NAME=VALUE...]: runs
# $build/tests/func/PROG with its cmocka test TEST alone
# (LFV_RDM_PEERS_ONLY; empty: all of them) and the environment words given,
# its output in $log/out, for at most LFV_NODES_CASE_TIMEOUT s (120).
# Prints TAP line N: ok when the program's own TAP says ok for TEST (or
# skips all: ok # SKIP with its reason), nothing says "not ok", and the
# function CHECK (true: nothing more) succeeds; otherwise the status and
# the output's tail as diagnostics, and returns 1. The first lines of the
# program's own output follow an ok (without INFO logs); the core's
# lines and lfverbs' "RDM close" counts are left out of both.
# shellcheck disable=SC2154  # build and log: the caller's
nodes_case() {
	local n=$1 what=$2 check=$3 prog=$4 t=$5 rc t0=$SECONDS
	shift 5
	if [ ! -x "$build/tests/func/$prog" ]; then
		echo "not ok $n - $what: no $build/tests/func/$prog (make check TESTS=)"
		return 1
	fi
	env "$@" LFV_RDM_PEERS_ONLY="$t" CMOCKA_MESSAGE_OUTPUT=TAP \
		timeout "${LFV_NODES_CASE_TIMEOUT:-120}" "$build/tests/func/$prog" \
		>"$log/out" 2>&1
	rc=$?
	if [ $rc = 0 ] && grep -q '^1\.\.0 # SKIP' "$log/out"; then
		echo "ok $n - $what # SKIP$(sed -n 's/^1\.\.0 # SKIP//p' "$log/out")"
	elif [ $rc = 0 ] && grep -q "^ok 1 - ${t:-.}" "$log/out" &&
		! grep -q '^not ok' "$log/out" && "$check"; then
		grep -v -e '^ok' -e '^1\.\.' -e '^# ok - ' -e pyenv -e ':core:' \
			-e 'RDM close' -e '<info>' "$log/out" | head -4 |
			sed 's/^#* */# /'
		echo "ok $n - $what, peers on $LFV_BED_HOSTS ($((SECONDS - t0)) s)"
	else
		echo "# status $rc"
		grep -v -e ':core:' -e 'RDM close' -e pyenv "$log/out" | tail -15 |
			sed 's/^/#   /'
		echo "not ok $n - $what, peers on $LFV_BED_HOSTS ($((SECONDS - t0)) s)"
		return 1
	fi
}
