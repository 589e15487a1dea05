# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The table of run-rdm.sh --scale (POSIX awk; run as awk -f bench-lib.awk
# -f scale-table.awk). Input: bench_scale's lines
#   result impl=I test=scale peers=N first_median_us= first_max_us=
#     all_first_ms= second_median_us= client_rss_kib_per_peer=
#     server_rss_kib_per_peer= round=R
# and "fail impl=I peers=N round=R". Each cell is the median of the rounds
# with their range in parentheses when there are several.
/^result / && kv($0, "test") == "scale" {
	c = kv($0, "impl") == "verbs;ofi_rxm" ? "rxm" : kv($0, "impl")
	n = kv($0, "peers") + 0
	if (!(n in seen)) { seen[n] = 1; add("", "peers", n) }
	add(c SUBSEP n, "first", kv($0, "first_median_us") / 1e3)
	add(c SUBSEP n, "all", kv($0, "all_first_ms"))
	add(c SUBSEP n, "second", kv($0, "second_median_us") / 1e3)
	add(c SUBSEP n, "srv", kv($0, "server_rss_kib_per_peer"))
	add(c SUBSEP n, "cli", kv($0, "client_rss_kib_per_peer"))
}

/^fail / {
	fails = fails " " kv($0, "impl") "/" kv($0, "peers") "/" kv($0, "round")
}

# The median of the rounds and, with more than one, their range.
function mcell(c, n, m, fmt,    k, lo, hi) {
	k = c SUBSEP n
	if (!cnt[k, m])
		return "-"
	sortlist(k, m)
	lo = list[k, m, 1]
	hi = list[k, m, cnt[k, m]]
	if (cnt[k, m] == 1)
		return sprintf(fmt, median(k, m))
	return sprintf(fmt " (" fmt "-" fmt ")", median(k, m), lo, hi)
}

END {
	sortlist("", "peers")
	nn = cnt["", "peers"]
	print ""
	print "| peers | impl | first exchange, median (ms) | all first exchanges (ms) | second exchange, median (ms) | server KiB per peer | client KiB per peer |"
	print "| --- | --- | --- | --- | --- | --- | --- |"
	for (i = 1; i <= nn; i++) {
		for (ci = 1; ci <= 2; ci++) {
			c = ci == 1 ? "lfverbs" : "rxm"
			n = list["", "peers", i]
			printf "| %d | %s | %s | %s | %s | %s | %s |\n", n, c,
				mcell(c, n, "first", "%.2f"), mcell(c, n, "all", "%.1f"),
				mcell(c, n, "second", "%.2f"), mcell(c, n, "srv", "%.1f"),
				mcell(c, n, "cli", "%.1f")
		}
	}
	print ""
	print "first exchange: a peer's 64 B message and its answer, its connection's set-up included (all peers at once); second: the same on the connection up. KiB per peer: resident memory's growth over the exchanges, divided by the peers. Median of the rounds (range)."
	if (fails != "")
		print "failed runs (impl/peers/round):" fails
}
