#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The MPI test programs (tests/func/mpi/) under Debian's Open MPI, with
# Open MPI's libfabric path: pml cm, mtl ofi, one provider. TAP output.
#
#   LFV_MPI_PROV     provider (default lfverbs), e.g. tcp or "verbs;ofi_rxm"
#   LFV_MPI_PML      cm (default) or ob1: Open MPI's own point-to-point over
#                    shared memory, no libfabric, to check the programs
#   LFV_MPI_TIMEOUT  seconds per mpirun (default 120)
#   LFV_MPI_BINDIR   where the programs are (default: the build tree)
#   LFV_MPI_PP_SIZES the ping-pong's sizes in bytes (default 0 B to 64 MiB)
#   LFV_MPI_HOSTS    ranks on these hosts (mpirun --host, e.g.
#                    lfv-a:2,lfv-b:2 on the two-node bed), placed by node
#                    in turn, so that neighbouring ranks are on different
#                    hosts; FI_PROVIDER_PATH, LD_LIBRARY_PATH and
#                    FI_UNIVERSE_SIZE go along (-x)
#
# Skips when Open MPI or the programs are missing, when a verbs provider
# finds no device, and case by case when the provider offers no FI_EP_RDM
# (what Open MPI's mtl ofi needs).
set -u
prov=${LFV_MPI_PROV:-lfverbs}
pml=${LFV_MPI_PML:-cm}
tmo=${LFV_MPI_TIMEOUT:-120}
bindir=${LFV_MPI_BINDIR:-${LFV_TOP_BUILDDIR:-$(dirname "$0")/../..}/tests/func/mpi}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# shellcheck source=tests/func/func_common.sh
. "$(dirname "$0")/func_common.sh"

# ---- Open MPI settings, all in one place --------------------------------
# --allow-run-as-root   the test bed (and CI) run as root, which mpirun
#                       refuses without it.
# --oversubscribe       4 ranks on 2 vCPUs: more ranks than mpirun counts
#                       slots (cores) on the one node.
# --bind-to none        with more ranks than cores, binding would stack
#                       ranks on a core or fail; let the kernel schedule.
# mpi_yield_when_idle   oversubscribed ranks poll; yielding lets the rank
#                       that has work run on the emulated CPUs.
# btl self,vader        ob1 only: loopback and shared memory. The default
#                       would also open openib, which warns about rxe0.
# pml cm, mtl ofi       the libfabric path under test; with
#                       mtl_ofi_provider_include Open MPI takes only
#                       providers whose name starts with $prov, and fails
#                       (no fallback to ob1) when there is none.
# Not needed on one node: ssh (no remote launch), oob/btl_tcp_if_include
# (mpirun and its ranks talk over local sockets, whatever the interfaces).
# With LFV_MPI_HOSTS: --host, --map-by node, the bed's link for Open MPI's
# own TCP (oob_tcp_if_include $LFV_BED_NETDEV), the variables (-x).
# OMPI_MCA_* variables in the environment still apply.
mpi_opts="--allow-run-as-root --oversubscribe --bind-to none
	--mca mpi_yield_when_idle 1"
case $pml in
cm) mpi_opts="$mpi_opts --mca pml cm --mca mtl ofi
	--mca mtl_ofi_provider_include $prov"
    what="pml cm, mtl ofi, provider $prov" via=$prov ;;
ob1) mpi_opts="$mpi_opts --mca pml ob1 --mca btl self,vader"
     what="pml ob1 (no libfabric)" via=ob1 ;;
*) echo "Bail out! LFV_MPI_PML must be cm or ob1, not $pml"; exit 1 ;;
esac

