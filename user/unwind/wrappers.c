// SPDX-License-Identifier: GPL-2.0
/*
 * Runtimes' lock functions, as one table: every function here is part of
 * a lock implementation, so the call site is its caller (as if named with
 * --skip), and a futex wait that passes through a typed one gets its
 * kind instead of `futex` (bpf/unwind/unwind.bpf.c picks the kind: the
 * outermost WRAPPER_F_WHOLE frame, else libc's own classification, else
 * the innermost typed frame).  --no-skip turns the table off; --skip adds
 * to it.  The runtimes' release functions are here too, untyped: a
 * release's site (--blame, --why's roots) is the unlock's caller, as a
 * wait's is the lock's.
 *
 * Chosen: shell globs over demangled names, the same matcher as --skip,
 * so a user's addition and a built-in one behave alike, and a name
 * without its parameter list matches ("ns::f" for "ns::f(int) const").
 * Entries are tried in order, the first match wins: a typed specific
 * name before an untyped catch-all of the same runtime.  Only functions
 * with a symbol (and, with WRAPPER_F_CALLEES, the symbol-less slow paths
 * they call) have a range to skip; a wrapper inlined into the user's
 * function is already at the user's line.
 *
 * Rejected: one type per runtime (Rust's Mutex, Condvar, RwLock and park
 * all wait in one futex_wait, and must stay apart), and matching by
 * library file name (QEMU and Rust link their lock code statically).
 */
#include "syncprof.h"
#include "wrappers.h"

#define U	WRAPPER_UNTYPED
#define WHOLE	WRAPPER_F_WHOLE
#define CALLEES	WRAPPER_F_CALLEES

