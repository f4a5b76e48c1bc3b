"""The frame cache across processes: a burst of forked processes running
one binary (tests/targets/forkburst: each child hands a mutex to a
thread 32 distinct frames deep) misses the frame cache about as often as
one process doing the same waits, read from syncprof -v.  Entries tagged
per process, emptied whenever the loader installed a new process's
mappings, missed 25-31 times per wait here with 8 children, against 0.2
for one process."""
import json
import os
import re

from harness import BUILD, SyncprofTestCase

FORKBURST = os.path.join(BUILD, "tests", "targets", "forkburst")
WAITS = 48
BURST = 8


class FrameCache(SyncprofTestCase):

    def run_burst(self, procs, mode="contended"):
        run = self.launch(["-v", "--children", "--mode", mode,
                           "--stack-depth", "32", "--top", "0"],
                          [FORKBURST, "--procs", str(procs),
                           "--iters", str(WAITS // procs)])
        self.assertEqual(run.returncode, 0, run.stderr)
        target = json.loads(run.stdout.splitlines()[-1])
        self.assertEqual(target["waits"], WAITS)
        m = re.search(r"frame cache misses (\d+)", run.stderr)
        self.assertIsNotNone(m, run.stderr)
        [report] = run.reports
        rows = [r for r in report["rows"] if r["type"] == "mutex"
                and r["callsite"]["function"] == "deep_down"]
        # Every acquisition blocked once, every one was walked whole.
        self.assertEqual(sum(r["count"] for r in rows), WAITS, report["rows"])
        for row in rows:
            for stack in row["stacks"]:
                self.assertEqual(len(stack["frames"]), 32)
        return int(m.group(1))

    def test_fork_burst_misses_like_one_process(self):
        one = self.run_burst(1)
        burst = self.run_burst(BURST)
        # A first walk misses once per distinct frame (~40 here); the
        # burst may add a few for children walked before the loader read
        # them, never one walk's worth per process.
        self.assertLessEqual(burst, 2 * one + 16,
                             f"{BURST} processes: {burst} misses, "
                             f"one process: {one}")
