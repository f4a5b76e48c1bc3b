"""--hold against tests/targets/releaser's hold scenario: one thread
times its own holds from the return of each lock call to the call of its
unlock; syncprof's hold for each row must be within 5% of it."""
import re
import subprocess

from harness import HANG_S, SYNCPROF
from test_waits import RELEASER, ReleaserTestCase, marker_line

TOLERANCE = 0.05


class Hold(ReleaserTestCase):

    def hold_row(self, report, obj, kind, marker):
        rows = [r for r in self.rows_for(report, obj, kind)
                if r["callsite"]["line"] == marker_line("HOLD", marker)]
        self.assertEqual(len(rows), 1, f"{kind} rows at {marker}: {report['rows']}")
        return rows[0]

    def assertHold(self, row, truth, name, upper=None):
        """Within TOLERANCE of the target's hold; with upper, the
        target's hold timed from before the lock call bounds it above
        (the thread may be preempted between the lock's return and its
        clock read, still holding the lock)."""
        expected = truth["holds"][name]
        self.assertEqual(row["holds"], expected["count"], name)
        high = truth["holds"][upper]["ns"] if upper else expected["ns"]
        error = max(expected["ns"] - row["hold_ns"],
                    row["hold_ns"] - high, 0) / expected["ns"]
        self.assertLessEqual(error, TOLERANCE,
                             f"{name}: syncprof {row['hold_ns']} vs target "
                             f"{expected['ns']} to {high} "
                             f"({error * 100:.2f}%)")
        self.assertEqual(row["hold_avg_ns"], row["hold_ns"] // row["holds"])
        self.assertLessEqual(row["hold_max_ns"], row["hold_ns"])
        self.assertGreaterEqual(row["hold_max_ns"], row["hold_avg_ns"])

    def test_holds_equal_the_holders_own_within_5_percent(self):
        report, truth = self.run_releaser("hold", "--hold", mode="full",
                                          iters=10, hold_us=3000, hold2_us=1000)
        self.assertHold(self.hold_row(report, truth["big_lock"], "mutex", "mutex"),
                        truth, "mutex")
        # A recursive mutex: the outermost hold only, charged where it began.
        self.assertHold(self.hold_row(report, truth["rec_lock"], "rec_mutex", "rec"),
                        truth, "rec")
        inner = self.hold_row(report, truth["rec_lock"], "rec_mutex", "rec_inner")
        self.assertEqual(inner["holds"], 0)
        self.assertEqual(inner["hold_ns"], 0)
        self.assertIsNone(inner["hold_avg_ns"])
        # A condvar wait lets its mutex go, and holds it again from its
        # return: two holds, neither covering the wait.
        self.assertHold(self.hold_row(report, truth["cond_lock"], "mutex", "cond_lock"),
                        truth, "cond_lock", upper="cond_lock_call")
        self.assertHold(self.hold_row(report, truth["cond"], "condvar", "cond_wait"),
                        truth, "cond_wait")

    def test_hold_needs_full_mode(self):
        proc = subprocess.run([SYNCPROF, "--hold", "--", RELEASER, "hold"],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--hold", proc.stderr)
        self.assertIn("--mode full", proc.stderr)

    def test_table_has_hold_columns(self):
        proc = subprocess.run(
            [SYNCPROF, "--mode", "full", "--hold", "--", RELEASER, "hold",
             "--iters", "3", "--truth", self.path("truth.json")],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        header = next(l for l in lines if l.startswith("Type "))
        # The hold columns last, after Failed and the Futile column a
        # table shows when a wait was woken to wait again (under load, a
        # big_lock wait can be).
        self.assertRegex(header, r"      Failed(  +Futile)?  Hold Time \(s\)  "
                         r"Average Hold \(us\)$")
        big = next(l for l in lines if " big_lock " in l)
        # The columns' formats, and the average the total over the
        # holder's own count of holds; not a range of digits, which a
        # loaded machine's longer holds leave (the values against the
        # holder's clock: the JSON test above).
        m = re.search(r"  +(\d+\.\d{5})  +(\d+\.\d\d)$", big)
        self.assertIsNotNone(m, big)
        total_s, average_us = float(m.group(1)), float(m.group(2))
        self.assertGreater(total_s, 0)
        holds = self.truth()["holds"]["mutex"]["count"]
        self.assertAlmostEqual(average_us * holds / 1e6, total_s,
                               delta=holds * 0.005e-6 + 0.5e-5)

    def test_no_hold_fields_without_the_option(self):
        report, _ = self.run_releaser("hold", mode="full", iters=2)
        self.assertTrue(report["rows"])
        for r in report["rows"]:
            for key in ("holds", "hold_ns", "hold_avg_ns", "hold_max_ns"):
                self.assertIsNone(r[key], key)


class FullModeBlame(ReleaserTestCase):
    """Full mode charges a lock call to the last unlock (or signal) of its
    object by another thread during the call."""

    def blame_at(self, report, obj, kind, release):
        line = marker_line("RELEASE", release)
        entries = [b for b in report["blame"] if b["object"] == obj and
                   b["type"] == kind and b["release"] and b["release"]["line"] == line]
        self.assertEqual(len(entries), 1, report["blame"])
        return entries[0]

    def test_two_holders_at_two_lines_told_apart(self):
        report, truth = self.run_releaser("two", "--blame", mode="full")
        for name in ("unlock_a", "unlock_b"):
            entry = self.blame_at(report, truth["big_lock"], "mutex", name)
            self.assertEqual(entry["count"], truth["releases"][name]["count"])
            # Full mode's waits read 2-3% low (the probes' own time).
            self.assertWithin(entry["wait_ns"], truth["releases"][name]["ns"], 0.05, name)
            self.assertEqual(entry["release"]["function"], name)

    def test_condvar_signaller_is_blamed_for_the_wait(self):
        report, truth = self.run_releaser("condvar", "--blame", mode="full")
        entry = self.blame_at(report, truth["cond"], "condvar", "signal")
        self.assertEqual(entry["count"], truth["releases"]["signal"]["count"])
        self.assertWithin(entry["wait_ns"], truth["releases"]["signal"]["ns"], 0.05)
