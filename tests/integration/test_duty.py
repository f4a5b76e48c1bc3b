"""--duty PCT: full mode's uprobes sample a window of PCT% of each period.

The targets time every call (workload --log-calls) and every hold
(releaser hold) themselves; syncprof's estimates (what the windows saw,
scaled by all the time over the windows' time) must come within 5% of
those truths, plus what the target's own figures say the sampling cannot
do better than: a count or a mean sampled in n windows is off by about
cv / sqrt(n) (cv: how much the target's own rate, or its own mean wait,
varies from one half-second to the next), a count by a call at each
window's two edges, and a mean of n calls moves by one preempted call's
length / n.  The windows' time is measured at the BPF flag's stores, not
around the switches, so no allowance is made for how long those take
(they stretch the periods under load: n counts the windows there were).
"""
import statistics
import subprocess
import time
import urllib.error

from harness import HANG_S, SYNCPROF, UNDER_TOLERANCE, SyncprofTestCase
from test_contended_mode import BLOCKING
from test_serve import of_process
from test_waits import RELEASER, marker_line
import test_serve

GOAL = 0.05
SLICE_S = 0.5           # --duty 50: the probes on half of each second


def rate_spread(starts):
    """How much the target's own call rate varies between half-seconds:
    the coefficient of variation of its calls per SLICE_S."""
    first, last = min(starts), max(starts)
    n = max(1, int((last - first) / (SLICE_S * 1e9)))
    buckets = [0] * n
    for t in starts:
        i = int((t - first) / (SLICE_S * 1e9))
        if i < n:
            buckets[i] += 1
    mean = statistics.mean(buckets)
    return statistics.pstdev(buckets) / mean if mean else 1.0


def wait_spread(calls):
    """How much the target's own mean wait varies between half-seconds:
    the coefficient of variation of its per-SLICE_S means."""
    first = min(c[0] for c in calls)
    sums, counts = {}, {}
    for t0, t1 in calls:
        i = int((t0 - first) / (SLICE_S * 1e9))
        sums[i] = sums.get(i, 0) + (t1 - t0)
        counts[i] = counts.get(i, 0) + 1
    means = [sums[i] / counts[i] for i in sums]
    if len(means) < 2:
        return 1.0
    return statistics.pstdev(means) / statistics.mean(means)


