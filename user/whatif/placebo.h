/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --what-if's placebo: a child of syncprof that releases a lock of its
 * own at a given rate, where the experiment's program spins as it does
 * at the target's delayed releases (placebo.c).
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
 * A release of the child's own lock every period_ns (0: none); the
 * experiment's program spins at it (whatif.bpf.c).
 */
void placebo__set(struct placebo *p, uint64_t period_ns);
pid_t placebo__pid(const struct placebo *p);
/* The child's lock, at the same address in it as in syncprof. */
uint64_t placebo__lock(void);
/* Ends the child; NULL is fine. */
void placebo__stop(struct placebo *p);

#endif
