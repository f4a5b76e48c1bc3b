/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's placebo: a child of syncprof that spends, when told, the
 * CPU a lock's delay spends, in bursts of the delay's length, holding no
 * lock of the target's (placebo.c).
 */
#ifndef SYNCPROF_PLACEBO_H
#define SYNCPROF_PLACEBO_H

#include <stdint.h>
#include <sys/types.h>

struct placebo;

/*
 * Forks the child, at the nice of `like` (the target), idle until told;
 * it dies with syncprof (SIGKILL included).
 */
int placebo__start(pid_t like, struct placebo **out);
/*
 * Bursts of burst_ns of the child's CPU, `duty` CPUs' worth in all (at
 * most one: a burst every burst_ns / duty); 0: idle.
 */
void placebo__set(struct placebo *p, uint64_t burst_ns, double duty);
/* Ends the child; NULL is fine. */
void placebo__stop(struct placebo *p);

#endif
