/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What loading the BPF programs cost: the verifier's work per program
 * (verified_insns, from the kernel's program info) and the load's wall
 * time, said with -v and kept for JSON-free readers (make bench).
 */
#ifndef SYNCPROF_PROGLOAD_H
#define SYNCPROF_PROGLOAD_H

#include <stdint.h>

struct bpf_object;

struct progload_totals {
	unsigned int programs;		/* loaded */
	uint64_t verified_insns;	/* summed over them */
};

/* CLOCK_MONOTONIC in ms, to time the load with. */
double progload__clock_ms(void);

/*
 * -v: one line per loaded program with its verified instructions, and a
 * total with load_ms, the time bpf_object__load took.  Fills *t when t
 * is not NULL.
 */
void progload__log(struct bpf_object *obj, double load_ms,
		   struct progload_totals *t);

#endif
