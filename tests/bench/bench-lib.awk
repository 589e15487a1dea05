# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Functions shared by the benchmarks' table scripts (POSIX awk; each runs
# as awk -f bench-lib.awk -f X-table.awk). Results are kept per column C
# and metric M: add() appends a round's value, sortlist() sorts them,
# best() and median() read them; val[C, M] (callgrind figures) overrides
# best(). lower[M] says that lower is better.
#
# The callgrind file has lines "IMPL SEG total COST", "IMPL SEG ob COST
# OBJECT" and "IMPL SEG fn COST OBJECT<TAB>FUNCTION" (SEG 1, 2: K and 2K
# empty polls; 3, 4: N and 2N ping-pongs), read with cg_record(), and the
# client's "callgrind impl=... n=N k=K empty_...=" line, read with
# cg_summary().

# The value of key=value in a line of such words ("" when absent).
function kv(line, key,    n, i, a) {
	n = split(line, a, " ")
	for (i = 1; i <= n; i++)
		if (index(a[i], key "=") == 1)
			return substr(a[i], length(key) + 2)
	return ""
}

# A size in bytes as "64 B", "4 KiB" or "1 MiB".
function human(n) {
	return n >= 1048576 ? (n / 1048576) " MiB" : n >= 1024 ? (n / 1024) " KiB" : n " B"
}

function add(c, m, v) {
	cnt[c, m]++
	list[c, m, cnt[c, m]] = v + 0
}

# Sorts list[c, m, 1..n] ascending (insertion sort; n is small).
function sortlist(c, m,    n, i, j, t) {
	n = cnt[c, m]
	for (i = 2; i <= n; i++) {
		t = list[c, m, i]
		for (j = i - 1; j >= 1 && list[c, m, j] > t; j--)
			list[c, m, j + 1] = list[c, m, j]
		list[c, m, j + 1] = t
	}
}

function best(c, m,    n) {
	if ((c SUBSEP m) in val)
		return val[c, m]
	n = cnt[c, m]
	if (!n)
		return ""
	return lower[m] ? list[c, m, 1] : list[c, m, n]
}

function median(c, m,    n) {
	n = cnt[c, m]
	if (!n)
		return ""
	return n % 2 ? list[c, m, (n + 1) / 2] : \
		(list[c, m, n / 2] + list[c, m, n / 2 + 1]) / 2
}

function ratio(a, b) {
	return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b)
}

# A client's "result" line, for column c: latency median and mean,
# message rate, and bandwidth by message size (1 MiB: bw, 64 MiB: big).
function add_result(c, line,    t, size) {
	t = kv(line, "test")
	size = kv(line, "size")
	if (t == "lat") {
		add(c, "lat", kv(line, "median_us"))
		add(c, "latmean", kv(line, "mean_us"))
	} else if (t == "rate") {
		add(c, "rate", kv(line, "msgs_per_s"))
	} else if (t == "bw" && size == 1048576) {
		add(c, "bw", kv(line, "MB_per_s"))
	} else if (t == "bw" && size == 67108864) {
		add(c, "big", kv(line, "MB_per_s"))
	}
}

# The rows of the median-of-rounds table that both endpoint tables have:
# their labels, metrics and formats in srow_label[], srow_m[] and
# srow_fmt[] (1 to the count returned), for each table's own row2() (not
# called from here: the other tables, which have no row2(), run with
# this file too, and mawk rejects a call to a function never defined).
# what: "" or "tagged ".
function spread_rows(what) {
	srow(1, what "latency 64 B, median (us)", "lat", "%.2f")
	srow(2, what "latency 64 B, mean (us)", "latmean", "%.1f")
	srow(3, what "message rate 64 B (msgs/s)", "rate", "%.0f")
	srow(4, "bandwidth 1 MiB (MB/s)", "bw", "%.1f")
	return 4
}

function srow(i, label, m, fmt) {
	srow_label[i] = label
	srow_m[i] = m
	srow_fmt[i] = fmt
}

# "median (min-max)" of a column's rounds, "-" when none.
function spread_of(c, m, fmt,    n) {
	n = cnt[c, m]
	if (!n)
		return "-"
	return sprintf(fmt " (" fmt "-" fmt ")", median(c, m),
		list[c, m, 1], list[c, m, n])
}

