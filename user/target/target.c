// SPDX-License-Identifier: GPL-2.0
/*
 * Launching: fork, PTRACE_TRACEME, exec.  The exec stop comes before the
 * dynamic loader runs, when libc is not mapped yet, so the child is
 * stepped syscall by syscall (PTRACE_SYSCALL) until libc has an executable
 * mapping.  The loader maps every DT_NEEDED library before it runs any
 * constructor, so probes attached at that point see the first lock call
 * of the program.  A syscall made from outside the loader while no libc is
 * mapped means the program never maps one.  Rejected: LD_PRELOAD or a
 * stop at the entry point (a constructor could lock first), and resolving
 * the libc path ahead of time (it is the loader's decision, not ours).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfimage.h"
#include "linereader.h"
#include "log.h"
#include "procmaps.h"
#include "notices.h"
#include "target.h"

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000

struct target {
	pid_t pid;
	int pidfd;
	bool launched;
	bool held;		/* launched and still ptrace-stopped */
	bool reaped;
	int wait_status;
	char comm[64];
};

static int target__new(pid_t pid, struct target **out)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->pidfd = -1;
	*out = t;
	return 0;
}

static int target__open_pidfd(struct target *t)
{
	t->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	return t->pidfd < 0 ? -errno : 0;
}

/* Reads state, flags and comm from /proc/PID/stat. */
static int read_stat(pid_t pid, char *state, unsigned long *flags,
		     char *comm, size_t comm_len)
{
	char path[64], buf[1024], *open_paren, *close_paren;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = linereader__small(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : n;
	/* comm may hold spaces and parentheses: take the last ')'. */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EINVAL;
	snprintf(comm, comm_len, "%.*s", (int)(close_paren - open_paren - 1),
		 open_paren + 1);
	if (sscanf(close_paren + 2, "%c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return -EINVAL;
	return 0;
}

static pid_t read_tgid(pid_t pid)
{
	struct linereader *lines;
	pid_t tgid = pid;
	char path[64], *line;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (linereader__open(path, &lines))
		return pid;
	while ((line = linereader__next(lines, NULL)) &&
	       sscanf(line, "Tgid: %d", &tgid) != 1)
		;
	linereader__close(lines);
	return tgid;
}

/* Whether a thread other than the (exited) leader still runs. */
static bool process_has_live_threads(pid_t pid)
{
	char path[64], comm[64];
	struct dirent *entry;
	bool live = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!live && (entry = readdir(dir))) {
		unsigned long flags;
		char state = 0;
		int tid = atoi(entry->d_name);

		if (tid <= 0 || tid == pid)
			continue;
		live = !read_stat(tid, &state, &flags, comm, sizeof(comm)) &&
		       state != 'Z' && state != 'X';
	}
	closedir(dir);
	return live;
}

int target__attach(pid_t pid, struct target **out)
{
	unsigned long flags = 0;
	struct target *t;
	char state = 0;
	pid_t tgid;
	int err;

	if (kill(pid, 0) && errno == ESRCH) {
		pr_err("no process with PID %d", (int)pid);
		return -ESRCH;
	}
	tgid = read_tgid(pid);
	if (tgid != pid) {
		pr_warn("PID %d is a thread of process %d: profiling all of "
			"process %d (--per-thread splits rows by thread)",
			(int)pid, (int)tgid, (int)tgid);
		pid = tgid;
	}
	err = target__new(pid, &t);
	if (err)
		return err;
	err = read_stat(pid, &state, &flags, t->comm, sizeof(t->comm));
	if (err) {
		pr_err("cannot read /proc/%d/stat: %s", (int)pid, strerror(-err));
		goto fail;
	}
	if (flags & PF_KTHREAD) {
		pr_err("PID %d (%s) is a kernel thread; syncprof profiles "
		       "user-space processes", (int)pid, t->comm);
		err = -EINVAL;
		goto fail;
	}
	if (state == 'Z' || state == 'X') {
		if (process_has_live_threads(pid))
			pr_err("PID %d (%s): its main thread has exited while other "
			       "threads run on; such processes are not supported yet",
			       (int)pid, t->comm);
		else
			pr_err("PID %d (%s) has exited", (int)pid, t->comm);
		err = -ESRCH;
		goto fail;
	}
	err = target__open_pidfd(t);
	if (err) {
		pr_err("cannot watch PID %d: %s", (int)pid, strerror(-err));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	target__free(t);
	return err;
}

/* An executable mapping of a library named by one of stems that defines func. */
static const struct procmaps_entry *
find_mapping_defining(const struct procmaps *maps, pid_t pid,
		      const char *const *stems, size_t n_stems, const char *func_name)
{
	for (size_t s = 0; s < n_stems; s++) {
		for (size_t i = 0; i < procmaps__count(maps); i++) {
			const struct procmaps_entry *e = procmaps__entry(maps, i);
			struct elfimage *image;
			struct elfimage_func func;
			char path[PATH_MAX];
			bool defines;

			if (!e->exec || !procmaps__is_library(e->path, stems[s]))
				continue;
			if (procmaps__file_path(pid, e, path, sizeof(path)) ||
			    elfimage__open(path, &image))
				continue;
			defines = !elfimage__find_func(image, func_name, &func);
			elfimage__close(image);
			if (defines)
				return e;
		}
	}
	return NULL;
}

static const struct procmaps_entry *
find_pthread_mapping(const struct procmaps *maps, pid_t pid)
{
	static const char *const stems[] = { "libpthread", "libc" };

	return find_mapping_defining(maps, pid, stems, 2, "pthread_mutex_lock");
}

int target__loader_library(struct target *t, char *path, size_t len)
{
	static const char *const stems[] = {
		"ld-linux-x86-64", "ld-linux-aarch64", "ld-linux", "ld",
	};
	const struct procmaps_entry *e;
	struct procmaps *maps;
	int err = procmaps__read(t->pid, &maps);

	if (err)
		return err;
	e = find_mapping_defining(maps, t->pid, stems, 4, "_dl_debug_state");
	err = e ? procmaps__file_path(t->pid, e, path, len) : -ENOENT;
	procmaps__free(maps);
	return err;
}

static bool is_static_executable(pid_t pid)
{
	struct elfimage *image;
	char path[64];
	bool dynamic;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (elfimage__open(path, &image))
		return false;
	dynamic = elfimage__is_dynamic(image);
	elfimage__close(image);
	return !dynamic;
}

bool target__maps_pthread(const struct target *t)
{
	struct procmaps *maps;
	bool found;

	if (procmaps__read(t->pid, &maps))
		return false;
	found = find_pthread_mapping(maps, t->pid) != NULL;
	procmaps__free(maps);
	return found;
}

int target__pthread_library(struct target *t, char *path, size_t len)
{
	const struct procmaps_entry *e;
	struct procmaps *maps;
	int err = procmaps__read(t->pid, &maps);

	if (err) {
		if (!target__exited(t))
			pr_err("cannot read /proc/%d/maps: %s", (int)t->pid,
			       strerror(-err));
		return err;
	}
	e = find_pthread_mapping(maps, t->pid);
	if (!e && target__exited(t)) {
		procmaps__free(maps);
		return -ESRCH;
	}
	if (!e) {
		if (is_static_executable(t->pid) && notices__go_executable(t->pid))
			pr_err("PID %d (%s) is a statically linked Go program; "
			       "syncprof needs a target that uses a shared libc, and "
			       "Go's sync.Mutex waits never reach the kernel as lock "
			       "waits anyway (Go's mutex profile sees them)",
			       (int)t->pid, t->comm);
		else if (is_static_executable(t->pid))
			pr_err("PID %d (%s) is statically linked; syncprof needs a "
			       "target that uses a shared libc (static targets are "
			       "not supported yet)", (int)t->pid, t->comm);
		else
			pr_err("PID %d (%s) maps no libc or libpthread with "
			       "pthread_mutex_lock; nothing to probe",
			       (int)t->pid, t->comm);
		procmaps__free(maps);
		return -ENOENT;
	}
	err = procmaps__file_path(t->pid, e, path, len);
	if (err && !target__exited(t))
		pr_err("cannot open %s as PID %d maps it", e->path, (int)t->pid);
	else
		pr_debug("pthread functions of PID %d: %s (%s)", (int)t->pid,
			 e->path, path);
	procmaps__free(maps);
	return err;
}

/* Executable file mappings other than the program's own: the loader's. */
static int loader_mappings(pid_t pid, uint64_t (*ranges)[2], size_t max,
			   size_t *n)
{
	struct procmaps *maps;
	struct stat exe;
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &exe))
		return -errno;
	err = procmaps__read(pid, &maps);
	if (err)
		return err;
	*n = 0;
	for (size_t i = 0; i < procmaps__count(maps) && *n < max; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);

		if (e->exec && e->path[0] == '/' && e->inode != exe.st_ino) {
			ranges[*n][0] = e->start;
			ranges[*n][1] = e->end;
			(*n)++;
		}
	}
	procmaps__free(maps);
	return 0;
}

