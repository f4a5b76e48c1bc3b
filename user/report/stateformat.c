// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "jsonout.h"
#include "locktype.h"
#include "report.h"
#include "stateformat.h"
#include "text.h"

#define NAME_MAX_BYTES	(STATES_COMM_LEN * 4 + 32)

static double share(uint64_t ns, uint64_t window_ns)
{
	return window_ns ? 100.0 * (double)ns / (double)window_ns : 0.0;
}

uint64_t stateformat__capacity(const struct states_row *row, uint64_t window_ns)
{
	return window_ns * (row->threads ? row->threads : 1);
}

void stateformat__name(const struct states_row *row, char *buf, size_t len)
{
	char comm[STATES_COMM_LEN * 4];

	text__sanitize(row->comm, comm, sizeof(comm));
	if (row->tid == STATES_NO_TID)
		snprintf(buf, len, "%s \u00d7%u", comm, row->threads);
	else
		snprintf(buf, len, "%s", comm);
}

/* Lock types in the order of their time, largest first; futex last. */
static size_t types_by_time(const struct states_row *row, int order[SP_TYPE__COUNT])
{
	size_t n = 0;

	for (int t = 0; t < SP_TYPE__COUNT; t++) {
		size_t i;

		if (!row->type_ns[t] || t == SP_TYPE_FUTEX)
			continue;
		for (i = n; i > 0 && row->type_ns[order[i - 1]] < row->type_ns[t]; i--)
			order[i] = order[i - 1];
		order[i] = t;
		n++;
	}
	if (row->type_ns[SP_TYPE_FUTEX])
		order[n++] = SP_TYPE_FUTEX;
	return n;
}

void stateformat__table(FILE *out, const struct states_report *rep)
{
	uint64_t window = rep->end_ns - rep->start_ns;
	char name[NAME_MAX_BYTES];
	int name_w = 4, width;
	unsigned int threads = 0;
	bool futex = false, stolen = false;
	/* Stolen time has a column where some row has any (a virtual
	   machine's host ran another guest on its CPU). */
	int kinds = STATES_STOLEN;

	for (size_t i = 0; i < rep->count; i++) {
		int w;

		stateformat__name(&rep->rows[i], name, sizeof(name));
		w = text__width(name);
		if (w > name_w)
			name_w = w;
		threads += rep->rows[i].threads;
		futex |= rep->rows[i].type_ns[SP_TYPE_FUTEX] != 0;
		stolen |= rep->rows[i].ns[STATES_STOLEN] != 0;
	}
	if (stolen)
		kinds = STATES_STOLEN + 1;
	fprintf(out, "\nThread states: %u thread%s", threads,
		threads == 1 ? "" : "s");
	if (rep->grouped)
		fprintf(out, " in %zu group%s", rep->count,
			rep->count == 1 ? "" : "s");
	fprintf(out, ", window %.2f s (seconds, and share of the window%s)",
		(double)window * 1e-9,
		rep->grouped ? " times the group's threads" : "");
	if (rep->sched_missed)
		fprintf(out, "; %" PRIu64 " scheduler event%s missed since attach",
			rep->sched_missed, rep->sched_missed == 1 ? "" : "s");
	fputc('\n', out);
	width = fprintf(out, "%7s  %-*s  %10s %7s  %10s %7s  %10s %7s  %10s %7s",
			"TID", name_w, "Name", "Running", "%", "Runnable", "%",
			"Lock wait", "%", "Sleep", "%");
	if (stolen)
		width += fprintf(out, "  %10s %7s", "Stolen", "%");
	width += fprintf(out, "  %7s  %s", "Alive", "Lock wait by type");
	fputc('\n', out);
	for (int i = 0; i < width; i++)
		fputc('-', out);
	fputc('\n', out);
	for (size_t i = 0; i < rep->count; i++) {
		const struct states_row *r = &rep->rows[i];
		uint64_t capacity = stateformat__capacity(r, window);
		int order[SP_TYPE__COUNT];
		size_t n = types_by_time(r, order);

		stateformat__name(r, name, sizeof(name));
		if (r->tid == STATES_NO_TID)
			fprintf(out, "%7s", "-");
		else
			fprintf(out, "%7" PRId64, r->tid);
		fprintf(out, "  %s%*s", name, name_w - text__width(name), "");
		for (int k = 0; k < kinds; k++)
			fprintf(out, "  %10.3f %6.1f%%", (double)r->ns[k] * 1e-9,
				share(r->ns[k], capacity));
		fprintf(out, "  %6.1f%%", share(r->alive_ns, capacity));
		if (n || r->born_ns || r->exit_ns)
			fputs("  ", out);
		for (size_t j = 0; j < n; j++) {
			int t = order[j];

			fprintf(out, "%s%s%s %.1f%%%s", j ? ", " : "",
				t == SP_TYPE_FUTEX ? "(" : "",
				locktype__name((uint32_t)t),
				share(r->type_ns[t], capacity),
				t == SP_TYPE_FUTEX ? ")" : "");
		}
		if (r->born_ns)
			fprintf(out, "%sstarted at +%.2f s", n ? "; " : "",
				(double)(r->born_ns - rep->start_ns) * 1e-9);
		if (r->exit_ns)
			fprintf(out, "%sexited at +%.2f s",
				n || r->born_ns ? "; " : "",
				(double)(r->exit_ns - rep->start_ns) * 1e-9);
		fputc('\n', out);
	}
	for (int i = 0; i < width; i++)
		fputc('-', out);
	fputc('\n', out);
	if (futex)
		fputs("(futex): futex waits of no known lock type (pthread_join, "
		      "a custom lock), counted as Sleep\n", out);
	if (stolen)
		fputs("Stolen: on a CPU the hypervisor ran something else on "
		      "(steal time), not counted as Running\n", out);
}

