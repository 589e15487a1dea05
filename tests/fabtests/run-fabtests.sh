#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Runs upstream fabtests (built by build-fabtests.sh) over one or more
# providers on the soft-RoCE test bed, and reports every test's result.
#
#   tests/fabtests/run-fabtests.sh [options] [PROV [RUNFABTESTS-ARGS...]]
#
# PROV is a provider name or a space-separated list of them, e.g.
# "lfverbs verbs verbs;ofi_rxm" (default: $LFV_FABTESTS_PROVIDERS, else
# lfverbs). With more than one, a Markdown comparison table closes the run.
# lfverbs is loaded from the build tree ($LFV_BUILD_DIR, default build).
#
# options:
#   --sets LIST     runfabtests test sets (default unit,functional,short;
#                   "none" runs none, e.g. with --complex)
#   --timeout S     runfabtests' per-test timeout (-T), default 120
#   --wait S        at most S seconds between starting a test's server
#                   and its client, default 2: the client starts as soon as
#                   the server listens (runfabtests sleeps 1 s; --nodes
#                   sleeps S)
#   --complex       also run fi_ubertest with tests/fabtests/lfverbs-ubertest.test
#                   (prov_name swapped for other providers)
#   --nodes         across the two-node bed (rxe-bed --nodes 2, two vCPUs a
#                   node unless LFV_BED_CPUS says otherwise): servers on
#                   lfv-a (10.77.0.1), clients on lfv-b (10.77.0.2), both
#                   started by runfabtests through ssh; only the tests of
#                   tests/fabtests/<prov>-nodes.tests (its sets replace
#                   --sets); lists <prov>-nodes.exclude and .xfail; logs
#                   in $LFV_BUILD_DIR/fabtests-nodes/<prov>/; a TAP line
#                   per test, the plan at the end
#
# Outside a bed this builds fabtests (cached) and runs itself in
# tests/bed/rxe-bed. Each provider's results, the raw runfabtests output
# and one log per failing test (server and client output) go to
# $LFV_BUILD_DIR/fabtests/<prov>/.
#
# tests/fabtests/<prov>.exclude lists tests not run at all (runfabtests
# -f; they count as notrun).
# tests/fabtests/<prov>.xfail lists known failures (one runfabtests test
# name per line, then "# why"): such a test still runs; its failure counts
# as xfail (not a failure), its pass as xpass (a failure: the list must not
# go stale), unless its reason starts with "flaky" (then a pass is a
# pass). Only lfverbs decides the exit status (1 if it has failures or
# xpasses, 77 if the fabtests sources are absent); other providers are
# references. Each provider ends with the line
#   fabtests PROV: N passed, N failed (N xpass), N notrun, N xfail
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
builddir=$top/${LFV_BUILD_DIR:-build}

sets=unit,functional,short
timeout=120
wait=2
complex=0
nodes=0

msg() { echo "run-fabtests: $*" >&2; }
die() { msg "$*"; exit 1; }

usage() {
	sed -n '3,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--sets) sets=${2:?--sets needs a list}; shift 2 ;;
	--timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
	--wait) wait=${2:?--wait needs seconds}; shift 2 ;;
	--complex) complex=1; shift ;;
	--nodes) nodes=1; shift ;;
	-h | --help) usage 0 ;;
	--) shift; break ;;
	-*) msg "unknown option $1"; usage 1 >&2 ;;
	*) break ;;
	esac
done
provs=${1:-${LFV_FABTESTS_PROVIDERS:-lfverbs}}
[ $# -eq 0 ] || shift
extra=("$@")
case $timeout$wait in '' | *[!0-9]*) die "bad --timeout $timeout or --wait $wait" ;; esac

in_bed() {
	[ "${LFV_BED:-}" = 1 ] && [ -e "/sys/class/infiniband/${LFV_BED_DEV:-rxe0}" ]
}

