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
        self.ran_s = time.monotonic() - started
        os.kill(target.pid, signal.SIGUSR2)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        return run.reports, truth["calls"], truth["object"], attach_s

    def assert_windows_hold_their_calls(self, reports, calls, obj):
        """Every call that began and ended inside the windows was counted
        (full mode counts every call), and no call that lay outside them:
        a window holds no time the probes were not counting.  The
        target's clock brackets each call, and a window ends at the read
        of the counters: a call that ended while that read went on may be
        in either window (the 5% of the lower bound; a window that held
        the attach counted under two thirds of its calls).  So the
        windows are held to the calls from the first's start to each
        one's end: where one window ends and the next begins moves calls
        between the two, never out of their sum."""
        start = reports[0]["start_ns"]
        counted = 0
        for report in reports:
            counted += self.total(self.rows_for(report, obj), "count")
            end = report["end_ns"]
            self.assertAlmostEqual(report["elapsed_s"],
                                   (end - report["start_ns"]) * 1e-9, places=6)
            self.assertGreater(sum(report["start_ns"] <= t0 and t1 <= end
                                   for t0, t1 in calls), 0, report)
            touching = sum(t1 >= start and t0 <= end for t0, t1 in calls)
            inside = sum(start <= t0 and t1 <= end for t0, t1 in calls)
            self.assertLessEqual(counted, touching, report)
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
                    self.assert_windows_hold_their_calls(reports, calls, obj)

    def test_first_interval_is_one_interval(self):
        """--interval: the first window is one interval from the probes
        going live, and its rate the target's (a window that held the
        attach read a fraction of it)."""
        reports, calls, obj, attach_s = self.profile_running(
            "full", "-i", "0.5", "-d", "1.6")
        # How many windows 1.6 s makes is the host's to say: a loop a
        # busy host kept from a window's end makes that window longer
        # (the next, ending on the interval's grid, shorter), and a late
        # one may fill -d with fewer.  The last is the one that did.
        self.assertGreaterEqual(len(reports), 2, reports)
        self.assertLess(sum(r["elapsed_s"] for r in reports[:-1]), 1.6, reports)
        first = reports[0]
        self.assertGreaterEqual(first["elapsed_s"], 0.5)
        self.assertLess(first["elapsed_s"], 0.5 + attach_s, first)
        self.assert_windows_hold_their_calls(reports, calls, obj)
        # The windows follow one another, and -d 1.6 is their sum.
        for a, b in zip(reports, reports[1:]):
            self.assertEqual(a["end_ns"], b["start_ns"])
        # The last window ends at the read after -d's end, as late as a
        # busy host makes the loop: within syncprof's run.
        whole = sum(r["elapsed_s"] for r in reports)
        self.assertGreaterEqual(whole, 1.6)
        self.assertLess(whole, self.ran_s, reports)
