# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The table of run-rdm.sh --eager-sweep (POSIX awk; run as awk -f bench-lib.awk -f sweep-table.awk). Input: lines
#   sweep eager=E size=S median_us=U mean_us=M MB_per_s=B round=R
# (bench_rdm --lat-size S: the median half round trip, and S divided by it
# as ping-pong bandwidth, 10^6 bytes per second). Each cell is the
# best round (lowest latency, highest bandwidth), as in the other tables:
# host load only ever slows a round down. A "*" marks the eager value that
# is best for the size; "R" a size sent by rendezvous under that value.
/^sweep / {
	e = kv($0, "eager") + 0
	s = kv($0, "size") + 0
	u = kv($0, "median_us") + 0
	b = kv($0, "MB_per_s") + 0
	if (!(e in seen_e)) { seen_e[e] = 1; ne++; eg[ne] = e }
	if (!(s in seen_s)) { seen_s[s] = 1; ns++; sz[ns] = s }
	if (!((e, s) in lat) || u < lat[e, s])
		lat[e, s] = u
	if (!((e, s) in bw) || b > bw[e, s])
		bw[e, s] = b
	rounds[kv($0, "round")] = 1
}

# run-rdm.sh's sweep_peers: verbs;ofi_rxm and raw RC (ib_send_lat) at the
# same sizes.
/^sweep-peer / {
	i = kv($0, "impl")
	s = kv($0, "size") + 0
	u = kv($0, "median_us") + 0
	if (!(i in seen_i)) { seen_i[i] = 1; ni++; im[ni] = i }
	if (!((i, s) in plat) || u < plat[i, s])
		plat[i, s] = u
}

/^stall / {
	stall_record($0)
}

/^fail / {
	fails = fails " eager=" kv($0, "eager") "/size=" kv($0, "size")
}

function sortnum(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--)
			a[j + 1] = a[j]
		a[j + 1] = t
	}
}

function table(title, v, fmt, low,    i, j, e, s, bestv, cellv, mark) {
	printf "\n%s\n\n| size |", title
	for (j = 1; j <= ne; j++)
		printf " eager %s |", eg[j]
	if (low)
		peer_head()
	printf "\n| --- |"
	for (j = 1; j <= ne + (low ? 2 * ni : 0); j++)
		printf " --- |"
	printf "\n"
	for (i = 1; i <= ns; i++) {
		s = sz[i]
		bestv = ""
		for (j = 1; j <= ne; j++) {
			e = eg[j]
			if (!((e, s) in v))
				continue
			if (bestv == "" || (low ? v[e, s] < bestv : v[e, s] > bestv))
				bestv = v[e, s]
		}
		printf "| %s |", human(s)
		for (j = 1; j <= ne; j++) {
			e = eg[j]
			if (!((e, s) in v)) {
				printf " - |"
				continue
			}
			mark = (v[e, s] == bestv ? "*" : "") (s > e ? " R" : "")
			printf " " fmt "%s |", v[e, s], mark
		}
		if (low)
			peer_cells(s, bestv)
		printf "\n"
	}
}

# The peers' columns of the latency table: each one's time, then the best
# lfverbs value over rxm's and over raw's.
function peer_head(    k) {
	for (k = 1; k <= ni; k++)
		printf " %s |", im[k]
	for (k = 1; k <= ni; k++)
		printf " best / %s |", im[k]
}

function peer_cells(s, bestv,    k) {
	for (k = 1; k <= ni; k++)
		printf ((im[k], s) in plat ? " %.1f |" : " - |"), plat[im[k], s]
	for (k = 1; k <= ni; k++)
		printf ((im[k], s) in plat && plat[im[k], s] > 0 && bestv != "" ? \
			" %.2f |" : " - |"), bestv / plat[im[k], s]
}

END {
	sortnum(eg, ne)
	sortnum(sz, ns)
	nr = 0
	for (r in rounds)
		nr++
	table("median half round trip (us), bench_rdm tagged ping-pong, best of " nr " rounds", lat, "%.1f", 1)
	table("ping-pong bandwidth (MB/s), best of " nr " rounds", bw, "%.1f", 0)
	printf "\n* best value for the size; R: above the eager value (segmented eager up to FI_LFVERBS_RDM_SAR, then rendezvous). rxm: verbs;ofi_rxm, raw: ib_send_lat (RC send/receive), at the same sizes.\n"
	stall_note()
	if (fails != "")
		printf "failed runs:%s\n", fails
}
