// SPDX-License-Identifier: GPL-2.0
/*
 * hostcheck: kernel features, checked against fake sysfs trees built in a
 * temporary directory; privileges, checked in child processes that drop
 * capabilities from their effective set.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hostcheck.h"

#define UNUSED __attribute__((unused))

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define BTF "kernel/btf/vmlinux"
#define UPROBE_TYPE "bus/event_source/devices/uprobe/type"

struct fake_sysfs {
	char root[64];
};

/* mkdir -p root/dirname(rel), then create root/rel. */
static void make_file(const char *root, const char *rel)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("7\n", f);
	fclose(f);
}

static int setup(void **state)
{
	struct fake_sysfs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return -1;
	strcpy(fs->root, "/tmp/syncprof-hostcheck-XXXXXX");
	if (!mkdtemp(fs->root)) {
		free(fs);
		return -1;
	}
	*state = fs;
	return 0;
}

static int remove_one(const char *path, const struct stat *st UNUSED,
		      int type UNUSED, struct FTW *ftw UNUSED)
{
	return remove(path);
}

static int teardown(void **state)
{
	struct fake_sysfs *fs = *state;
	/* Depth first, without following links: only our mkdtemp tree. */
	int rc = nftw(fs->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);

	free(fs);
	return rc == 0 ? 0 : -1;
}

static void test_kernel_empty_tree(void **state)
{
	struct fake_sysfs *fs = *state;

	assert_int_equal(hostcheck__kernel(fs->root), -ENOTSUP);
}

static void test_kernel_missing_root(void **state)
{
	struct fake_sysfs *fs = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/does-not-exist", fs->root);
	assert_int_equal(hostcheck__kernel(path), -ENOTSUP);
}

static void test_kernel_btf_without_uprobes(void **state)
{
	struct fake_sysfs *fs = *state;

	make_file(fs->root, BTF);
	assert_int_equal(hostcheck__kernel(fs->root), -ENOTSUP);
}

static void test_kernel_uprobes_without_btf(void **state)
{
	struct fake_sysfs *fs = *state;

	make_file(fs->root, UPROBE_TYPE);
	assert_int_equal(hostcheck__kernel(fs->root), -ENOTSUP);
}

static void test_kernel_uprobe_dir_without_type(void **state)
{
	struct fake_sysfs *fs = *state;

	make_file(fs->root, BTF);
	make_file(fs->root, "bus/event_source/devices/uprobe/format/retprobe");
	assert_int_equal(hostcheck__kernel(fs->root), -ENOTSUP);
}

static void test_kernel_btf_dir_without_vmlinux(void **state)
{
	struct fake_sysfs *fs = *state;

	make_file(fs->root, "kernel/btf/ext4");
	make_file(fs->root, UPROBE_TYPE);
	assert_int_equal(hostcheck__kernel(fs->root), -ENOTSUP);
}

static void test_kernel_both_present(void **state)
{
	struct fake_sysfs *fs = *state;

	make_file(fs->root, BTF);
	make_file(fs->root, UPROBE_TYPE);
	assert_int_equal(hostcheck__kernel(fs->root), 0);
}

/* tracefs at either place libbpf looks; only syscalls: events count. */
static void test_syscall_tracepoint_in_either_tracefs(void **state)
{
	struct fake_sysfs *fs = *state;
	char why[256];

	assert_false(hostcheck__syscall_tracepoint(fs->root, "sys_enter_futex"));
	make_file(fs->root, "kernel/tracing/events/sched/sys_enter_futex/id");
	assert_false(hostcheck__syscall_tracepoint(fs->root, "sys_enter_futex"));
	make_file(fs->root, "kernel/tracing/events/syscalls/sys_enter_futex/id");
	assert_true(hostcheck__syscall_tracepoint(fs->root, "sys_enter_futex"));
	assert_false(hostcheck__syscall_tracepoint(fs->root, "sys_enter_futex_wait"));
	make_file(fs->root, "kernel/debug/tracing/events/syscalls/sys_enter_futex_wait/id");
	assert_true(hostcheck__syscall_tracepoint(fs->root, "sys_enter_futex_wait"));
	/* Present already: nothing to mount. */
	assert_int_equal(hostcheck__tracepoints(fs->root, why, sizeof(why)), 0);
}

