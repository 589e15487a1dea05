# shellcheck shell=sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Shell functions of the soft-RoCE benchmarks, sourced by run-endpoints.sh,
# run-rdm.sh, run-exposure.sh and run-mpi-patterns.sh (POSIX sh) as their
# prelude. The caller
# sets bench_pfx, the prefix of its files in $out (ep, rdm, xp), and
# sources this file, which sets and goes to:
#
#   top         the source tree (the scripts run from there)
#   out         build/bench, where everything is written
#   bench_name  the script's name for messages (run-endpoints, run-rdm)
#
# Inside the bed the caller sets res (the results file), round, ip, pin_s
# and pin_c (bench_pins) for bench_pt.
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
out=$top/build/bench
bench_name=$(basename "$0" .sh)

# rxm's MSG CQ has (MSG tx + rx size) x universe size entries, 65536 by
# default, and rxe's max_cqe is 32767: fi_enable fails with -FI_EINVAL.
# FI_OFI_RXM_MSG_TX_SIZE / _RX_SIZE (64/64, 64/63, 32/64, 16/16) do not
# help on Debian's 1.17; a universe of 16 peers does (README). Every run
# of verbs;ofi_rxm gets these variables, lfverbs none.
: "${LFV_RDB_RXM_ENV:=FI_UNIVERSE_SIZE=16}"
export LFV_RDB_RXM_ENV

# bench_in_bed RESULTS: the start of an in-bed part: RESULTS emptied and
# named $res, lfverbs' build tree on FI_PROVIDER_PATH (every libfabric run
# loads the same providers, lfverbs included), pin_s / pin_c set.
bench_in_bed() {
	res=$1
	: >"$res"
	FI_PROVIDER_PATH=$top/build/.libs
	export FI_PROVIDER_PATH
	bench_pins
}

# bench_in_bed_setup NAME: inside the bed, the device, its address and
# GID (dev, ip, gid) and where results go: with nodes=1 (--nodes; no
# callgrind there) $out/NAME-nodes.txt, the servers here (lfv-a) and the
# clients on lfv-b through on-peer.sh; else $out/NAME-results.txt, the
# server on CPU 0 and the client on CPU 1.
bench_in_bed_setup() {
	dev=${LFV_BED_DEV:?not in the test bed}
	ip=${LFV_BED_IP:?not in the test bed}
	gid=1	# the IPv4-mapped RoCE v2 GID (tests/bed/README.md)
	if [ "${nodes:-0}" = 1 ]; then
		bench_in_bed "$out/$1-nodes.txt"
		pin_s="" pin_c="$top/tests/bench/on-peer.sh"
	else
		bench_in_bed "$out/$1-results.txt"
	fi
}

# bench_pins: server on CPU 0, client on CPU 1 (pin_s, pin_c: command
# prefixes, empty on one CPU or without taskset). Unpinned, the scheduler
# sometimes leaves both busy-polling processes on one vCPU, and every
# message then waits for the other process's time slice (a 4 ms tick).
bench_pins() {
	pin_s="" pin_c=""
	if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
		pin_s="taskset -c 0" pin_c="taskset -c 1"
	fi
}

# bench_rotate K WORDS...: the words, the first K moved to the end.
bench_rotate() {
	k=$1
	shift
	while [ "$k" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		k=$((k - 1))
	done
	echo "$@"
}

# bench_stall_probe: bench_stall (built by bench_host_deps) on each of
# the first two CPUs at once for $bench_stall_secs seconds (default 1; 0
# skips), each line appended to $res with round=$round: how much of the
# time the host did not run the VM's vCPUs just before the round.
bench_stall_probe() {
	[ "${bench_stall_secs:-1}" != 0 ] && [ -x "$out/bench_stall" ] || return 0
	[ -n "$pin_s" ] || return 0
	# shellcheck disable=SC2086 # $pin_s, $pin_c are word lists
	{
		$pin_s "$out/bench_stall" "${bench_stall_secs:-1}" &
		$pin_c "$out/bench_stall" "${bench_stall_secs:-1}"
		wait
	} | sed "s/\$/ round=$round/" | tee -a "$res"
}

# bench_wait_listening LOG PID TRIES: waits (TRIES x 50 ms at most) for
# the server's "listening" line in LOG; fails when it does not come or the
# server PID is gone.
bench_wait_listening() {
	i=0
	until grep -q '^listening' "$1" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt "$3" ] || ! kill -0 "$2" 2>/dev/null; then
			return 1
		fi
		sleep 0.05
	done
}

