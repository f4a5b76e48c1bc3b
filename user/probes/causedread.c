// SPDX-License-Identifier: GPL-2.0
/*
 * The maps of charges to releases read as snapshots (--blame's, caused),
 * and the caused map (contended mode: the waits each hold caused, for the
 * findings; bpf/measure/blame.bpf.h), kept to the threads alive.
 *
 * A row is keyed by the releasing thread, and carries the waiter's
 * process in owner_tid when it is another.  Once either has exited, no
 * wait adds to it.  At each read, the rows of the threads and processes
 * whose exit the stats map's rows fold on (mapread.c: the kernel's word
 * under several processes, else /proc) leave the map, with their last
 * value; the next read of the map (a report's, the live screen's) adds
 * them once.  Reports take the change between two reads of the map
 * (snapshot__delta), which leaves out a row the later read lacks, so a
 * row counts in full once, in the report whose read took it out.
 *
 * Before, the rows stayed for the whole run: the map filled with those
 * of processes long gone, and the later charges were lost (and counted
 * as lost waits, though every wait was counted).
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "array.h"
#include "probesimpl.h"
#include "sortorder.h"
#include "syncprof.skel.h"

/* A map of charges to releases (blame, caused), as a sealed snapshot. */
int probes__read_charges(struct probes *p, int fd, struct snapshot **out)
{
	struct snapshot *snap;
	struct sp_key key, next;
	struct sp_key *prev = NULL;
	int err = snapshot__new(&snap);
	size_t rows = 0;

	if (err)
		return err;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (++rows > p->charge_rows_read)
			p->charge_rows_read = rows;
		if (bpf_map_lookup_elem(fd, &key, p->values))
			continue;
		err = snapshot__add(snap, &key, p->values, 1,
				    p->window - 1);
		if (err) {
			snapshot__free(snap);
			return err;
		}
	}
	snapshot__seal(snap);
	*out = snap;
	return 0;
}

/* Keys per lookup_batch call. */
#define CAUSED_BATCH 1024

bool probes__charge_gone(const struct probes *p, const struct sp_key *key,
			 const __u32 *dead, size_t n_dead,
			 probes_told_gone_fn told)
{
	if (key->tid && bsearch(&key->tid, dead, n_dead, sizeof(*dead),
				order__u32_at))
		return true;
	if (!told)
		return false;
	return told(p, key->pid, key->tid) ||
	       (key->owner_tid && told(p, key->owner_tid, 0));
}

/* key's last value, out of the map and into the rows the next read adds. */
static int caused__take(struct probes *p, int fd, const struct sp_key *key)
{
	struct sp_value last;
	size_t n = p->n_caused_gone;

	if (bpf_map_lookup_and_delete_elem(fd, key, &last))
		return 0;	/* gone already */
	if (array__grow(&p->caused_gone_keys, &p->cap_caused_gone, n + 1,
			sizeof(*p->caused_gone_keys)))
		return -ENOMEM;
	/* Grown to the same capacity: the second array follows the first. */
	{
		size_t cap = p->cap_caused_gone;
		struct sp_value *v = realloc(p->caused_gone_values,
					     cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->caused_gone_values = v;
	}
	p->caused_gone_keys[n] = *key;
	p->caused_gone_values[n] = last;
	p->n_caused_gone = n + 1;
	return 0;
}

int probes__charge_keys(int fd, struct sp_key **out, size_t *n_out)
{
	struct sp_key *keys = NULL;
	struct sp_value *values = malloc(CAUSED_BATCH * sizeof(*values));
	size_t got = 0, cap = 0;
	__u32 batch_out = 0, n;
	void *in = NULL;
	int err = values ? 0 : -ENOMEM, ret = 0;

	/* The keys first: a key taken out while the batches walk the
	   buckets would move their cursor. */
	do {
		if (err)
			break;
		if (array__grow(&keys, &cap, got + CAUSED_BATCH,
				sizeof(*keys))) {
			err = -ENOMEM;
			break;
		}
		n = CAUSED_BATCH;
		ret = bpf_map_lookup_batch(fd, in, &batch_out, keys + got,
					   values, &n, NULL);
		if (ret && errno != ENOENT)
			break;	/* no batches: key by key, below */
		got += n;
		in = &batch_out;
	} while (!ret);
	if (!err && ret && errno != ENOENT) {
		struct sp_key cur, next;

		for (got = 0; !err && !bpf_map_get_next_key(fd, got ? &cur
							     : NULL, &next);
		     cur = next) {
			if (array__grow(&keys, &cap, got + 1, sizeof(*keys)))
				err = -ENOMEM;
			else
				keys[got++] = next;
		}
	}
	free(values);
	if (err) {
		free(keys);
		return err;
	}
	*out = keys;
	*n_out = got;
	return 0;
}

int probes__take_gone_charges(struct probes *p, int fd, const __u32 *dead,
			      size_t n_dead, probes_told_gone_fn told,
			      probes_take_charge_fn take)
{
	struct sp_key *keys = NULL;
	size_t got = 0, n_gone = 0;
	int err = probes__charge_keys(fd, &keys, &got);

	if (got > p->charge_rows_read)
		p->charge_rows_read = got;
	for (size_t i = 0; !err && i < got; i++)
		if (probes__charge_gone(p, &keys[i], dead, n_dead, told))
			keys[n_gone++] = keys[i];
	for (size_t i = 0; !err && i < n_gone; i++)
		err = take(p, fd, &keys[i]);
	free(keys);
	return err;
}

int probes__fold_caused(struct probes *p, const __u32 *dead, size_t n_dead,
			probes_told_gone_fn told)
{
	int fd = bpf_map__fd(p->skel->maps.caused);

	if (!p->caused || (!n_dead && !(told && (p->n_gone[0] ||
						  p->n_gone[1]))))
		return 0;
	return probes__take_gone_charges(p, fd, dead, n_dead, told,
					 caused__take);
}

int probes__read_caused(struct probes *p, struct snapshot **out)
{
	int err = probes__read_charges(p, bpf_map__fd(p->skel->maps.caused),
				       out);

	for (size_t i = 0; !err && i < p->n_caused_gone; i++)
		err = snapshot__add(*out, &p->caused_gone_keys[i],
				    &p->caused_gone_values[i], 1,
				    p->window - 1);
	if (err) {
		snapshot__free(*out);
		*out = NULL;
		return err;
	}
	p->n_caused_gone = 0;
	snapshot__seal(*out);
	return 0;
}

void probes__caused_free(struct probes *p)
{
	free(p->caused_gone_keys);
	free(p->caused_gone_values);
}