if [ -n "${LFV_MPI_HOSTS:-}" ]; then
	mpi_opts="$mpi_opts --host $LFV_MPI_HOSTS --map-by node"
	[ -z "${LFV_BED_NETDEV:-}" ] ||
		mpi_opts="$mpi_opts --mca oob_tcp_if_include $LFV_BED_NETDEV"
	[ -z "${FI_PROVIDER_PATH:-}" ] || mpi_opts="$mpi_opts -x FI_PROVIDER_PATH"
	[ -z "${LD_LIBRARY_PATH:-}" ] || mpi_opts="$mpi_opts -x LD_LIBRARY_PATH"
	[ -z "${FI_UNIVERSE_SIZE:-}" ] || mpi_opts="$mpi_opts -x FI_UNIVERSE_SIZE"
	what="$what, hosts $LFV_MPI_HOSTS by node"
fi

NCASES=6	# the five programs and the flipped-byte check
# Ping-pong sizes in bytes (0 B to 64 MiB).
PP_SIZES=${LFV_MPI_PP_SIZES:-"0 1 8 64 4096 65536 1048576 16777216 67108864"}

# ---- provider settings ----------------------------------------------------
# verbs;ofi_rxm (libfabric 1.17) sizes each MSG CQ for (tx + rx queue size) x FI_UNIVERSE_SIZE
# entries, (128 + 128) x 256 by default: above soft-RoCE's max_cqe (32767),
# and mtl ofi's start fails ("Unable to create verbs CQ"). A few peers run
# here, so 16 is plenty.
# lfverbs needs no setting: it asks libfabric's core not to stack utility
# providers over it (fi_lfverbs(7)), so mtl ofi finds lfverbs' own RDM.
case $prov in
verbs*) : "${FI_UNIVERSE_SIZE:=16}"; export FI_UNIVERSE_SIZE ;;
esac

# skip_all REASON: the plan, then every case skipped with REASON.
skip_all() {
	echo "1..$NCASES"
	i=0
	while [ $i -lt $NCASES ]; do
		i=$((i + 1))
		echo "ok $i # SKIP $1"
	done
	exit 0
}

# sizes_above MAX OP: the ping-pong sizes S for which "S OP MAX" holds.
sizes_above() {
	echo "$PP_SIZES" | awk -v m="$1" -v op="$2" '{
		for (i = 1; i <= NF; i++)
			if ((op == ">") == ($i + 0 > m + 0)) printf " %s", $i
	}'
}

# What Open MPI needs: mpirun, the built programs, and for the verbs
# providers a device (the other functional tests skip the same way).
case $pml/$prov in
cm/*verbs*) require_lfverbs mpirun openmpi-bin ;;
*) command -v mpirun >/dev/null 2>&1 ||
	{ echo "1..0 # SKIP mpirun not installed (Debian package openmpi-bin)"; exit 0; } ;;
esac
[ -x "$bindir/mpi_pingpong" ] ||
	skip_all "MPI programs not built in $bindir (configure found no mpicc: Debian package libopenmpi-dev)"
if [ "$pml" = cm ]; then
	if ! fi_info -p "$prov" -t FI_EP_RDM >"$log/rdm" 2>&1; then
		skip_all "$prov offers no FI_EP_RDM (fi_info -p '$prov' -t FI_EP_RDM finds nothing)"
	fi
	# Which layering answered (tcp is tcp;ofi_rxm on libfabric 1.17).
	what="$what (FI_EP_RDM: $(sed -n 's/^provider: //p' "$log/rdm" |
		sort -u | tr '\n' ' ' | sed 's/ $//'))"
	# Open MPI 4.1's mtl ofi sends each message whole and refuses one
	# above the provider's max_msg_size (verbs;ofi_rxm on soft-RoCE:
	# 8 MiB, the port's max_msg_sz), so larger ping-pong sizes are left
	# out, and said so. awk: the size may not fit the shell's integers.
	maxmsg=$(fi_info -p "$prov" -t FI_EP_RDM -v 2>/dev/null |
		sed -n 's/^ *max_msg_size: *//p' | head -1)
	if [ -n "$maxmsg" ]; then
		dropped=$(sizes_above "$maxmsg" '>')
		PP_SIZES=$(sizes_above "$maxmsg" '<=')
		[ -z "$dropped" ] ||
			what="$what; ping-pong sizes above max_msg_size $maxmsg left out:$dropped"
	fi
