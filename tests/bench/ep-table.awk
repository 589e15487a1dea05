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
# table gives the median over the rounds and their range.

function kv(line, key,    n, i, a) {
	n = split(line, a, " ")
	for (i = 1; i <= n; i++)
		if (index(a[i], key "=") == 1)
			return substr(a[i], length(key) + 2)
	return ""
}

function add(impl, m, v) {
	cnt[impl, m]++
	list[impl, m, cnt[impl, m]] = v + 0
}

# Sorts list[impl, m, 1..n] ascending (insertion sort; n is small).
function sortlist(impl, m,    n, i, j, t) {
	n = cnt[impl, m]
	for (i = 2; i <= n; i++) {
		t = list[impl, m, i]
		for (j = i - 1; j >= 1 && list[impl, m, j] > t; j--)
			list[impl, m, j + 1] = list[impl, m, j]
		list[impl, m, j + 1] = t
	}
}

function best(impl, m,    n) {
	if ((impl SUBSEP m) in val)
		return val[impl, m]
	n = cnt[impl, m]
	if (!n)
		return ""
	return lower[m] ? list[impl, m, 1] : list[impl, m, n]
}

function median(impl, m,    n) {
	n = cnt[impl, m]
	if (!n)
		return ""
	return n % 2 ? list[impl, m, (n + 1) / 2] : \
		(list[impl, m, n / 2] + list[impl, m, n / 2 + 1]) / 2
}

function ratio(a, b) {
	return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b)
}

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

function spread(impl, m, fmt,    n) {
	n = cnt[impl, m]
	if (!n)
		return "-"
	return sprintf(fmt " (" fmt "-" fmt ")", median(impl, m),
		list[impl, m, 1], list[impl, m, n])
}

function row2(label, m, fmt) {
	printf "| %s | %s | %s | %s | %s | %s |\n", label,
		spread("lfverbs", m, fmt), spread("verbs", m, fmt),
		spread("raw", m, fmt), spread("perftest", m, fmt),
		ratio(median("lfverbs", m), median("raw", m))
}

BEGIN {
	lower["lat"] = 1
	lower["latmean"] = 1
	nimpl = split("lfverbs verbs raw perftest", impls, " ")
	nm = split("lat latmean rate bw", metrics, " ")
}

FILENAME != cgfile && /^result / {
	impl = kv($0, "impl")
	t = kv($0, "test")
	if (t == "lat") {
		add(impl, "lat", kv($0, "median_us"))
		add(impl, "latmean", kv($0, "mean_us"))
	} else if (t == "rate") {
		add(impl, "rate", kv($0, "msgs_per_s"))
	} else if (t == "bw") {
		add(impl, "bw", kv($0, "MB_per_s"))
	}
}

FILENAME == cgfile && $1 != "callgrind" {
	if ($3 == "total") {
		tot[$1, $2] = $4
	} else if ($3 == "ob") {
		o = $0
		sub(/^[^ ]+ [^ ]+ ob [^ ]+ /, "", o)
		obc[$1, $2, o] = $4
		objs[$1, o] = 1
	} else if ($3 == "fn") {
		f = $0
		sub(/^[^ ]+ [^ ]+ fn [^ ]+ /, "", f)
		fnc[$1, $2, f] = $4
		fns[$1, f] = 1
	}
}

FILENAME == cgfile && $1 == "callgrind" {
	impl = kv($0, "impl")
	cgn[impl] = kv($0, "n")
	cgk[impl] = kv($0, "k")
	# Empty polls in 2N less those in N, each at the idle cost.
	el[impl] = kv($0, "empty_lat2") - kv($0, "empty_lat1")
	e = (tot[impl, 2] - tot[impl, 1]) / cgk[impl]
	val[impl, "ins"] = ((tot[impl, 4] - tot[impl, 3]) - el[impl] * e) / cgn[impl]
	val[impl, "empty"] = e
	empties[impl] = sprintf("%s and %s", kv($0, "empty_lat1"), kv($0, "empty_lat2"))
}

# Per ping-pong cost of one object or function: (2N - N) / N, less the
# extra empty polls at that object's or function's idle cost.
function per_iter(c, impl, key) {
	return ((c[impl, 4, key] - c[impl, 3, key]) - \
		el[impl] * (c[impl, 2, key] - c[impl, 1, key]) / cgk[impl]) / \
		cgn[impl]
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

	print ""
	print "| median of rounds (range) | lfverbs | verbs | raw | perftest | lfverbs/raw |"
	print "| --- | --- | --- | --- | --- | --- |"
	row2("latency 64 B, median (us)", "lat", "%.2f")
	row2("latency 64 B, mean (us)", "latmean", "%.1f")
	row2("message rate 64 B (msgs/s)", "rate", "%.0f")
	row2("bandwidth 1 MiB (MB/s)", "bw", "%.1f")

	if (!("lfverbs" in cgn))
		exit
	printf "\ncallgrind: per ping-pong (one send, one receive, both completions, the receive reposted):\n"
	printf "(2N - N) / N with N = %d, less the empty polls at the cost of one (empty polls in N and 2N:\n", cgn["lfverbs"]
	printf "lfverbs %s, verbs %s, raw %s); empty poll: (2K - K) / K with K = %d.\n",
		empties["lfverbs"], empties["verbs"], empties["raw"], cgk["lfverbs"]

	# Where the instructions go, per ping-pong, by object.
	print ""
	print "| object: instructions per ping-pong | lfverbs | verbs | raw |"
	print "| --- | --- | --- | --- |"
	for (key in objs) {
		split(key, p, SUBSEP)
		short = p[2]
		sub(/.*\//, "", short)
		shorts[short] = 1
		byob[p[1], short] += per_iter(obc, p[1], p[2])
	}
	for (s in shorts)
		if (byob["lfverbs", s] + byob["verbs", s] + byob["raw", s] >= 0.5)
			printf "| %s | %.0f | %.0f | %.0f |\n", s,
				byob["lfverbs", s], byob["verbs", s], byob["raw", s]

	# The top functions of each provider library, per ping-pong.
	nsel = split("lfverbs verbs raw", sel, " ")
	for (i = 1; i <= nsel; i++) {
		impl = sel[i]
		if (!(impl in cgn))
			continue
		m = 0
		for (key in fns) {
			split(key, p, SUBSEP)
			if (p[1] != impl)
				continue
			f = p[2]
			if (impl == "lfverbs" && f !~ /liblfverbs-fi/)
				continue
			if (impl == "verbs" && f !~ /libfabric\.so/)
				continue
			if (impl == "raw" && f !~ /lib(ibverbs|rxe)/)
				continue
			v = per_iter(fnc, impl, f)
			if (v < 0.5)
				continue
			m++
			fv[m] = v
			fname[m] = f
		}
		printf "\ntop functions per ping-pong, %s (self instructions in %s):\n",
			impl, impl == "lfverbs" ? "liblfverbs-fi.so" : \
			impl == "verbs" ? "libfabric.so (no symbols)" : \
			"libibverbs, librxe (no symbols)"
		for (j = 1; j <= m && j <= 10; j++) {
			b = j
			for (k = j + 1; k <= m; k++)
				if (fv[k] > fv[b])
					b = k
			t = fv[j]; fv[j] = fv[b]; fv[b] = t
			t = fname[j]; fname[j] = fname[b]; fname[b] = t
			f = fname[j]
			sub(/^[^\t]*\t/, "", f)
			printf "  %6.0f  %s\n", fv[j], f
		}
	}
}