static bool libc_ready(pid_t pid)
{
	struct procmaps *maps;
	bool ready;

	if (procmaps__read(pid, &maps))
		return false;
	ready = find_pthread_mapping(maps, pid) != NULL;
	procmaps__free(maps);
	return ready;
}

/*
 * Steps the held child through its loader's syscalls until libc is
 * mapped.  At exec, the executable mappings are the program's and the
 * loader's; a syscall issued from anywhere else is the program's own.
 * Only an mmap can map libc, so the maps are read after mmaps alone.
 */
static int target__run_to_libc(struct target *t, const char *name)
{
	uint64_t loader[8][2];
	size_t n_loader = 0;
	bool in_syscall = false, in_mmap = false;
	int sig = 0, status, err;

	if (is_static_executable(t->pid)) {
		if (notices__go_executable(t->pid))
			pr_err("'%s' is a statically linked Go program; syncprof "
			       "needs a target that uses a shared libc, and Go's "
			       "sync.Mutex waits never reach the kernel as lock "
			       "waits anyway (Go's mutex profile sees them)", name);
		else
			pr_err("'%s' is statically linked; syncprof needs a target "
			       "that uses a shared libc (static targets are not "
			       "supported yet)", name);
		return -ENOTSUP;
	}
	err = loader_mappings(t->pid, loader, 8, &n_loader);
	if (err)
		return err;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, t->pid, 0, (void *)(long)sig))
			return -errno;
		sig = 0;
		if (waitpid(t->pid, &status, 0) < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t->held = false;
			t->reaped = true;
			t->wait_status = status;
			pr_err("'%s' exited before it mapped a libc", name);
			return -ECHILD;
		}
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status);
			continue;
		}
		if (in_syscall) {
			in_syscall = false;
			if (in_mmap && libc_ready(t->pid))
				return 0;
			continue;
		}
		in_syscall = true;
		struct user_regs_struct regs;
		bool from_loader = false;

		if (ptrace(PTRACE_GETREGS, t->pid, 0, &regs))
			return -errno;
		in_mmap = regs.orig_rax == SYS_mmap;
		for (size_t i = 0; i < n_loader; i++)
			from_loader |= regs.rip >= loader[i][0] && regs.rip < loader[i][1];
		if (!from_loader) {
			pr_err("'%s' maps no libc or libpthread with "
			       "pthread_mutex_lock; nothing to probe", name);
			return -ENOENT;
		}
	}
}

