"""Runtimes' own locks, in contended mode, without any flag: a
QEMU-style two-level lock wrapper (qemulocks), GLib's futex-based
GMutex and GCond (glocks), Rust std's Mutex, Condvar and RwLock
(rustlocks, built by Debian's rustc) and C++20's shared_mutex,
counting_semaphore and thread::join (cxxrt).  Each row is at the user's
own line, of the user's kind of lock, its count exact and its wait
within 3% of the target's own clock; --no-skip gives the wrapper back."""
import os
import re
import shutil
import subprocess
import time

from harness import (BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase,
                     parse_reports)

TARGETS = os.path.join(BUILD, "tests", "targets")
SOURCES = os.path.join(ROOT, "tests", "targets")
TOLERANCE = 0.03
ITERS = 20


def marker(source, name):
    with open(os.path.join(SOURCES, source)) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"CALLSITE:{name}\b", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {source}")


def thread_name(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


class Runtimes(SyncprofTestCase):

    def run_target(self, name, *args, target_args=()):
        run = self.launch(["--mode", "contended", "--top", "0", *args],
                          [os.path.join(TARGETS, name), "--iters", str(ITERS),
                           "--hold-us", "3000", "--truth", self.path("truth.json"),
                           *target_args])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0)
        return report, self.truth(), run

    def row_at(self, report, source, name):
        line = marker(source, name)
        rows = [r for r in report["rows"]
                if r["callsite"]["line"] == line
                and (r["callsite"]["file"] or "").endswith(source)]
        self.assertEqual(len(rows), 1, f"rows at {source}:{line}: "
                         f"{[(r['type'], r['callsite']) for r in report['rows']]}")
        return rows[0]

    def assertPath(self, row, truth, path, kind, symbol=None):
        self.assertEqual(row["type"], kind, row)
        self.assertEqual(row["count"], truth["paths"][path]["count"], row)
        self.assertEqual(row["count"], ITERS)
        known = truth["paths"][path]
        if "blocked_ns" in known:
            # The futex sleep lies between what the target knows of it
            # (from when its helper saw it sleep) and its whole call (a
            # spin and yields first, which a loaded machine stretches).
            self.assertInside(row["wait_ns"], known["wait_ns"], path)
            self.assertGreaterEqual(row["wait_ns"],
                                    known["blocked_ns"] * (1 - TOLERANCE),
                                    f"{path}: {row['wait_ns']} vs {known}")
        else:
            self.assertWithin(row["wait_ns"], known["wait_ns"], TOLERANCE,
                              what=path)
        if symbol:
            self.assertTrue((row["object_symbol"] or "").startswith(symbol), row)

    # --- QEMU's shape: two levels of wrappers --------------------------------

    def test_qemu_style_wrappers_at_the_callers_line(self):
        report, truth, _ = self.run_target("qemulocks")
        bql = self.row_at(report, "qemulocks.c", "bql")
        self.assertEqual(bql["callsite"]["function"], "vcpu_loop")
        self.assertEqual(bql["object"], truth["objects"]["bql"])
        self.assertPath(bql, truth, "bql", "mutex", "qemu_global_mutex")
        halt = self.row_at(report, "qemulocks.c", "halt")
        self.assertEqual(halt["object"], truth["objects"]["halt_cond"])
        self.assertPath(halt, truth, "halt", "condvar", "halt_cond")
        # A QemuEvent's wait is an event (the RCU thread's wait for work).
        event = self.row_at(report, "qemulocks.c", "event")
        self.assertEqual(event["object"], truth["objects"]["event"])
        self.assertEqual(event["class"], "event")
        self.assertEqual(event["callsite"]["function"], "event_loop")
        self.assertPath(event, truth, "event", "park", "work_event")
        # The wrappers stay in the stack: only the call site moved.
        frames = [f["function"] for f in bql["stacks"][0]["frames"]]
        self.assertEqual(frames[:3], ["qemu_mutex_lock_impl",
                                      "qemu_mutex_lock_iothread_impl", "vcpu_loop"])

    def test_release_site_is_the_unlock_wrappers_caller(self):
        report, truth, _ = self.run_target("qemulocks", "--blame")
        line = marker("qemulocks.c", "bql_release")
        released = [b for b in report["blame"]
                    if b["object"] == truth["objects"]["bql"]
                    and b["type"] == "mutex" and b["release"]
                    and b["release"]["line"] == line]
        self.assertEqual(len(released), 1, report["blame"])
        self.assertEqual(released[0]["release"]["function"], "holder")
        self.assertEqual(released[0]["count"], ITERS)
        for b in report["blame"]:
            self.assertNotEqual((b["release"] or {}).get("function"),
                                "qemu_mutex_unlock_impl", b)

    def test_no_skip_gives_the_wrapper_back(self):
        report, truth, _ = self.run_target("qemulocks", "--no-skip")
        row = self.row_at(report, "qemulocks.c", "mutex_lock_impl")
        self.assertEqual(row["callsite"]["function"], "qemu_mutex_lock_impl")
        self.assertEqual(row["object"], truth["objects"]["bql"])
        self.assertPath(row, truth, "bql", "mutex")
        lines = {r["callsite"]["line"] for r in report["rows"]}
        self.assertNotIn(marker("qemulocks.c", "bql"), lines)

    # --- GLib ------------------------------------------------------------------

    def test_glib_mutex_cond_and_rwlock_at_the_users_line(self):
        # Reported while the target lives: a GRWLock's name is read from
        # its memory (it points to the rwlock GLib allocated).
        report, truth, _ = self.run_target("glocks", "--duration", "1.5",
                                           target_args=("--linger-ms", "4000"))
        gmutex = self.row_at(report, "glocks.c", "gmutex")
        self.assertEqual(gmutex["object"], truth["objects"]["gm"])
        self.assertPath(gmutex, truth, "gmutex", "mutex", "gm")
        gcond = self.row_at(report, "glocks.c", "gcond")
        self.assertPath(gcond, truth, "gcond", "condvar", "gc")
        grw = self.row_at(report, "glocks.c", "grwlock")
        self.assertPath(grw, truth, "grwlock", "rwlock-r")
        # GLib's heap pointer is the object; the user's GRWLock names it.
        self.assertNotEqual(grw["object"], truth["objects"]["grw"])
        self.assertEqual(grw["object_symbol"], "grw")
        # The slow path that no symbol names is part of the lock.
        for row in (gmutex, gcond, grw):
            self.assertTrue(row["callsite"]["module"].endswith("/glocks"), row)

    # --- Rust std --------------------------------------------------------------

    def test_rust_std_locks_typed_at_the_users_line(self):
        report, truth, _ = self.run_target("rustlocks")
        kinds = {"mutex": ("mutex", "MUTEX"), "condvar": ("condvar", "CONDVAR"),
                 "read": ("rwlock-r", "RWLOCK"), "write": ("rwlock-w", "RWLOCK")}
        for path, (kind, static) in kinds.items():
            with self.subTest(path=path):
                row = self.row_at(report, "rustlocks.rs", path)
                self.assertEqual(row["callsite"]["function"], "rustlocks::main")
                self.assertPath(row, truth, path, kind, "rustlocks::" + static)
        # park waits for an unpark, not a lock: its own kind, class event.
        park = self.row_at(report, "rustlocks.rs", "park")
        self.assertPath(park, truth, "park", "park")
        self.assertEqual(park["class"], "event")
        futex = [r for r in report["rows"] if r["type"] == "futex"
                 and r["callsite"]["module"].endswith("/rustlocks")]
        self.assertEqual(futex, [])

    # --- C++20 -----------------------------------------------------------------

    def test_cxx_shared_mutex_semaphore_and_join(self):
        report, truth, _ = self.run_target("cxxrt")
        shared = self.row_at(report, "cxxrt.cpp", "shared")
        self.assertPath(shared, truth, "shared", "rwlock-r", "smx")
        exclusive = self.row_at(report, "cxxrt.cpp", "exclusive")
        self.assertPath(exclusive, truth, "exclusive", "rwlock-w", "smx")
        sem = self.row_at(report, "cxxrt.cpp", "sem")
        self.assertEqual(sem["object"], truth["objects"]["sem"])
        self.assertPath(sem, truth, "sem", "sem", "sem")
        join = self.row_at(report, "cxxrt.cpp", "join")
        self.assertPath(join, truth, "join", "join")
        for path in ("barrier", "pbarrier"):
            with self.subTest(path=path):
                row = self.row_at(report, "cxxrt.cpp", path)
                self.assertPath(row, truth, path, "barrier")

    def test_qemu_style_wrappers_in_full_mode(self):
        """Full mode walks past the same wrappers: every call counted."""
        run = self.launch(["--mode", "full", "--top", "0"],
                          [os.path.join(TARGETS, "qemulocks"), "--iters", str(ITERS),
                           "--hold-us", "3000", "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        report, truth = run.reports[0], self.truth()
        bql = self.row_at(report, "qemulocks.c", "bql")
        self.assertPath(bql, truth, "bql", "mutex", "qemu_global_mutex")
        halt = self.row_at(report, "qemulocks.c", "halt")
        self.assertPath(halt, truth, "halt", "condvar", "halt_cond")

    def check_qsp(self, report, truth, calls):
        bql = self.row_at(report, "qemulocks.c", "bql")
        self.assertEqual(bql["callsite"]["function"], "vcpu_loop")
        self.assertPath(bql, truth, "bql", "mutex", "qemu_global_mutex")
        halt = self.row_at(report, "qemulocks.c", "halt")
        self.assertPath(halt, truth, "halt", "condvar", "halt_cond")
        if calls:
            ram = self.row_at(report, "qemulocks.c", "ram")
            self.assertEqual(ram["object_symbol"], "ram_lock")
            self.assertEqual(ram["count"], truth["paths"]["ram"]["count"])
            self.assertEqual(ram["count"], calls)
        for row in report["rows"]:
            self.assertFalse(row["callsite"]["function"].startswith("qsp_"), row)

    def test_qsp_wrappers_are_built_in(self):
        """QEMU with `sync-profile on`: QSP's wrappers stand between the
        caller and qemu_mutex_lock_impl; the rows stay at the callers'
        lines in contended mode, and full mode with --skip on them (a
        two-level wrapper) counts every call."""
        report, truth, _ = self.run_target("qemulocks", target_args=("--qsp",))
        self.check_qsp(report, truth, 0)
        calls = 2000
        for extra in ((), ("--skip", "qsp_*")):
            with self.subTest(skip=extra):
                run = self.launch(["--mode", "full", "--top", "0", *extra],
                                  [os.path.join(TARGETS, "qemulocks"), "--iters",
                                   str(ITERS), "--hold-us", "3000", "--qsp",
                                   "--calls", str(calls),
                                   "--truth", self.path("truth.json")])
                self.assertEqual(run.returncode, 0, run.stderr)
                report = run.reports[-1]
                self.assertEqual(report["dropped"], 0)
                self.check_qsp(report, self.truth(), calls)


GO_SOURCE = """package main

import "C" // cgo: linked against libc, as syncprof needs


import (
	"sync"
	"time"
)

func main() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				mu.Lock()
				time.Sleep(time.Millisecond)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
"""

MUSL_SOURCE = """#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
/* One contended acquisition of m, whatever the load: the holder lets go
 * 30 ms after main sleeps in the kernel on it (its state S). */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int held;
static volatile long main_tid;
static int main_sleeps(void) { char path[64], buf[256], *p; FILE *f;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", main_tid);
	if (!(f = fopen(path, "r"))) return 0;
	p = fgets(buf, sizeof(buf), f); fclose(f);
	if (!p || !(p = strrchr(buf, ')'))) return 0;
	return p[2] == 'S'; }
static void *holder(void *a) { pthread_mutex_lock(&m); held = 1;
	while (!main_sleeps()) usleep(1000);
	usleep(30000); pthread_mutex_unlock(&m); return a; }
int main(void) { pthread_t t; main_tid = syscall(SYS_gettid);
	pthread_create(&t, 0, holder, 0); while (!held) sched_yield();
	pthread_mutex_lock(&m); pthread_mutex_unlock(&m); pthread_join(t, 0); return 0; }
"""


class Notices(SyncprofTestCase):
    """Where syncprof is blind, it says so: once on stderr, and in every
    JSON report's notices."""

    def run_json(self, command, *args):
        run = self.launch(["--top", "0", *args], command)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertGreaterEqual(len(run.reports), 1)
        return run

    def assertNotice(self, run, words):
        for report in run.reports:
            found = [n for n in report["notices"] if words in n]
            self.assertEqual(len(found), 1, report["notices"])
        warned = [l for l in run.stderr.splitlines() if words in l]
        self.assertEqual(len(warned), 1, run.stderr)

    def test_full_mode_on_a_futex_runtime(self):
        rust = [os.path.join(TARGETS, "rustlocks"), "--iters", "2", "--hold-us", "1000"]
        run = self.run_json(rust, "--mode", "full")
        self.assertNotice(run, "Rust std's locks are futexes")
        # Contended mode sees them: nothing to say.
        run = self.run_json(rust, "--mode", "contended")
        self.assertEqual(run.reports[0]["notices"], [])
        glib = [os.path.join(TARGETS, "glocks"), "--iters", "2", "--hold-us", "1000"]
        run = self.run_json(glib, "--mode", "full")
        self.assertNotice(run, "GLib's GMutex and GCond are futexes")
        # ... while its recursive mutex and rwlock, through pthread, are
        # in the same report, as the notice says.
        self.assertNotice(run, "GRecMutex and GRWLock go through pthread")
        kinds = {r["type"] for r in run.reports[-1]["rows"]}
        self.assertTrue(kinds & {"rec_mutex", "rwlock-r", "rwlock-w"}, kinds)

    def test_innodb_without_symbols_in_full_mode(self):
        """Debian's mariadbd exports no InnoDB symbol: told by its
        settings' names in its read-only data."""
        mariadbd = "/usr/sbin/mariadbd"
        if not os.path.exists(mariadbd):
            raise AssertionError("make deps installs mariadb-server-core")
        data = self.path("data")
        os.mkdir(data)
        log = self.path("err.log")
        server = subprocess.Popen(
            [mariadbd, "--no-defaults", "--datadir=" + data,
             "--socket=" + self.path("sock"), "--skip-networking",
             "--skip-grant-tables", "--user=root",
             "--innodb-buffer-pool-size=16M", "--log-error=" + log],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.children.append(server)
        deadline = time.monotonic() + 120
        while not (os.path.exists(log) and
                   "ready for connections" in open(log).read()):
            self.assertIsNone(server.poll(), "mariadbd exited")
            self.assertLess(time.monotonic(), deadline, "mariadbd not ready")
            time.sleep(0.2)
        prof = self.start_syncprof(["--pid", str(server.pid), "--mode", "full",
                                    "--duration", "1", "--top", "0"])
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        # (Said on stderr before the attach line, which start_syncprof reads.)
        for report in run.reports:
            found = [n for n in report["notices"]
                     if "InnoDB's locks are futexes" in n]
            self.assertEqual(len(found), 1, report["notices"])
        server.terminate()
        server.wait(timeout=60)

    def test_plain_c_program_has_no_notices(self):
        run = self.run_json([os.path.join(TARGETS, "qemulocks"), "--iters", "2"],
                            "--mode", "contended")
        self.assertEqual(run.reports[0]["notices"], [])
        self.assertNotIn("warning", run.stderr)

    def test_go_program(self):
        source = self.path("main.go")
        with open(source, "w") as f:
            f.write(GO_SOURCE)
        env = dict(os.environ, GOCACHE=self.path("gocache"), GO111MODULE="off",
                   GOPATH=self.path("gopath"), CGO_ENABLED="1")
        binary = self.path("golocks")
        subprocess.run(["go", "build", "-o", binary, source], check=True, env=env,
                       capture_output=True, timeout=300)
        run = self.run_json([binary], "--mode", "contended")
        self.assertNotice(run, "a Go program")
        # Without cgo Go links statically: refused, and said why.
        with open(source, "w") as f:
            f.write(GO_SOURCE.replace('import "C"', ""))
        static = self.path("golocks-static")
        subprocess.run(["go", "build", "-o", static, source], check=True,
                       env=dict(env, CGO_ENABLED="0"), capture_output=True,
                       timeout=300)
        run = self.launch(["--mode", "contended"], [static])
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("syncprof: error:", run.stderr)
        self.assertIn("statically linked Go program", run.stderr)

    def test_musl_program(self):
        source = self.path("m.c")
        with open(source, "w") as f:
            f.write(MUSL_SOURCE)
        binary = self.path("m_musl")
        subprocess.run(["musl-gcc", "-O2", "-g", "-pthread", source, "-o", binary],
                       check=True, capture_output=True)
        run = self.run_json([binary], "--mode", "contended")
        self.assertNotice(run, "musl libc")
        # The wait itself is measured: one blocked acquisition of m.
        rows = [r for r in run.reports[0]["rows"]
                if (r["object_symbol"] or "").startswith("m")]
        self.assertEqual(sum(r["count"] for r in rows), 1, run.reports[0]["rows"])
        self.assertGreater(sum(r["wait_ns"] for r in rows), 20_000_000)

    def test_jit_frames_named_by_the_perf_map(self):
        """A JIT's /tmp/perf-PID.map names its code where stacks stop."""
        stacks = os.path.join(TARGETS, "stacks")
        run = self.launch(["--mode", "contended", "--top", "0"],
                          [stacks, "jit", "--perf-map", "--iters", "5",
                           "--hold-us", "3000", "--truth", self.path("truth.json")])
        truth = self.truth()
        perf_map = f"/tmp/perf-{truth['pid']}.map"
        self.addCleanup(os.remove, perf_map)
        self.assertEqual(run.returncode, 0, run.stderr)
        found = [s for r in run.reports[-1]["rows"] for s in r["stacks"]
                 if "path_jit" in [f["function"] for f in s["frames"]]]
        self.assertEqual(len(found), 1, run.reports[-1]["rows"])
        [stack] = found
        names = [f["function"] for f in stack["frames"]]
        self.assertEqual(names, ["stackwrap_lock", "path_jit", "jit_stub"])
        self.assertIsNone(stack["frames"][2]["module"])
        self.assertEqual(stack["end"], "stopped")
        self.assertEqual(stack["count"], truth["paths"]["path_jit"]["count"])

    def test_jvm(self):
        """A process that maps libjvm.so is told as a JVM.  No JDK here: a
        library of that name, preloaded into a C target, is what syncprof
        looks for."""
        source = self.path("jvm.c")
        with open(source, "w") as f:
            f.write("int JNI_CreateJavaVM(void) { return 0; }\n")
        library = self.path("libjvm.so")
        subprocess.run(["cc", "-shared", "-fPIC", source, "-o", library],
                       check=True, capture_output=True)
        out = self.path("report.json")
        proc = subprocess.run(
            [SYNCPROF, "--mode", "contended", "--format", "json", "-o", out, "--",
             os.path.join(TARGETS, "qemulocks"), "--iters", "2"],
            env=dict(os.environ, LD_PRELOAD=library), capture_output=True,
            text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            reports = parse_reports(f.read())
        self.assertGreaterEqual(len(reports), 1)
        for report in reports:
            [notice] = report["notices"]
            self.assertIn("a JVM", notice)
            self.assertIn("/tmp/perf-PID.map", notice)
        self.assertEqual(proc.stderr.count("a JVM"), 1, proc.stderr)


class DebianQemu(SyncprofTestCase):
    """Debian's qemu-system-x86 (it exports its functions): an idle guest's
    vCPU threads wait on their halt condvar in qemu_wait_io_event, the
    site QEMU's own QSP names, with no flag; --no-skip gives back
    qemu_cond_wait_impl."""

    def profile_qemu(self, *args):
        qemu = shutil.which("qemu-system-x86_64")
        self.assertIsNotNone(qemu, "make deps installs qemu-system-x86")
        vm = subprocess.Popen([qemu, "-nographic", "-nodefaults", "-M", "pc",
                               "-smp", "2", "-accel", "tcg,thread=multi",
                               "-m", "64", "-display", "none",
                               "-name", "guest,debug-threads=on"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        self.children.append(vm)
        self.addCleanup(vm.kill)
        # Both vCPU threads made (named "CPU 0/TCG", "CPU 1/TCG" by
        # debug-threads=on): the guest is booting, its halt waits to come.
        deadline = time.monotonic() + HANG_S
        while len([t for t in os.listdir(f"/proc/{vm.pid}/task")
                   if thread_name(vm.pid, t).startswith("CPU ")]) < 2:
            self.assertIsNone(vm.poll(), "qemu ended")
            self.assertLess(time.monotonic(), deadline, "no vCPU threads")
            time.sleep(0.05)
        out = self.path("report.json")
        proc = subprocess.run([SYNCPROF, "--mode", "contended", "--top", "0",
                               "--duration", "3", "--format", "json", "-o", out,
                               "--pid", str(vm.pid), *args],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            [report] = parse_reports(f.read())
        return report

    def test_halt_condvar_at_qemus_own_site(self):
        report = self.profile_qemu()
        halt = [r for r in report["rows"] if r["type"] == "condvar"]
        self.assertTrue(halt, report["rows"])
        for row in halt:
            self.assertEqual(row["callsite"]["function"], "qemu_wait_io_event", row)
            self.assertGreater(row["count"], 0)
        wrappers = {"qemu_cond_wait_impl", "qemu_mutex_lock_impl",
                    "qemu_mutex_lock_iothread_impl", "qemu_cond_timedwait_impl"}
        for row in report["rows"]:
            self.assertNotIn(row["callsite"]["function"], wrappers, row)
        report = self.profile_qemu("--no-skip")
        halt = [r for r in report["rows"] if r["type"] == "condvar"]
        self.assertTrue(halt, report["rows"])
        self.assertEqual({r["callsite"]["function"] for r in halt},
                         {"qemu_cond_wait_impl"})
