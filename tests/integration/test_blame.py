"""--blame against tests/targets/releaser: threads release locks at known
lines after known holds, and each waiter times its own wait; the wait
syncprof charges to each release line must be the waits the target says
that release ended."""
import subprocess

from harness import HANG_S, SYNCPROF, UNDER_TOLERANCE
from test_waits import RELEASER, ReleaserTestCase, marker_line

TOLERANCE = 0.03
FRAME_KEYS = {"address", "module", "offset", "function", "file", "line", "inline"}


class Blame(ReleaserTestCase):

    def blame_at(self, report, obj, kind, release):
        line = marker_line("RELEASE", release)
        entries = [b for b in report["blame"]
                   if b["object"] == obj and b["type"] == kind and b["release"]
                   and b["release"]["line"] == line]
        self.assertEqual(len(entries), 1,
                         f"{kind} {obj} released at {release} (line {line}): "
                         f"{report['blame']}")
        return entries[0]

    def assertClose(self, measured, truth, tolerance=TOLERANCE, what="wait"):
        self.assertGreater(truth, 0, f"{what}: the target measured nothing")
        error = abs(measured - truth) / truth
        self.assertLessEqual(error, tolerance,
                             f"{what}: syncprof {measured} vs target {truth} "
                             f"({error * 100:.2f}%)")

    def check_release(self, report, truth, obj, kind, release, mode="contended"):
        entry = self.blame_at(report, obj, kind, release)
        expected = truth["releases"][release]
        self.assertEqual(entry["count"], expected["count"], release)
        if mode == "contended":
            self.assertWithin(entry["wait_ns"], expected["ns"], TOLERANCE, release)
        else:
            # Full mode's probes add to the target's clock: ~2-3% low.
            self.assertWithin(entry["wait_ns"], expected["ns"], 0.05, release)
        return entry

    # --- contended mode ---------------------------------------------------

    def test_two_holders_at_two_lines_told_apart(self):
        report, truth = self.run_releaser("two", "--blame", hold_us=3000,
                                          hold2_us=1000)
        a = self.check_release(report, truth, truth["big_lock"], "mutex", "unlock_a")
        b = self.check_release(report, truth, truth["big_lock"], "mutex", "unlock_b")
        self.assertEqual(a["object_symbol"], "big_lock")
        self.assertEqual(a["release"]["function"], "unlock_a")
        self.assertEqual(b["release"]["function"], "unlock_b")
        self.assertNotEqual(a["release"]["address"], b["release"]["address"])
        self.assertTrue(a["release"]["module"].endswith("/releaser"))
        self.assertEqual(set(a["release"]), FRAME_KEYS)
        self.assertIs(a["release"]["inline"], False)
        self.assertIsNone(a["tid"])
        # Every wait on big_lock was ended by one of the two.
        row = self.row_at(report, truth["big_lock"], "mutex", "wait_big_lock")
        self.assertEqual(a["wait_ns"] + b["wait_ns"], row["wait_ns"])
        self.assertEqual(a["count"] + b["count"], row["count"])

    def test_waiter_woken_by_a_later_release_is_charged_to_it(self):
        report, truth = self.run_releaser("later", "--blame", hold_us=3000,
                                          hold2_us=2000)
        first = self.check_release(report, truth, truth["big_lock"], "mutex", "first")
        second = self.check_release(report, truth, truth["big_lock"], "mutex", "second")
        # W waited through both holds, and only the second let it go.
        self.assertGreater(second["wait_ns"], first["wait_ns"])

    def test_condvar_signaller_is_blamed_for_the_wait(self):
        report, truth = self.run_releaser("condvar", "--blame")
        entry = self.check_release(report, truth, truth["cond"], "condvar", "signal")
        self.assertEqual(entry["object_symbol"], "cond")
        self.assertEqual(entry["release"]["function"], "cond_releaser")

    def test_broadcast_is_charged_every_waiter_it_woke(self):
        threads = 3
        report, truth = self.run_releaser("broadcast", "--blame",
                                          extra=("--threads", str(threads)))
        entry = self.blame_at(report, truth["cond"], "condvar", "broadcast")
        row = self.row_at(report, truth["cond"], "condvar", "wait_cond")
        self.assertEqual(entry["count"], 20 * threads)
        self.assertEqual(entry["count"], row["count"])
        self.assertEqual(entry["wait_ns"], row["wait_ns"])
        # The waiters' own clocks also cover taking the mutex back.
        self.assertWithin(entry["wait_ns"], truth["releases"]["broadcast"]["ns"], 0.05)

    def test_requeued_wait_is_split_at_the_requeue(self):
        report, truth = self.run_releaser("requeue", "--blame", hold_us=3000,
                                          hold2_us=1000)
        before = self.blame_at(report, truth["cv_word"], "futex", "requeue")
        after = self.blame_at(report, truth["m_word"], "futex", "requeue_unlock")
        # The target splits at its own clock read beside the requeue
        # call, syncprof at the kernel's requeue: a releaser preempted
        # between the two moves the split (never the sum, checked below).
        for entry, name in ((before, "requeue"), (after, "requeue_unlock")):
            self.assertEqual(entry["count"], truth["releases"][name]["count"])
            self.assertClose(entry["wait_ns"], truth["releases"][name]["ns"],
                             UNDER_TOLERANCE, what=name)
        row = self.row_at(report, truth["cv_word"], "futex", "requeue_wait")
        self.assertEqual(before["wait_ns"] + after["wait_ns"], row["wait_ns"])

    def test_wait_interrupted_by_a_signal_is_charged_whole(self):
        report, truth = self.run_releaser("signal", "--blame", iters=10)
        self.check_release(report, truth, truth["big_lock"], "mutex", "after_signal")

    def test_per_thread_blame_names_the_releasing_thread(self):
        report, truth = self.run_releaser("later", "--blame", "--per-thread",
                                          iters=6)
        second = self.blame_at(report, truth["big_lock"], "mutex", "second")
        self.assertEqual(second["tid"], truth["tids"][1])
        first = self.blame_at(report, truth["big_lock"], "mutex", "first")
        self.assertEqual(first["tid"], truth["pid"])

    def test_no_blame_without_the_option(self):
        """Without --blame the keys are there, null: JSON keeps one shape."""
        report, _ = self.run_releaser("two", iters=4)
        self.assertIsNone(report["blame"])
        self.assertIsNone(report["blame_total"])

    def test_table_has_a_section_of_release_sites(self):
        proc = subprocess.run(
            [SYNCPROF, "--blame", "--", RELEASER, "two", "--iters", "6"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        title = next(i for i, l in enumerate(lines) if l.startswith("Who made them wait"))
        self.assertRegex(lines[title + 1], r"^Type +Object  Released at +  Wait Time \(s\)"
                         r"         Count  Average \(us\)      Max \(us\)$")
        self.assertEqual(set(lines[title + 2]), {"-"})
        released = [l for l in lines[title + 3:] if l.startswith("mutex ")]
        self.assertEqual(len(released), 2)
        for line, name in ((released[0], "unlock_a"), (released[1], "unlock_b")):
            self.assertRegex(line, rf"^mutex +big_lock  releaser\.c:{marker_line('RELEASE', name)} ")
