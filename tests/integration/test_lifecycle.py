"""How syncprof starts, reports and stops: attach by PID, launch mode,
interval reports, the target exiting, signals, and the target's safety
when syncprof dies."""
import csv
import datetime
import io
import os
import re
import shutil
import signal
import subprocess
import time

from harness import HANG_S, SYNCPROF, WORKLOAD, SyncprofTestCase


def libc_path(pid):
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            if "/libc.so" in line:
                return line.split()[-1]
    raise AssertionError("no libc mapped")


def libc_text(pid, offset, length=16):
    """Bytes of the target's libc text at a file offset, as the target's
    memory holds them (a live uprobe shows there as int3)."""
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s+(\S+)", line)
            if not m or "x" not in m.group(3) or "/libc.so" not in m.group(5):
                continue
            start, end, fo = (int(m.group(i), 16) for i in (1, 2, 4))
            if fo <= offset < fo + (end - start):
                with open(f"/proc/{pid}/mem", "rb") as mem:
                    mem.seek(start + offset - fo)
                    return mem.read(length), m.group(5)
    raise AssertionError("libc text not found")


def func_file_offset(path, name):
    """File offset of a default-version dynamic symbol, via readelf."""
    out = subprocess.run(["readelf", "-W", "--dyn-syms", "-l", path],
                         capture_output=True, text=True, check=True).stdout
    vaddr = None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[7] == f"{name}@@GLIBC_2.2.5":
            vaddr = int(parts[1], 16)
    loads = re.findall(r"LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) \S+ \S+ 0x([0-9a-f]+)", out)
    for off, va, memsz in loads:
        off, va, memsz = int(off, 16), int(va, 16), int(memsz, 16)
        if va <= vaddr < va + memsz:
            return vaddr - va + off
    raise AssertionError(f"{name} not in {path}")