# Outside the bed: build (the bed's root is read-only, so it cannot), then
# run this script again inside, with the prefix passed along.
if ! in_bed; then
	# LFV_FABTESTS_PREFIX: fabtests built elsewhere (another core's).
	if [ -n "${LFV_FABTESTS_PREFIX:-}" ]; then
		prefix=$LFV_FABTESTS_PREFIX
		rc=0
	else
		prefix=$("$here/build-fabtests.sh")
		rc=$?
	fi
	# --nodes speaks TAP: no sources is a skip there.
	if [ $rc = 77 ] && [ $nodes = 1 ]; then
		echo "1..0 # SKIP $prefix"
		exit 0
	fi
	if [ $rc -ne 0 ]; then
		[ -z "$prefix" ] || echo "$prefix"
		exit $rc
	fi
	n=$(echo "$provs" | wc -w)
	# One provider took 38 min under TCG with other VMs on the 2 cores
	# (a 606 s hang included, which the watchdog now cuts to 150 s).
	export LFV_BED_TIMEOUT=${LFV_BED_TIMEOUT:-$((300 + n * 2100))}
	opts=(--sets "$sets" --timeout "$timeout" --wait "$wait")
	[ $complex = 0 ] || opts+=(--complex)
	bed=()
	if [ $nodes = 1 ]; then
		opts+=(--nodes)
		bed=(--nodes 2)
		# Each node polls: with one vCPU rxe's own work starves.
		export LFV_BED_CPUS=${LFV_BED_CPUS:-2}
		# Two VMs: the nodes' list runs fi_rdm_atomic with -S 4096
		# (its sizes up to 4 KiB), not the 3 GiB of its default sizes.
		export LFV_BED_MEM=${LFV_BED_MEM:-4096}
	fi
	# fi_rdm_atomic allocates about 3 GiB per process for its largest
	# size (8 MiB x window x buffers): the default 4 GiB bed runs out.
	export LFV_BED_MEM=${LFV_BED_MEM:-10240}
	cd "$top" || exit 1
	exec "$top/tests/bed/rxe-bed" "${bed[@]}" --workdir "$top" \
		--env LFV_FABTESTS_PREFIX="$prefix" \
		--env LFV_BUILD_DIR="${LFV_BUILD_DIR:-build}" \
		--env LFV_FABTESTS_LISTS="${LFV_FABTESTS_LISTS:-}" -- \
		bash "$here/run-fabtests.sh" "${opts[@]}" "$provs" "${extra[@]}"
fi

prefix=${LFV_FABTESTS_PREFIX:-}
if [ -z "$prefix" ]; then
	prefix=$("$here/build-fabtests.sh")
	rc=$?
	[ $rc -eq 0 ] || { echo "$prefix"; exit $rc; }
fi
bin=$prefix/bin
[ -x "$bin/runfabtests.sh" ] || die "no runfabtests.sh in $bin"
# fabtests built into a core's own prefix (tests/compat/build-core.sh)
# run on that core, not on the system's.
if [ -e "$prefix/lib/libfabric.so" ]; then
	export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
ip=${LFV_BED_IP:?}
logroot=$builddir/fabtests
# --nodes: runfabtests' host arguments (it starts each side through ssh)
# and the other lists.
hosts=()
lists_sfx=${LFV_FABTESTS_LISTS:-}
if [ $nodes = 1 ]; then
	[ "${LFV_BED_NODES:-1}" = 2 ] || die "--nodes needs the two-node bed"
	hosts=("$ip" "${LFV_BED_PEER_IP:?}")
	logroot=$builddir/fabtests-nodes
	lists_sfx=$lists_sfx-nodes
fi
mkdir -p "$logroot" || die "cannot create $logroot"

# A provider name as a file name ("verbs;ofi_rxm" -> "verbs+ofi_rxm").
safe() { printf '%s' "$1" | tr -c 'A-Za-z0-9_.+-' '+'; }

# The name of a provider's lists: <prov>.xfail and <prov>.exclude, or
# <prov>$LFV_FABTESTS_LISTS.* (e.g. "-2.1": another core's fabtests).
lists() { printf '%s%s' "$(safe "$1")" "$lists_sfx"; }

