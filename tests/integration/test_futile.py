"""Futile wakeups against tests/targets/futile, whose threads count their
own: consumers of a condvar woken by a broadcast that finds nothing left
for them, and threads that barge on a mutex, each counting the sleeps of
its lock calls.  Full mode must count the condvar's futile wakeups
exactly, per thread, on the wait's row, and the mutex's and the
semaphore's as the calls' sleeps beyond their first; contended mode sees
the mutex's (every stolen handoff, also those whose re-wait never slept)
and no condvar's or semaphore's."""
import os
import subprocess

from harness import BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase, source_marker

FUTILE = os.path.join(BUILD, "tests", "targets", "futile")
SOURCE = os.path.join(ROOT, "tests", "targets", "futile.c")


class Futile(SyncprofTestCase):

    def run_target(self, scenario, mode, *args):
        target = self.start_waiting_target(
            [FUTILE, scenario, "--wait-signal", "--truth",
             self.path("truth.json"), *args])
        # Rows by thread: the truth is per thread.
        run = self.profile_to_the_end(target, "--mode", mode, "--top", "0",
                                      "--no-coalesce", "--per-thread")
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0, run.stderr)
        for row in report["rows"]:
            self.assertIsInstance(row["futile"], int, row)
        return report, self.truth()

    def rows_at(self, report, obj, kind, marker):
        line = source_marker(SOURCE, "CALLSITE", marker)
        rows = [r for r in report["rows"] if r["object"] == obj and
                r["type"] == kind and r["callsite"]["line"] == line]
        self.assertTrue(rows, f"no {kind} row at {marker}: {report['rows']}")
        return rows

    @staticmethod
    def by_thread(rows):
        """Futile wakeups by thread (contended mode splits a thread's rows
        by the holder it waited for)."""
        sums = {}
        for r in rows:
            sums[str(r["tid"])] = sums.get(str(r["tid"]), 0) + r["futile"]
        return sums

    def test_full_mode_counts_each_consumers_futile_wakeups(self):
        report, truth = self.run_target("condvar", "full", "--threads", "3",
                                        "--rounds", "20")
        self.assertGreater(truth["futile"], 0, truth)
        rows = self.rows_at(report, truth["cond"], "condvar", "cond_wait")
        self.assertEqual(self.by_thread(rows), truth["per_thread"])
        self.assertEqual(self.total(rows, "futile"), truth["futile"])

    def test_contended_mode_cannot_tell_a_condvars_futile_wakeups(self):
        # A futile return and the next wait of the predicate loop are the
        # same futex wait as a useful one followed by the next wait.
        report, truth = self.run_target("condvar", "contended", "--threads",
                                        "3", "--rounds", "20")
        self.assertGreater(truth["futile"], 0, truth)
        rows = self.rows_at(report, truth["cond"], "condvar", "cond_wait")
        self.assertEqual(self.total(rows, "futile"), 0)

    def test_full_mode_counts_a_barging_mutexs_extra_sleeps(self):
        report, truth = self.run_target("barge", "full", "--threads", "3",
                                        "--rounds", "40")
        self.assertGreater(truth["futile_sleeps"], 0, truth)
        rows = self.rows_at(report, truth["mutex"], "mutex", "barge_lock")
        # The target's bracket holds the probes' own handling too: on a
        # loaded machine a thread can sleep there (the address space's
        # lock, taken by another thread's mapping), which the target
        # counts and the probes, between entry and return, cannot.
        measured = self.by_thread(rows)
        self.assertEqual(set(measured), set(truth["per_thread"]), measured)
        for tid, want in truth["per_thread"].items():
            self.assertLessEqual(measured[tid], want, (tid, measured))
            self.assertGreaterEqual(measured[tid], want - max(1, want // 20),
                                    (tid, measured, truth["per_thread"]))

    def test_full_mode_counts_a_semaphores_extra_sleeps(self):
        report, truth = self.run_target("sem", "full", "--threads", "3",
                                        "--rounds", "40")
        self.assertGreater(truth["futile_sleeps"], 0, truth)
        rows = self.rows_at(report, truth["sem"], "sem", "sem_wait")
        self.assertEqual(self.by_thread(rows), truth["per_thread"])

    def test_contended_mode_cannot_tell_a_semaphores_futile_wakeups(self):
        # Its wait ends at the wakeup: a re-wait is an acquisition of its
        # own.
        report, truth = self.run_target("sem", "contended", "--threads", "3",
                                        "--rounds", "40")
        self.assertGreater(truth["futile_sleeps"], 0, truth)
        rows = self.rows_at(report, truth["sem"], "sem", "sem_wait")
        self.assertEqual(self.total(rows, "futile"), 0)

    def test_contended_mode_counts_every_stolen_handoff(self):
        report, truth = self.run_target("barge", "contended", "--threads",
                                        "3", "--rounds", "40")
        self.assertGreater(truth["futile_sleeps"], 0, truth)
        rows = self.rows_at(report, truth["mutex"], "mutex", "barge_lock")
        # Each sleep but a lock call's last follows a wakeup the lock was
        # stolen from; a stolen handoff whose re-wait found the word
        # changed and never slept adds one more; no unlock wakes more
        # than one waiter.
        seen = self.by_thread(rows)
        for tid, sleeps in truth["per_thread"].items():
            self.assertGreaterEqual(seen.get(tid, 0), sleeps, (seen, truth))
        self.assertLessEqual(self.total(rows, "futile"), truth["unlocks"])

    def test_the_table_has_a_futile_column_with_why_even_with_none(self):
        # The condvar in contended mode: no row has any (it cannot see
        # them), and --why shows the column all the same.
        proc = subprocess.run(
            [SYNCPROF, "--why", "--top", "0", "--", FUTILE, "condvar",
             "--threads", "2", "--rounds", "3"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        title = next(line for line in proc.stdout.splitlines()
                     if line.startswith("Type "))
        self.assertTrue(title.endswith("Failed      Futile"), title)
