"""How single waits are reported, against tests/targets/releaser, which
times its own waits: the log2 histogram of every row, and the waits that
end without the lock (timeouts, a wait cut short by the target's exit)
or are interrupted by a signal."""
import os
import re
import subprocess

from harness import (BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase,
                     source_marker)

RELEASER = os.path.join(BUILD, "tests", "targets", "releaser")
SOURCE = os.path.join(ROOT, "tests", "targets", "releaser.c")


def marker_line(kind, name):
    return source_marker(SOURCE, kind, name)


class ReleaserTestCase(SyncprofTestCase):
    """Runs the releaser target under syncprof, one report."""

    def run_releaser(self, scenario, *syncprof_args, mode="contended",
                     iters=20, hold_us=3000, hold2_us=1000, extra=()):
        run = self.launch(["--mode", mode, "--top", "0", "--no-coalesce",
                           *syncprof_args],
                          [RELEASER, scenario, "--truth", self.path("truth.json"),
                           "--iters", str(iters), "--hold-us", str(hold_us),
                           "--hold2-us", str(hold2_us), *extra])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0)
        return report, self.truth()

    def row_at(self, report, obj, kind, marker):
        rows = [r for r in self.rows_for(report, obj, kind)
                if r["callsite"]["line"] == marker_line("CALLSITE", marker)]
        self.assertEqual(len(rows), 1, f"{kind} rows at {marker}: {report['rows']}")
        return rows[0]