# A test name as runfabtests prints it, without "-p PROV" and with the bed's
# address as ADDR, so that names do not depend on the bed.
norm_name() {
	local n=$1
	n=${n% -p \"*\"}
	[ $nodes = 0 ] || n=${n//$LFV_BED_PEER_IP/PEER}
	printf '%s' "${n//$ip/ADDR}"
}

# The first line of a failed test's output that says what went wrong.
first_error() {
	grep -v -e '^  [a-z_]*: ' -e 'PASS' "$1" |
		grep -i -m1 -E 'fail|error|abort|refused|timed? ?out|assert|unexpected|mismatch|returned|killed|signal|invalid|truncat|corrupt' |
		sed 's/^ *//' | cut -c1-200
}

# Loads tests/fabtests/<prov>.xfail into the xfail array: 1 for a known
# failure, "flaky" for one whose reason starts with "flaky".
declare -A xfail
load_xfail() {
	local f line name why
	f=$here/$(lists "$1").xfail
	xfail=()
	[ -f "$f" ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do
		name=${line%%#*}
		name=${name%"${name##*[![:space:]]}"}
		why=${line#"$name"}
		why=${why#*#}
		[ -n "$name" ] || continue
		case ${why# } in flaky*) xfail[$name]=flaky ;; *) xfail[$name]=1 ;; esac
	done <"$f"
}

# Classifies one runfabtests record and prints its line; the record's text
# is in $rec_file. Updates the counters and writes failing tests' logs.
finish_record() {
	local name=$1 res=$2 time=$3 limit=${4:-$timeout} cls log err
	case $res in
	Pass*) cls=PASS ;;
	Notrun* | Excluded*) cls=NOTRUN ;;
	*) cls=FAIL ;;
	esac
	if [ -n "${xfail[$name]:-}" ]; then
		seen[$name]=1
		case $cls in FAIL) cls=XFAIL ;; esac
		[ "$cls" != PASS ] || [ "${xfail[$name]}" = flaky ] || cls=XPASS
	fi
	case $cls in
	PASS) n_pass=$((n_pass + 1)) ;;
	NOTRUN) n_notrun=$((n_notrun + 1)) ;;
	FAIL) n_fail=$((n_fail + 1)) ;;
	XFAIL) n_xfail=$((n_xfail + 1)) ;;
	XPASS) n_xpass=$((n_xpass + 1)) ;;
	esac
	printf '%-6s %4ss  %s\n' "$cls" "$time" "$name"
	[ $nodes = 0 ] || tap_line "$cls" "$name"
	printf '%s\t%s\t%s\t%s\n' "$name" "$cls" "$res" "$time" >>"$logdir/results.tsv"
	case $cls in
	FAIL | XFAIL)
		log=$logdir/$(printf '%s' "$name" | tr -c 'A-Za-z0-9_.-' '_' | tr -s _).log
		cp "$rec_file" "$log"
		[ "$time" -lt "$limit" ] || echo "              timed out ($limit s)"
		err=$(first_error "$log")
		[ -z "$err" ] || echo "              $err"
		echo "              log: ${log#"$top"/}"
		;;
	XPASS) echo "              xpass: listed in $(lists "$prov").xfail but passed; remove it from the list" ;;
	PASS) [ -z "${xfail[$name]:-}" ] || echo "              (listed as flaky in $(lists "$prov").xfail)" ;;
	esac
}

# The TAP line of a test of class $1 (--nodes): a known failure (xfail)
# or a test not run counts as skipped, an xpass as a failure.
n_tap=0
tap_line() {
	n_tap=$((n_tap + 1))
	case $1 in
	PASS) echo "ok $n_tap - $2 ($LFV_BED_HOSTS)" ;;
	NOTRUN) echo "ok $n_tap - $2 # SKIP not run" ;;
	XFAIL) echo "ok $n_tap - $2 # SKIP known failure ($(lists "$prov").xfail)" ;;
	*) echo "not ok $n_tap - $2 ($1, $LFV_BED_HOSTS)" ;;
	esac
}