fi

# mpi RANKS PROGRAM [ARGS...]: runs the program under mpirun into
# $log/out; returns mpirun's status (124 on timeout). Standard input is
# /dev/null: mpirun forwards its stdin to rank 0.
mpi() {
	np=$1 prog=$2
	shift 2
	# (ranks on other hosts get only the variables named with -x)
	xfault=
	[ -z "${LFV_MPI_FAULT:-}" ] || [ -z "${LFV_MPI_HOSTS:-}" ] ||
		xfault="-x LFV_MPI_FAULT"
	# shellcheck disable=SC2086 # mpi_opts is a list of words
	timeout -k 10 "$tmo" mpirun $mpi_opts $xfault -np "$np" "$bindir/$prog" "$@" \
		</dev/null >"$log/out" 2>&1
}

# show_log: the run's output as TAP diagnostics (bounded).
show_log() {
	sed -n '1,80s/^/#   /p' "$log/out"
}

# run_case RANKS PROGRAM [ARGS...]: passes when mpirun exits 0 and the
# program printed its "PROGRAM: ...: ok" line.
run_case() {
	np=$1 prog=$2
	start=$(date +%s)
	mpi "$@"
	rc=$?
	secs=$(($(date +%s) - start))
	if [ $rc -eq 0 ] && grep -q "^$prog: .*: ok\$" "$log/out"; then
		grep "^$prog: " "$log/out" | sed "s/^/# /; s/\$/ ($secs s)/"
		return 0
	fi
	echo "# $prog, $np ranks: mpirun exit $rc$([ $rc -eq 124 ] && echo ' (timeout)') after $secs s"
	show_log
	return 1
}

# The programs' own checks must be able to fail: with one byte flipped
# (LFV_MPI_FAULT=flip) mpi_pingpong must exit non-zero and say FAIL.
fault_case() {
	LFV_MPI_FAULT=flip
	export LFV_MPI_FAULT	# ranks started here inherit mpirun's env
	mpi 2 mpi_pingpong -s 1,4k,1m -n 1 -N 1
	rc=$?
	unset LFV_MPI_FAULT
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
	   grep -q '^mpi_pingpong: rank [01]: FAIL: .*byte' "$log/out"; then
		grep 'FAIL' "$log/out" | sed 's/^/# /'
		return 0
	fi
	echo "# expected mpi_pingpong to fail with a flipped byte; exit $rc"
	show_log
	return 1
}

# LFV_MPI_TODO=REASON reports every case as TAP TODO (automake: XFAIL,
# and XPASS fails the suite), for a provider known not to run MPI yet.
todo=""
if [ -n "${LFV_MPI_TODO:-}" ]; then
	todo=" # TODO $LFV_MPI_TODO"
fi
result() {
	if [ -z "$todo" ]; then
		ok "$1" "$2"
		return
	fi
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2$todo"
	else echo "not ok $n - $2$todo"; fi
}

echo "1..$NCASES"
echo "# $what"
run_case 2 mpi_pingpong -s "$(echo "$PP_SIZES" | awk '{ $1 = $1; gsub(/ /, ","); print }')"
result $? "mpi_pingpong, 2 ranks, $via"
run_case 4 mpi_anysource
result $? "mpi_anysource, 4 ranks, $via"
run_case 4 mpi_probe
result $? "mpi_probe, 4 ranks, $via"
run_case 4 mpi_storm
result $? "mpi_storm, 4 ranks, $via"
run_case 4 mpi_coll
result $? "mpi_coll, 4 ranks, $via"
fault_case
result $? "a flipped byte fails mpi_pingpong (the checks can fail), $via"
[ "$fails" -eq 0 ]