int target__launch(char *const argv[], const struct target_signals *sig,
		   struct target **out)
{
	int pipefd[2], status, child_errno = 0, err;
	struct target *t;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (pid == 0) {
		close(pipefd[0]);
		/* The command starts as it would without syncprof. */
		signal(SIGPIPE, sig->pipe_ignored ? SIG_IGN : SIG_DFL);
		sigprocmask(SIG_SETMASK, &sig->mask, NULL);
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0)
			execvp(argv[0], argv);
		child_errno = errno;
		if (write(pipefd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(126);
		_exit(127);
	}
	close(pipefd[1]);
	err = target__new(pid, &t);
	if (err) {
		close(pipefd[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return err;
	}
	t->launched = true;
	t->held = true;
	snprintf(t->comm, sizeof(t->comm), "%s", argv[0]);
	if (waitpid(pid, &status, 0) < 0) {
		err = -errno;
		close(pipefd[0]);
		goto fail;
	}
	if (!WIFSTOPPED(status)) {
		t->held = false;
		t->reaped = true;
		t->wait_status = status;
		if (read(pipefd[0], &child_errno, sizeof(child_errno)) !=
		    sizeof(child_errno))
			child_errno = ECHILD;
		close(pipefd[0]);
		pr_err("cannot run '%s': %s", argv[0], strerror(child_errno));
		err = -child_errno;
		goto fail;
	}
	close(pipefd[0]);
	char state;
	unsigned long flags;
	read_stat(pid, &state, &flags, t->comm, sizeof(t->comm));
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)PTRACE_O_TRACESYSGOOD)) {
		err = -errno;
		goto fail;
	}
	err = target__run_to_libc(t, argv[0]);
	if (err)
		goto fail;
	err = target__open_pidfd(t);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	target__free(t);
	return err;
}