# Reads runfabtests -v output (YAML records) from stdin, prints each test.
parse_records() {
	local line name='' res='' time=0
	rec_file=$logdir/.record
	: >"$rec_file"
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$logdir/runfabtests.yaml"
		case $line in
		"- name: "*)
			[ -z "$name" ] || finish_record "$name" "$res" "$time"
			name=${line#- name:}
			name=$(norm_name "${name#"${name%%[! ]*}"}")
			res='' time=0
			printf '%s\n' "$line" >"$rec_file"
			;;
		"  result: "*) res=${line#  result: }; echo "$line" >>"$rec_file" ;;
		"  time: "*) time=$(echo "${line#  time:}" | tr -dc 0-9); echo "$line" >>"$rec_file" ;;
		"  "*) [ -z "$name" ] || printf '%s\n' "$line" >>"$rec_file" ;;
		"run-fabtests: "*) echo "$line" ;; # the watchdog
		esac
	done
	[ -z "$name" ] || finish_record "$name" "$res" "$time"
	rm -f "$rec_file"
}

# Sets the environment for one provider: lfverbs from the build tree, the
# others as Debian ships them (no lfverbs plugin loaded next to them).
# verbs;ofi_rxm (1.17) sizes each CQ for (tx + rx size) x FI_UNIVERSE_SIZE,
# over soft-RoCE's max_cqe with the default 256, and every RDM test's
# fi_enable fails (-FI_EINVAL): 16, as tests/func/func_mpi.sh does.
prov_env() {
	case $1 in
	lfverbs*) export FI_PROVIDER_PATH=$builddir/.libs ;;
	*) unset FI_PROVIDER_PATH ;;
	esac
	case $1 in
	verbs*) export FI_UNIVERSE_SIZE=${FI_UNIVERSE_SIZE:-16} ;;
	esac
}

# runfabtests.sh's "timeout T" sends TERM only, and a test that does not
# die of it stalls the run (seen: 231 s at -T 60, 606 s at -T 120). Every
# 5 s this kills, by pid, the fi_* descendants of process $1 that it has
# itself seen alive for more than T + 30 s, after writing their state and
# kernel stacks to watchdog.log (a process stuck in the kernel dies only
# when it leaves). A process is known by its pid and its start time
# (/proc/PID/stat), and aged by the watchdog's own clock, not by ps'
# etimes: a pid freed and taken again by a new test is a new process (CI
# once saw a 6 s fi_msg_bw killed as stuck).
watchdog() {
	local lim=$((timeout + 30)) pid key now
	local -A first=() seen=()
	while sleep 5; do
		now=$(date +%s)
		seen=()
		while read -r pid; do
			key=$pid:$(awk '{ print $22 }' "/proc/$pid/stat" 2>/dev/null)
			seen[$key]=1
			: "${first[$key]:=$now}"
			[ $((now - ${first[$key]})) -gt "$lim" ] || continue
			{
				echo "=== $(date -u +%T) killing pid $pid, seen for $((now - ${first[$key]})) s"
				ps -o pid,stat,wchan:32,etimes,args -p "$pid"
				for t in /proc/"$pid"/task/*; do
					echo "--- thread ${t##*/}: $(cat "$t/comm" 2>/dev/null)"
					cat "$t/stack" 2>/dev/null
				done
			} >>"$logdir/watchdog.log"
			echo "run-fabtests: watchdog: killing stuck pid $pid: $(ps -o args= -p "$pid") (see watchdog.log)" >&2
			kill -9 "$pid" 2>/dev/null
		done < <(fi_descendants "$1")
		for key in "${!first[@]}"; do
			[ -n "${seen[$key]:-}" ] || unset "first[$key]"
		done
	done
}

# The pids of the fi_* processes under process $1.
fi_descendants() {
	ps -eo pid=,ppid=,comm= | awk -v root="$1" '
		{ pp[$1] = $2; c[$1] = $3 }
		END {
			for (p in pp) {
				if (c[p] !~ /^fi_/) continue
				for (q = pp[p]; q > 1; q = pp[q])
					if (q == root) { print p; break }
			}
		}'
}