class Duty(SyncprofTestCase):

    def run_duty(self, command, *args):
        run = self.launch(["--mode", "full", "--duty", "50", "--top", "0",
                           "--no-coalesce", *args], command)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0)
        duty = report["duty"]
        self.assertEqual(duty["pct"], 50)
        on, off = duty["on_ns"], duty["off_ns"]
        # The switches were made.  The share on is at most about the one
        # asked: a switch's own time counts as off (measured, not taken
        # from the period), and a loaded machine makes switches slow.
        self.assertGreater(off, 0, duty)
        self.assertGreater(on, 0, duty)
        self.assertLess(on / (on + off), 0.65, duty)
        for row in report["rows"]:
            self.assertIs(row["estimated"], True, row)
        # The probes were attached at least through the windows, and the
        # JSON says which fields are estimates.
        self.assertGreaterEqual(duty["attached_ns"], on, duty)
        self.assertIn("count", duty["estimated"])
        self.assertIn("hold_avg_ns", duty["measured"])
        return report, on / (on + off)

    @staticmethod
    def windows(report):
        """The windows sampled: one per period (each switched or kept)."""
        return report["duty"]["switches"] + report["duty"]["kept"] + 1

    def assertEstimate(self, estimate, truth, allowed, what):
        error = abs(estimate - truth) / truth
        self.assertLessEqual(
            error, allowed, f"{what}: syncprof estimates {estimate}, the target "
            f"says {truth} ({error * 100:.1f}% > {allowed * 100:.1f}%)")

    def test_counts_and_mean_waits_within_the_targets_own(self):
        # Two threads on one mutex, holds of 2 ms: ~4 s of calls whose
        # probes cost a fraction of a percent of them.
        report, on_share = self.run_duty(
            self.workload_cmd("mutex", "--threads", "2", "--iters", "1000",
                              "--hold-us", "2000", "--log-calls"))
        truth = self.truth()
        rows = self.rows_for(report, truth["object"], "mutex")
        self.assertEqual(len(rows), 1, report["rows"])
        row = rows[0]
        starts = [c[0] for c in truth["calls"]]
        n_on = self.windows(report)
        seen = row["count"] * on_share     # the calls the probes timed
        allowed = (GOAL + 3 * rate_spread(starts) / n_on ** 0.5 +
                   2 * n_on / seen)
        # The acquisitions: scaled up to the whole run, within the
        # sampling's reach of the target's own count (the rate: the same
        # count over the same run).
        self.assertEstimate(row["count"], truth["count"], allowed, "count")
        self.assertLess(row["count"] * on_share, truth["count"] * 0.8,
                        "the probes were off half the time: fewer calls seen")
        # The mean wait: measured in the slices on.  Below the target's by
        # up to UNDER_TOLERANCE too, as every wait test allows: the
        # target's clock also runs while its waiter is preempted around
        # the futex wait.
        mean = row["wait_ns"] / row["count"]
        truth_mean = truth["wait_ns"] / truth["count"]
        allowed = (GOAL + row["max_ns"] / mean / seen +
                   3 * wait_spread(truth["calls"]) / n_on ** 0.5)
        if mean < truth_mean:
            allowed = max(allowed, UNDER_TOLERANCE)
        self.assertEstimate(mean, truth_mean, allowed, "mean wait")

    def test_fast_calls_rate_within_the_targets_own(self):
        # Short holds: thousands of calls a window, most of them not
        # waiting, the rate full mode measures on a busy server.
        report, on_share = self.run_duty(
            self.workload_cmd("mutex", "--threads", "2", "--iters", "15000",
                              "--hold-us", "50", "--log-calls"))
        truth = self.truth()
        rows = self.rows_for(report, truth["object"], "mutex")
        self.assertEqual(len(rows), 1, report["rows"])
        starts = [c[0] for c in truth["calls"]]
        n_on = self.windows(report)
        seen = rows[0]["count"] * on_share
        allowed = (GOAL + 3 * rate_spread(starts) / n_on ** 0.5 +
                   2 * n_on / seen)
        self.assertEstimate(rows[0]["count"], truth["count"], allowed,
                            "count (the rate over the run)")

    def test_holds_within_the_holders_own(self):
        report, on_share = self.run_duty(
            [RELEASER, "hold", "--truth", self.path("truth.json"),
             "--iters", "600", "--hold-us", "3000", "--hold2-us", "1000"],
            "--hold")
        truth = self.truth()
        row = [r for r in self.rows_for(report, truth["big_lock"], "mutex")
               if r["callsite"]["line"] == marker_line("HOLD", "mutex")]
        self.assertEqual(len(row), 1, report["rows"])
        row = row[0]
        expected = truth["holds"]["mutex"]
        seen = row["holds"] * on_share
        self.assertLess(seen, expected["count"] * 0.8)
        # A hold per switch may be cut (counted in duty.cut), each
        # window's edge is one iteration, and the holder's own rate
        # spreads between half-seconds (beside busy loops it stalls).
        n_on = self.windows(report)
        edges = report["duty"]["cut"] + 2 * n_on
        spans = truth["hold_spans"]
        self.assertEqual(len(spans), expected["count"])
        self.assertEstimate(row["holds"], expected["count"],
                            GOAL + edges / seen +
                            3 * rate_spread([t0 for t0, _ in spans]) /
                            n_on ** 0.5, "holds")
        # The mean hold: measured in the windows, within the holder's own
        # spread between half-seconds (beside busy loops, and while the
        # switches rewrite its text, its holds stretch) and one preempted
        # hold over the holds seen.
        mean = expected["ns"] / expected["count"]
        self.assertEstimate(row["hold_avg_ns"], mean,
                            GOAL + row["hold_max_ns"] / mean / seen +
                            3 * wait_spread(spans) / n_on ** 0.5,
                            "mean hold")
        self.assertLessEqual(row["hold_max_ns"], row["hold_ns"])

    def test_kept_function_within_the_targets_own(self):
        # sem_wait is one of the functions --duty keeps attached (gated
        # by the window's flag) rather than switching: waits of 20 ms,
        # each counted by the target, sampled like the switched ones.
        report, on_share = self.run_duty(
            [BLOCKING, "sem", "--truth", self.path("truth.json"),
             "--iters", "200", "--hold-us", "20000"])
        truth = self.truth()
        rows = self.rows_for(report, truth["object"], "sem")
        self.assertEqual(len(rows), 1, report["rows"])
        row = rows[0]
        n_on = self.windows(report)
        seen = row["count"] * on_share
        self.assertLess(seen, truth["count"] * 0.8,
                        "the window was closed half the time: fewer seen")
        # The waits come one after another: a window's two edges are a
        # call each, and a call cut by a switch is one more.
        edges = report["duty"]["cut"] + 2 * n_on
        self.assertEstimate(row["count"], truth["count"],
                            GOAL + edges / seen, "count")
        # The mean wait, measured in the windows: no wait is shorter than
        # the hold the holder keeps after the waiter blocked, and the mean
        # is at most the target's own.  Not closer: the target's includes
        # the waits that span a switch, longer by its stalls while the
        # kernel rewrites its text, which the windows leave out by design
        # (measured beside other test suites: 20.5-24 ms in the windows
        # against the target's 30-35 ms, before the kept set too).
        mean = row["wait_ns"] / row["count"]
        self.assertGreaterEqual(mean, 20e6 * (1 - GOAL), row)
        self.assertLessEqual(mean, truth["wait_ns"] / truth["count"] *
                             (1 + GOAL), (row, truth))

    def test_table_marks_the_estimates(self):
        proc = subprocess.run(
            [SYNCPROF, "--mode", "full", "--duty", "50", "--", *self.workload_cmd(
                "mutex", "--threads", "2", "--iters", "400", "--hold-us", "2000")],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("duty 50% ~estimated", proc.stdout)
        self.assertRegex(proc.stdout, r"~ --duty 50%: the probes were on "
                         r"[0-9.]+ s of [0-9.]+ s \(sampled; attached "
                         r"[0-9.]+ s\); Count, Total Wait")

    def test_continuous_full_mode_is_not_an_estimate(self):
        run = self.launch(["--mode", "full"], self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "20", "--hold-us", "500"))
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[0]
        self.assertIsNone(report["duty"])
        self.assertTrue(report["rows"])
        for row in report["rows"]:
            self.assertIs(row["estimated"], False)


