"""--what-if's accuracy against the shorter version run for real.

tests/targets/whatif's workers make items, one hold of work_lock each (3
workers, 200 us held, 20 us outside: the lock bounds them, and on a
loaded machine the CPU they get).  The truth is the target's own: told
on its stdin (--control), it alternates windows of the critical section
as given and 25% or 50% shorter, and the median of each short window's
rate against the base windows beside it is the real gain
(whatiftruth.py), measured in the very process syncprof then profiles,
just before and just after the experiment (25%, 50%, experiment, 50%,
25%), pooled.  The prediction, made on the unchanged target, must come
within a fifth (relative) of the real gain, and the real gain must fall
inside the interval syncprof gives.  The real gain is a measurement
too: the bound allows besides half of what it moved between before and
after.

The truth is only a truth when it held still: when the machine's load
moved the real gain measured before the experiment and the one measured
after it apart by more than the bound itself (two fifths of their
pooled value), the attempt is made again, at most ATTEMPTS times.  When
no attempt's truth held still, there is nothing to hold the prediction
to (beside busy loops and other suites the real gain for 25% shorter
once read +83% before an experiment and -8% after it): the test is
skipped, saying so, rather than passed or failed on noise.  The first
attempt whose truth held still is held to the bound.
"""
import os

from harness import BUILD, SyncprofTestCase
from whatiftruth import Truth

TARGET = os.path.join(BUILD, "tests", "targets", "whatif")
LOCK_BOUND = ["--threads", "3", "--hold-us", "200", "--work-us", "20"]
# Windows per fraction on each side of the experiment (of MIN_ITEMS
# items or more each: whatiftruth.py).  With 24, the real gain for 25%
# shorter measured before the experiment and after it on a quiet guest
# read as far apart as 20% and 28%, or 41% and 24%: the truth's own noise
# was the bound.  With 64 (about 60 pairs pooled), within a few points.
WINDOWS = 64
# The bound for the tests: within 20% (relative) of the real gain.
WITHIN = 0.20
ATTEMPTS = 3


class WhatIfAccuracy(SyncprofTestCase):

    def attempt(self):
        """One prediction between two measurements of the truth: the
        report's entries by shorter_pct, the pooled real gains, and the
        real gains before and after."""
        with Truth(TARGET, LOCK_BOUND) as truth:
            truth.settle()
            run, _, middle, _ = truth.around(
                lambda: self.finish_syncprof(self.start_syncprof(
                    ["--mode", "contended", "--pid", str(truth.pid), "-d",
                     "1", "--what-if=work_lock", "--progress",
                     "item_done"])), WINDOWS)
            real = {s: truth.gain(s / 100) for s in (25, 50)}
            before = {s: truth.gain(s / 100, until=middle)[0]
                      for s in (25, 50)}
            after = {s: truth.gain(s / 100, since=middle)[0]
                     for s in (25, 50)}
        self.assertEqual(run.returncode, 0, run.stderr)
        entries = {w["shorter_pct"]: w for w in run.reports[-1]["what_if"]}
        self.assertEqual(sorted(entries), [25.0, 50.0], entries)
        return entries, real, before, after

    def test_prediction_within_a_fifth_of_the_real_gain(self):
        unstill = []
        for attempt in range(ATTEMPTS):
            entries, real, before, after = self.attempt()
            if all(abs(before[s] - after[s]) <= 2 * WITHIN * real[s][0]
                   for s in (25, 50)):
                break
            unstill.append({s: (before[s], after[s]) for s in (25, 50)})
        else:
            self.skipTest(f"the real gain did not hold still in "
                          f"{ATTEMPTS} attempts (before, after): {unstill}")
        summary = {s: {"predicted": entries[s]["predicted_gain_pct"],
                       "interval": (entries[s]["low_pct"],
                                    entries[s]["high_pct"]),
                       "bound": entries[s]["bound"], "real": real[s],
                       "before": before[s], "after": after[s],
                       "attempt": attempt + 1}
                   for s in (25, 50)}
        for s in (25, 50):
            w = entries[s]
            gain, pairs = real[s]
            self.assertGreaterEqual(pairs, WINDOWS // 2, summary)
            self.assertGreater(gain, 0, summary)
            # Within a fifth, give or take what the truth itself moved
            # across the experiment (half its before-after spread: the
            # real gain is measured too, and the stillness check above
            # lets it move by up to twice the fifth), as in
            # test_whatif_cpubound.py.
            moved = abs(before[s] - after[s]) / 2
            self.assertLessEqual(abs(w["predicted_gain_pct"] - gain),
                                 WITHIN * gain + moved, summary)
            self.assertLessEqual(w["low_pct"], gain, summary)
            self.assertGreaterEqual(w["high_pct"], gain, summary)
