# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The tables of run-rdm.sh (POSIX awk). Input: the results file (lines
# "result impl=... test=... round=..." from bench_rdm, bench_raw and
# perftest, plus avail, env, note, retry, check and fail lines) and the
# callgrind file (-v cgfile=...), whose lines are
#   IMPL SEG total COST
#   IMPL SEG ob COST OBJECT
#   IMPL SEG fn COST OBJECT<TAB>FUNCTION
# (IMPL with "+" for ";"), SEG 1, 2: K and 2K empty polls; 3, 4: N and 2N
# ping-pongs; plus the client's "callgrind impl=... n=N k=K ..." line.
#
# Columns: lfverbs (its own FI_EP_RDM), rxm ("verbs;ofi_rxm"), raw
# (bench_raw: RC send/receive, the floor), and in the second table tcp
# ("tcp;ofi_rxm") and perftest. Main table: the best round (lowest
# latency, highest rate and bandwidth), as in ep-table.awk; the second
# gives the median of the rounds and their range. Run as
# awk -f bench-lib.awk -f rdm-table.awk (bench-lib.awk: the shared
# functions).

# Column of a provider or program name.
function col(impl) {
	if (impl == "verbs;ofi_rxm" || impl == "verbs+ofi_rxm")
		return "rxm"
	if (impl == "tcp;ofi_rxm" || impl == "tcp+ofi_rxm")
		return "tcp"
	return impl
}

# A cell: n/a for lfverbs without RDM, "-" for nothing measured.
function cell(c, m, fmt,    v) {
	if (c == "lfverbs" && !lfv_rdm)
		return "n/a"
	v = best(c, m)
	return v == "" ? "-" : sprintf(fmt, v)
}

# met? of a target: n/a while lfverbs has no RDM, "-" when a number is
# missing.
function met(ok, a, b, c) {
	if (!lfv_rdm)
		return "n/a"
	if (a == "" || b == "" || c == "")
		return "-"
	return ok ? "yes" : "no"
}

function row(label, m, fmt, target, ok_text,    lf) {
	lf = lfv_rdm ? best("lfverbs", m) : ""
	printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", label,
		cell("lfverbs", m, fmt), cell("rxm", m, fmt),
		cell("raw", m, fmt), ratio(lf, best("rxm", m)),
		ratio(lf, best("raw", m)), target, ok_text
}

function spread(c, m, fmt) {
	if (c == "lfverbs" && !lfv_rdm)
		return "n/a"
	return spread_of(c, m, fmt)
}

function row2(label, m, fmt) {
	printf "| %s | %s | %s | %s | %s | %s |\n", label,
		spread("lfverbs", m, fmt), spread("rxm", m, fmt),
		spread("raw", m, fmt), spread("tcp", m, fmt),
		spread("perftest", m, fmt)
}

# The data check of a column: both sides' check lines.
function checked(c) {
	if (c == "lfverbs" && !lfv_rdm)
		return "n/a"
	if (c in chk_fail)
		return "FAILED"
	if (!(c in chk_sides))
		return "-"
	return sprintf("%s (%d msgs, %.0f MiB)", chk_sides[c] == 2 ? "ok" : \
		"one side only", chk_msgs[c], chk_bytes[c] / 1048576)
}

BEGIN {
	lower["lat"] = 1
	lower["latmean"] = 1
	ncol = split("lfverbs rxm raw tcp perftest", cols, " ")
	nm = split("lat latmean rate bw big", metrics, " ")
}

FILENAME != cgfile && /^avail / && kv($0, "impl") == "lfverbs" {
	lfv_rdm = kv($0, "rdm") + 0
}

FILENAME != cgfile && /^env / {
	rxm_env = $0
	sub(/^env impl=[^ ]* /, "", rxm_env)
}

FILENAME != cgfile && /^note / {
	note[col(kv($0, "impl"))] = kv($0, "max_msg_size")
}

FILENAME != cgfile && /^retry / && kv($0, "side") == "client" && \
    kv($0, "round") != "check" {
	c = col(kv($0, "impl"))
	if (kv($0, "eagain") + 0 > retries[c])
		retries[c] = kv($0, "eagain") + 0
}

FILENAME != cgfile && /^check / {
	c = col(kv($0, "impl"))
	chk_sides[c]++
	chk_msgs[c] += kv($0, "msgs")
	chk_bytes[c] += kv($0, "bytes")
}

FILENAME != cgfile && /^fail / {
	c = col(kv($0, "impl"))
	if (kv($0, "round") == "check")
		chk_fail[c] = 1
	fails = fails " " kv($0, "tag")
}

FILENAME != cgfile && /^result / && kv($0, "round") != "check" {
	add_result(col(kv($0, "impl")), $0)
}

FILENAME != cgfile && /^stall / {
	stall_record($0)
}

FILENAME == cgfile && $1 != "callgrind" {
	cg_record(col($1))
}

