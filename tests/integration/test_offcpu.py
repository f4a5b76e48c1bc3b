"""--off-cpu against tests/targets/offcpu, which times its own waits: an
epoll_wait on an eventfd, a read on a pipe and a clock_nanosleep, each
at a known line, and a contended mutex whose futex wait is a lock row
and must never be counted again as an off-CPU wait."""
import os
import re
import subprocess

from harness import BUILD, ROOT, SyncprofTestCase

OFFCPU = os.path.join(BUILD, "tests", "targets", "offcpu")
SOURCE = os.path.join(ROOT, "tests", "targets", "offcpu.c")
ITERS = 10
HOLD_US = 20000
# Switch-out to switch-in lies inside the target's clock pair; the calls'
# entry and exit around it are microseconds against 20 ms waits.
TOLERANCE = 0.05
OFFCPU_TYPES = {"poll", "io", "sleep", "child", "flock", "syscall", "fault"}


def marker_line(name):
    with open(SOURCE) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"/\* CALLSITE:{name} \*/", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {SOURCE}")


class OffCpu(SyncprofTestCase):

    def run_target(self, mode, *args):
        run = self.launch(["--mode", mode, "--top", "0", "--no-coalesce",
                           *args],
                          [OFFCPU, "--iters", str(ITERS), "--hold-us",
                           str(HOLD_US), "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0)
        return report, self.truth()

    def rows_at(self, report, name):
        line = marker_line(name)
        return [r for r in report["rows"]
                if r["callsite"]["line"] == line
                and r["callsite"]["file"].endswith("offcpu.c")]

    def check_known_waits(self, mode):
        report, truth = self.run_target(mode, "--off-cpu")
        for name, kind, call in (("epoll_wait", "poll", "epoll_wait"),
                                 ("pipe_read", "io", "read"),
                                 ("nanosleep", "sleep", "clock_nanosleep")):
            with self.subTest(mode=mode, call=name):
                rows = self.rows_at(report, name)
                self.assertEqual(len(rows), 1, rows)
                row = rows[0]
                self.assertEqual(row["type"], kind)
                self.assertEqual(row["class"], "event")
                self.assertEqual(row["object_symbol"], call)
                self.assertEqual(row["count"], truth[kind]["count"])
                self.assertEqual(row["count"], ITERS)
                self.assertWithin(row["wait_ns"], truth[kind]["wait_ns"],
                                  TOLERANCE, what=name)
                # Whole stacks: from the call site out to the thread's start.
                frames = [f["function"] for f in row["stacks"][0]["frames"]]
                self.assertIn("start_thread", frames, frames)
        # The mutex's futex wait: one lock row, and no off-CPU row at all.
        rows = self.rows_at(report, "mutex_lock")
        self.assertEqual([r["type"] for r in rows], ["mutex"], rows)
        self.assertEqual(rows[0]["class"], "lock")
        self.assertEqual(rows[0]["count"], truth["mutex"]["count"])
        self.assertWithin(rows[0]["wait_ns"], truth["mutex"]["wait_ns"],
                          TOLERANCE, what="mutex")
        futex_named = [r for r in report["rows"] if r["type"] in OFFCPU_TYPES
                       and (r["object_symbol"] or "").startswith("futex")]
        self.assertEqual(futex_named, [])

    def test_contended_mode_times_each_blocking_call_at_its_line(self):
        self.check_known_waits("contended")

    def test_full_mode_times_each_blocking_call_at_its_line(self):
        self.check_known_waits("full")

    def test_without_the_option_no_off_cpu_rows(self):
        report, _ = self.run_target("contended")
        self.assertEqual([r for r in report["rows"]
                          if r["type"] in OFFCPU_TYPES], [])
        classes = {r["type"]: r["class"] for r in report["rows"]}
        self.assertEqual(classes.get("mutex"), "lock")
        self.assertEqual(classes.get("join"), "event")

    def test_type_filter_keeps_only_poll(self):
        report, truth = self.run_target("contended", "--off-cpu",
                                        "--type", "poll")
        self.assertEqual({r["type"] for r in report["rows"]}, {"poll"})
        row, = self.rows_at(report, "epoll_wait")
        self.assertEqual(row["count"], truth["poll"]["count"])


class OffCpuNotice(SyncprofTestCase):
    """Without --off-cpu: a program whose threads block mostly outside
    futexes is told, once, that --off-cpu sees those waits; one whose
    waits are its locks is not."""

    NOTICE = re.compile(r"the target's threads were blocked ([0-9.]+) s, "
                        r"and ([0-9.]+) s of it outside the lock waits")

    def attach_for(self, command, seconds):
        target = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        self.children.append(target)
        prof = self.start_syncprof(["--pid", str(target.pid), "--mode",
                                    "contended", "-d", str(seconds)])
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1, run.stderr)
        return run, run.reports[0]

    def test_a_sleeping_program_is_told_of_off_cpu(self):
        # coreutils' sleep: one thread, blocked in clock_nanosleep the
        # whole run, no lock wait at all.
        run, report = self.attach_for(["sleep", "60"], 3)
        said = [n for n in report["notices"] if self.NOTICE.search(n)]
        self.assertEqual(len(said), 1, report["notices"])
        blocked, outside = map(float, self.NOTICE.search(said[0]).groups())
        self.assertEqual(blocked, outside)
        # Blocked the whole report's window, less a sample's lag.
        self.assertLessEqual(blocked, report["elapsed_s"] * 1.05)
        self.assertGreaterEqual(blocked, report["elapsed_s"] * 0.5)
        self.assertEqual(run.stderr.count("--off-cpu sees those waits"), 1)

    def test_a_lock_bound_program_is_not(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "4", "--iters", "400", "--hold-us", "2000",
            "--wait-signal"))
        run = self.profile_to_the_end(target, "--mode", "contended")
        report = run.reports[-1]
        self.assertTrue(report["rows"])
        self.assertFalse([n for n in report["notices"]
                          if self.NOTICE.search(n)], report["notices"])
