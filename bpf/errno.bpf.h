/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The error numbers the programs compare with, by name: vmlinux.h
 * carries the kernel's types, not its macros, so each is defined here
 * once (as <asm-generic/errno-base.h>, <asm-generic/errno.h> and the
 * kernel's <linux/errno.h> number them) rather than written as a bare
 * number where it is used.
 */
#ifndef SYNCPROF_ERRNO_BPF_H
#define SYNCPROF_ERRNO_BPF_H

#ifndef ENOENT
#define ENOENT			2
#endif
#ifndef EINTR
#define EINTR			4
#endif
#ifndef EAGAIN
#define EAGAIN			11
#endif
#ifndef EEXIST
#define EEXIST			17
#endif
#ifndef EOWNERDEAD
#define EOWNERDEAD		130
#endif
/* The kernel's own, never seen by user space: a syscall to restart. */
#ifndef ERESTARTSYS
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516
#endif

#endif
