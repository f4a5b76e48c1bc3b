/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pages a worker made, for the HTTP thread: each put wakes it
 * through an eventfd.  Room for a page is reserved when its job is
 * queued, so a page made is never lost for want of memory.
 */
#ifndef SYNCPROF_OUTBOX_H
#define SYNCPROF_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>

struct outbox;

struct outbox_page {
	unsigned long id;	/* the request's */
	int err;		/* -errno, or 0 with: */
	char *data;		/* malloc'd */
	size_t len;
};

int outbox__new(int wake_fd, struct outbox **out);
/* Frees the pages not taken too. */
void outbox__free(struct outbox *o);
/* Room for one more page: 0 or -ENOMEM. */
int outbox__reserve(struct outbox *o);
/* A reservation whose page will not come (its job was dropped). */
void outbox__unreserve(struct outbox *o);
/* Appends a reserved page and wakes the HTTP thread. */
void outbox__put(struct outbox *o, struct outbox_page page);
bool outbox__take(struct outbox *o, struct outbox_page *page);

#endif
