/* SPDX-License-Identifier: GPL-2.0 */
/* --what-if, a stage of the run (whatifrun.c). */
#ifndef SYNCPROF_WHATIFRUN_H
#define SYNCPROF_WHATIFRUN_H

struct session;

/* Once attached: --progress's function found in the target, or -EINVAL. */
int session__what_if_check(struct session *s);
/*
 * Before the final report: the experiments, their predictions into
 * s->what_if.  stop_fd readable (a signal): they end early.
 */
int session__what_if(struct session *s, int stop_fd);
void session__what_if_free(struct session *s);

#endif