# Put into the copy of runfabtests.sh, in place of its "sleep 1" between
# starting a server and its client: returns once the server listens on
# fabtests' port 9228 (an rdma_cm id bound to it: MSG's listener, or the
# service of an RDM or DGRAM endpoint; or a TCP socket, -E), or after
# $1 seconds by the clock (a server that listens elsewhere, or failed).
# Under TCG a server takes about 1 s to start, a busy host more (a client
# refused, with 1 s, was seen with fi_msg_epoll), and a fixed wait long
# enough for the slow case was the run's largest idle time. Each look
# costs: `rdma resource show` about 0.45 s under TCG (ss 0.6 s, so TCP
# listeners are read from /proc/net instead).
wait_server_fn() {
	cat <<'EOF'
lfv_wait_server() {
	local end=$((${EPOCHREALTIME/./} + $1 * 1000000))
	while sleep 0.1; do
		grep -qE ':240C [0-9A-F]+:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null &&
			return
		rdma resource show cm_id 2>/dev/null | grep -q ':9228 ' && return
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || return
	done
}
EOF
}

# runfabtests.sh with the bed's address as server and client (no ssh: no
# host arguments), from the log directory, where it writes its temp files.
# Its copy there waits for the server to listen (at most --wait seconds)
# instead of sleeping 1 s before starting a client. --nodes keeps the
# sleep (the server is on the other node): --wait seconds.
runfabtests() {
	(
		prov_env "$prov"
		cd "$logdir" || exit 1
		if [ $nodes = 0 ]; then
			{
				head -n 1 "$bin/runfabtests.sh"
				wait_server_fn
				tail -n +2 "$bin/runfabtests.sh" |
					sed "s/^\tsleep 1\$/\tlfv_wait_server $wait/"
			} >runfabtests.sh || exit 1
		else
			sed "s/^\tsleep 1\$/\tsleep $wait/" "$bin/runfabtests.sh" >runfabtests.sh ||
				exit 1
		fi
		[ $nodes = 0 ] || nodes_subset || exit 1
		# $BASHPID expands after the fork of "cmd &": take it here.
		me=$BASHPID
		watchdog "$me" &
		wd=$!
		# tests/fabtests/<prov>.exclude: tests not run at all (each
		# with its reason there and in the man page's FABTESTS).
		excl=()
		[ -f "$here/$(lists "$prov").exclude" ] &&
			excl=(-f "$here/$(lists "$prov").exclude")
		bash ./runfabtests.sh -v -T "$timeout" -p "$bin" \
			-t "$sets" -s "$ip" -c "${hosts[1]:-$ip}" "${excl[@]}" \
			"${extra[@]}" "$prov" "${hosts[@]}"
		rc=$?
		kill "$wd"
		exit $rc
	) 2>&1
}

# --nodes: the copy of runfabtests.sh in the current directory runs only
# the tests of tests/fabtests/<prov>-nodes.tests ("SET TEST ARGS..." a
# line: its arrays of those sets are replaced, before its main part), and
# sets becomes the sets named there.
nodes_subset() {
	local f
	f=$here/$(lists "$prov").tests
	[ -f "$f" ] || { msg "no $f"; return 1; }
	awk '/^[a-z]/ { set = $1; sub(/^[a-z]+[ \t]+/, ""); t[set] = t[set] "\t\"" $0 "\"\n"; if (!(set in seen)) { seen[set] = 1; order[++n] = set } }
	     END { for (i = 1; i <= n; i++) printf "%s_tests=(\n%s)\n", order[i], t[order[i]] }' \
		"$f" >subset.sh
	grep -q '^# base ssh command$' runfabtests.sh ||
		{ msg "runfabtests.sh has no '# base ssh command' to insert the subset at"; return 1; }
	sed -i '/^# base ssh command$/r subset.sh' runfabtests.sh
	sets=$(awk '/^[a-z]/ && !s[$1]++ { printf "%s%s", n++ ? "," : "", $1 }' "$f")
}