class DutyServed(SyncprofTestCase):
    """--serve with --duty: /metrics counts the calls the windows saw,
    exactly, beside the windows' time and the whole run's, from which
    the reader estimates the whole; the releasers' profile, which needs
    every release, is refused with the reason; promtool checks each
    scrape."""
    start_serve = test_serve.Serve.start_serve
    stop_serve = test_serve.Serve.stop_serve
    scrape = test_serve.Serve.scrape
    get = test_serve.Serve.get
    assertEstimate = Duty.assertEstimate

    def test_metrics_count_the_windows_and_say_their_share(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "1000", "--hold-us",
            "2000", "--log-calls", "--wait-signal"))
        proc, base = self.start_serve("--pid", str(target.pid), "--mode",
                                      "full", "--duty", "50",
                                      "--no-coalesce")
        before = self.scrape(base)
        started = time.monotonic()
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        ran = time.monotonic() - started
        # Until syncprof has seen the exit: its read then holds every call.
        deadline = time.monotonic() + HANG_S
        while True:
            after = self.scrape(base)
            if after[("syncprof_processes_followed", frozenset())] == 0:
                break
            self.assertLess(time.monotonic(), deadline, "exit not seen")
            time.sleep(0.1)
        span = time.monotonic() - started
        truth = self.truth()

        def moved(name):
            key = (name, frozenset())
            return after[key] - before.get(key, 0.0)

        self.assertEqual(after[("syncprof_duty_percent", frozenset())], 50)
        window, elapsed = (moved("syncprof_duty_window_seconds_total"),
                           moved("syncprof_duty_seconds_total"))
        self.assertGreater(window, 0)
        self.assertLess(window / elapsed, 0.65, (window, elapsed))
        seen = of_process(after, "syncprof_lock_waits_total", "workload",
                          object="big_lock", type="mutex")
        self.assertLess(seen, truth["count"] * 0.8,
                        "the probes were off half the time: fewer calls seen")
        # The estimate the HELP text gives, over the scrapes around the
        # run: within the sampling's reach (as the report's estimate)
        # and the share of the span the target did not run.
        n_on = max(1, round(elapsed))
        starts = [c[0] for c in truth["calls"]]
        allowed = (GOAL + 3 * rate_spread(starts) / n_on ** 0.5 +
                   2 * n_on / max(seen, 1) + (span - ran) / ran)
        self.assertEstimate(seen * elapsed / window, truth["count"], allowed,
                            "count from /metrics")
        with self.assertRaises(urllib.error.HTTPError) as refused:
            self.get(base + "/debug/pprof/mutex")
        self.assertEqual(refused.exception.code, 501)
        self.assertIn(b"--duty", refused.exception.read())
        status, _, body = self.get(base + "/debug/pprof/block")
        self.assertEqual(status, 200)
        self.assertGreater(len(body), 0)
        self.stop_serve(proc)


class DutyRefused(SyncprofTestCase):

    def refused(self, *args):
        proc = subprocess.run([SYNCPROF, *args, "--", "true"],
                              capture_output=True, text=True, timeout=60)
        self.assertNotEqual(proc.returncode, 0)
        return proc.stderr

    def test_out_of_range(self):
        for bad in ("0", "101", "-5", "half"):
            err = self.refused("--mode", "full", "--duty", bad)
            self.assertIn(f"invalid --duty '{bad}'", err)
            self.assertIn("from 1 to 100", err)

    def test_needs_full_mode(self):
        err = self.refused("--duty", "50")
        self.assertIn("--duty PCT (1-100)", err)
        self.assertIn("--mode full", err)
        err = self.refused("--mode", "contended", "--duty", "50")
        self.assertIn("--mode full", err)

    def test_not_with_what_needs_every_lock(self):
        err = self.refused("--mode", "full", "--duty", "50", "--lock-order")
        self.assertIn("--lock-order", err)
        err = self.refused("--mode", "full", "--duty", "50", "--blame")
        self.assertIn("--blame", err)

    def test_all_in_full_mode_refused_with_the_reason(self):
        proc = subprocess.run([SYNCPROF, "--all", "--mode", "full"],
                              capture_output=True, text=True, timeout=60)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--all --mode full is refused", proc.stderr)
        self.assertIn("every process", proc.stderr)
        self.assertIn("contended mode", proc.stderr)
