"""--lock-order against tests/targets/lockorder: lock orders that can
deadlock, taken at different times so that none does.  The target writes
the lines of its acquisitions; each cycle must name both (or all three)
sites, and orders that cannot deadlock must report nothing."""
import os
import subprocess

from harness import BUILD, SYNCPROF, SyncprofTestCase

LOCKORDER = os.path.join(BUILD, "tests", "targets", "lockorder")


class LockOrder(SyncprofTestCase):

    def run_scenario(self, scenario, *args):
        truth = self.path("truth.json")
        run = self.launch(["--lock-order", *args],
                          [LOCKORDER, scenario, "--truth", truth])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(run.reports, run.stderr)
        report = run.reports[-1]
        self.assertEqual(report["lock_order_lost"],
                         {"pairs": 0, "untracked": 0})
        return report, self.truth("truth.json")

    @staticmethod
    def edge_lines(edge):
        return (edge["held"]["frame"]["line"], edge["acquired"]["frame"]["line"])

    def test_abba_is_one_inversion_with_both_lines(self):
        report, truth = self.run_scenario("abba")
        cycles = report["lock_order"]
        self.assertEqual(len(cycles), 1, cycles)
        self.assertEqual(sorted(cycles[0]["objects"]), ["lock_a", "lock_b"])
        lines = sorted(self.edge_lines(e) for e in cycles[0]["edges"])
        self.assertEqual(lines, sorted([tuple(truth["a_then_b"]),
                                        tuple(truth["b_then_a"])]))
        for edge in cycles[0]["edges"]:
            self.assertEqual(edge["count"], 1)
            self.assertEqual(edge["held"]["frame"]["file"].rsplit("/", 1)[-1],
                             "lockorder.c")
            # Full mode walks stacks for the calls that waited only; an
            # uncontended take keeps its call site.  A stack kept starts
            # at that site and ends at libc's thread start.
            for lock in (edge["held"], edge["acquired"]):
                if lock["stack"] is None:
                    continue
                self.assertEqual(lock["stack"][0]["line"], lock["frame"]["line"])
                self.assertIn("start_thread",
                              [f["function"] for f in lock["stack"]])

    def test_consistent_ladder_reports_nothing(self):
        report, _ = self.run_scenario("ladder")
        self.assertEqual(report["lock_order"], [])

    def test_three_lock_cycle_across_three_threads(self):
        report, truth = self.run_scenario("cycle3")
        cycles = report["lock_order"]
        self.assertEqual(len(cycles), 1, cycles)
        self.assertEqual(sorted(cycles[0]["objects"]),
                         ["lock_a", "lock_b", "lock_c"])
        taken = sorted(e["acquired"]["frame"]["line"] for e in cycles[0]["edges"])
        self.assertEqual(taken, sorted(truth["cycle3"]))
        # Each edge holds the lock the edge before took.
        edges = cycles[0]["edges"]
        for before, edge in zip(edges, edges[1:] + edges[:1]):
            self.assertEqual(edge["held"]["object"], before["acquired"]["object"])
        self.assertEqual(len({e["tid"] for e in edges}), 3)

    def test_heap_locks_are_classed_by_site(self):
        report, truth = self.run_scenario("heap")
        # The second objects took the first ones' addresses: keyed by
        # address they would make a cycle with list_lock.
        self.assertGreater(truth["reused"], 0)
        self.assertEqual(report["lock_order"], [])

    def test_recursive_mutex_taken_twice_makes_no_self_edge(self):
        report, _ = self.run_scenario("recursive")
        self.assertEqual(report["lock_order"], [])

    def test_readers_after_readers_cannot_deadlock(self):
        report, _ = self.run_scenario("readers")
        self.assertEqual(report["lock_order"], [])

    def test_table_names_the_cycle_and_both_sites(self):
        truth = self.path("truth.json")
        proc = subprocess.run(
            [SYNCPROF, "--mode", "full", "--lock-order", "--", LOCKORDER,
             "abba", "--truth", truth],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = self.truth("truth.json")
        self.assertIn("Lock order: 1 cycle", proc.stdout)
        # A cycle has no first lock: either rotation names it.
        self.assertTrue("lock_a -> lock_b -> lock_a" in proc.stdout or
                        "lock_b -> lock_a -> lock_b" in proc.stdout,
                        proc.stdout)
        for held, took in (lines["a_then_b"], lines["b_then_a"]):
            self.assertIn(f"(taken at lockorder.c:{held}), took ", proc.stdout)
            self.assertIn(f" at lockorder.c:{took}: 1 time", proc.stdout)

    def test_needs_full_mode(self):
        proc = subprocess.run([SYNCPROF, "--lock-order", "--", LOCKORDER, "abba"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--lock-order", proc.stderr)
        self.assertIn("--mode full", proc.stderr)

