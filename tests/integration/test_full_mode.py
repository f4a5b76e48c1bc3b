"""Full mode's numbers against the targets' own clock_gettime measurements:
one test per lock kind, plus coalescing and the per-thread split."""
import os

from harness import BUILD, SyncprofTestCase


class FullModeAccuracy(SyncprofTestCase):

    def test_contended_mutex_count_exact_wait_within_3_percent(self):
        run = self.launch(["--top", "0"], self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "60", "--hold-us", "3000"))
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        self.assertEqual(len(run.reports), 1)
        report = run.reports[0]
        self.assertEqual(report["mode"], "full")
        self.assertEqual(report["pid"], truth["pid"])
        self.assertEqual(report["dropped"], 0)
        rows = self.rows_for(report, truth["object"])
        self.assertEqual(len(rows), 1, "one object, one call site: one row")
        row = rows[0]
        self.assertEqual(row["type"], "mutex")
        self.assertEqual(row["count"], truth["count"])
        self.assertEqual(row["count"], 120)
        self.assertEqual(row["failed"], 0)
        self.assertWithin(row["wait_ns"], truth["wait_ns"])
        self.assertEqual(row["avg_ns"], row["wait_ns"] // row["count"])
        self.assertGreaterEqual(row["max_ns"], row["avg_ns"])
        self.assertLessEqual(row["max_ns"], row["wait_ns"])
        self.assertTrue(row["callsite"]["module"].endswith("/workload"))
        self.assertEqual(row["callsite"]["function"], "timed_lock")
        self.assertEqual(row["object_symbol"], "big_lock")
        self.assertIsNone(row["tid"])
        self.assertLessEqual(report["start_ns"], report["end_ns"])

    def test_condvar_wait_is_its_own_row_and_relock_adds_no_mutex_row(self):
        threads, iters = 3, 40
        run = self.launch(["--top", "0"], self.workload_cmd(
            "condvar", "--threads", str(threads), "--iters", str(iters),
            "--hold-us", "4000"))
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        report = run.reports[-1]
        rows = self.rows_for(report, truth["object"])
        self.assertEqual([r["type"] for r in rows], ["condvar"])
        self.assertEqual(rows[0]["count"], truth["count"])
        self.assertWithin(rows[0]["wait_ns"], truth["wait_ns"])
        # The mutex handed to pthread_cond_wait is re-locked inside libc:
        # only the program's own pthread_mutex_lock calls may count.
        explicit_locks = (iters + 1) + (threads - 1)
        mutex_rows = self.rows_for(report, truth["cond_mutex"])
        self.assertTrue(all(r["type"] == "mutex" for r in mutex_rows))
        self.assertEqual(self.total(mutex_rows, "count"), explicit_locks)

    def test_trylock_successes_count_failures_do_not(self):
        run = self.launch(["--top", "0"], self.workload_cmd(
            "trylock", "--threads", "2", "--iters", "40", "--hold-us", "2000"))
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        self.assertGreater(truth["failed"], 0, "the workload must see failures")
        self.assertGreater(truth["count"], 0, "and successes")
        rows = self.rows_for(run.reports[-1], truth["object"])
        try_rows = [r for r in rows if r["failed"]]
        self.assertEqual(len(try_rows), 1)
        self.assertEqual(try_rows[0]["count"], truth["count"])
        self.assertEqual(try_rows[0]["failed"], truth["failed"])
        holder = [r for r in rows if not r["failed"]]
        self.assertEqual(self.total(holder, "count"), truth["hold_count"])

    def test_recursive_mutex_is_rec_mutex(self):
        run = self.launch(["--top", "0"], self.workload_cmd(
            "recursive", "--threads", "2", "--iters", "40", "--hold-us", "3000"))
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        rows = self.rows_for(run.reports[-1], truth["object"])
        self.assertEqual({r["type"] for r in rows}, {"rec_mutex"})
        self.assertEqual(self.total(rows, "count"), truth["count"])
        self.assertEqual(truth["count"], 2 * 2 * 40)
        self.assertWithin(self.total(rows, "wait_ns"), truth["wait_ns"])

    def _heap_run(self, *flags):
        threads, iters, objects = 2, 10, 4
        run = self.launch(["--top", "0", *flags], self.workload_cmd(
            "heap", "--threads", str(threads), "--iters", str(iters),
            "--objects", str(objects), "--hold-us", "1000"))
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        self.assertEqual(len(truth["objects"]), objects)
        return run.reports[-1], truth, threads * iters

    def test_heap_mutexes_at_one_call_site_coalesce(self):
        report, truth, per_object = self._heap_run()
        rows = [r for r in report["rows"] if r["objects"] == 4]
        self.assertEqual(len(rows), 1, report["rows"])
        row = rows[0]
        self.assertIsNone(row["object"], "a coalesced row has no one object")
        self.assertEqual(row["count"], truth["count"])
        self.assertEqual(row["count"], 4 * per_object)
        # Mostly uncontended: the probe's own cost dominates each call.
        self.assertInside(row["wait_ns"], truth["wait_ns"])

    def test_heap_mutexes_split_without_coalescing(self):
        report, truth, per_object = self._heap_run("--no-coalesce")
        for obj in truth["objects"]:
            rows = self.rows_for(report, obj)
            self.assertEqual(len(rows), 1, obj)
            self.assertEqual(rows[0]["objects"], 1)
            self.assertEqual(rows[0]["count"], per_object)
        self.assertFalse([r for r in report["rows"] if r["objects"] != 1])

    def test_per_thread_rows_match_each_thread(self):
        run = self.launch(["--top", "0", "--per-thread"], self.workload_cmd(
            "mutex", "--threads", "3", "--iters", "30", "--hold-us", "3000"))
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        rows = self.rows_for(run.reports[-1], truth["object"])
        self.assertEqual(len(rows), 3)
        by_tid = {r["tid"]: r for r in rows}
        for thread in truth["threads"]:
            row = by_tid[thread["tid"]]
            self.assertEqual(row["count"], thread["count"])
            self.assertWithin(row["wait_ns"], thread["wait_ns"], 0.05,
                              f"tid {thread['tid']}")

    def test_sort_and_top(self):
        run = self.launch(["--top", "2", "--sort", "count", "--no-coalesce"],
                          self.workload_cmd("heap", "--threads", "1", "--iters",
                                            "3", "--objects", "5", "--hold-us", "100"))
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[-1]
        self.assertEqual(len(report["rows"]), 2)
        self.assertGreaterEqual(report["rows_total"], 5)
        counts = [r["count"] for r in report["rows"]]
        self.assertEqual(counts, sorted(counts, reverse=True))


class NestedCalls(SyncprofTestCase):
    """Lock calls inside lock calls (tests/targets/nested.c): a signal
    handler that locks while its thread waits in pthread_mutex_lock, and
    one that siglongjmps out of it."""

    NESTED = os.path.join(BUILD, "tests", "targets", "nested")

    def run_nested(self, scenario):
        run = self.launch(["--top", "0", "--no-coalesce"], [
            self.NESTED, scenario, "--iters", "20",
            "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.reports[-1], self.truth()

    def test_a_lock_in_a_signal_handler_inside_a_lock_is_counted(self):
        report, truth = self.run_nested("nested")
        self.assertEqual(truth["nested"], 20, "the handler must run inside")
        self.assertEqual(report["dropped"], 0)
        handler = self.rows_for(report, truth["handler_lock"])
        self.assertEqual(self.total(handler, "count"), truth["handler_ok"])
        self.assertEqual(self.total(handler, "failed"),
                         truth["handler_calls"] - truth["handler_ok"])
        waiter = [r for r in self.rows_for(report, truth["big_lock"])
                  if r["callsite"]["function"] == "waiter"]
        self.assertEqual(self.total(waiter, "count"), truth["locks"])
        self.assertEqual(self.total(waiter, "failed"), 0)

    def test_a_call_left_by_longjmp_counts_as_failed(self):
        report, truth = self.run_nested("longjmp")
        self.assertEqual(truth["abandoned"], 10)
        waiter = [r for r in self.rows_for(report, truth["big_lock"])
                  if r["callsite"]["function"] == "waiter"]
        self.assertEqual(self.total(waiter, "count"), truth["locks"])
        self.assertEqual(self.total(waiter, "failed"), truth["abandoned"])
        self.assertEqual(report["abandoned"], truth["abandoned"])
        self.assertEqual(report["dropped"], 0)