# Kills client $1 once its output has not grown for $timeout s: a
# configuration that hangs (its peer gone, or a test waiting for an answer
# after its own error) then costs that long, and the round resumes after
# it, instead of costing the round's whole limit.
ubertest_stall_watch() {
	local pid=$1 last=-1 size idle=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 10
		size=$(cat "$cli" "$cli.stderr" 2>/dev/null | wc -c)
		if [ "$size" = "$last" ]; then
			idle=$((idle + 10))
		else
			idle=0
			last=$size
		fi
		if [ "$idle" -ge "$timeout" ]; then
			echo "=== no output for $idle s: client killed" >>"$cli.stderr"
			kill "$pid"
			return
		fi
	done
}

# One fi_ubertest server and client over configurations $1 to the end;
# appends to the logs and leaves "client-status server-status".
ubertest_round() {
	(
		prov_env "$prov"
		cd "$logdir" || exit 1
		echo "=== from configuration $1" >>"$srv"
		FI_LOG_LEVEL=error timeout "$limit" "$bin/fi_ubertest" -x >>"$srv" 2>&1 &
		spid=$!
		sleep "$wait"
		echo "=== from configuration $1" >>"$cli"
		# Line-buffered, so that a client killed by a signal keeps its
		# last lines (its errors go to stderr, kept apart).
		FI_LOG_LEVEL=error timeout "$limit" stdbuf -oL "$bin/fi_ubertest" \
			-u "$cfg" -y "$1" "$ip" >>"$cli" 2>>"$cli.stderr" &
		cpid=$!
		ubertest_stall_watch "$cpid" &
		wpid=$!
		wait "$cpid"
		crc=$?
		kill "$wpid" 2>/dev/null
		# A client that gave up leaves the server waiting for it.
		[ $crc -eq 0 ] || { sleep 2; kill "$spid" 2>/dev/null; }
		wait "$spid"
		echo "$crc $?"
	)
}

# Prints one line per configuration from the client's output: "Starting
# test N / M:", the configuration ("[prov, ..."), "Ending test N / M, result:
# R"; when the server refused the configuration, "Ending test N, result: R"
# comes with no configuration line.
ubertest_lines() {
	awk 'function died() { if (n != "") printf "  ubertest %-5s %-26s %s\n", n, "no result (client died)", cfg; n = "" }
	     /^Starting test/ { died(); n = $3; cfg = ""; next }
	     /^Skipping test/ { skip = $3; next }
	     /^\[/ { if (skip != "") printf "  ubertest %-5s skipped (invalid) %s\n", skip, $0
		     else if (n != "" && cfg == "") cfg = $0
		     skip = ""; next }
	     /^Ending test/ { sub(/.*result: /, ""); if (n != "") printf "  ubertest %-5s %-26s %s\n", n, $0, cfg; n = ""; next }
	     /^===/ { died() }
	     END { died() }' "$cli"
}

# fi_ubertest with tests/fabtests/lfverbs-ubertest.test (prov_name swapped
# for other providers), server and client in the bed. A client that dies
# takes the server with it, so the run resumes after that configuration
# (-y), up to 20 times and within the time limit. Each configuration is printed; the run counts as
# one test, fi_ubertest, which passes when none ends in an error.
run_complex() {
	local cfg=$logdir/ubertest.test limit=$((timeout * 30)) t0=$SECONDS
	local srv=$logdir/ubertest-server.log cli=$logdir/ubertest-client.log
	local crc=0 src=0 ok nodata nosys err from=1 last total rounds=0
	sed "s/prov_name: *lfverbs/prov_name: $prov/" "$here/lfverbs-ubertest.test" >"$cfg"
	: >"$srv"
	: >"$cli"
	: >"$cli.stderr"
	while [ $rounds -lt 20 ]; do
		rounds=$((rounds + 1))
		read -r crc src < <(ubertest_round "$from")
		# The last configuration started, and how many there are.
		read -r last total < <(sed -n 's/^Starting test \([0-9]*\) \/ \([0-9]*\):.*/\1 \2/p' "$cli" | tail -n 1)
		if [ -z "$last" ] || [ "$crc" = 0 ] || [ "$last" -ge "$total" ] ||
			[ $((SECONDS - t0)) -ge "$limit" ] ||
			grep -q "^Ending test $last /" "$cli"; then
			break
		fi
		from=$((last + 1))
	done
	ubertest_lines | tee "$logdir/ubertest.txt"
	ok=$(grep -c ' Success ' "$logdir/ubertest.txt")
	nodata=$(grep -c ' No data available ' "$logdir/ubertest.txt")
	nosys=$(grep -c ' Function not implemented ' "$logdir/ubertest.txt")
	err=$(grep -c -v -e ' Success ' -e ' No data available ' -e ' Function not implemented ' \
		-e 'skipped (invalid)' "$logdir/ubertest.txt")
	echo "  ubertest: $ok ok, $nodata ENODATA, $nosys ENOSYS, $err error in $rounds run(s); last client status $crc, server status $src"
	rec_file=$logdir/.record
	{
		echo "- name:   fi_ubertest"
		echo "  client_status: $crc"
		echo "  server_status: $src"
		echo "  client_stdout: |"
		sed 's/^/    /' "$cli"
		echo "  client_stderr: |"
		sed 's/^/    /' "$cli.stderr"
		echo "  server_stdout: |"
		sed 's/^/    /' "$srv"
	} >"$rec_file"
	# The client exits with the last error (ENODATA 61 and ENOSYS 38 are
	# "not run"); any other status, a timeout included, is a failure.
	case $crc in 0 | 61 | 38) ;; *) err=$((err + 1)) ;; esac
	if [ "$err" -gt 0 ] || [ "$src" -eq 124 ]; then
		finish_record fi_ubertest Fail $((SECONDS - t0)) "$limit"
	elif [ "$ok" -eq 0 ]; then
		finish_record fi_ubertest Notrun $((SECONDS - t0)) "$limit"
	else
		finish_record fi_ubertest Pass $((SECONDS - t0)) "$limit"
	fi
	rm -f "$rec_file"
}

