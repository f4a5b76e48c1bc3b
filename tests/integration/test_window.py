"""A report's window is what it measured: elapsed_s starts when the
probes went live, not when syncprof began to attach (loading the
programs, placing the probes), and --duration and --interval count from
there.  Checked against tests/targets/workload, which logs every lock
call's start and end by its own clock (CLOCK_MONOTONIC, the clock of
start_ns and end_ns): each report counts the calls that ended inside
its window, so its rate (count / elapsed_s) is the target's own rate
over the same window."""
import os
import signal
import time

from harness import HANG_S, SyncprofTestCase

# How long the read that ends a window may take, at most, for the calls
# that ended in it (they may be in either window): beside 4 busy loops,
# syncprof's read may wait a scheduler slice or two for its CPU.
READ_FUZZ_NS = 10_000_000


class Window(SyncprofTestCase):

    def profile_running(self, mode, *args):
        """syncprof attached to a target already locking; the reports,
        the calls the target logged, its object, and how long syncprof
        took from its start to 'ready' (the attach)."""
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "30000", "--hold-us",
            "1000", "--wait-signal", "--log-calls", "--until-signal"))
        self.go(target)     # locking already while syncprof attaches
        started = time.monotonic()
        prof = self.start_syncprof(["--pid", str(target.pid), "--mode", mode,
                                    "--top", "0", *args])
        attach_s = time.monotonic() - started
        run = self.finish_syncprof(prof)
        os.kill(target.pid, signal.SIGUSR2)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        return run.reports, truth["calls"], truth["object"], attach_s

    def assert_window_holds_its_calls(self, report, calls, obj):
        """Every call that began and ended inside the window was counted
        (full mode counts every call), and no call that lay outside it:
        the window holds no time the probes were not counting.  The
        target's clock brackets each call, and the window's end is taken
        once the read is over: a call that ended as the window did may
        be in either, so the lower bound gives 5% (a window that held
        the attach counted under two thirds of its calls)."""
        counted = self.total(self.rows_for(report, obj), "count")
        start, end = report["start_ns"], report["end_ns"]
        touching = sum(t1 >= start and t0 <= end for t0, t1 in calls)
        inside = sum(start <= t0 and t1 <= end for t0, t1 in calls)
        self.assertGreater(inside, 0, report)
        self.assertAlmostEqual(report["elapsed_s"], (end - start) * 1e-9,
                               places=6)
        # A window after another starts where the other's counts were
        # read: a call that returned while that read went on may be in
        # either.  The read walks the whole table, and beside busy
        # loops syncprof may lose its CPU in the middle of it: two calls
        # of 1 ms ended in it, where one was allowed.  READ_FUZZ_NS
        # before the start, then.
        after_read = sum(start - READ_FUZZ_NS <= t1 < start
                         for _, t1 in calls) \
            if report.get("sequence", 1) > 1 else 0
        self.assertLessEqual(counted, touching + after_read, report)
        self.assertGreaterEqual(counted, 0.95 * inside, report)

    def test_duration_is_the_window(self):
        """-d 1: one second measured (the attach before it is no part of
        it), its calls those the target made in it."""
        for mode in ("full", "contended"):
            with self.subTest(mode=mode):
                reports, calls, obj, attach_s = self.profile_running(
                    mode, "-d", "1")
                [report] = reports
                self.assertGreaterEqual(report["elapsed_s"], 1.0)
                # Before, the attach was in it: 1 s and all of attach_s.
                self.assertLess(report["elapsed_s"], 1.0 + attach_s, report)
                if mode == "full":
                    self.assert_window_holds_its_calls(report, calls, obj)

    def test_first_interval_is_one_interval(self):
        """--interval: the first window is one interval from the probes
        going live, and its rate the target's (a window that held the
        attach read a fraction of it)."""
        reports, calls, obj, attach_s = self.profile_running(
            "full", "-i", "0.5", "-d", "1.6")
        self.assertGreaterEqual(len(reports), 3, reports)
        first = reports[0]
        self.assertGreaterEqual(first["elapsed_s"], 0.5)
        self.assertLess(first["elapsed_s"], 0.5 + attach_s, first)
        for report in reports:
            self.assert_window_holds_its_calls(report, calls, obj)
        # The windows follow one another, and -d 1.6 is their sum.
        for a, b in zip(reports, reports[1:]):
            self.assertEqual(a["end_ns"], b["start_ns"])
        whole = sum(r["elapsed_s"] for r in reports)
        self.assertGreaterEqual(whole, 1.6)
        self.assertLess(whole, 1.6 + attach_s, reports)