static const struct wrapper table[] = {
	/* QEMU (util/qemu-thread-posix.c, the BQL in system/cpus.c). */
	{ "qemu_mutex_lock_impl", SP_TYPE_MUTEX, 0, "QEMU" },
	{ "qemu_mutex_trylock_impl", SP_TYPE_MUTEX, 0, "QEMU" },
	{ "qemu_rec_mutex_lock_impl", SP_TYPE_REC_MUTEX, 0, "QEMU" },
	{ "qemu_rec_mutex_trylock_impl", SP_TYPE_REC_MUTEX, 0, "QEMU" },
	{ "qemu_cond_wait_impl", SP_TYPE_CONDVAR, 0, "QEMU" },
	{ "qemu_cond_timedwait_impl", SP_TYPE_CONDVAR, 0, "QEMU" },
	{ "qemu_sem_wait", SP_TYPE_SEM, WHOLE, "QEMU" },
	{ "qemu_sem_timedwait", SP_TYPE_SEM, WHOLE, "QEMU" },
	{ "qemu_sem_*", U, 0, "QEMU" },
	/* QemuEvent: waiting until another thread sets it (the RCU
	   thread's wait for work, synchronize_rcu's for a grace period). */
	{ "qemu_event_wait", SP_TYPE_PARK, WHOLE, "QEMU" },
	{ "qemu_futex_wait", U, 0, "QEMU" },
	{ "qemu_mutex_lock_iothread_impl", SP_TYPE_MUTEX, 0, "QEMU" },
	{ "bql_lock_impl", SP_TYPE_MUTEX, 0, "QEMU" },
	{ "qemu_thread_join", SP_TYPE_JOIN, WHOLE, "QEMU" },
	/* Releases: a blame row's site is the unlock's caller. */
	{ "qemu_mutex_unlock_impl", U, 0, "QEMU" },
	{ "qemu_rec_mutex_unlock_impl", U, 0, "QEMU" },
	{ "qemu_cond_signal", U, 0, "QEMU" },
	{ "qemu_cond_broadcast", U, 0, "QEMU" },
	{ "qemu_event_set", U, 0, "QEMU" },
	{ "qemu_futex_wake", U, 0, "QEMU" },
	{ "qemu_mutex_unlock_iothread", U, 0, "QEMU" },
	{ "bql_unlock", U, 0, "QEMU" },
	/* QEMU's synchronization profiler (util/qsp.c, `sync-profile on`):
	   its wrappers stand between the caller and the _impl functions. */
	{ "qsp_mutex_lock", SP_TYPE_MUTEX, 0, "QEMU" },
	{ "qsp_mutex_trylock", SP_TYPE_MUTEX, 0, "QEMU" },
	{ "qsp_bql_mutex_lock", SP_TYPE_MUTEX, 0, "QEMU" },
	{ "qsp_rec_mutex_lock", SP_TYPE_REC_MUTEX, 0, "QEMU" },
	{ "qsp_rec_mutex_trylock", SP_TYPE_REC_MUTEX, 0, "QEMU" },
	{ "qsp_cond_wait", SP_TYPE_CONDVAR, 0, "QEMU" },
	{ "qsp_cond_timedwait", SP_TYPE_CONDVAR, 0, "QEMU" },

	/* GLib (glib/gthread-posix.c): futex-based GMutex and GCond whose
	   slow paths are static. */
	{ "g_mutex_lock", SP_TYPE_MUTEX, CALLEES, "GLib" },
	{ "g_mutex_lock_slowpath", SP_TYPE_MUTEX, 0, "GLib" },
	{ "g_rec_mutex_lock", SP_TYPE_REC_MUTEX, 0, "GLib" },
	{ "g_rw_lock_reader_lock", SP_TYPE_RWLOCK_R, 0, "GLib" },
	{ "g_rw_lock_writer_lock", SP_TYPE_RWLOCK_W, 0, "GLib" },
	{ "g_rw_lock_*", U, 0, "GLib" },
	{ "g_cond_wait", SP_TYPE_CONDVAR, CALLEES, "GLib" },
	{ "g_cond_wait_until", SP_TYPE_CONDVAR, CALLEES, "GLib" },
	{ "g_cond_timed_wait", SP_TYPE_CONDVAR, CALLEES, "GLib" },
	{ "g_bit_lock", SP_TYPE_MUTEX, 0, "GLib" },
	{ "g_pointer_bit_lock*", SP_TYPE_MUTEX, 0, "GLib" },
	{ "g_thread_join", SP_TYPE_JOIN, WHOLE | CALLEES, "GLib" },
	{ "g_mutex_unlock", U, CALLEES, "GLib" },
	{ "g_mutex_unlock_slowpath", U, 0, "GLib" },
	{ "g_rec_mutex_unlock", U, 0, "GLib" },
	{ "g_cond_signal", U, 0, "GLib" },
	{ "g_cond_broadcast", U, 0, "GLib" },
	{ "g_bit_unlock", U, 0, "GLib" },
	{ "g_pointer_bit_unlock*", U, 0, "GLib" },

	/* Rust std: sys::unix::locks::futex (1.63), futex_mutex (later),
	   sys::sync::mutex::futex (1.79+); parking_lot. */
	{ "std::sys::*futex*::Mutex::*", SP_TYPE_MUTEX, 0, "Rust std" },
	{ "std::sys::*futex*::Condvar::*", SP_TYPE_CONDVAR, 0, "Rust std" },
	{ "std::sys::*futex*::RwLock::read*", SP_TYPE_RWLOCK_R, 0, "Rust std" },
	{ "std::sys::*futex*::RwLock::write*", SP_TYPE_RWLOCK_W, 0, "Rust std" },
	{ "std::sys::*futex*::RwLock::*", U, 0, "Rust std" },
	{ "std::sys::*::futex::futex_wait", U, 0, "Rust std" },
	{ "std::sys::*::futex::futex_wake*", U, 0, "Rust std" },
	{ "std::sys::*Parker::park*", SP_TYPE_PARK, WHOLE, "Rust std" },
	{ "std::sys::*::thread::Thread::join", SP_TYPE_JOIN, WHOLE, "Rust std" },
	{ "std::thread::JoinHandle*::join", SP_TYPE_JOIN, WHOLE, "Rust std" },
	{ "std::thread::JoinInner*::join", SP_TYPE_JOIN, WHOLE, "Rust std" },
	{ "std::thread::park*", SP_TYPE_PARK, WHOLE, "Rust std" },
	{ "std::sync::barrier::Barrier::wait", SP_TYPE_BARRIER, WHOLE, "Rust std" },
	{ "std::sync::*", U, 0, "Rust std" },
	{ "parking_lot::raw_mutex::RawMutex::lock_slow", SP_TYPE_MUTEX, 0, "parking_lot" },
	{ "parking_lot::raw_rwlock::RawRwLock::lock_shared_slow", SP_TYPE_RWLOCK_R, 0, "parking_lot" },
	{ "parking_lot::raw_rwlock::RawRwLock::lock_exclusive_slow", SP_TYPE_RWLOCK_W, 0, "parking_lot" },
	{ "parking_lot::raw_rwlock::RawRwLock::lock_upgradable_slow", SP_TYPE_RWLOCK_W, 0, "parking_lot" },
	{ "parking_lot::condvar::Condvar::wait*", SP_TYPE_CONDVAR, 0, "parking_lot" },
	{ "parking_lot::*::lock_slow", SP_TYPE_MUTEX, 0, "parking_lot" },
	{ "parking_lot_core::parking_lot::park*", U, 0, "parking_lot" },
	{ "parking_lot_core::thread_parker::*", U, 0, "parking_lot" },

	/* libstdc++: the out-of-line parts (the rest is inlined into the
	   user's function, at the user's line already). */
	{ "std::thread::join", SP_TYPE_JOIN, WHOLE, "libstdc++" },
	{ "std::condition_variable::wait*", SP_TYPE_CONDVAR, 0, "libstdc++" },
	{ "std::_V2::condition_variable_any::wait*", SP_TYPE_CONDVAR, 0, "libstdc++" },
	{ "std::__atomic_futex_unsigned*", U, 0, "libstdc++" },
	{ "std::condition_variable::notify*", U, 0, "libstdc++" },
	{ "std::_V2::condition_variable_any::notify*", U, 0, "libstdc++" },
	/* Templates: the demangled name starts with the return type. */
	{ "*std::__atomic_wait_address*__atomic_semaphore*", SP_TYPE_SEM, WHOLE, "libstdc++" },
	{ "*std::__atomic_semaphore::*", SP_TYPE_SEM, WHOLE, "libstdc++" },
	{ "*std::counting_semaphore<*>::*", SP_TYPE_SEM, WHOLE, "libstdc++" },
	{ "*std::__tree_barrier<*>::*", SP_TYPE_BARRIER, WHOLE, "libstdc++" },
	{ "*std::barrier<*>::*", SP_TYPE_BARRIER, WHOLE, "libstdc++" },
	{ "*std::__atomic_wait_address*", U, 0, "libstdc++" },
	{ "*std::__detail::__platform_wait*", U, 0, "libstdc++" },
	{ "*std::__detail::__waiter*", U, 0, "libstdc++" },
	{ "*std::__detail::__platform_notify*", U, 0, "libstdc++" },

	/* PostgreSQL (storage/lmgr/lwlock.c, port/posix_sema.c). */
	{ "PGSemaphoreLock", SP_TYPE_SEM, 0, "PostgreSQL" },
	{ "LWLockAcquire", U, 0, "PostgreSQL" },
	{ "LWLockAcquireOrWait", U, 0, "PostgreSQL" },
	{ "LWLockWaitForVar", U, 0, "PostgreSQL" },
	{ "LWLockWaitListLock", U, 0, "PostgreSQL" },
	{ "LWLockDequeueSelf", U, 0, "PostgreSQL" },
	{ "LWLockRelease*", U, 0, "PostgreSQL" },
	{ "LWLockWakeup", U, 0, "PostgreSQL" },
	{ "LWLockUpdateVar", U, 0, "PostgreSQL" },
	{ "PGSemaphoreUnlock", U, 0, "PostgreSQL" },
	/* A heavyweight lock's wait (storage/lmgr/proc.c): a lock wait,
	   asleep on the backend's latch (--off-cpu), at the lock manager's
	   call. */
	{ "ProcSleep", SP_TYPE_MUTEX, 0, "PostgreSQL" },
	/* The latch (storage/ipc/latch.c): every wait of a backend that is
	   not an LWLock's sleeps here; the site is its caller. */
	{ "WaitLatch", U, 0, "PostgreSQL" },
	{ "WaitLatchOrSocket", U, 0, "PostgreSQL" },
	{ "WaitEventSetWait", U, CALLEES, "PostgreSQL" },

	/* InnoDB (MariaDB storage/innobase/sync/srw_lock.cc). */
	{ "srw_mutex_impl<*>::wait_and_lock", SP_TYPE_MUTEX, 0, "InnoDB" },
	{ "srw_mutex_impl<*>::wait", SP_TYPE_MUTEX, 0, "InnoDB" },
	{ "ssux_lock_impl<*>::rd_wait", SP_TYPE_RWLOCK_R, 0, "InnoDB" },
	{ "ssux_lock_impl<*>::wr_wait", SP_TYPE_RWLOCK_W, 0, "InnoDB" },
	{ "ssux_lock_impl<*>::u_wait", SP_TYPE_RWLOCK_W, 0, "InnoDB" },
	{ "ssux_lock_impl<*>::wait", U, 0, "InnoDB" },
	{ "srw_mutex_impl<*>::wake*", U, 0, "InnoDB" },
	{ "ssux_lock_impl<*>::wake*", U, 0, "InnoDB" },
	{ "srw_lock_impl<*>::psi_*", U, 0, "InnoDB" },
	{ "ssux_lock::psi_*", U, 0, "InnoDB" },

	/* Abseil: the kind of the public call wins over LockSlow's. */
	{ "absl::*Mutex::ReaderLock*", SP_TYPE_RWLOCK_R, WHOLE, "Abseil" },
	{ "absl::*Mutex::Lock", SP_TYPE_MUTEX, WHOLE, "Abseil" },
	{ "absl::*Mutex::LockSlow*", SP_TYPE_MUTEX, 0, "Abseil" },
	{ "absl::*CondVar::Wait*", SP_TYPE_CONDVAR, WHOLE, "Abseil" },
	{ "absl::*CondVar::Signal*", U, 0, "Abseil" },
	{ "absl::*Mutex::*", U, 0, "Abseil" },
	{ "absl::*synchronization_internal::*", U, 0, "Abseil" },
	{ "AbslInternalPerThreadSem*", U, 0, "Abseil" },

	/* folly. */
	{ "folly::SharedMutexImpl<*>::lockSharedImpl*", SP_TYPE_RWLOCK_R, 0, "folly" },
	{ "folly::SharedMutexImpl<*>::lockExclusiveImpl*", SP_TYPE_RWLOCK_W, 0, "folly" },
	{ "folly::SharedMutexImpl<*>::*", U, 0, "folly" },
	{ "folly::detail::distributed_mutex::*lock*", SP_TYPE_MUTEX, 0, "folly" },
	{ "folly::MicroLockCore::lockSlowPath*", SP_TYPE_MUTEX, 0, "folly" },
	{ "folly::SaturatingSemaphore<*>::*", SP_TYPE_SEM, 0, "folly" },
	{ "folly::Baton<*>::*", U, 0, "folly" },
	{ "folly::detail::futexWait*", U, 0, "folly" },
	{ "folly::detail::futexWake*", U, 0, "folly" },

	/* HotSpot (libjvm): monitors, where its symbols are there. */
	{ "ObjectMonitor::enter*", SP_TYPE_MUTEX, WHOLE, "HotSpot" },
	{ "ObjectMonitor::EnterI", SP_TYPE_MUTEX, WHOLE, "HotSpot" },
	{ "ObjectMonitor::wait", SP_TYPE_CONDVAR, WHOLE, "HotSpot" },
	{ "Parker::park", U, 0, "HotSpot" },
	{ "PlatformEvent::park*", U, 0, "HotSpot" },
	{ "os::PlatformEvent::park*", U, 0, "HotSpot" },
	{ "ObjectMonitor::exit*", U, 0, "HotSpot" },
	{ "ObjectMonitor::notify*", U, 0, "HotSpot" },
	{ "Parker::unpark", U, 0, "HotSpot" },
	{ "PlatformEvent::unpark", U, 0, "HotSpot" },
	{ "os::PlatformEvent::unpark", U, 0, "HotSpot" },
};

const struct wrapper *wrappers__table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}
