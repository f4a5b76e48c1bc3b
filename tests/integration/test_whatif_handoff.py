"""--what-if's handoffs against the target's own.

tests/targets/whatif's workers (3, 200 us held, 20 us outside) time
their lock's handoffs themselves: a release stamped just before the
unlock call, to the next lock call's return by a worker that called
before that release, summed per window ("handoff H N": the mean in us
and how many).  syncprof times the same handoffs in the hold phase, from
its unlock probe's clock to its lock return probe's: the probes' traps
lie between the target's stamps and syncprof's, one on each side, which
is what an empty critical section reads under the probes (JSON
probe_ns); the target's handoff is syncprof's plus that.

The target's windows (50 ms) that lie wholly between syncprof's
"timing the holds" line and its "holds timed" line (the hold phase)
are the truth:
the handoffs of the same seconds.  Their mean, weighted by the
handoffs, must be within a quarter of syncprof's plus the probes', or
within three standard errors of the windows' means (a loaded machine
moves the handoff from one window to the next by more than the probes'
part), whichever is wider.  The wake-up curve in the report must be a
curve: points in order of idle, each of 20 wake-ups or more, its
latencies positive; the handoffs predicted with shorter holds no longer
than now less nothing (a handoff cannot grow from shorter holds on the
curve's flat ends).
"""
import math
import os
import statistics
import subprocess
import threading
import time

from harness import BUILD, SyncprofTestCase, kill_with_target

TARGET = os.path.join(BUILD, "tests", "targets", "whatif")
LOCK_BOUND = ["--threads", "3", "--hold-us", "200", "--work-us", "20",
              "--window-ms", "50", "--seconds", "600"]
WITHIN = 0.25
# Windows wholly inside the hold phase (0.5 s or more: 9 or more).
MIN_WINDOWS = 4


class Windows:
    """The target's window lines, each with the time it was read."""

    def __init__(self, proc):
        self.proc = proc
        self.lines = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            now = time.monotonic()
            words = line.split()
            if words[:1] == ["rate"] and "handoff" in words:
                at = words.index("handoff")
                with self.lock:
                    self.lines.append((now, float(words[at + 1]),
                                       int(words[at + 2])))

    def between(self, start, end):
        """(mean us, handoffs) of the windows wholly in [start, end]:
        each window began at the previous line's time."""
        with self.lock:
            lines = list(self.lines)
        return [(h, n) for (t0, _, _), (t1, h, n) in zip(lines, lines[1:])
                if t0 >= start and t1 <= end and n > 0]


class WhatIfHandoff(SyncprofTestCase):

    def test_handoffs_are_the_targets(self):
        target = subprocess.Popen([TARGET, *LOCK_BOUND],
                                  stdout=subprocess.PIPE, text=True)
        self.children.append(target)
        windows = Windows(target)
        proc = self.start_syncprof(["--mode", "contended", "--pid",
                                    str(target.pid), "-d", "1",
                                    "--what-if=work_lock", "--progress",
                                    "item_done"])
        self.read_stderr_until(proc, "timing the holds", "no hold phase")
        start = time.monotonic()
        self.read_stderr_until(proc, "holds timed", "no hold phase end")
        end = time.monotonic()
        run = self.finish_syncprof(proc)
        kill_with_target(target)
        self.assertEqual(run.returncode, 0, run.stderr)
        entries = run.reports[-1]["what_if"]
        self.assertEqual(len(entries), 2, entries)
        e = entries[0]
        self.assertIsNotNone(e["handoff_ns"], e)
        probe_us = e["probe_ns"] / 1e3
        mine = e["handoff_ns"] / 1e3 + probe_us
        truth = windows.between(start, end)
        if len(truth) < MIN_WINDOWS:
            self.skipTest(f"only {len(truth)} of the target's windows lay "
                          f"in the hold phase ({end - start:.2f} s): a "
                          f"machine too loaded to print them")
        handoffs = sum(n for _, n in truth)
        real = sum(h * n for h, n in truth) / handoffs
        spread = statistics.stdev([h for h, _ in truth]) / math.sqrt(
            len(truth))
        summary = {"syncprof_us": e["handoff_ns"] / 1e3,
                   "probes_us": probe_us, "target_us": real,
                   "windows": truth, "woken_pct": e["handoff_woken_pct"]}
        self.assertLessEqual(abs(mine - real),
                             max(WITHIN * real, 3 * spread), summary)
        # The curve: in order of idle, thick enough, and the handoffs
        # with shorter holds no longer than now.
        for e in entries:
            curve = e["wake_curve"]
            idles = [p["idle_ns"] for p in curve]
            self.assertEqual(idles, sorted(idles), curve)
            for p in curve:
                self.assertGreaterEqual(p["wakes"], 20, curve)
                self.assertGreater(p["latency_ns"], 0, curve)
            self.assertLessEqual(e["handoff_predicted_ns"],
                                 e["handoff_ns"] + 1e-6, e)
            # Every point's wake-ups are among the waiters' (the busy
            # ones off the curve; fewer than a point's none on it).
            self.assertLessEqual(sum(p["wakes"] for p in curve),
                                 e["wakes"] + 1e-6, e)
            if curve:
                self.assertAlmostEqual(
                    sum(p["wakes"] for p in curve) / e["wakes"] * 100,
                    100 - e["wakes_busy_pct"], delta=1e-6, msg=e)
            self.assertGreaterEqual(e["handoff_woken_pct"], 0, e)
            self.assertLessEqual(e["handoff_woken_pct"], 100, e)
            # The handoffs woken on idle CPUs, a share of the time: at
            # most the handoffs' own (their mean x the holds a second,
            # one handoff a hold at most), none where every wake-up
            # found its CPU busy.
            idle = e["handoff_idle_pct"]
            self.assertGreaterEqual(idle, 0, e)
            self.assertLessEqual(idle, e["handoff_ns"] * 1e-9 *
                                 e["rate_before"] * 100 * 1.5 + 1e-6, e)
            if e["wakes_busy_pct"] >= 100 - 1e-9:
                self.assertEqual(idle, 0, e)