# One cost line of the callgrind file, for column c.
function cg_record(c,    o, f) {
	if ($3 == "total") {
		tot[c, $2] = $4
	} else if ($3 == "ob") {
		o = $0
		sub(/^[^ ]+ [^ ]+ ob [^ ]+ /, "", o)
		obc[c, $2, o] = $4
		objs[c, o] = 1
	} else if ($3 == "fn") {
		f = $0
		sub(/^[^ ]+ [^ ]+ fn [^ ]+ /, "", f)
		fnc[c, $2, f] = $4
		fns[c, f] = 1
	}
}

# The client's callgrind line, for column c: instructions per ping-pong
# (val[c, "ins"]) and per empty poll (val[c, "empty"]).
function cg_summary(c, line,    e) {
	cgn[c] = kv(line, "n")
	cgk[c] = kv(line, "k")
	# Empty polls in 2N less those in N, each at the idle cost.
	el[c] = kv(line, "empty_lat2") - kv(line, "empty_lat1")
	e = (tot[c, 2] - tot[c, 1]) / cgk[c]
	val[c, "ins"] = ((tot[c, 4] - tot[c, 3]) - el[c] * e) / cgn[c]
	val[c, "empty"] = e
	empties[c] = sprintf("%s and %s", kv(line, "empty_lat1"),
		kv(line, "empty_lat2"))
}

# Per ping-pong cost of one object or function: (2N - N) / N, less the
# extra empty polls at that object's or function's idle cost.
function per_iter(a, c, key) {
	return ((a[c, 4, key] - a[c, 3, key]) - \
		el[c] * (a[c, 2, key] - a[c, 1, key]) / cgk[c]) / cgn[c]
}

# byob[c, short object name]: instructions per ping-pong; shorts[]: the
# names.
function cg_objects(    key, p, short) {
	for (key in objs) {
		split(key, p, SUBSEP)
		short = p[2]
		sub(/.*\//, "", short)
		shorts[short] = 1
		byob[p[1], short] += per_iter(obc, p[1], p[2])
	}
}

# The table of instructions per ping-pong by object, for columns c1, c2
# and c3; c1's figures are "n/a" when na1 is true.
function cg_object_table(c1, c2, c3, na1,    s) {
	print ""
	print "| object: instructions per ping-pong | " c1 " | " c2 " | " c3 " |"
	print "| --- | --- | --- | --- |"
	cg_objects()
	for (s in shorts)
		if (byob[c1, s] + byob[c2, s] + byob[c3, s] >= 0.5)
			printf "| %s | %s | %.0f | %.0f |\n", s,
				na1 ? "n/a" : sprintf("%.0f", byob[c1, s]),
				byob[c2, s], byob[c3, s]
}

# The ten costliest functions of column c whose "OBJECT<TAB>FUNCTION"
# matches pat, per ping-pong, under a title.
function top_functions(c, pat, title,    key, p, f, v, m, j, k, b, t) {
	if (!(c in cgn))
		return
	m = 0
	for (key in fns) {
		split(key, p, SUBSEP)
		if (p[1] != c || p[2] !~ pat)
			continue
		v = per_iter(fnc, c, p[2])
		if (v < 0.5)
			continue
		m++
		fv[m] = v
		fname[m] = p[2]
	}
	printf "\ntop functions per ping-pong, %s (self instructions in %s):\n",
		c, title
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

# A "stall cpu=C ... stolen_pct=P ... round=R" line of bench_stall_probe.
function stall_record(line,    r) {
	r = kv(line, "round")
	if (!(r in stall_seen)) {
		stall_seen[r] = 1
		stall_round[++nstall] = r
	}
	stall[r, kv(line, "cpu")] = kv(line, "stolen_pct")
}

# One line on the host's stalls before each round, when measured.
function stall_note(    i, r) {
	if (!nstall)
		return
	printf "host stalls, %% of 1 s in which the host did not run vCPU 0 / 1 just before the round (bench_stall; much above 0 and the busy-polling latency locks onto the host's 4 ms tick):"
	for (i = 1; i <= nstall; i++) {
		r = stall_round[i]
		printf " round %s: %s / %s;", r, stall[r, 0], stall[r, 1]
	}
	printf "\n"
}
