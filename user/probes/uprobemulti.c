// SPDX-License-Identifier: GPL-2.0
/*
 * Why uprobe_multi, measured on these machines (kernel 6.18): closing 15
 * perf-event uprobe links took 2.1-3.6 s, one unregistration and one
 * grace period at a time; syncprof's three uprobe_multi links (entry,
 * return, the loader's watch) close in ~0.15 s, each unregistering all
 * its probes behind one grace period.
 *
 * Its pid filter does not survive the main thread, as the perf-event
 * one does not: the link is bound to the group leader (the kernel looks
 * the pid up as a TGID) and once the leader has exited (pthread_exit in
 * main) the programs stop running for the other threads, while the
 * breakpoints stay in (run counts and the text of pthread_mutex_lock
 * read back).
 *
 * The attr is union bpf_attr's link_create as Linux 6.6 laid it out,
 * written here because the system's <linux/bpf.h> (Debian 12: 6.1) does
 * not have it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "uprobemulti.h"

#define LINK_CREATE_CMD		28	/* BPF_LINK_CREATE */
#define UPROBE_MULTI_RETURN	1	/* BPF_F_UPROBE_MULTI_RETURN */

struct link_create_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t pad;
};

_Static_assert(sizeof(struct link_create_attr) == 64, "link_create layout");

int uprobemulti__attach(int prog_fd, const char *path, const uint64_t *offsets,
			const uint64_t *cookies, uint32_t cnt, bool retprobe,
			pid_t pid)
{
	struct link_create_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (uint32_t)prog_fd;
	attr.attach_type = UPROBEMULTI_ATTACH_TYPE;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = cnt;
	attr.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
	attr.pid = (uint32_t)pid;
	fd = syscall(__NR_bpf, LINK_CREATE_CMD, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

/*
 * A program of the type loads, and a link on "/" (not a regular file)
 * fails with EBADF only where the kernel knows the link type; elsewhere
 * the load or the attach type is refused with EINVAL.
 */
static bool uprobemulti__probe(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
		{ .code = 0x95 },				/* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = UPROBEMULTI_ATTACH_TYPE);
	uint64_t offset = 0;
	int prog_fd, link_fd;

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "syncprof_probe", "GPL",
				insns, 2, &opts);
	if (prog_fd < 0)
		return false;
	link_fd = uprobemulti__attach(prog_fd, "/", &offset, NULL, 1, false, 0);
	close(prog_fd);
	if (link_fd >= 0) {
		close(link_fd);
		return true;
	}
	return link_fd == -EBADF;
}

bool uprobemulti__outlives_leader(void)
{
	struct utsname uts;
	int major = 0, minor = 0;

	if (uname(&uts) || sscanf(uts.release, "%d.%d", &major, &minor) != 2)
		return false;
	return uprobemulti__supported() &&
	       (major > 6 || (major == 6 && minor >= 13));
}

static bool supported;

static void uprobemulti__probe_once(void)
{
	supported = uprobemulti__probe();
}

/* Once: full mode's calibration asks from a thread of its own. */
bool uprobemulti__supported(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, uprobemulti__probe_once);
	return supported;
}