FILENAME == cgfile && $1 == "callgrind" {
	cg_summary(col(kv($0, "impl")), $0)
}

END {
	for (i = 1; i <= ncol; i++)
		for (j = 1; j <= nm; j++)
			sortlist(cols[i], metrics[j])

	lf = lfv_rdm ? best("lfverbs", "lat") : ""
	rx = best("rxm", "lat")
	rw = best("raw", "lat")
	print ""
	print "| metric | lfverbs | rxm | raw | lfverbs/rxm | lfverbs/raw | target | met? |"
	print "| --- | --- | --- | --- | --- | --- | --- | --- |"
	row("tagged latency 64 B, median half round trip (us)", "lat",
	    "%.2f", "<= 0.8 x rxm and <= 1.10 x raw",
	    met(lf <= 0.8 * rx && lf <= 1.10 * rw, lf, rx, rw))
	row("tagged latency 64 B, mean half round trip (us)", "latmean",
	    "%.2f", "-", "-")
	lf = lfv_rdm ? best("lfverbs", "rate") : ""
	rx = best("rxm", "rate")
	rw = best("raw", "rate")
	row("tagged message rate 64 B, window 64 (msgs/s)", "rate", "%.0f",
	    ">= rxm and >= 0.95 x raw",
	    met(lf >= rx && lf >= 0.95 * rw, lf, rx, rw))
	lf = lfv_rdm ? best("lfverbs", "bw") : ""
	rx = best("rxm", "bw")
	row("bandwidth 1 MiB, window 4 (MB/s)", "bw", "%.1f", ">= rxm",
	    met(lf >= rx, lf, rx, 1))
	lf = lfv_rdm ? best("lfverbs", "big") : ""
	rx = best("rxm", "big")
	row("bandwidth 64 MiB, window 2 (MB/s)", "big", "%.1f", ">= rxm",
	    met(lf >= rx, lf, rx, 1))
	lf = lfv_rdm ? best("lfverbs", "ins") : ""
	rx = best("rxm", "ins")
	row("user-space instructions per tagged send+completion", "ins",
	    "%.0f", "<= 0.5 x rxm", met(lf <= 0.5 * rx, lf, rx, 1))
	row("user-space instructions per empty poll", "empty", "%.0f", "-",
	    "-")
	printf "| data check (--check, both sides) | %s | %s | - | - | - | all bytes right | %s |\n",
		checked("lfverbs"), checked("rxm"),
		!lfv_rdm ? "n/a" : checked("lfverbs") ~ /^ok/ ? "yes" : "no"

	printf "\nrounds: lfverbs %s, rxm %d, raw %d, tcp %d, perftest %d. Latency: the best round median (mean); rate, bandwidth: the best round.\n",
		lfv_rdm ? cnt["lfverbs", "lat"] : "n/a (no FI_EP_RDM from lfverbs)",
		cnt["rxm", "lat"], cnt["raw", "lat"], cnt["tcp", "lat"],
		cnt["perftest", "lat"]
	stall_note()
	printf "rxm ran with %s; lfverbs with no such setting.\n", rxm_env
	for (c in note)
		printf "%s reports max_msg_size %s: its 64 MiB messages go beyond it.\n",
			c, note[c]
	for (c in retries)
		if (retries[c])
			printf "%s: up to %d fi_tsend/fi_trecv retries (-FI_EAGAIN) in a round after the first send, client side.\n",
				c, retries[c]
	if (fails != "")
		printf "failed runs:%s (see build/bench/rdm-*.log)\n", fails

	print ""
	print "| median of rounds (range) | lfverbs | rxm | raw | tcp | perftest |"
	print "| --- | --- | --- | --- | --- | --- |"
	nsr = spread_rows("tagged ")
	for (isr = 1; isr <= nsr; isr++)
		row2(srow_label[isr], srow_m[isr], srow_fmt[isr])
	row2("bandwidth 64 MiB (MB/s)", "big", "%.1f")
	printf "| data check | %s | %s | - | %s | - |\n", checked("lfverbs"),
		checked("rxm"), checked("tcp")

	if (!("rxm" in cgn) && !("raw" in cgn))
		exit
	printf "\ncallgrind: per ping-pong (one tagged send, one receive, both completions, the receive reposted):\n"
	printf "(2N - N) / N less the empty polls at the cost of one (empty polls in N and 2N:"
	for (i = 1; i <= 3; i++)
		if (cols[i] in cgn)
			printf " %s %s;", cols[i], empties[cols[i]]
	printf ")\nempty poll: (2K - K) / K.\n"

	cg_object_table("lfverbs", "rxm", "raw", !lfv_rdm)

	top_functions("lfverbs", "liblfverbs-fi", "liblfverbs-fi.so")
	top_functions("rxm", "libfabric\\.so",
		      "libfabric.so: rxm and verbs, no symbols")
	top_functions("raw", "lib(ibverbs|rxe)",
		      "libibverbs, librxe (no symbols)")
}
