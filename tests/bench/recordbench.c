// SPDX-License-Identifier: GPL-2.0
/*
 * How many waits per second --record's writer takes off the ring with
 * none dropped, on this machine.  A BPF program emits synthetic waits
 * through the real record_wait() into the real ring (default size), at a
 * paced rate, for a second per step; the real writer (recorder.c) writes
 * them to a log on disk.  The rate climbs until a step drops waits.
 *
 * --cost: what record_wait() adds to a program, per wait: the producer's
 * run time (the kernel's BPF stats) per wait, loaded with recording on
 * and with it off (the call then compiled away), in runs of COST_BATCH
 * waits while the writer drains; medians of COST_RUNS runs each.
 *
 *   recordbench [--json] [--cost] [--dir DIR] [--ring-size BYTES]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "options.h"
#include "recorder.h"
#include "recordbench.skel.h"

#define STEP_NS		1000000000ull	/* each rate runs this long */
#define BATCH		64		/* waits per program run */
#define COST_BATCH	1024
#define COST_RUNS	201

struct produce_args {
	__u64 n;
	__u32 tid;
	__u32 pad;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ring_dropped(struct recordbench_bpf *skel, int ncpus)
{
	__u64 values[ncpus];
	__u32 key = SP_CNT_DROPPED_RING;
	uint64_t total = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &key, values))
		return 0;
	for (int i = 0; i < ncpus; i++)
		total += values[i];
	return total;
}

/* Emits at `rate` waits/s for one step; returns the waits emitted. */
static uint64_t produce(int prog_fd, double rate)
{
	struct produce_args args = { .tid = 1000 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));
	uint64_t t0 = now_ns(), sent = 0, t;

	while ((t = now_ns() - t0) < STEP_NS) {
		uint64_t due = (uint64_t)(rate * (double)t * 1e-9);

		if (sent >= due) {
			struct timespec pause = { 0, 20000 };

			nanosleep(&pause, NULL);
			continue;
		}
		args.n = due - sent > BATCH ? BATCH : due - sent;
		if (bpf_prog_test_run_opts(prog_fd, &opts))
			return sent;
		sent += args.n;
	}
	return sent;
}

static struct recordbench_bpf *load(bool on, uint32_t ring_size)
{
	struct recordbench_bpf *skel = recordbench_bpf__open();