# bench_pt TIMEOUT TAG PROGRAM ARGS...: one perftest run (server pinned
# to CPU 0, then the client on CPU 1 against $ip, retried while the server
# comes up: it has no ready message), its result as a "result
# impl=perftest ..." line appended to $res. perftest keeps its own
# defaults (inline sends, unsignaled sends in bw); ib_*_lat prints half
# round trips; MB there is MiB.
bench_pt() {
	ptmo=$1 tag=$2
	shift 2
	# shellcheck disable=SC2086 # $pin_s is a word list
	timeout "$ptmo" $pin_s "$@" >"$out/$bench_pfx-pt-server.log" 2>&1 &
	spid=$!
	try=0
	sleep 0.5
	# shellcheck disable=SC2086 # $pin_c is a word list
	until timeout "$ptmo" $pin_c "$@" "$ip" >"$out/$bench_pfx-pt-client.log" 2>&1; do
		try=$((try + 1))
		if [ "$try" -ge 10 ] || ! kill -0 "$spid" 2>/dev/null; then
			echo "$bench_name: perftest $tag failed:" >&2
			cat "$out/$bench_pfx-pt-client.log" "$out/$bench_pfx-pt-server.log" >&2
			kill "$spid" 2>/dev/null || true
			wait "$spid" || true
			return 0
		fi
		sleep 1
	done
	wait "$spid" || true
	awk -v tag="$tag" -v round="$round" '
		$1 ~ /^[0-9]+$/ && NF >= 5 {
			if (tag == "lat")
				printf "result impl=perftest test=lat size=%s iters=%s median_us=%s mean_us=%s round=%d\n", $1, $2, $5, $6, round
			else if (tag == "rate")
				printf "result impl=perftest test=rate size=%s msgs=%s msgs_per_s=%.1f round=%d\n", $1, $2, $5 * 1e6, round
			else
				printf "result impl=perftest test=bw size=%s msgs=%s MB_per_s=%.2f round=%d\n", $1, $2, $4 * 1.048576, round
		}' "$out/$bench_pfx-pt-client.log" | tee -a "$res"
}

# bench_pt_rounds TIMEOUT ROUNDS LAT RATE BW [BIG]: ROUNDS rounds of
# perftest on $dev / $gid when it is installed: ib_send_lat 64 B (LAT
# iterations), ib_send_bw 64 B window 64 (RATE), 1 MiB window 4 (BW) and,
# with BIG, 64 MiB window 2 (BIG messages).
bench_pt_rounds() {
	command -v ib_send_lat >/dev/null 2>&1 || return 0
	round=1
	while [ "$round" -le "$2" ]; do
		echo "--- perftest round $round of $2 ($(date +%T))"
		bench_pt "$1" lat ib_send_lat -d "$dev" -x "$gid" -F -s 64 -n "$3"
		bench_pt "$1" rate ib_send_bw -d "$dev" -x "$gid" -F -s 64 -t 64 -n "$4"
		bench_pt "$1" bw ib_send_bw -d "$dev" -x "$gid" -F -s 1048576 -t 4 -n "$5"
		[ -z "${6:-}" ] ||
			bench_pt "$1" big ib_send_bw -d "$dev" -x "$gid" -F -s 67108864 -t 2 -n "$6"
		round=$((round + 1))
	done
}

# bench_help_or_usage ARG LINES USAGE: an option the script does not take.
# -h or --help prints the script's header (LINES, a sed range such as
# 2,14) and exits 0; anything else prints "usage: SCRIPT USAGE" and
# exits 2.
bench_help_or_usage() {
	case $1 in
	-h | --help) sed -n "$2p" "$0"; exit 0 ;;
	*) echo "usage: $0 $3" >&2; exit 2 ;;
	esac
}

