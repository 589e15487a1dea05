#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The MPI-pattern benchmark (not a test): bench_mpi_patterns (ping-pong,
# simultaneous exchange, ring, MPI_Allreduce, MPI_Alltoall, MPI_Bcast,
# MPI_Barrier; 0 B to 4 MiB) under Open MPI over lfverbs, over
# verbs;ofi_rxm and over ob1, with 2 and 4 ranks, in rounds of rotating
# order in one test-bed session. Prints a table: per row the median over
# rounds of each implementation, lfverbs/rxm, and the spread between
# rounds. See tests/bench/README.md.
#
#   tests/bench/run-mpi-patterns.sh [--quick] [--rounds R] [--ranks "2 4"]
#       [--impls "lfverbs rxm ob1"] [--patterns P,...] [--sizes "S ..."]
#       [--reps N]
#   tests/bench/run-mpi-patterns.sh --table-only   the last run's table
#
# --quick: 1 round, 2 ranks, sizes 0, 64 B, 4 KiB, 64 KiB, 1 MiB.
# --impls: bench_mpi's names (bench-lib.sh), lfverbs-eN and lfverbs-sN
# among them (lfverbs with an eager size, or a segmented eager limit, of N
# bytes).
# Everything it writes goes to build/bench/mpp-*.
set -eu
bench_pfx=mpp
# shellcheck source=tests/bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

# Counts; the options and the environment set them (they reach the bed
# through the LFV_ prefix).
: "${LFV_MPP_ROUNDS:=3}"		# rounds of every implementation
: "${LFV_MPP_RANKS:=2 4}"		# rank counts
: "${LFV_MPP_IMPLS:=lfverbs rxm ob1}"	# bench_mpi (bench-lib.sh) names
: "${LFV_MPP_PATTERNS:=}"		# bench_mpi_patterns -p; empty: all
: "${LFV_MPP_SIZES:=}"			# sizes in bytes; empty: 0 B, 1 B-4 MiB
: "${LFV_MPP_REPS:=50}"			# repetitions, fewer for big sizes:
: "${LFV_MPP_BYTES:=4194304}"		#   BYTES / size of them,
: "${LFV_MPP_MINREPS:=5}"		#   never fewer than these
: "${LFV_MPP_TIMEOUT:=1800}"		# seconds per mpirun
: "${LFV_MPP_STALL:=1}"			# seconds of host-stall probe per round
export LFV_MPP_ROUNDS LFV_MPP_RANKS LFV_MPP_IMPLS LFV_MPP_PATTERNS \
	LFV_MPP_SIZES LFV_MPP_REPS LFV_MPP_BYTES LFV_MPP_MINREPS \
	LFV_MPP_TIMEOUT LFV_MPP_STALL
bench_stall_secs=$LFV_MPP_STALL
bench_mpi_timeout=$LFV_MPP_TIMEOUT

# ---- inside the bed: build/bench/mpp-results.txt ----------------------------
# Per round, per rank count, every implementation once in rotated order:
# one mpirun runs all patterns and sizes. A failed run is noted with its
# status and the pattern and size it was in ("begin" line); the session
# goes on.
in_bed() {
	bench_in_bed "$out/mpp-results.txt"	# mpirun binds the ranks itself
	pats=""
	[ -z "$LFV_MPP_PATTERNS" ] || pats="-p $LFV_MPP_PATTERNS"
	args="-r $LFV_MPP_REPS -B $LFV_MPP_BYTES -m $LFV_MPP_MINREPS $pats $LFV_MPP_SIZES"
	# shellcheck disable=SC2086 # a word list
	nimpl=$(echo $LFV_MPP_IMPLS | wc -w)
	round=1
	while [ "$round" -le "$LFV_MPP_ROUNDS" ]; do
		bench_stall_probe
		for np in $LFV_MPP_RANKS; do
			# shellcheck disable=SC2086 # a word list
			for impl in $(bench_rotate $(((round - 1) % nimpl)) $LFV_MPP_IMPLS); do
				echo "--- $impl, $np ranks, round $round ($(date +%T))"
				log=$out/mpp.$impl.$np.$round.log
				start=$(date +%s)
				st=0
				# shellcheck disable=SC2086 # a word list
				bench_mpi "$impl" "$np" "$log" "$out/bench_mpi_patterns" \
					-n "$impl" $args || st=$?
				grep '^result ' "$log" | sed "s/\$/ round=$round/" | tee -a "$res"
				echo "time impl=$impl ranks=$np secs=$(($(date +%s) - start)) round=$round" >>"$res"
				[ "$st" = 0 ] && continue
				at=$(grep '^begin ' "$log" | tail -1 | sed 's/^begin //')
				echo "fail impl=$impl ranks=$np status=$st ${at:-test=none size=none} round=$round" | tee -a "$res"
				grep -v -e '^result ' -e '^begin ' "$log" | head -20 >&2
			done
		done
		round=$((round + 1))
	done
}

case ${1:-} in
--in-bed) in_bed; exit 0 ;;
esac

table_only=0
usage='[--quick] [--rounds R] [--ranks "2 4"] [--impls "lfverbs rxm ob1"] [--patterns P,...] [--sizes "S ..."] [--reps N] [--table-only]'
while [ $# -gt 0 ]; do
	case $1 in
	--quick)
		LFV_MPP_ROUNDS=1 LFV_MPP_RANKS=2
		LFV_MPP_SIZES="0 64 4096 65536 1048576"
		shift ;;
	--rounds | --ranks | --impls | --patterns | --sizes | --reps)
		# --NAME VALUE sets LFV_MPP_NAME.
		[ $# -ge 2 ] || bench_help_or_usage "$1" 2,17 "$usage"
		eval "LFV_MPP_$(echo "${1#--}" | tr '[:lower:]' '[:upper:]')=\$2"
		shift 2 ;;
	--table-only) table_only=1; shift ;;
	*) bench_help_or_usage "$1" 2,17 "$usage" ;;
	esac
done

# ---- on the host: dependencies, build, one bed session, the table ----------
if [ "$table_only" = 0 ]; then
	command -v mpicc >/dev/null 2>&1 ||
		{ echo "$bench_name: mpicc missing (Debian package libopenmpi-dev)" >&2; exit 1; }
	bench_host_deps
	# shellcheck disable=SC2086 # a word list
	mpicc $CFLAGS tests/bench/bench_mpi_patterns.c -o "$out/bench_mpi_patterns"
	rm -f "$out"/mpp-* "$out"/mpp.*
	# The bed's own limit (25 minutes by default) is below a full sweep.
	: "${LFV_BED_TIMEOUT:=14400}"
	export LFV_BED_TIMEOUT
	bench_bed "" tests/bench/run-mpi-patterns.sh --in-bed
fi

awk -v impls="$LFV_MPP_IMPLS" -f tests/bench/bench-lib.awk \
	-f tests/bench/mpi-patterns-table.awk "$out/mpp-results.txt" | tee "$out/mpp-table.txt"
