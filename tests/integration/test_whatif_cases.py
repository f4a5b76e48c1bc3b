"""--what-if on locks whose part in the progress is known by construction.

A decoy (tests/targets/whatif --decoy-threads 4 --decoy-hold-us 1000):
four threads sleep 1 ms under decoy_lock in a loop and make nothing.  It
has more wait than work_lock, which the item-making workers need, and no
item needs it.  Lengthening its holds still slows the items on a loaded
machine (the delay spins on a CPU the workers would have had), so its
slope alone read gains of 1% to 40%.  Its holders wake no thread that
makes items, directly or through others (user/whatif/wakereach.c): it
must read apart from the progress and predict at most DECOY_MAX_PCT,
while work_lock, in the same run, reaches the progress.  --what-if is
given no list: the decoy, with the most wait, is tried first.

A feeder (--feeder-us): only the feeder thread holds feed_lock and it
makes no item, but each item waits for a token the feeder posts after
its hold: the lock bounds the progress through a wakeup.  It must read
as reaching the progress, and its prediction must not be cut to its
holds' CPU: at least half of the real gain, measured by the target
itself (whatiftruth.py) before and after the experiment.
"""
import os

from harness import BUILD, SyncprofTestCase
from whatiftruth import Truth

TARGET = os.path.join(BUILD, "tests", "targets", "whatif")
LOCK_BOUND = ["--threads", "3", "--hold-us", "200", "--work-us", "20"]
DECOY = LOCK_BOUND + ["--decoy-threads", "4", "--decoy-hold-us", "1000"]
DECOY_MAX_PCT = 2.0
# The feeder's 400 us bound the items; the workers' 100 us an item
# (50 held, 50 not) leave them room.
FEEDER = ["--threads", "2", "--hold-us", "50", "--work-us", "50",
          "--feeder-us", "400"]
WINDOWS = 24


def by_shorter(report, lock):
    return {w["shorter_pct"]: w for w in report["what_if"]
            if w["object"] == lock}


class WhatIfCases(SyncprofTestCase):

    def what_if(self, pid, locks):
        prof = self.start_syncprof(["--mode", "contended", "--pid",
                                    str(pid), "-d", "1",
                                    "--what-if" + ("=" + ",".join(locks)
                                                   if locks else ""),
                                    "--progress", "item_done"])
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run

    def test_a_decoy_lock_is_apart_and_predicts_nothing(self):
        with Truth(TARGET, DECOY) as truth:
            truth.settle()
            # No list: the locks by wait, the decoy first.
            run = self.what_if(truth.pid, [])
        report = run.reports[-1]
        wait = {}
        for row in report["rows"]:
            wait[row["object_symbol"]] = (wait.get(row["object_symbol"], 0)
                                          + row["wait_ns"])
        # A decoy: more wait than the lock the items need.
        self.assertGreater(wait.get("decoy_lock", 0),
                           wait.get("work_lock", 0), wait)
        decoy = by_shorter(report, "decoy_lock")
        work = by_shorter(report, "work_lock")
        self.assertEqual(sorted(decoy), [25.0, 50.0], report["what_if"])
        self.assertEqual(sorted(work), [25.0, 50.0], report["what_if"])
        for s in (25.0, 50.0):
            d, w = decoy[s], work[s]
            self.assertIs(d["reaches_progress"], False, (d, run.stderr))
            self.assertEqual(d["bound"], "apart", d)
            self.assertLessEqual(d["predicted_gain_pct"], DECOY_MAX_PCT, d)
            self.assertLessEqual(d["low_pct"], d["predicted_gain_pct"], d)
            self.assertLessEqual(d["predicted_gain_pct"], d["high_pct"], d)
            # Apart: no queue of progress threads to fit.
            self.assertIsNone(d["queue_gain_pct"], d)
            self.assertIs(w["reaches_progress"], True, (w, run.stderr))
            self.assertIn(w["bound"], ("lock", "cpu"), w)
            self.assertGreater(w["predicted_gain_pct"], DECOY_MAX_PCT, w)
        self.assertIn("decoy_lock: none of its", run.stderr)
        self.assertIn("the next lock by wait is tried", run.stderr)
        self.assertEqual(report["what_if"][0]["object"], "decoy_lock",
                         report["what_if"])

    def test_a_feeder_reaches_the_progress_through_wakeups(self):
        with Truth(TARGET, FEEDER) as truth:
            truth.settle()
            run, _, _, _ = truth.around(
                lambda: self.what_if(truth.pid, ["feed_lock"]), WINDOWS,
                fracs=(0.5,))
            real, pairs = truth.gain(0.5)
        entries = by_shorter(run.reports[-1], "feed_lock")
        self.assertEqual(sorted(entries), [25.0, 50.0], entries)
        w = entries[50.0]
        summary = {"real": real, "pairs": pairs, "entry": w}
        self.assertGreaterEqual(pairs, WINDOWS // 2, summary)
        # The feeder bounds the items: shorter holds make more.
        self.assertGreater(real, 0, summary)
        for e in entries.values():
            self.assertIs(e["reaches_progress"], True, (e, run.stderr))
            self.assertIn(e["bound"], ("lock", "cpu"), e)
        self.assertGreaterEqual(w["predicted_gain_pct"], real / 2, summary)