/* The effective capability set of this process, from capget(2). */
static void get_caps(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct header = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};

	memset(data, 0, 2 * sizeof(*data));
	assert_int_equal(syscall(SYS_capget, &header, data), 0);
}

static bool has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Runs hostcheck__privileges in a child whose effective set is exactly
 * `keep` (a subset of what this process may use); returns its result.
 * Lowering the effective set needs no privilege.
 */
static int privileges_with(const int *keep, int n_keep)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct header = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct data[2];

		if (syscall(SYS_capget, &header, data))
			_exit(200);
		data[0].effective = data[1].effective = 0;
		for (int i = 0; i < n_keep; i++)
			data[keep[i] / 32].effective |= 1u << (keep[i] % 32);
		if (syscall(SYS_capset, &header, data))
			_exit(201);
		_exit(-hostcheck__privileges());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_true(WEXITSTATUS(status) < 200);
	return -WEXITSTATUS(status);
}

static void test_privileges_without_capabilities(void **state UNUSED)
{
	assert_int_equal(privileges_with(NULL, 0), -EPERM);
}

static void test_privileges_match_this_process(void **state UNUSED)
{
	struct __user_cap_data_struct data[2];
	bool enough;

	get_caps(data);
	enough = has_cap(data, CAP_SYS_ADMIN) ||
		 (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON) &&
		  has_cap(data, CAP_SYS_PTRACE));
	assert_int_equal(hostcheck__privileges(), enough ? 0 : -EPERM);
}

static void test_privileges_cap_sys_admin_alone(void **state UNUSED)
{
	static const int keep[] = { CAP_SYS_ADMIN };
	struct __user_cap_data_struct data[2];

	get_caps(data);
	if (!has_cap(data, CAP_SYS_ADMIN))
		skip();
	assert_int_equal(privileges_with(keep, 1), 0);
}

static void test_privileges_bpf_perfmon_ptrace(void **state UNUSED)
{
	static const int keep[] = { CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE };
	struct __user_cap_data_struct data[2];

	get_caps(data);
	if (!has_cap(data, CAP_BPF) || !has_cap(data, CAP_PERFMON) ||
	    !has_cap(data, CAP_SYS_PTRACE))
		skip();
	assert_int_equal(privileges_with(keep, 3), 0);
}

static void test_privileges_each_of_three_is_needed(void **state UNUSED)
{
	static const int without_ptrace[] = { CAP_BPF, CAP_PERFMON };
	static const int without_perfmon[] = { CAP_BPF, CAP_SYS_PTRACE };
	static const int without_bpf[] = { CAP_PERFMON, CAP_SYS_PTRACE };
	struct __user_cap_data_struct data[2];

	get_caps(data);
	if (!has_cap(data, CAP_BPF) || !has_cap(data, CAP_PERFMON) ||
	    !has_cap(data, CAP_SYS_PTRACE))
		skip();
	assert_int_equal(privileges_with(without_ptrace, 2), -EPERM);
	assert_int_equal(privileges_with(without_perfmon, 2), -EPERM);
	assert_int_equal(privileges_with(without_bpf, 2), -EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kernel_empty_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_syscall_tracepoint_in_either_tracefs,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_missing_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_btf_without_uprobes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_uprobes_without_btf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_uprobe_dir_without_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_btf_dir_without_vmlinux, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_both_present, setup, teardown),
		cmocka_unit_test(test_privileges_without_capabilities),
		cmocka_unit_test(test_privileges_match_this_process),
		cmocka_unit_test(test_privileges_cap_sys_admin_alone),
		cmocka_unit_test(test_privileges_bpf_perfmon_ptrace),
		cmocka_unit_test(test_privileges_each_of_three_is_needed),
	};

	return cmocka_run_group_tests_name("hostcheck", tests, NULL, NULL);
}