# Runs the sets (and ubertest) for $prov; prints the summary line.
run_provider() {
	local k t0=$SECONDS
	logdir=$logroot/$(safe "$prov")
	rm -rf "$logdir"
	mkdir -p "$logdir" || die "cannot create $logdir"
	n_pass=0 n_fail=0 n_notrun=0 n_xfail=0 n_xpass=0
	declare -gA seen=()
	load_xfail "$prov"
	echo "--- fabtests over $prov (sets: $sets, -T $timeout, --wait $wait)"
	[ "$sets" = none ] || parse_records < <(runfabtests)
	[ $complex = 0 ] || run_complex
	for k in "${!xfail[@]}"; do
		[ -n "${seen[$k]:-}" ] || echo "note: $(lists "$prov").xfail lists '$k', which did not run"
	done
	echo "$prov $n_pass $n_fail $n_notrun $n_xfail $n_xpass $((SECONDS - t0))" >"$logdir/counts"
	[ $((n_pass + n_fail + n_notrun + n_xfail + n_xpass)) -gt 0 ] || {
		echo "no test ran (see ${logdir#"$top"/}/runfabtests.yaml)"
		n_fail=1
	}
	echo "fabtests $prov: $n_pass passed, $((n_fail + n_xpass)) failed ($n_xpass xpass), $n_notrun notrun, $n_xfail xfail ($((SECONDS - t0)) s)"
}

