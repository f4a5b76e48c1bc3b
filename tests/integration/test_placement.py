"""Waits filed where they happen, when the tables come late: a program
that blocks from its first instant after `sh -c 'exec prog'` and `env
prog` (the image syncprof probed first is sh's or env's), in both modes.
Every wait lands at its line, none inside libc; a stack that could not be
walked to its end (the new image's table not read when the wait ended)
is counted and said (-v's "just after an exec"), never filed elsewhere."""
import os
import re

from harness import BUILD, ROOT, SyncprofTestCase

STACKS = os.path.join(BUILD, "tests", "targets", "stacks")
SOURCES = os.path.join(ROOT, "tests", "targets")
MODES = ("contended", "full")
ITERS = 10
TOLERANCE = 0.03


def marker(source, name):
    with open(os.path.join(SOURCES, source)) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"CALLSITE:{name}\b", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {source}")


def stopped_walks(stderr):
    """-v's count of stacks that stopped early, and of those just after
    an exec (a table not read yet)."""
    m = re.search(r"walks stopped early (\d+) \(JIT or anonymous code \d+, "
                  r"just after an exec (\d+)\)", stderr)
    return (int(m.group(1)), int(m.group(2))) if m else None


class FirstWaitsAfterExec(SyncprofTestCase):

    def check_launcher(self, mode, *launcher):
        run = self.launch(["-v", "--mode", mode, "--top", "0"],
                          [*launcher, STACKS, "paths", "--iters", str(ITERS),
                           "--hold-us", "3000", "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        report, truth = run.reports[-1], self.truth()
        self.assertEqual(report["dropped"], 0)
        self.assertEqual(report["unwind_stopped"], 0)
        for row in report["rows"]:
            module = row["callsite"]["module"] or ""
            self.assertFalse(module.endswith("/libc.so.6"), row)
            if module.startswith(os.path.dirname(STACKS)):
                self.assertIsNotNone(row["callsite"]["function"], row)
        rows = [r for r in report["rows"] if r["object"] == truth["object"]
                and r["callsite"]["function"] != "holder"]
        self.assertEqual(len(rows), 1, rows)
        [row] = rows
        self.assertEqual(row["type"], "mutex")
        self.assertEqual(row["callsite"]["function"], "stackwrap_lock")
        self.assertEqual(row["callsite"]["line"], marker("lib/stackwrap.c", "stackwrap"))
        paths = truth["paths"]
        self.assertEqual(row["count"], sum(p["count"] for p in paths.values()))
        self.assertEqual(row["count"], ITERS)
        self.assertWithin(row["wait_ns"], sum(p["wait_ns"] for p in paths.values()),
                          TOLERANCE)
        # The stacks: walked through the path taken, or stopped, counted.
        for stack in row["stacks"]:
            names = [f["function"] for f in stack["frames"]]
            self.assertEqual(names[0], "stackwrap_lock", names)
            if stack["end"] == "stopped":
                continue
            self.assertEqual(stack["end"], "complete", names)
            self.assertIn(names[1], ("path_a", "path_b"), names)
            self.assertEqual(names[-2:], ["start_thread", "__GI___clone3"])
        stopped = sum(s["count"] + s["failed"] for r in report["rows"]
                      for s in r["stacks"] if s["end"] == "stopped")
        said = stopped_walks(run.stderr)
        self.assertIsNotNone(said, run.stderr)
        self.assertEqual(said[0], stopped, run.stderr)
        self.assertEqual(said[1], stopped, run.stderr)
        if mode == "contended":
            # main's pthread_join, at its own line too.
            joins = [r for r in report["rows"] if r["type"] == "join"]
            self.assertTrue(joins)
            self.assertEqual({r["callsite"]["function"] for r in joins},
                             {"run_threads"})

    def test_sh_exec(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                self.check_launcher(mode, "sh", "-c", 'exec "$0" "$@"')

    def test_env(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                self.check_launcher(mode, "env")