class Histograms(ReleaserTestCase):

    def check_hist(self, mode):
        # Holds of 3 ms and 0.5 ms: waits of ~3.1 ms in [2M, 4M) and
        # ~0.6-1 ms; each in the bucket of the target's own measure (they
        # differ by microseconds, the buckets by a factor of two).
        report, truth = self.run_releaser("two", mode=mode, hold_us=3000,
                                          hold2_us=500)
        row = self.row_at(report, truth["big_lock"], "mutex", "wait_big_lock")
        self.assertEqual(row["count"], truth["count"])
        self.assertSameBuckets(row["hist"], truth["hist"], row["count"])
        self.assertGreaterEqual(len(row["hist"]), 2)
        self.assertEqual(sum(n for _, n in row["hist"]), row["count"] + row["failed"])
        # Quantiles: in order, in their buckets, never above the longest.
        self.assertLessEqual(row["p50_ns"], row["p99_ns"])
        self.assertGreaterEqual(row["p99_ns"], row["hist"][-1][0])
        self.assertLessEqual(row["p99_ns"], row["max_ns"])

    def assertSameBuckets(self, seen, truth, count):
        """The target's measure wraps syncprof's (the lock call around
        the futex wait), so a wait can sit one bucket lower in syncprof's
        when the target was preempted across a bucket's edge; never
        higher, and rarely (at most one wait in ten)."""
        at_least = lambda hist, edge: sum(n for low, n in hist if low >= edge)
        edges = sorted({low for low, _ in seen} | {low for low, _ in truth})
        for edge in edges:
            mine, theirs = at_least(seen, edge), at_least(truth, edge)
            self.assertLessEqual(mine, theirs, (edge, seen, truth))
            self.assertLessEqual(theirs - mine, max(1, count // 10),
                                 (edge, seen, truth))

    def test_contended_buckets_hold_the_known_waits(self):
        self.check_hist("contended")

    def test_full_mode_buckets_hold_the_known_waits(self):
        self.check_hist("full")

    def test_table_draws_the_histogram_under_its_row(self):
        proc = subprocess.run(
            [SYNCPROF, "--hist", "--", RELEASER, "two", "--iters", "10",
             "--hold-us", "3000", "--hold2-us", "500"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        row = next(i for i, l in enumerate(lines) if l.startswith("mutex "))
        self.assertEqual(lines[row + 1], "    wait (ns)")
        bars = []
        for line in lines[row + 2:]:
            m = re.match(r"^    (\[\S+, \S+\)) +(\d+) \|([@ ]{52})\|$", line)
            if not m:
                break
            bars.append((m.group(1), int(m.group(2))))
        self.assertNotEqual(bars[0][1], 0)
        self.assertNotEqual(bars[-1][1], 0)
        self.assertEqual(sum(n for _, n in bars), 10)


class FailedWaits(ReleaserTestCase):
    """Waits that end without the lock are failed, with their time, and
    left out of the average: a row never shows an average it has no
    count for, or one above its longest wait."""

    def check_timeouts(self, mode):
        report, truth = self.run_releaser("timeout", mode=mode, iters=10,
                                          hold_us=2000)
        row = self.row_at(report, truth["cond"], "condvar", "timedwait")
        self.assertEqual(row["count"], 0)
        self.assertEqual(row["failed"], truth["failed"])
        self.assertIsNone(row["avg_ns"])
        self.assertEqual(row["failed_ns"], row["wait_ns"])
        self.assertWithin(row["wait_ns"], truth["wait_ns"], 0.05)
        # Failed waits are waits: the histogram holds them.
        self.assertEqual(sum(n for _, n in row["hist"]), truth["failed"])

    def test_contended_timeouts_fail_with_their_time(self):
        self.check_timeouts("contended")

    def test_full_mode_timeouts_fail_with_their_time(self):
        self.check_timeouts("full")

    def test_table_shows_no_average_without_a_count(self):
        proc = subprocess.run(
            [SYNCPROF, "--", RELEASER, "timeout", "--iters", "4",
             "--hold-us", "1000"], capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        header = next(l for l in lines if l.startswith("Type "))
        self.assertRegex(header, r"  Average \(us\)      Max \(us\)      Failed$")
        row = next(l for l in lines if l.startswith("condvar "))
        self.assertRegex(row, r"  0  +-  +\d+\.\d\d  +4$")

    def test_wait_cut_short_by_the_targets_exit_is_failed(self):
        report, truth = self.run_releaser("exit", hold_us=20000)
        row = self.row_at(report, truth["big_lock"], "mutex", "exit_wait")
        self.assertEqual(row["count"], 0)
        self.assertEqual(row["failed"], 1)
        self.assertEqual(row["failed_ns"], row["wait_ns"])
        # The target measured its wait just before it began to exit.
        self.assertGreaterEqual(row["wait_ns"], truth["wait_ns"])
        self.assertLess(row["wait_ns"], truth["wait_ns"] + 20_000_000)

    def test_wait_interrupted_by_a_signal_is_one_acquisition(self):
        report, truth = self.run_releaser("signal", iters=10)
        row = self.row_at(report, truth["big_lock"], "mutex", "wait_big_lock")
        self.assertEqual(row["count"], truth["count"])
        self.assertEqual(row["failed"], 0)
        self.assertWithin(row["wait_ns"], truth["wait_ns"])
        self.assertLessEqual(row["avg_ns"], row["max_ns"])


class WaitingNow(ReleaserTestCase):
    """A wait still blocked when the report is made is shown as such:
    how many threads wait at which row, and for how long so far."""

    def check_waiting(self, mode):
        target = self.start_waiting_target(
            [RELEASER, "exit", "--hold-us", "4000000", "--wait-signal"])
        prof = self.start_syncprof(["--mode", mode, "--pid", str(target.pid),
                                    "--duration", "1"])
        self.go(target)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[-1]
        waiting = [w for w in report["waiting"] if w["type"] == "mutex" and
                   w["callsite"]["line"] == marker_line("CALLSITE", "exit_wait")]
        self.assertEqual(len(waiting), 1, report["waiting"])
        w = waiting[0]
        self.assertEqual(w["count"], 1)
        self.assertEqual(w["object_symbol"], "big_lock")
        # Blocked since just after the start, until the report.
        self.assertGreater(w["wait_ns"], 500_000_000)
        self.assertLess(w["wait_ns"], 1_500_000_000)
        self.assertEqual(w["max_ns"], w["wait_ns"])
        # Not counted as a wait that ended.
        self.assertFalse([r for r in self.rows_for(report, w["object"], "mutex")
                          if r["callsite"]["line"] == w["callsite"]["line"]])
        target.kill()

    def test_contended_wait_in_progress_is_shown(self):
        self.check_waiting("contended")

    def test_full_mode_call_in_progress_is_shown(self):
        self.check_waiting("full")
