"""The dlopen race, against tests/targets/dlrace: launched under syncprof,
the target dlopens libdlrace.so the moment it starts and waits through
it at once, three frames deep, on a mutex a holder keeps 2 ms after the
waiter blocked, then goes on 300 ms (a program that exits within
syncprof's reaction to its dlopen leaves no maps to read: such stacks
stay cut, counted in stacks_late.cut; at load 20, 1 launch in 80 did).  The library is mapped microseconds after syncprof lets
the target go, before any loader can have read its table: its first
waits are cut at the library unless they are walked again (when the
wait ends) or finished late (user/unwind/latewalk.c).  Over 20 launches,
alternating modes: every wait counted, every stack whole at the known
lines, none left cut (stacks_late.cut), in every launch."""
import os
import sys

from harness import BUILD, ROOT, SyncprofTestCase, source_marker

DLRACE = os.path.join(BUILD, "tests", "targets", "dlrace")
SOURCES = {
    "dlrace.c": os.path.join(ROOT, "tests", "targets", "dlrace.c"),
    "lib/dlrace.c": os.path.join(ROOT, "tests", "targets", "lib", "dlrace.c"),
}
LAUNCHES = 20
ITERS = 5
HOLD_US = 2000
LINGER_MS = 300


def marker(source, name):
    return source_marker(SOURCES[source], "CALLSITE", name)


# The frames every wait's stack starts with, innermost first.
EXPECTED = [("dlrace_inner", "lib/dlrace.c", "dlrace_inner"),
            ("dlrace_middle", "lib/dlrace.c", "dlrace_middle"),
            ("dlrace_lock", "lib/dlrace.c", "dlrace_lock"),
            ("main", "dlrace.c", "dlrace_main")]


class DlopenRace(SyncprofTestCase):

    def launch_once(self, mode):
        run = self.launch(["--mode", mode, "--top", "0"],
                          [DLRACE, "--iters", str(ITERS), "--hold-us",
                           str(HOLD_US), "--linger-ms", str(LINGER_MS),
                           "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1, run.stderr)
        return run.reports[0], self.truth()

    def check_launch(self, mode, report, truth):
        self.assertEqual(report["dropped"], 0)
        self.assertEqual(report["unwind_stopped"], 0)
        self.assertEqual(report["stacks_late"]["cut"], 0, report["stacks_late"])
        rows = [r for r in report["rows"] if r["object"] == truth["object"]
                and r["type"] == "mutex"
                and r["callsite"]["function"] != "holder"]
        self.assertEqual(sum(r["count"] for r in rows), truth["count"], rows)
        # Inside the waiter's own clock (2 ms holds: at load 20 the wake-up
        # latency it also measures was 15% of them).
        self.assertInside(sum(r["wait_ns"] for r in rows), truth["wait_ns"],
                          what=f"{mode} waits")
        stacks = [s for r in rows for s in r["stacks"]]
        # One stack: the late waits merged with those walked in time.
        self.assertEqual(len(stacks), 1, stacks)
        [stack] = stacks
        self.assertEqual(stack["count"], truth["count"])
        self.assertEqual(stack["end"], "complete", stack)
        frames = stack["frames"]
        for frame, (function, source, name) in zip(frames, EXPECTED):
            self.assertEqual(frame["function"], function, frames)
            self.assertEqual(frame["line"], marker(source, name), frame)
            self.assertTrue(frame["file"].endswith(source.split("/")[-1]), frame)
        for frame in frames[:3]:
            self.assertTrue(frame["module"].endswith("/libdlrace.so"), frame)

    def test_first_waits_through_a_new_library_are_walked_whole(self):
        late = {"contended": 0, "full": 0}
        for i in range(LAUNCHES):
            mode = ("contended", "full")[i % 2]
            with self.subTest(launch=i, mode=mode):
                report, truth = self.launch_once(mode)
                self.check_launch(mode, report, truth)
                late[mode] += report["stacks_late"]["finished"]
        # How often the race was run into (the late walks that saved it).
        print(f"dlopen race: waits finished late over {LAUNCHES} launches: "
              f"{late}", file=sys.stderr)