# bench_host_deps: as root, installs valgrind and perftest when missing
# (else says which parts are skipped); then tests/deps.sh, tests/build.sh
# and $out. Sets CFLAGS for the benchmark programs and builds bench_stall.
bench_host_deps() {
	need=""
	for p in valgrind perftest; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			need="$need $p"
	done
	if [ -n "$need" ]; then
		if [ "$(id -u)" -eq 0 ]; then
			echo "bench: installing$need"
			# shellcheck disable=SC2086 # one word per package
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need >/dev/null
		else
			echo "bench: missing$need (apt-get install as root); those parts are skipped" >&2
		fi
	fi
	tests/deps.sh
	tests/build.sh
	mkdir -p "$out"
	CFLAGS="-std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers -O2 -g"
	# shellcheck disable=SC2086 # a word list
	gcc $CFLAGS tests/bench/bench_stall.c -o "$out/bench_stall"
}

# bench_bed TAG ARGS...: one test-bed session running "sh ARGS..." (the
# script's in-bed part), its output also in $out/$bench_pfx$TAG-bed.log,
# the host's load average before and after and the session's length in
# $out/$bench_pfx$TAG-load.txt. TAG is empty or a mode suffix (-sweep).
# bench_bed_args: more options for rxe-bed (--nodes 2), none by default.
bench_bed() {
	btag=$1
	shift
	start=$(date +%s)
	# Other work on the host shows in every number: note how busy it was.
	load=$out/$bench_pfx$btag-load.txt
	echo "host load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$load"
	{
		st=0
		# shellcheck disable=SC2086 # a word list (--nodes 2)
		tests/bed/rxe-bed ${bench_bed_args:-} --workdir "$top" -- sh "$@" || st=$?
		echo "$st" >"$out/$bench_pfx$btag-bed.status"
	} | tee "$out/$bench_pfx$btag-bed.log"
	echo "host load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$load"
	echo "(bed session: $(($(date +%s) - start)) s, $(date -u '+%Y-%m-%d %H:%M UTC'))" >>"$load"
	cat "$load"
	st=$(cat "$out/$bench_pfx$btag-bed.status")
	[ "$st" = 0 ] || echo "$bench_name: the bed session failed ($st); the tables are partial" >&2
}

# bench_cg_collect CGFILE RESULTS SHORT...: for each SHORT (a file name's
# implementation, "+" for ";") whose callgrind dumps $out/$bench_pfx-cg.SHORT.2
# to .5 exist, with its client's "callgrind impl=..." line in RESULTS,
# appends to CGFILE the self costs of dumps 2-5 (cg-costs.awk) as "SHORT
# SEG ..." lines (SEG 1-4: K and 2K empty polls, N and 2N ping-pongs; dump
# 1 settles), then that line.
bench_cg_collect() {
	cgf=$1 cres=$2
	shift 2
	: >"$cgf"
	for short in "$@"; do
		f=$out/$bench_pfx-cg.$short
		[ -f "$f.5" ] || continue
		impl=$(echo "$short" | tr '+' ';')
		line=$(grep "^callgrind impl=$impl " "$cres" || true)
		[ -n "$line" ] || continue
		for k in 2 3 4 5; do
			awk -f tests/bench/cg-costs.awk "$f.$k" | sed "s/^/$short $((k - 1)) /" >>"$cgf"
		done
		echo "$line" >>"$cgf"
	done
}

# bench_cc_fi NAME: tests/bench/NAME.c built against libfabric into $out
# (after bench_host_deps, which sets CFLAGS).
bench_cc_fi() {
	# shellcheck disable=SC2046,SC2086 # pkg-config output is a word list
	gcc $CFLAGS "tests/bench/$1.c" $(pkg-config --cflags --libs libfabric) \
		-o "$out/$1"
}

