"""Whole stacks against tests/targets/stacks, in both modes: two paths
through one lock wrapper told apart (counts exact, waits within 3% of the
target's own clock), --skip turning the wrapper's callers into call
sites, a deep stack unwound completely, a library walked by frame
pointer, a dlopen'ed library, a clean stop at JIT code, and the stacks
and call sites of a process
that execs (contended mode used to name every wait after an exec inside
libc)."""
import os
import re
import subprocess

from harness import BUILD, ROOT, SyncprofTestCase

STACKS = os.path.join(BUILD, "tests", "targets", "stacks")
SOURCES = {
    "stacks.c": os.path.join(ROOT, "tests", "targets", "stacks.c"),
    "stackwrap.c": os.path.join(ROOT, "tests", "targets", "lib", "stackwrap.c"),
    "stackfp.c": os.path.join(ROOT, "tests", "targets", "lib", "stackfp.c"),
    "stackdl.c": os.path.join(ROOT, "tests", "targets", "lib", "stackdl.c"),
}
TOLERANCE = 0.03
ITERS = 20
MODES = ("contended", "full")


def marker(source, name):
    with open(SOURCES[source]) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"CALLSITE:{name}\b", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {source}")


def frame_names(stack):
    return [f["function"] for f in stack["frames"]]


class Stacks(SyncprofTestCase):

    def run_stacks(self, scenario, mode, *args, iters=ITERS):
        run = self.launch(["--mode", mode, "--top", "0", *args],
                          [STACKS, scenario, "--iters", str(iters),
                           "--hold-us", "3000", "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0)
        self.assertEqual(report["unwind_stopped"], 0)
        return report, self.truth()

    def lock_rows(self, report, truth):
        return [r for r in report["rows"]
                if r["object"] == truth["object"] and r["type"] == "mutex"
                and r["callsite"]["function"] != "holder"]

    def the_stack(self, rows, function):
        """The one stack, among the rows', that passes through function."""
        found = [s for r in rows for s in r["stacks"]
                 if function in frame_names(s)]
        self.assertEqual(len(found), 1, f"stacks through {function}: "
                         f"{[frame_names(s) for r in rows for s in r['stacks']]}")
        return found[0]

    def assertFrame(self, frame, function, source, name):
        self.assertEqual(frame["function"], function, frame)
        self.assertEqual(frame["line"], marker(source, name), frame)
        self.assertTrue(frame["file"].endswith(source), frame)
        self.assertFalse(frame["inline"])

    def assertPath(self, stack, truth, path):
        self.assertEqual(stack["count"], truth["paths"][path]["count"])
        self.assertWithin(stack["wait_ns"], truth["paths"][path]["wait_ns"],
                          TOLERANCE, what=path)
        self.assertLessEqual(stack["max_ns"], stack["wait_ns"])

    def assertThreadBottom(self, stack):
        """Complete: down to the thread's start in libc."""
        self.assertEqual(stack["end"], "complete", frame_names(stack))
        self.assertEqual(frame_names(stack)[-2:], ["start_thread", "__GI___clone3"])

    # --- two paths through one wrapper ------------------------------------

    def check_paths(self, mode):
        report, truth = self.run_stacks("paths", mode)
        rows = self.lock_rows(report, truth)
        self.assertEqual(len(rows), 1, rows)
        [row] = rows
        # Without --skip the call site is the wrapper's own call.
        self.assertEqual(row["callsite"]["line"], marker("stackwrap.c", "stackwrap"))
        self.assertTrue(row["callsite"]["module"].endswith("/libstackwrap.so"))
        self.assertEqual(row["count"], ITERS)
        self.assertEqual(len(row["stacks"]), 2)
        for path in ("path_a", "path_b"):
            stack = self.the_stack(rows, path)
            frames = stack["frames"]
            self.assertFrame(frames[0], "stackwrap_lock", "stackwrap.c", "stackwrap")
            self.assertTrue(frames[0]["module"].endswith("/libstackwrap.so"))
            self.assertEqual(frames[0]["address"], row["callsite"]["address"])
            self.assertFrame(frames[1], path, "stacks.c", path)
            self.assertEqual(frames[2]["function"], "waiter")
            self.assertThreadBottom(stack)
            self.assertPath(stack, truth, path)
        self.assertEqual(sum(s["count"] for s in row["stacks"]), row["count"])
        self.assertEqual(sum(s["wait_ns"] for s in row["stacks"]), row["wait_ns"])

    def test_two_paths_through_a_wrapper_contended(self):
        self.check_paths("contended")

    def test_two_paths_through_a_wrapper_full(self):
        self.check_paths("full")

    def check_skip(self, mode, *args):
        report, truth = self.run_stacks("paths", mode, *args)
        rows = self.lock_rows(report, truth)
        self.assertEqual(len(rows), 2, rows)
        for path in ("path_a", "path_b"):
            [row] = [r for r in rows if r["callsite"]["function"] == path]
            self.assertEqual(row["callsite"]["line"], marker("stacks.c", path))
            self.assertEqual(row["count"], truth["paths"][path]["count"])
            self.assertWithin(row["wait_ns"], truth["paths"][path]["wait_ns"],
                              TOLERANCE, what=path)
        return rows

    def test_skip_makes_the_callers_call_sites_contended(self):
        rows = self.check_skip("contended", "--skip", "stackwrap_lock")
        for row in rows:
            [stack] = row["stacks"]
            # The wrapper stays in the stack: only the call site moves.
            self.assertEqual(frame_names(stack)[:2],
                             ["stackwrap_lock", row["callsite"]["function"]])

    def test_skip_makes_the_callers_call_sites_full(self):
        self.check_skip("full", "--skip", "stackwrap_lock")

    def test_skip_glob_without_stacks(self):
        """--stack-depth 0 keeps no stack, but still walks past --skip."""
        for mode in MODES:
            with self.subTest(mode=mode):
                rows = self.check_skip(mode, "--stack-depth", "0",
                                       "--skip", "stack*_lo?k", "--skip", "nothing")
                self.assertEqual([r["stacks"] for r in rows], [[], []])

    # --- how far and through what -----------------------------------------

    def test_deep_stack_unwound_completely(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                report, truth = self.run_stacks("deep", mode, "--stack-depth", "64",
                                                iters=6)
                stack = self.the_stack(self.lock_rows(report, truth), "path_deep")
                names = frame_names(stack)
                self.assertGreaterEqual(len(names), 24)
                self.assertEqual(names[:2], ["stackwrap_lock", "path_deep"])
                self.assertEqual(names.count("deep_down"), truth["depth"] + 1)
                self.assertThreadBottom(stack)
                self.assertPath(stack, truth, "path_deep")

    def test_deep_stack_cut_at_the_depth_asked(self):
        report, truth = self.run_stacks("deep", "contended", "--stack-depth", "8",
                                        iters=6)
        stack = self.the_stack(self.lock_rows(report, truth), "path_deep")
        self.assertEqual(len(stack["frames"]), 8)
        self.assertEqual(stack["end"], "truncated")
        self.assertEqual(stack["count"], 6)

    def test_library_without_unwind_tables_walked_by_frame_pointer(self):
        library = os.path.join(BUILD, "tests", "targets", "libstackfp.so")
        frames = subprocess.run(["readelf", "--debug-dump=frames", library],
                                capture_output=True, text=True).stdout
        self.assertNotIn("FDE", frames, "the library was to have no CFI at all")
        for mode in MODES:
            with self.subTest(mode=mode):
                report, truth = self.run_stacks("fp", mode, iters=10)
                stack = self.the_stack(self.lock_rows(report, truth), "path_fp")
                frames = stack["frames"]
                self.assertFrame(frames[0], "stackfp_inner", "stackfp.c", "stackfp_inner")
                self.assertFrame(frames[1], "stackfp_outer", "stackfp.c", "stackfp_outer")
                self.assertFrame(frames[2], "path_fp", "stacks.c", "path_fp")
                self.assertTrue(frames[0]["module"].endswith("/libstackfp.so"))
                self.assertThreadBottom(stack)
                self.assertPath(stack, truth, "path_fp")

    def test_dlopened_library(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                report, truth = self.run_stacks("dlopen", mode, iters=10)
                stack = self.the_stack(self.lock_rows(report, truth), "path_dl")
                frames = stack["frames"]
                self.assertFrame(frames[0], "stackdl_lock", "stackdl.c", "stackdl")
                self.assertTrue(frames[0]["module"].endswith("/libstackdl.so"))
                self.assertFrame(frames[1], "path_dl", "stacks.c", "path_dl")
                self.assertThreadBottom(stack)
                self.assertPath(stack, truth, "path_dl")

    def test_jit_code_stops_the_stack_cleanly(self):
        """Code in no file: the stack ends there, marked and counted."""
        for mode in MODES:
            with self.subTest(mode=mode):
                run = self.launch(["-v", "--mode", mode, "--top", "0"],
                                  [STACKS, "jit", "--iters", "10", "--hold-us", "3000",
                                   "--truth", self.path("truth.json")])
                self.assertEqual(run.returncode, 0, run.stderr)
                report, truth = run.reports[-1], self.truth()
                self.assertEqual(report["dropped"], 0)
                stack = self.the_stack(self.lock_rows(report, truth), "path_jit")
                frames = stack["frames"]
                self.assertEqual(frame_names(stack)[:2], ["stackwrap_lock", "path_jit"])
                self.assertEqual(len(frames), 3, frames)
                self.assertIsNone(frames[2]["module"])
                self.assertEqual(stack["end"], "stopped")
                self.assertPath(stack, truth, "path_jit")
                self.assertRegex(run.stderr, r"walks stopped early \d+ \(JIT or "
                                 r"anonymous code [1-9]\d*,")

    def test_stacks_and_call_sites_through_exec(self):
        """Both images' waits named at their own lines, stacks complete."""
        for mode in MODES:
            with self.subTest(mode=mode):
                report, truth = self.run_stacks("exec", mode)
                self.assertTrue(truth["after_exec"])
                rows = [r for r in report["rows"] if r["type"] == "mutex" and
                        r["object_symbol"] == "stack_lock" and
                        r["callsite"]["function"] != "holder"]
                for row in rows:
                    self.assertEqual(row["callsite"]["function"], "stackwrap_lock")
                    self.assertEqual(row["callsite"]["line"],
                                     marker("stackwrap.c", "stackwrap"))
                for path in ("path_pre", "path_a", "path_b"):
                    stack = self.the_stack(rows, path)
                    self.assertEqual(frame_names(stack)[:2], ["stackwrap_lock", path])
                    self.assertThreadBottom(stack)
                    self.assertPath(stack, truth, path)
                # Nothing waits inside libc, unnamed.
                for row in report["rows"]:
                    self.assertNotIn("lowlevellock", row["callsite"]["file"] or "", row)
                    self.assertIsNotNone(row["callsite"]["function"], row)