bool target__exited(const struct target *t)
{
	struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

	if (t->reaped)
		return true;
	if (t->pidfd < 0)
		return kill(t->pid, 0) && errno == ESRCH;
	return poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
}

void target__refresh(struct target *t)
{
	char state, comm[sizeof(t->comm)];
	unsigned long flags;

	/* A zombie keeps its last name; a reaped process none. */
	if (!read_stat(t->pid, &state, &flags, comm, sizeof(comm)) && comm[0])
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
}

bool target__exiting(struct target *t)
{
	char state, comm[sizeof(t->comm)];
	unsigned long flags;

	if (read_stat(t->pid, &state, &flags, comm, sizeof(comm)))
		return true;	/* gone from /proc */
	if (comm[0])
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	if (target__exited(t))
		return true;
	/* A leader that left with pthread_exit lives on in its threads. */
	return (state == 'Z' || state == 'X' || (flags & PF_EXITING)) &&
	       !process_has_live_threads(t->pid);
}

int target__resume(struct target *t)
{
	if (!t->held)
		return 0;
	if (ptrace(PTRACE_DETACH, t->pid, 0, 0))
		return -errno;
	t->held = false;
	return 0;
}

pid_t target__pid(const struct target *t)
{
	return t->pid;
}

const char *target__comm(const struct target *t)
{
	return t->comm;
}

int target__cmdline(const struct target *t, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd, err = 0;

	if (!len)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		err = -errno;
	else if (n == 0)
		err = -ENOENT;	/* a zombie, or a kernel thread */
	close(fd);
	if (err)
		return err;
	while (n > 0 && !buf[n - 1])
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	return 0;
}

int target__pidfd(const struct target *t)
{
	return t->pidfd;
}

bool target__launched(const struct target *t)
{
	return t->launched;
}

int target__reap(struct target *t)
{
	if (!t->launched || t->reaped)
		return 0;
	if (waitpid(t->pid, &t->wait_status, 0) < 0)
		return -errno;
	t->reaped = true;
	return 0;
}

int target__exit_code(const struct target *t)
{
	if (!t->launched || !t->reaped)
		return -1;
	if (WIFEXITED(t->wait_status))
		return WEXITSTATUS(t->wait_status);
	if (WIFSIGNALED(t->wait_status))
		return 128 + WTERMSIG(t->wait_status);
	return -1;
}

void target__free(struct target *t)
{
	if (!t)
		return;
	if (t->held) {
		/* Launched, never resumed: it ran no code of its own. */
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
	if (t->pidfd >= 0)
		close(t->pidfd);
	free(t);
}
