// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "log.h"
#include "outbox.h"

struct outbox {
	int wake_fd;
	pthread_mutex_t lock;	/* all below */
	struct outbox_page *pages;
	size_t n_pages, cap, reserved;
};

int outbox__new(int wake_fd, struct outbox **out)
{
	struct outbox *o = calloc(1, sizeof(*o));

	*out = o;
	if (!o)
		return -ENOMEM;
	o->wake_fd = wake_fd;
	pthread_mutex_init(&o->lock, NULL);
	return 0;
}

void outbox__free(struct outbox *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n_pages; i++)
		free(o->pages[i].data);
	free(o->pages);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

int outbox__reserve(struct outbox *o)
{
	int err;

	pthread_mutex_lock(&o->lock);
	err = array__grow(&o->pages, &o->cap, o->n_pages + o->reserved + 1,
			  sizeof(*o->pages));
	if (!err)
		o->reserved++;
	pthread_mutex_unlock(&o->lock);
	return err;
}

void outbox__unreserve(struct outbox *o)
{
	pthread_mutex_lock(&o->lock);
	if (o->reserved)
		o->reserved--;
	pthread_mutex_unlock(&o->lock);
}

void outbox__put(struct outbox *o, struct outbox_page page)
{
	uint64_t one = 1;

	pthread_mutex_lock(&o->lock);
	/* Its room was reserved with its job. */
	o->pages[o->n_pages++] = page;
	if (o->reserved)
		o->reserved--;
	pthread_mutex_unlock(&o->lock);
	if (write(o->wake_fd, &one, sizeof(one)) < 0)
		pr_debug("--serve: eventfd: %s", strerror(errno));
}

bool outbox__take(struct outbox *o, struct outbox_page *page)
{
	bool any;

	pthread_mutex_lock(&o->lock);
	any = o->n_pages > 0;
	if (any)
		*page = o->pages[--o->n_pages];
	pthread_mutex_unlock(&o->lock);
	return any;
}