# bench_cc_raw OUTPUT [FLAGS...]: bench_raw (ibverbs + rdma_cm) built
# with FLAGS as $out/OUTPUT.
bench_cc_raw() {
	bout=$1
	shift
	# shellcheck disable=SC2086 # a word list
	gcc $CFLAGS "$@" tests/bench/bench_raw.c -libverbs -lrdmacm -o "$out/$bout"
}

# bench_cg_table SHORT...: the callgrind costs of the SHORTs collected
# (bench_cg_collect) beside $bench_pfx-results.txt, and the table of both
# by tests/bench/$bench_pfx-table.awk printed into $bench_pfx-table.txt.
bench_cg_table() {
	res=$out/$bench_pfx-results.txt
	cg=$out/$bench_pfx-callgrind.txt
	bench_cg_collect "$cg" "$res" "$@"
	awk -v cgfile="$cg" -f tests/bench/bench-lib.awk \
		-f "tests/bench/$bench_pfx-table.awk" "$res" "$cg" |
		tee "$out/$bench_pfx-table.txt"
}

# bench_mpi IMPL NP LOG PROGRAM ARGS...: PROGRAM under Open MPI's mpirun,
# NP ranks on this node, over IMPL, its output in LOG, standard input
# /dev/null (mpirun forwards it to rank 0); returns mpirun's status (124
# after $bench_mpi_timeout seconds, default 600). The one place of the
# benchmarks' Open MPI settings (tests/func/func_mpi.sh has the tests'):
#   lfverbs  pml cm, mtl ofi over lfverbs' own RDM endpoint (the utility
#            providers left out, as in func_mpi.sh: not lfverbs;ofi_rxm)
#   lfverbs-eN  lfverbs with FI_LFVERBS_RDM_EAGER=N (every rank has it:
#            the handshake wants the same eager size on both sides), to
#            measure another eager switch point
#   lfverbs-sN  lfverbs with FI_LFVERBS_RDM_SAR=N: segmented eager up to
#            N bytes (0: none, rendezvous above the eager size)
#   rxm      the same over "verbs;ofi_rxm", with $LFV_RDB_RXM_ENV
#   ob1      pml ob1, btl self,vader: Open MPI's shared memory, no
#            libfabric
# Up to one rank per CPU the ranks are bound to cores, one busy-polling
# rank per vCPU; with more ranks than CPUs they are not bound (binding
# would stack them or fail) and yield when idle (mpi_yield_when_idle), so
# that the rank with work gets the CPU.
bench_mpi() {
	mimpl=$1 mnp=$2 mlog=$3
	shift 3
	if [ "$mnp" -le "$(nproc)" ]; then
		mbind="--bind-to core --map-by core"
	else
		mbind="--bind-to none --mca mpi_yield_when_idle 1"
	fi
	menv="" mcm="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include"
	# shellcheck disable=SC2086 # $mcm is a word list
	case $mimpl in
	lfverbs) menv="FI_PROVIDER=^ofi_rxm,ofi_rxd,ofi_mrail"
		set -- $mcm lfverbs "$@" ;;
	lfverbs-e[0-9]*)
		menv="FI_PROVIDER=^ofi_rxm,ofi_rxd,ofi_mrail FI_LFVERBS_RDM_EAGER=${mimpl#lfverbs-e}"
		set -- $mcm lfverbs "$@" ;;
	lfverbs-s[0-9]*)
		menv="FI_PROVIDER=^ofi_rxm,ofi_rxd,ofi_mrail FI_LFVERBS_RDM_SAR=${mimpl#lfverbs-s}"
		set -- $mcm lfverbs "$@" ;;
	rxm) menv=$LFV_RDB_RXM_ENV
		set -- $mcm "verbs;ofi_rxm" "$@" ;;
	ob1) set -- --mca pml ob1 --mca btl self,vader "$@" ;;
	*) echo "$bench_name: no Open MPI settings for $mimpl" >&2; return 2 ;;
	esac
	# shellcheck disable=SC2086 # word lists
	env $menv timeout -k 10 "${bench_mpi_timeout:-600}" mpirun \
		--allow-run-as-root --oversubscribe -np "$mnp" $mbind "$@" \
		</dev/null >"$mlog" 2>&1
}
