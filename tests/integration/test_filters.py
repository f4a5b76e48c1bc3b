"""--tid, --type, --object and --min-wait against tests/targets/filters,
whose threads count and time every lock call they make: each filter's
report holds exactly the calls of the subset it selects (full mode
counts every call; contended mode every call that blocks, which the
target makes happen a known number of times), and nothing else."""
import collections
import os
import subprocess

from harness import BUILD, SyncprofTestCase

FILTERS = os.path.join(BUILD, "tests", "targets", "filters")
ITERS = 100
SLOW_ITERS = 4
MIN_US = 10000


class Filters(SyncprofTestCase):

    def start_target(self):
        """The target, its threads made and waiting: (process, names)."""
        proc = subprocess.Popen(
            [FILTERS, "--iters", str(ITERS), "--slow-iters", str(SLOW_ITERS),
             "--slow-us", "40000", "--min-us", str(MIN_US),
             "--truth", self.path("truth.json"), "--wait-signal"],
            stdout=subprocess.PIPE, text=True)
        self.children.append(proc)
        words = proc.stdout.readline().split()
        self.assertEqual(words[:1], ["ready"], words)
        names = dict(w.split("=") for w in words[2:])
        return proc, names

    def profile(self, *args, mode="full"):
        target, names = self.start_target()
        run = self.profile_to_the_end(target, "--mode", mode, "--no-calibrate",
                                      "--per-thread", "--no-coalesce",
                                      "--top", "0", *args)
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0)
        return report, self.truth(), names

    def measured(self, report, truth):
        """(tid, object, type) -> count, summed over call sites.  The main
        thread only starts and joins the others, and writes the truth: the
        locks glibc takes for it there (the loader's, at exit) are not the
        target's, and left out."""
        out = collections.Counter()
        for r in report["rows"]:
            if r["tid"] == truth["pid"]:
                self.assertNotIn(r["object"], truth["objects"].values(), r)
                continue
            out[(r["tid"], r["object"], r["type"])] += r["count"]
        return dict(out)

    @staticmethod
    def expected(truth, keep, field="calls"):
        out = {}
        for c in truth["calls"]:
            key = (truth["threads"][c["thread"]], truth["objects"][c["object"]],
                   c["type"])
            if keep(c) and c[field]:
                out[key] = c[field]
        return out

    def test_no_filter_is_every_call(self):
        """The baseline the filters are checked against."""
        report, truth, _ = self.profile()
        self.assertEqual(self.measured(report, truth),
                         self.expected(truth, lambda c: True))

    def test_tid(self):
        target, names = self.start_target()
        run = self.profile_to_the_end(
            target, "--mode", "full", "--no-calibrate", "--per-thread",
            "--no-coalesce", "--top", "0", "--tid", names["mutex0"],
            "--tid", f"{names['condwait']},{names['recursive']}")
        report, truth = run.reports[0], self.truth()
        want = {"mutex0", "condwait", "recursive"}
        self.assertEqual(self.measured(report, truth),
                         self.expected(truth, lambda c: c["thread"] in want))

    def test_type(self):
        report, truth, _ = self.profile("--type", "rec_mutex", "--type",
                                        "condvar,barrier")
        self.assertEqual(self.measured(report, truth),
                         self.expected(truth, lambda c: c["type"] in
                                       ("rec_mutex", "condvar")))

    def test_object_by_name(self):
        report, truth, _ = self.profile("--object", "slow_lock")
        self.assertEqual(self.measured(report, truth),
                         self.expected(truth, lambda c: c["object"] == "slow_lock"))

    def test_object_by_address(self):
        target, names = self.start_target()
        run = self.profile_to_the_end(
            target, "--mode", "full", "--no-calibrate", "--per-thread",
            "--no-coalesce", "--top", "0", "--object", names["cond_lock"])
        report, truth = run.reports[0], self.truth()
        self.assertEqual(self.measured(report, truth),
                         self.expected(truth, lambda c: c["object"] == "cond_lock"))

    def assertLongCalls(self, measured, truth, keep):
        """The calls --min-wait kept, of the (thread, object, type)s keep
        selects: per key, at least those 10 ms long by the caller's clock
        without the time the thread waited for a CPU meanwhile
        (sure_calls: the probes' interval lies inside the caller's, and
        a busy host stretches the gap between only by keeping the thread
        from a CPU), and at most those 10 ms long by the caller's clock
        (long_calls)."""
        sure = self.expected(truth, keep, "sure_calls")
        long = self.expected(truth, keep, "long_calls")
        self.assertLessEqual(set(measured), set(long), (measured, long))
        for key, n in long.items():
            self.assertGreaterEqual(measured.get(key, 0), sure.get(key, 0),
                                    (key, measured, sure, long))
            self.assertLessEqual(measured.get(key, 0), n,
                                 (key, measured, sure, long))

    def test_min_wait(self):
        """Only the calls at least 10 ms long: the slow waiter's, and any
        other a loaded machine stretched."""
        report, truth, _ = self.profile("--min-wait", f"{MIN_US // 1000}ms")
        measured = self.measured(report, truth)
        self.assertLongCalls(measured, truth, lambda c: True)
        # The slow waiter blocked (unless a loaded machine kept it from
        # every call until the holder let go: then there is nothing to
        # see, and the test says so).
        self.assertTrue(self.expected(truth, lambda c: c["thread"] == "slowwait",
                                      "sure_calls"), truth["calls"])
        for r in report["rows"]:
            self.assertGreaterEqual(min(lower for lower, _ in r["hist"]),
                                    2 ** 23, r)

    def test_filters_combine(self):
        target, names = self.start_target()
        run = self.profile_to_the_end(
            target, "--mode", "full", "--no-calibrate", "--per-thread",
            "--no-coalesce", "--top", "0", "--tid", names["slowwait"],
            "--tid", names["slowhold"], "--type", "mutex",
            "--object", "slow_lock", "--min-wait", "10000us")
        report, truth = run.reports[0], self.truth()
        # Each of the slow waiter's calls blocks ~40 ms, unless a loaded
        # machine kept it from the call until the holder let go: the
        # target's own counts of its calls of 10 ms or more are the truth.
        def keep(c):
            return (c["thread"] in ("slowwait", "slowhold")
                    and c["object"] == "slow_lock" and c["type"] == "mutex")
        self.assertTrue(self.expected(truth, keep, "sure_calls"), truth["calls"])
        self.assertLongCalls(self.measured(report, truth), truth, keep)

    # --- contended mode: the same filters, in the futex programs ---------

    def test_contended_tid_and_object(self):
        """Each of the slow waiter's calls blocks once; the holder's never."""
        for args in (("--tid",), ("--object", "slow_lock")):
            with self.subTest(args=args):
                target, names = self.start_target()
                extra = list(args) + ([names["slowwait"]] if args == ("--tid",)
                                      else [])
                run = self.profile_to_the_end(
                    target, "--mode", "contended", "--per-thread",
                    "--no-coalesce", "--top", "0", *extra)
                report, truth = run.reports[0], self.truth()
                self.assertEqual(self.measured(report, truth),
                                 {(truth["threads"]["slowwait"],
                                   truth["objects"]["slow_lock"], "mutex"):
                                  SLOW_ITERS})

    def test_contended_type_and_min_wait(self):
        report, truth, _ = self.profile("--type", "condvar", mode="contended")
        self.assertTrue(report["rows"])
        self.assertEqual({r["type"] for r in report["rows"]}, {"condvar"})
        self.assertEqual({r["object"] for r in report["rows"]},
                         {truth["objects"]["cond"]})
        report, truth, _ = self.profile("--min-wait", "10ms", mode="contended")
        rows = self.measured(report, truth)
        self.assertEqual(rows[(truth["threads"]["slowwait"],
                               truth["objects"]["slow_lock"], "mutex")],
                         SLOW_ITERS)
        for r in report["rows"]:
            self.assertGreaterEqual(min(lower for lower, _ in r["hist"]),
                                    2 ** 23, r)
            self.assertGreaterEqual(r["wait_ns"], r["count"] * MIN_US * 1000)
