/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bench_stall: how much of the wall-clock time this CPU did not run us.
 * Not a test: run-endpoints.sh and run-rdm.sh start one copy pinned to
 * each vCPU before every round (bench-lib.sh, bench_stall_probe).
 *
 *   bench_stall SECONDS
 *
 * Spins reading CLOCK_MONOTONIC for SECONDS and adds up every gap of more
 * than 200 us between two reads: time in which the loop did not run. In
 * the test bed's VM nothing else runs then, so the gaps are the host
 * taking the vCPU away (other VMs, builds: the host has 2 CPUs). A
 * busy-polling ping-pong needs both vCPUs at once; when the host
 * time-slices them at its 4 ms tick (CONFIG_HZ=250), every message waits
 * for the receiving vCPU's next slice and the half round trip locks onto
 * about 4 ms, for every program alike. Prints:
 *
 *   stall cpu=C secs=S stolen_pct=P gaps=N gaps_4ms=M max_ms=X
 *
 * (gaps_4ms: gaps of 3 ms or more).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1, t0, last, t, d;
	double stolen = 0, max = 0;
	unsigned long gaps = 0, big = 0;

	if (argc != 2 || secs <= 0) {
		fprintf(stderr, "usage: bench_stall SECONDS\n");
		return 2;
	}
	t0 = last = now_us();
	do {
		t = now_us();
		d = t - last;
		if (d > 200) {
			gaps++;
			big += d >= 3000;
			stolen += d;
			max = d > max ? d : max;
		}
		last = t;
	} while (t - t0 < secs * 1e6);
	printf("stall cpu=%d secs=%g stolen_pct=%.1f gaps=%lu gaps_4ms=%lu "
	       "max_ms=%.1f\n", sched_getcpu(), secs,
	       100 * stolen / (t - t0), gaps, big, max / 1e3);
	return 0;
}