class Lifecycle(SyncprofTestCase):

    def test_attach_by_pid_sees_threads_created_after_attach(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "40", "--hold-us", "3000",
            "--wait-signal"))
        # The worker threads are created once it runs, after the attach.
        run = self.profile_to_the_end(target)
        self.assertIn("exited", run.stderr)
        truth = self.truth()
        rows = self.rows_for(run.reports[-1], truth["object"])
        self.assertEqual(self.total(rows, "count"), truth["count"])
        self.assertWithin(self.total(rows, "wait_ns"), truth["wait_ns"])

    def test_launch_sees_a_lock_taken_before_main(self):
        run = self.launch(["--top", "0"], self.workload_cmd(
            "mutex", "--threads", "1", "--iters", "2", "--hold-us", "100"))
        self.assertEqual(run.returncode, 0, run.stderr)
        rows = self.rows_for(run.reports[-1], self.truth()["ctor_lock"])
        self.assertEqual(self.total(rows, "count"), 1)

    def test_launch_passes_on_the_exit_status(self):
        run = self.launch([], self.workload_cmd(
            "mutex", "--threads", "1", "--iters", "1", "--exit-code", "7"))
        self.assertEqual(run.returncode, 7, run.stderr)
        self.assertEqual(len(run.reports), 1)

    def test_launch_keeps_the_callers_signal_mask_and_ignored_sigpipe(self):
        def caller_state():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)

        command = ["grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"]
        alone = subprocess.run(command, capture_output=True, text=True,
                               preexec_fn=caller_state, timeout=HANG_S)
        profiled = subprocess.run(
            [SYNCPROF, "--mode", "contended", "-o", self.path("report.txt"),
             "--", *command], capture_output=True, text=True,
            preexec_fn=caller_state, timeout=HANG_S)
        self.assertEqual(profiled.returncode, 0, profiled.stderr)
        blocked = int(re.search(r"SigBlk:\s*([0-9a-f]+)", alone.stdout).group(1), 16)
        ignored = int(re.search(r"SigIgn:\s*([0-9a-f]+)", alone.stdout).group(1), 16)
        self.assertTrue(blocked & 1 << (signal.SIGUSR2 - 1))
        self.assertTrue(ignored & 1 << (signal.SIGPIPE - 1))
        self.assertEqual(profiled.stdout, alone.stdout)

    def test_first_window_of_an_attach_holds_what_the_probes_counted(self):
        """The window starts before the probes go live: no counted call
        ended before it, and every call that started after it ended was
        counted."""
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "30000", "--hold-us", "1000",
            "--wait-signal", "--log-calls", "--until-signal"))
        self.go(target)     # locking already while syncprof attaches
        prof = self.start_syncprof(["--pid", str(target.pid), "--interval",
                                    "0.2", "--top", "0"])
        # Locking on until the first window is written, however long the
        # attach took.
        deadline = time.monotonic() + HANG_S
        while not (os.path.exists(prof.report_path) and
                   "\n" in open(prof.report_path).read()):
            self.assertLess(time.monotonic(), deadline, "no first window")
            time.sleep(0.05)
        os.kill(target.pid, signal.SIGUSR2)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        first = run.reports[0]
        counted = sum(self.total(self.rows_for(r, truth["object"]), "count")
                      for r in run.reports)
        ends = [t1 for t0, t1 in truth["calls"]]
        self.assertLessEqual(counted, sum(t1 >= first["start_ns"] for t1 in ends))
        self.assertGreaterEqual(counted, sum(t0 >= first["end_ns"]
                                             for t0, t1 in truth["calls"]))
        self.assertGreater(self.total(self.rows_for(first, truth["object"]),
                                      "count"), 0)

    def test_a_target_exiting_while_syncprof_attaches(self):
        """Whenever the target goes during the attach, syncprof says it
        exited, never that a file of it cannot be read, and a report it
        prints holds only calls that ended inside its window."""
        for delay in (0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8):
            with self.subTest(delay=delay):
                target = self.start_waiting_target(self.workload_cmd(
                    "mutex", "--threads", "1", "--iters", "20",
                    "--hold-us", "1000", "--log-calls", "--wait-signal"))
                out = self.path("report.json")
                if os.path.exists(out):
                    os.unlink(out)
                prof = subprocess.Popen(
                    [SYNCPROF, "-v", "--mode", "full", "--format", "json",
                     "-o", out, "--pid", str(target.pid)],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                self.children.append(prof)
                time.sleep(delay)
                self.go(target)     # ~25 ms of locking, then it exits
                # Reaped after: a zombie still says it exited.
                stdout, stderr = prof.communicate(timeout=HANG_S)
                target.wait(timeout=HANG_S)
                self.assertIn("exited", stderr)
                self.assertNotIn("cannot", stderr)
                reports = self._read_reports(out)
                if prof.returncode:
                    self.assertEqual(reports, [])
                    continue
                [report] = reports
                for row in report["rows"]:
                    self.assertIsNotNone(row["callsite"]["module"])
                truth = self.truth()
                inside = sum(report["start_ns"] <= t1 <= report["end_ns"]
                             for t0, t1 in truth["calls"])
                rows = self.rows_for(report, truth["object"])
                self.assertLessEqual(self.total(rows, "count"), inside)

    def test_ready_fd_is_written_once_the_probes_are_in(self):
        """--ready-fd: 'ready PID' when every probe is in place (a full
        mode uprobe shows in libc's text), and the pipe closed."""
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "5", "--wait-signal"))
        offset = func_file_offset(f"/proc/{target.pid}/root{libc_path(target.pid)}",
                                  "pthread_mutex_lock")
        clean, _ = libc_text(target.pid, offset)
        prof = self.start_syncprof(["--pid", str(target.pid)])
        self.assertEqual(prof.target_pid, target.pid)
        probed, _ = libc_text(target.pid, offset)
        self.assertNotEqual(probed, clean, "ready before the probes were in")
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(self.total(self.rows_for(
            run.reports[-1], self.truth()["object"]), "count"), 10)

    def test_ready_fd_names_the_launched_command_and_stays_out_of_it(self):
        """Launch mode: the PID is the command's (syncprof's child), and
        the command does not inherit the descriptor: a reader would
        otherwise see end-of-file at the command's end, not syncprof's."""
        prof = self.start_syncprof(["--mode", "contended"], ["sleep", "600"])
        with open(f"/proc/{prof.target_pid}/stat") as f:
            ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        self.assertEqual(ppid, prof.pid, "the command is syncprof's child")
        os.kill(prof.target_pid, signal.SIGKILL)
        self.assertEqual(self.finish_syncprof(prof).returncode,
                         128 + signal.SIGKILL)
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        pipe = f"pipe:[{os.fstat(write_end).st_ino}]"
        proc = subprocess.run(
            [SYNCPROF, "--ready-fd", str(write_end), "-o", self.path("r.json"),
             "--", "sh", "-c", "for fd in /proc/$$/fd/*; do readlink $fd; done; true"],
            pass_fds=(write_end,), capture_output=True, text=True, timeout=HANG_S)
        os.close(write_end)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("/dev/null", proc.stdout + "/dev/null")
        self.assertNotIn(pipe, proc.stdout)
        self.assertEqual(os.read(read_end, 100).decode().split()[0], "ready")

    def test_launch_of_a_killed_command_exits_128_plus_signal(self):
        run = self.launch([], ["sh", "-c", "kill -SEGV $$"])
        self.assertEqual(run.returncode, 128 + signal.SIGSEGV, run.stderr)
        self.assertEqual(len(run.reports), 1)

    def test_interval_reports_are_timed_and_empty_ones_are_one_line(self):
        """Each batch report ends its header line with the wall-clock time
        its window ended; a window without waits is that line alone."""
        start = datetime.datetime.now(datetime.timezone.utc)
        proc = subprocess.run([SYNCPROF, "--interval", "0.3", "--", "sleep", "1.2"],
                              capture_output=True, text=True, timeout=HANG_S)
        end = datetime.datetime.now(datetime.timezone.utc)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertGreaterEqual(len(lines), 3, proc.stdout)
        times = []
        for line in lines:
            m = re.match(r"^syncprof: pid \d+ \(sleep\)  mode contended  .*  dropped 0  "
                         r"at (\S+)  no waits$", line)
            self.assertIsNotNone(m, line)
            times.append(datetime.datetime.fromisoformat(m.group(1)))
        self.assertEqual(times, sorted(times))
        self.assertLessEqual(start - datetime.timedelta(seconds=1), times[0])
        self.assertLessEqual(times[-1], end + datetime.timedelta(seconds=1))
        # JSON: the same time, ISO 8601 and in ns since the epoch.
        run = self.launch(["--mode", "contended", "--interval", "0.3"], ["sleep", "0.7"])
        self.assertGreaterEqual(len(run.reports), 2)
        for report in run.reports:
            when = datetime.datetime.fromisoformat(report["time"])
            self.assertAlmostEqual(when.timestamp(), report["time_ns"] / 1e9, delta=0.002)
            self.assertEqual(report["rows"], [])

    def test_interval_deltas_add_up_to_the_total(self):
        """Each interval's report holds its window's waits, together the
        target's.  The target locks on until syncprof has written three
        reports, however late a busy machine makes its loop (a run of a
        fixed length may fit in two windows)."""
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "100000", "--hold-us",
            "3000", "--wait-signal", "--until-signal"))
        prof = self.start_syncprof(["--pid", str(target.pid), "--interval",
                                    "0.3", "--top", "0"])
        self.go(target)
        deadline = time.monotonic() + HANG_S
        while len(self.reports_so_far(prof)) < 3:
            self.assertLess(time.monotonic(), deadline, "three windows")
            time.sleep(0.05)
        os.kill(target.pid, signal.SIGUSR2)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        self.assertGreaterEqual(len(run.reports), 3, "several windows")
        counts = [self.total(self.rows_for(r, truth["object"]), "count")
                  for r in run.reports]
        # The first two windows ended while the workers locked on.
        self.assertTrue(all(counts[1:3]), counts)
        self.assertEqual(sum(counts), truth["count"])
        waits = sum(self.total(self.rows_for(r, truth["object"]), "wait_ns")
                    for r in run.reports)
        self.assertWithin(waits, truth["wait_ns"])
        # Windows tile the run: each starts where the previous ended.
        for prev, cur in zip(run.reports, run.reports[1:]):
            self.assertEqual(cur["start_ns"], prev["end_ns"])
            self.assertEqual(cur["sequence"], prev["sequence"] + 1)
        # A window's max is a call of that window: never above its total.
        for r in run.reports:
            for row in r["rows"]:
                self.assertLessEqual(row["max_ns"], row["wait_ns"])

    def test_cumulative_reports_grow_to_the_total(self):
        """--cumulative: every interval's report counts from attach.  The
        target's work ends, then syncprof is stopped once it has written
        three reports (a loaded machine delays its loop: the reports are
        waited for, not the clock)."""
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "120", "--hold-us", "3000",
            "--wait-signal", "--wait-end"))
        prof = self.start_syncprof(["--pid", str(target.pid), "--interval", "0.3",
                                    "--cumulative", "--top", "0"])
        self.go(target)
        self.wait_done(target)
        deadline = time.monotonic() + HANG_S
        while len(self.reports_so_far(prof)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        prof.send_signal(signal.SIGINT)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        truth = self.truth()
        counts = [self.total(self.rows_for(r, truth["object"]), "count")
                  for r in run.reports]
        self.assertGreaterEqual(len(counts), 3)
        self.assertEqual(counts, sorted(counts))
        self.assertEqual(counts[-1], truth["count"])
        starts = {r["start_ns"] for r in run.reports}
        self.assertEqual(len(starts), 1, "cumulative windows start at attach")

    def reports_so_far(self, prof):
        """The whole reports syncprof has written yet (a line being
        written is not one)."""
        try:
            with open(prof.report_path) as f:
                text = f.read()
        except FileNotFoundError:
            return []
        return [line for line in text.split("\n")[:-1] if line.strip()]

    def test_target_exiting_mid_run_ends_syncprof_with_a_report(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "20", "--hold-us", "2000",
            "--wait-signal"))
        prof = self.start_syncprof(["--pid", str(target.pid), "--duration", "600"])
        self.go(target)
        target.wait(timeout=HANG_S)
        run = self.finish_syncprof(prof, timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        # Ended by the exit, not the duration (a wall-clock bound would
        # be load's to break).
        self.assertIn(f"PID {target.pid} exited", run.stderr)
        self.assertLess(run.reports[-1]["elapsed_s"], 600)
        truth = self.truth()
        rows = self.rows_for(run.reports[-1], truth["object"])
        self.assertEqual(self.total(rows, "count"), truth["count"])

    def test_duration_ends_the_run_and_the_target_goes_on(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "800", "--hold-us", "2000",
            "--wait-signal", "--wait-end"))
        prof = self.start_syncprof(["--pid", str(target.pid), "--duration", "0.5"])
        self.go(target)
        run = self.finish_syncprof(prof, timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIsNone(target.poll(), "the target outlives syncprof")
        self.assertNotIn("exited", run.stderr, "ended by the duration")
        self.assertEqual(len(run.reports), 1)
        self.assertGreater(run.reports[0]["elapsed_s"], 0.4)
        self.wait_done(target)
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        self.assertEqual(self.truth()["count"], 1600)

    def _stop_with(self, sig):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "300", "--hold-us", "2000",
            "--wait-signal", "--wait-end"))
        prof = self.start_syncprof(["--pid", str(target.pid)])
        self.go(target)
        # The signal comes while the target lives, after its calls.
        self.wait_done(target)
        prof.send_signal(sig)
        run = self.finish_syncprof(prof, timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("stopping on signal", run.stderr)
        self.assertEqual(len(run.reports), 1, "a final report")
        self.assertEqual(self.total(self.rows_for(
            run.reports[0], self.truth()["object"]), "count"), 600)
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        self.assertEqual(self.truth()["count"], 600)

    def test_sigint_prints_a_final_report(self):
        self._stop_with(signal.SIGINT)

    def test_sigterm_prints_a_final_report(self):
        self._stop_with(signal.SIGTERM)

    def test_sigkill_leaves_the_target_unharmed_and_unprobed(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "1500", "--hold-us", "2000",
            "--wait-signal"))
        offset = func_file_offset(f"/proc/{target.pid}/root{libc_path(target.pid)}",
                                  "pthread_mutex_lock")
        clean, _ = libc_text(target.pid, offset)
        prof = self.start_syncprof(["--pid", str(target.pid)])
        probed, _ = libc_text(target.pid, offset)
        self.assertNotEqual(probed, clean, "a live uprobe shows in memory")
        self.go(target)     # killed as the threads start to lock
        prof.kill()
        prof.wait()
        # The target runs 6 s at least; the probes go while it runs.
        deadline = time.monotonic() + HANG_S
        while libc_text(target.pid, offset)[0] != clean:
            self.assertIsNone(target.poll(), "probe left behind to the end")
            self.assertLess(time.monotonic(), deadline, "probe left behind")
            time.sleep(0.05)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        truth = self.truth()
        self.assertEqual(truth["count"], 3000, "every lock call completed")

    def test_table_is_the_default_output(self):
        proc = subprocess.run(
            [SYNCPROF, "--mode", "full", "--", WORKLOAD, "mutex", "--threads", "2", "--iters", "5",
             "--hold-us", "1000"], capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        header = next(i for i, l in enumerate(lines) if l.startswith("Type "))
        # The summary, then what to fix first (docs/findings.md), then
        # the rows' header.
        summary = next(i for i, l in enumerate(lines) if l.startswith("syncprof: pid"))
        self.assertRegex(lines[summary], r"^syncprof: pid \d+ \(workload\)  mode full  "
                         r"elapsed \d+\.\d\d s  rows \d+/\d+  dropped 0  "
                         r"at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$")
        self.assertTrue(lines[summary + 1].startswith("What to fix first"),
                        lines[summary + 1])
        self.assertLessEqual(header - summary - 1, 6, lines[summary:header])
        # QSP's header, then the longest wait and the failed ones (and
        # the futile wakeups, when a wait was woken to wait again: under
        # load); the Object column widens to the longest name.
        self.assertRegex(lines[header], r"^Type     +Object  Call site +"
                         r"  Wait Time \(s\)         Count  Average \(us\)"
                         r"      Max \(us\)      Failed(      Futile)?$")
        # Right-aligned: the title and the names end in one column.
        self.assertEqual(lines[header].index("Object") + len("Object"),
                         lines[header + 2].index("big_lock") + len("big_lock"))
        self.assertEqual(set(lines[header + 1]), {"-"})
        self.assertEqual(len(lines[header + 1]), len(lines[header]))
        self.assertRegex(lines[header + 2],
                         r"^mutex +big_lock  workload\.c:\d+ +"
                         r"  +\d+\.\d{5}  +10  +\d+\.\d\d  +\d+\.\d\d  +0"
                         r"(  +\d+)?$")

    def test_csv_output(self):
        before = time.time_ns()
        proc = subprocess.run(
            [SYNCPROF, "--mode", "full", "--format", "csv", "--", WORKLOAD, "heap", "--threads", "1",
             "--iters", "2", "--objects", "3", "--hold-us", "100"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = list(csv.DictReader(io.StringIO(proc.stdout)))
        heap = [r for r in rows if r["objects"] == "3"]
        self.assertEqual(len(heap), 1)
        self.assertEqual(heap[0]["count"], "6")
        self.assertEqual(heap[0]["type"], "mutex")
        self.assertEqual(heap[0]["object"], "")
        self.assertTrue(heap[0]["module"].endswith("/workload"))
        # The call site as the table names it; the address on its own.
        self.assertEqual(heap[0]["callsite"], f"workload.c:{heap[0]['line']}")
        self.assertRegex(heap[0]["address"], r"^0x[0-9a-f]+$")
        # The window's end by the wall clock: during the run.
        self.assertLessEqual(before, int(heap[0]["time_ns"]))
        self.assertLessEqual(int(heap[0]["time_ns"]), time.time_ns())

    def test_output_file_keeps_stdout_for_the_target(self):
        run = self.launch([], ["sh", "-c", "echo target-output"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, "target-output\n")
        self.assertEqual(len(run.reports), 1)

    def test_target_in_another_mount_namespace(self):
        """The target maps a private copy of libc bind-mounted over the
        host's path: the same path names another file on the host, so only
        the target's own view of the mapping finds the right inode."""
        libc = libc_path(os.getpid())
        copy = self.path("libc.so.6")
        shutil.copyfile(f"/proc/self/root{libc}", copy)
        self.assertNotEqual(os.stat(copy).st_ino, os.stat(libc).st_ino)
        script = (f"mount --bind {copy} {libc} && exec {WORKLOAD} mutex "
                  f"--threads 2 --iters 20 --hold-us 2000 --wait-signal "
                  f"--truth {self.path('truth.json')}")
        target = self.start_waiting_target(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script])
        with open(f"/proc/{target.pid}/maps") as f:
            mapped = {int(line.split()[4]) for line in f if "/libc.so" in line}
        self.assertEqual(mapped, {os.stat(copy).st_ino})
        run = self.profile_to_the_end(target)
        truth = self.truth()
        rows = self.rows_for(run.reports[-1], truth["object"])
        self.assertEqual(self.total(rows, "count"), truth["count"])
        self.assertEqual(truth["count"], 40)