	if (!skel)
		return NULL;
	skel->rodata->record_on = on;
	skel->rodata->record_wake_bytes = ring_size / 4;
	if (bpf_map__set_max_entries(skel->maps.record_ring, ring_size) ||
	    recordbench_bpf__load(skel)) {
		recordbench_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median ns of program run time per wait emitted, over COST_RUNS runs. */
static double cost_per_wait(struct recordbench_bpf *skel)
{
	int fd = bpf_program__fd(skel->progs.produce);
	struct produce_args args = { .n = COST_BATCH, .tid = 1000 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));
	double per_wait[COST_RUNS];

	for (int i = 0; i < COST_RUNS; i++) {
		struct bpf_prog_info before = { 0 }, after = { 0 };
		__u32 len = sizeof(before);
		struct timespec drain = { 0, 2000000 };

		bpf_obj_get_info_by_fd(fd, &before, &len);
		len = sizeof(after);
		if (bpf_prog_test_run_opts(fd, &opts) ||
		    bpf_obj_get_info_by_fd(fd, &after, &len))
			return -1;
		per_wait[i] = (double)(after.run_time_ns - before.run_time_ns) /
			      COST_BATCH;
		nanosleep(&drain, NULL);	/* the writer empties the ring */
	}
	qsort(per_wait, COST_RUNS, sizeof(*per_wait), cmp_double);
	return per_wait[COST_RUNS / 2];
}

/* record_wait()'s cost: the producer with recording on, less off. */
static int cost(uint32_t ring_size, const char *dir, bool json)
{
	struct recordbench_bpf *on = load(true, ring_size), *off = load(false, ring_size);
	int stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	struct recorder *rec = NULL;
	double on_ns, off_ns;
	int fd;

	if (!on || !off || stats < 0) {
		fprintf(stderr, "recordbench: cannot load the producer or turn "
			"the BPF stats on\n");
		return 1;
	}
	fd = open(dir, O_TMPFILE | O_RDWR, 0600);
	const struct recorder_config cfg = {
		.ring_fd = bpf_map__fd(on->maps.record_ring),
		.log_fd = fd,
		.pid = getpid(),
	};
	if (fd < 0 || recorder__start(&cfg, &rec)) {
		fprintf(stderr, "recordbench: cannot start the writer\n");
		return 1;
	}
	off_ns = cost_per_wait(off);
	on_ns = cost_per_wait(on);
	recorder__stop(rec);
	if (json)
		printf("{\"bench\": \"recordcost\", \"off_ns\": %.1f, "
		       "\"on_ns\": %.1f, \"added_ns\": %.1f}\n", off_ns, on_ns,
		       on_ns - off_ns);
	else
		printf("producer run time per wait: %.1f ns recording, %.1f ns "
		       "not: record_wait() adds %.1f ns\n", on_ns, off_ns,
		       on_ns - off_ns);
	recorder__finish(rec, &fd);
	recorder__free(rec);
	close(fd);
	close(stats);
	recordbench_bpf__destroy(on);
	recordbench_bpf__destroy(off);
	return 0;
}

int main(int argc, char **argv)
{
	static const double rates[] = {
		100e3, 250e3, 500e3, 750e3, 1e6, 1.5e6, 2e6, 2.5e6, 3e6, 4e6, 6e6, 8e6, 12e6,
		16e6, 24e6, 32e6,
	};
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "dir", required_argument, NULL, 'd' },
		{ "ring-size", required_argument, NULL, 'r' },
		{ "cost", no_argument, NULL, 'c' },
		{ 0 },
	};
	bool cost_only = false;
	uint32_t ring_size = OPTIONS_DEFAULT_RING_SIZE;
	const char *dir = ".";
	double best = 0, best_achieved = 0;
	struct recordbench_bpf *skel;
	struct recorder *rec = NULL;
	bool json = false;
	int opt, fd, ncpus = libbpf_num_possible_cpus(), fails = 0;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 'c': cost_only = true; break;
		case 'd': dir = optarg; break;
		case 'r':
			if (options__parse_size(optarg, 4096, &ring_size))
				return 2;
			break;
		default: return 2;
		}
	}
	if (cost_only)
		return cost(ring_size, dir, json);
	skel = load(true, ring_size);
	if (!skel) {
		fprintf(stderr, "recordbench: cannot load the producer\n");
		return 1;
	}
	fd = open(dir, O_TMPFILE | O_RDWR, 0600);
	if (fd < 0) {
		fprintf(stderr, "recordbench: cannot make a log in %s: %s\n", dir,
			strerror(errno));
		return 1;
	}
	const struct recorder_config cfg = {
		.ring_fd = bpf_map__fd(skel->maps.record_ring),
		.log_fd = fd,
		.pid = getpid(),
	};
	if (recorder__start(&cfg, &rec)) {
		fprintf(stderr, "recordbench: cannot start the writer\n");
		return 1;
	}
	if (!json)
		printf("%12s %12s %10s\n", "rate (/s)", "achieved", "dropped");
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]) && fails < 2; i++) {
		uint64_t d0 = ring_dropped(skel, ncpus), t0 = now_ns();
		uint64_t sent = produce(bpf_program__fd(skel->progs.produce), rates[i]);
		double achieved = (double)sent * 1e9 / (double)(now_ns() - t0);
		uint64_t dropped;
		struct timespec settle = { 0, 200000000 };

		nanosleep(&settle, NULL);
		dropped = ring_dropped(skel, ncpus) - d0;
		if (!json)
			printf("%12.0f %12.0f %10llu\n", rates[i], achieved,
			       (unsigned long long)dropped);
		if (!dropped && achieved > 0.9 * rates[i]) {
			best = rates[i];
			best_achieved = achieved;
			fails = 0;
		} else {
			fails++;
		}
	}
	recorder__stop(rec);
	if (json)
		printf("{\"bench\": \"recordbench\", \"ring_size\": %u, "
		       "\"max_rate_no_drops\": %.0f, \"achieved\": %.0f, "
		       "\"written\": %llu}\n", ring_size, best, best_achieved,
		       (unsigned long long)recorder__events(rec));
	else
		printf("sustained with no drops: %.0f waits/s (%u-byte ring)\n",
		       best, ring_size);
	recorder__finish(rec, &fd);
	recorder__free(rec);
	close(fd);
	recordbench_bpf__destroy(skel);
	return 0;
}