# Markdown tables over every provider run: the counts, then each test.
print_comparison() {
	local p name pass fail notrun xf xp secs files=()
	for p in $provs; do files+=("$logroot/$(safe "$p")/results.tsv"); done
	echo "| provider | pass | notrun | fail | time (s) |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	for p in $provs; do
		read -r name pass fail notrun xf xp secs <"$logroot/$(safe "$p")/counts"
		# shellcheck disable=SC2016 # backquotes are Markdown
		printf '| `%s` | %s | %s | %s | %s |\n' "$p" "$pass" "$notrun" \
			"$((fail + xf + xp))" "$secs"
	done
	echo
	# One row per test, in the first provider's order; failures listed in
	# an xfail file count as fail here.
	awk -F'\t' -v provs="$provs" '
		BEGIN { n = split(provs, P, " ") }
		FNR == 1 { f++ }
		{ r = $2; sub(/^X/, "", r); r = (r == "PASS") ? "pass" : (r == "NOTRUN") ? "notrun" : "**fail**"
		  if (!($1 in row)) { order[++m] = $1; row[$1] = 1 }
		  res[$1, f] = r }
		END {
			printf "| test |"; for (i = 1; i <= n; i++) printf " `%s` |", P[i]; print ""
			printf "| --- |"; for (i = 1; i <= n; i++) printf " --- |"; print ""
			for (j = 1; j <= m; j++) {
				printf "| `%s` |", order[j]
				for (i = 1; i <= n; i++) printf " %s |", ((order[j], i) in res) ? res[order[j], i] : "-"
				print ""
			}
		}' "${files[@]}"
}

# --nodes: MSG between lfverbs and Debian's verbs provider, each test of
# tests/fabtests/interop-nodes.tests ("TEST ARGS" a line) both ways: the
# server here over one provider, the client on the other node over the
# other (runfabtests takes one provider for both sides). A TAP line each;
# a failure fails the run. LFV_FABTESTS_INTEROP=0 skips them.
interop_one() {
	local sprov=$1 cprov=$2 t=$3 name log spid src crc
	shift 3
	name="interop: $t $* (server $sprov, client $cprov)"
	log=$logroot/interop/$(printf '%s' "$t $* $sprov $cprov" | tr -c 'A-Za-z0-9_.-' '_').log
	timeout "$timeout" "$bin/$t" "$@" -p "$sprov" -s "$ip" >"$log.server" 2>&1 &
	spid=$!
	sleep "$wait"
	# shellcheck disable=SC2029 # expanded here on purpose
	ssh -n "${hosts[1]}" "FI_PROVIDER_PATH=$FI_PROVIDER_PATH FI_UNIVERSE_SIZE=16 timeout $timeout $bin/$t $* -p '$cprov' -s ${hosts[1]} $ip" >"$log.client" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	if [ $src = 0 ] && [ $crc = 0 ]; then
		n_pass=$((n_pass + 1))
		tap_line PASS "$name"
	else
		n_fail=$((n_fail + 1))
		tap_line FAIL "$name"
		echo "#   server exit $src, client exit $crc; logs ${log#"$top"/}.{server,client}"
		grep -h -i -m2 -E 'error|fail|refused|timed? ?out|mismatch' "$log.server" "$log.client" | sed 's/^/#   /'
	fi
}

interop_nodes() {
	local line words
	[ $nodes = 1 ] && [ "${LFV_FABTESTS_INTEROP:-1}" != 0 ] || return 0
	[ -f "$here/interop-nodes.tests" ] || return 0
	mkdir -p "$logroot/interop"
	n_pass=0 n_fail=0
	export FI_PROVIDER_PATH=$builddir/.libs FI_UNIVERSE_SIZE=16
	echo "--- MSG interoperation with verbs across the nodes (interop-nodes.tests)"
	while IFS= read -r line; do
		line=${line%%#*}
		read -ra words <<<"$line"
		[ ${#words[@]} -gt 0 ] || continue
		interop_one verbs lfverbs "${words[@]}"
		interop_one lfverbs verbs "${words[@]}"
	done <"$here/interop-nodes.tests"
	echo "interop: $n_pass passed, $n_fail failed"
	[ $n_fail = 0 ]
}

set -f # provider names are words, never patterns
status=0
for prov in $provs; do
	run_provider
	case $prov in
	lfverbs*) [ $((n_fail + n_xpass)) -eq 0 ] || status=1 ;;
	esac
done
case " $provs " in
*" lfverbs "*) interop_nodes || status=1 ;;
esac
if [ "$(echo "$provs" | wc -w)" -gt 1 ]; then
	echo "--- comparison (also in ${logroot#"$top"/}/comparison.md)"
	print_comparison | tee "$logroot/comparison.md"
fi
[ $nodes = 0 ] || echo "1..$n_tap"
exit $status
