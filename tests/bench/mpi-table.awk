# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The table of run-rdm.sh --mpi (POSIX awk; run as awk -f bench-lib.awk -f mpi-table.awk). Input: bench_mpi's lines
#   result impl=I test=lat size=S iters=N median_us=X mean_us=Y round=R
#   result impl=I test=bw size=S window=4 msgs=M MB_per_s=X round=R
# and "fail impl=I round=R". Each cell is the best round (lowest median
# latency, highest bandwidth), with the number of rounds that ran.
/^result / {
	c = kv($0, "impl")
	s = kv($0, "size") + 0
	if (!(s in seen)) { seen[s] = 1; ns++; sz[ns] = s }
	if (kv($0, "test") == "lat") {
		v = kv($0, "median_us") + 0
		if (!((c, s) in lat) || v < lat[c, s])
			lat[c, s] = v
		if (s == sz[1])
			nr[c]++
	} else {
		v = kv($0, "MB_per_s") + 0
		if (!((c, s) in bw) || v > bw[c, s])
			bw[c, s] = v
	}
}

/^stall / {
	stall_record($0)
}

/^fail / {
	fails = fails " " kv($0, "impl") "/" kv($0, "round")
}

function cell(a, c, s, fmt) {
	return ((c, s) in a) ? sprintf(fmt, a[c, s]) : "-"
}

function cell_ratio(a, x, y, s) {
	return ((x, s) in a) && ((y, s) in a) && a[y, s] > 0 ? \
		sprintf("%.2f", a[x, s] / a[y, s]) : "-"
}

END {
	for (i = 2; i <= ns; i++) {
		t = sz[i]
		for (j = i - 1; j >= 1 && sz[j] > t; j--)
			sz[j + 1] = sz[j]
		sz[j + 1] = t
	}
	print ""
	print "| size | latency lfverbs (us) | latency rxm (us) | latency ob1 (us) | lfverbs/rxm | bandwidth lfverbs (MB/s) | bandwidth rxm (MB/s) | bandwidth ob1 (MB/s) | lfverbs/rxm |"
	print "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	for (i = 1; i <= ns; i++) {
		s = sz[i]
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", human(s),
			cell(lat, "lfverbs", s, "%.2f"), cell(lat, "rxm", s, "%.2f"),
			cell(lat, "ob1", s, "%.2f"), cell_ratio(lat, "lfverbs", "rxm", s),
			cell(bw, "lfverbs", s, "%.1f"), cell(bw, "rxm", s, "%.1f"),
			cell(bw, "ob1", s, "%.1f"), cell_ratio(bw, "lfverbs", "rxm", s)
	}
	printf "\nlatency: median half round trip, best round; bandwidth: window 4, best round. Rounds: lfverbs %d, rxm %d, ob1 %d.\n",
		nr["lfverbs"], nr["rxm"], nr["ob1"]
	stall_note()
	if (fails != "")
		printf "failed runs:%s\n", fails
}