void stateformat__json(json_t *report, const struct states_report *rep,
		       int *err)
{
	json_t *list;

	if (!rep) {
		jsonout__set(report, "threads", json_null(), err);
		jsonout__set(report, "sched_missed", json_null(), err);
		return;
	}
	list = json_array();
	jsonout__set(report, "threads", list, err);
	for (size_t i = 0; list && i < rep->count; i++) {
		const struct states_row *r = &rep->rows[i];
		json_t *o = json_object(), *by_type = json_object();

		jsonout__append(list, o, err);
		if (!o || !by_type) {
			json_decref(by_type);
			*err = -ENOMEM;
			break;
		}
		jsonout__set(o, "tid", r->tid == STATES_NO_TID ? json_null() :
			     json_integer(r->tid), err);
		jsonout__set(o, "comm", jsonout__string(r->comm), err);
		jsonout__set(o, "threads_in_group", jsonout__uint(r->threads), err);
		jsonout__set(o, "running_ns", jsonout__uint(r->ns[STATES_RUNNING]), err);
		jsonout__set(o, "runnable_ns", jsonout__uint(r->ns[STATES_RUNNABLE]), err);
		jsonout__set(o, "lock_ns", jsonout__uint(r->ns[STATES_LOCK]), err);
		jsonout__set(o, "sleep_ns", jsonout__uint(r->ns[STATES_SLEEP]), err);
		jsonout__set(o, "stolen_ns", jsonout__uint(r->ns[STATES_STOLEN]), err);
		jsonout__set(o, "alive_ns", jsonout__uint(r->alive_ns), err);
		for (int t = 0; t < SP_TYPE__COUNT; t++) {
			if (t != SP_TYPE_FUTEX && r->type_ns[t])
				jsonout__set(by_type, locktype__name((uint32_t)t),
					     jsonout__uint(r->type_ns[t]), err);
		}
		jsonout__set(o, "lock_by_type", by_type, err);
		jsonout__set(o, "futex_ns", jsonout__uint(r->type_ns[SP_TYPE_FUTEX]),
			     err);
		jsonout__set(o, "state",
			     jsonout__string(threadstates__state_name(r->state)), err);
		jsonout__set(o, "born_ns", jsonout__uint_or_null(r->born_ns,
							       r->born_ns), err);
		jsonout__set(o, "exit_ns", jsonout__uint_or_null(r->exit_ns,
							       r->exit_ns), err);
	}
	jsonout__set(report, "sched_missed", jsonout__uint(rep->sched_missed), err);
}

