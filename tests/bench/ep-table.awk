# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The tables of run-endpoints.sh (POSIX awk). Input: the results file
# (lines "result impl=... test=... round=..." from bench_msg, bench_raw and
# perftest) and the callgrind file (-v cgfile=...), whose lines are
#   IMPL SEG total COST
#   IMPL SEG ob COST OBJECT
#   IMPL SEG fn COST OBJECT<TAB>FUNCTION
# with SEG 1, 2: K and 2K empty polls; 3, 4: N and 2N ping-pongs; plus the
# client's "callgrind impl=... n=N k=K empty_...=" line.
#
# Main table: latency is the best (lowest) round median, rate and bandwidth
# the best round: load on the host only ever slows a round down. A second
# table gives the median over the rounds and their range. Run as
# awk -f bench-lib.awk -f ep-table.awk (bench-lib.awk: the shared
# functions).

function num(v, fmt) {
	return v == "" ? "-" : sprintf(fmt, v)
}

function yes(c) {
	return c ? "yes" : "no"
}

function row(label, m, fmt, target, met) {
	printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label,
		num(best("lfverbs", m), fmt), num(best("verbs", m), fmt),
		num(best("raw", m), fmt), num(best("perftest", m), fmt),
		ratio(best("lfverbs", m), best("verbs", m)),
		ratio(best("lfverbs", m), best("raw", m)), target, met
}

function row2(label, m, fmt) {
	printf "| %s | %s | %s | %s | %s | %s |\n", label,
		spread_of("lfverbs", m, fmt), spread_of("verbs", m, fmt),
		spread_of("raw", m, fmt), spread_of("perftest", m, fmt),
		ratio(median("lfverbs", m), median("raw", m))
}

BEGIN {
	lower["lat"] = 1
	lower["latmean"] = 1
	nimpl = split("lfverbs verbs raw perftest", impls, " ")
	nm = split("lat latmean rate bw", metrics, " ")
}

FILENAME != cgfile && /^result / {
	add_result(kv($0, "impl"), $0)
}

FILENAME != cgfile && /^stall / {
	stall_record($0)
}

FILENAME == cgfile && $1 != "callgrind" {
	cg_record($1)
}

FILENAME == cgfile && $1 == "callgrind" {
	cg_summary(kv($0, "impl"), $0)
}

END {
	for (i = 1; i <= nimpl; i++)
		for (j = 1; j <= nm; j++)
			sortlist(impls[i], metrics[j])

	lf = best("lfverbs", "lat")
	vb = best("verbs", "lat")
	rw = best("raw", "lat")
	print ""
	print "| metric | lfverbs | verbs | raw | perftest | lfverbs/verbs | lfverbs/raw | target | met? |"
	print "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	row("latency 64 B, median half round trip (us)", "lat", "%.2f",
	    "<= 1.05 x raw and <= verbs",
	    (lf == "" || vb == "" || rw == "") ? "-" : \
	    yes(lf <= 1.05 * rw && lf <= vb))
	row("latency 64 B, mean half round trip (us)", "latmean", "%.2f", "-", "-")
	a = best("lfverbs", "rate")
	b = best("raw", "rate")
	row("message rate 64 B, window 64 (msgs/s)", "rate", "%.0f",
	    ">= 0.95 x raw", (a == "" || b == "") ? "-" : yes(a >= 0.95 * b))
	row("bandwidth 1 MiB, window 4 (MB/s)", "bw", "%.1f", "-", "-")
	a = best("lfverbs", "ins")
	b = best("verbs", "ins")
	row("user-space instructions per send+completion", "ins", "%.0f",
	    "<= 0.5 x verbs", (a == "" || b == "") ? "-" : yes(a <= 0.5 * b))
	row("user-space instructions per empty poll", "empty", "%.0f", "-", "-")
	printf "\nrounds: lfverbs %d, verbs %d, raw %d, perftest %d. Latency: the best round median (mean); rate, bandwidth: the best round.\n",
		cnt["lfverbs", "lat"], cnt["verbs", "lat"], cnt["raw", "lat"],
		cnt["perftest", "lat"]
	stall_note()

	print ""
	print "| median of rounds (range) | lfverbs | verbs | raw | perftest | lfverbs/raw |"
	print "| --- | --- | --- | --- | --- | --- |"
	nsr = spread_rows("")
	for (isr = 1; isr <= nsr; isr++)
		row2(srow_label[isr], srow_m[isr], srow_fmt[isr])

	if (!("lfverbs" in cgn))
		exit
	printf "\ncallgrind: per ping-pong (one send, one receive, both completions, the receive reposted):\n"
	printf "(2N - N) / N with N = %d, less the empty polls at the cost of one (empty polls in N and 2N:\n", cgn["lfverbs"]
	printf "lfverbs %s, verbs %s, raw %s); empty poll: (2K - K) / K with K = %d.\n",
		empties["lfverbs"], empties["verbs"], empties["raw"], cgk["lfverbs"]

	# Where the instructions go, per ping-pong, by object.
	cg_object_table("lfverbs", "verbs", "raw", 0)

	# The top functions of each provider library, per ping-pong.
	top_functions("lfverbs", "liblfverbs-fi", "liblfverbs-fi.so")
	top_functions("verbs", "libfabric\\.so", "libfabric.so (no symbols)")
	top_functions("raw", "lib(ibverbs|rxe)",
		      "libibverbs, librxe (no symbols)")
}
