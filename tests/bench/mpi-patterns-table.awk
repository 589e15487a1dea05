# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The table of run-mpi-patterns.sh (POSIX awk; run as awk -f bench-lib.awk
# -f mpi-patterns-table.awk). Input: bench_mpi_patterns' lines
#   result impl=I test=P size=S ranks=N reps=K median_us=X max_us=Y round=R
# with "time impl=I ranks=N secs=T round=R", "fail impl=I ranks=N
# status=E test=P size=S round=R" and bench_stall_probe's "stall" lines.
# One row per (ranks, pattern, size): per implementation the median over
# rounds of the per-round medians, lfverbs/rxm of those, per
# implementation the spread between rounds (largest / smallest per-round
# median), and which implementations had a repetition above twice its
# round's median (the largest such max / median). -v impls="A B ...": the
# implementations' columns, in that order (default "lfverbs rxm ob1"); a
# ratio to rxm for each of the others (lfverbs-eN variants too).
BEGIN {
	nimpl = split(impls != "" ? impls : "lfverbs rxm ob1", impl, " ")
	npat = split("pingpong exchange ring allreduce alltoall bcast barrier", pname, " ")
	for (i = 1; i <= npat; i++)
		porder[pname[i]] = i
}

/^result / {
	c = kv($0, "impl")
	np = kv($0, "ranks") + 0
	p = kv($0, "test")
	s = kv($0, "size") + 0
	m = np SUBSEP p SUBSEP s
	if (!(m in seen)) {
		# Row order: ranks, pattern (bench_mpi_patterns' order),
		# size, as one number (sizes below 2^31) for sortlist(); as
		# a subscript printed whole (awk's CONVFMT would round it).
		seen[m] = 1
		k = (np * 16 + porder[p]) * 2147483648 + s
		row_of[sprintf("%.0f", k)] = m
		add("", "rows", k)
	}
	add(c, m, kv($0, "median_us"))
	v = kv($0, "median_us") > 0 ? kv($0, "max_us") / kv($0, "median_us") : 0
	if (v > 2 && v > worst[c, m])
		worst[c, m] = v
}

/^time / {
	r = kv($0, "impl") SUBSEP (kv($0, "ranks") + 0)
	runs[r]++
	secs[r] += kv($0, "secs")
	total += kv($0, "secs")
}

/^stall / {
	stall_record($0)
}

/^fail / {
	fails = fails sprintf("\n  %s, %s ranks, round %s: status %s%s, %s",
		kv($0, "impl"), kv($0, "ranks"), kv($0, "round"),
		kv($0, "status"), kv($0, "status") == 124 ? " (timeout)" : "",
		kv($0, "test") == "none" ? "before the first pattern" : \
		"in " kv($0, "test") " at size " kv($0, "size"))
}

function us(c, m) {
	return cnt[c, m] ? sprintf("%.2f", median(c, m)) : "-"
}

function spread(c, m,    n) {
	n = cnt[c, m]
	return n < 2 || list[c, m, 1] <= 0 ? "-" : \
		sprintf("%.2f", list[c, m, n] / list[c, m, 1])
}

function flags(m,    i, f) {
	f = ""
	for (i = 1; i <= nimpl; i++)
		if ((impl[i], m) in worst)
			f = f (f == "" ? "" : ", ") sprintf("%s %.1fx", impl[i], worst[impl[i], m])
	return f == "" ? "-" : f
}

END {
	sortlist("", "rows")
	head = "| ranks | pattern | size |"
	for (j = 1; j <= nimpl; j++)
		head = head " " impl[j] " (us) |"
	for (j = 1; j <= nimpl; j++)
		if (impl[j] != "rxm" && impl[j] != "ob1")
			head = head " " impl[j] "/rxm |"
	for (j = 1; j <= nimpl; j++)
		head = head " spread " impl[j] " |"
	head = head " rep > 2x median |"
	print ""
	print head
	rule = head
	gsub(/[^|]+/, " --- ", rule)
	print rule
	for (i = 1; i <= cnt["", "rows"]; i++) {
		m = row_of[sprintf("%.0f", list["", "rows", i])]
		split(m, key, SUBSEP)
		line = sprintf("| %d | %s | %s |", key[1], key[2], human(key[3]))
		for (j = 1; j <= nimpl; j++) {
			sortlist(impl[j], m)
			line = line " " us(impl[j], m) " |"
		}
		for (j = 1; j <= nimpl; j++)
			if (impl[j] != "rxm" && impl[j] != "ob1")
				line = line " " ratio(median(impl[j], m), median("rxm", m)) " |"
		for (j = 1; j <= nimpl; j++)
			line = line " " spread(impl[j], m) " |"
		print line " " flags(m) " |"
	}
	printf "\nus: the time of one repetition (ping-pong: a whole round trip), slowest rank, median over the repetitions of a round, then median over rounds; spread: largest / smallest of the rounds' medians; last column: a round in which some repetition took more than twice that round's median (the largest max / median).\n"
	printf "runs (rounds, mean seconds per mpirun):"
	for (j = 1; j <= nimpl; j++)
		for (np = 1; np <= 64; np++)
			if ((impl[j], np) in runs)
				printf " %s %d ranks: %d, %.0f s;", impl[j], np,
					runs[impl[j], np], secs[impl[j], np] / runs[impl[j], np]
	printf " all mpirun: %d s\n", total
	stall_note()
	if (fails != "")
		printf "failed runs (the rest of that run's patterns and sizes missing):%s\n", fails
}