/* A lock type's CSV column: "rwlock-r" -> "rwlock_r_ns". */
static void csv_type_column(FILE *out, uint32_t type)
{
	for (const char *p = locktype__name(type); *p; p++)
		fputc(*p == '-' ? '_' : *p, out);
	fputs("_ns", out);
}

/*
 * The lock types a thread's lock wait can have: --off-cpu's types after
 * them are never one, and "sleep" would name a second sleep_ns column.
 */
#define CSV_LOCK_TYPES SP_TYPE_POLL

void stateformat__csv_header(FILE *out)
{
	fputs("report,pid,start_ns,end_ns,tid,comm,threads,alive_ns,running_ns,"
	      "runnable_ns,lock_ns,sleep_ns,state,born_ns,exit_ns", out);
	for (uint32_t t = 0; t < CSV_LOCK_TYPES; t++) {
		fputc(',', out);
		csv_type_column(out, t);
	}
	fputs(",stolen_ns\n", out);
}

void stateformat__csv(FILE *out, unsigned int sequence, pid_t pid,
		      const struct states_report *rep)
{
	for (size_t i = 0; i < rep->count; i++) {
		const struct states_row *r = &rep->rows[i];
		const char *state = threadstates__state_name(r->state);

		fprintf(out, "%u,%d,%" PRIu64 ",%" PRIu64 ",", sequence, (int)pid,
			rep->start_ns, rep->end_ns);
		if (r->tid != STATES_NO_TID)
			fprintf(out, "%" PRId64, r->tid);
		fputc(',', out);
		text__csv_field(out, r->comm);
		fprintf(out, ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%s,", r->threads, r->alive_ns,
			r->ns[STATES_RUNNING], r->ns[STATES_RUNNABLE],
			r->ns[STATES_LOCK], r->ns[STATES_SLEEP],
			state ? state : "");
		if (r->born_ns)
			fprintf(out, "%" PRIu64, r->born_ns);
		fputc(',', out);
		if (r->exit_ns)
			fprintf(out, "%" PRIu64, r->exit_ns);
		for (int t = 0; t < CSV_LOCK_TYPES; t++)
			fprintf(out, ",%" PRIu64, r->type_ns[t]);
		fprintf(out, ",%" PRIu64 "\n", r->ns[STATES_STOLEN]);
	}
}

void stateformat__bar(const struct states_row *row, uint64_t window_ns,
		      int width, int cells[STATES__COUNT])
{
	uint64_t rem[STATES__COUNT];
	uint64_t alive;
	int total, used = 0;

	for (int k = 0; k < STATES__COUNT; k++)
		cells[k] = 0;
	window_ns = stateformat__capacity(row, window_ns);
	if (!window_ns || width <= 0)
		return;
	alive = row->alive_ns < window_ns ? row->alive_ns : window_ns;
	/* Cells the row's life fills, rounded to the nearest. */
	total = (int)((alive * (uint64_t)width + window_ns / 2) / window_ns);
	for (int k = 0; k < STATES__COUNT; k++) {
		/* Exact cells = ns * width / window: whole part, remainder. */
		unsigned __int128 exact = (unsigned __int128)row->ns[k] * (unsigned)width;

		cells[k] = (int)(exact / window_ns);
		rem[k] = (uint64_t)(exact % window_ns);
		used += cells[k];
	}
	/* Largest remainders first; ties to the earlier state. */
	while (used < total) {
		int best = -1;

		for (int k = 0; k < STATES__COUNT; k++)
			if (row->ns[k] && (best < 0 || rem[k] > rem[best]))
				best = k;
		if (best < 0)
			break;
		cells[best]++;
		rem[best] = 0;
		used++;
	}
	/* Rounding the total down below the parts: take from the smallest. */
	while (used > total) {
		int worst = -1;

		for (int k = 0; k < STATES__COUNT; k++)
			if (cells[k] && (worst < 0 || cells[k] < cells[worst]))
				worst = k;
		cells[worst]--;
		used--;
	}
}
