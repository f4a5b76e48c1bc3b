"""Symbolization, end to end: call sites as function, file and line of the
user's own lock call (C, C++ through inlined lock guards, shared libraries,
libraries dlopen'ed after attach), global locks by name, and stripped
targets degrading to module+offset."""
import csv
import os
import re
import shutil
import subprocess

from harness import BUILD, HANG_S, ROOT, SYNCPROF, WORKLOAD, SyncprofTestCase

TARGETS = os.path.join(ROOT, "tests", "targets")
CXXLOCK = os.path.join(BUILD, "tests", "targets", "cxxlock")
STRIPPED = os.path.join(BUILD, "tests", "targets", "workload-stripped")
SHAREDLIB = os.path.join(BUILD, "tests", "targets", "libsharedlock.so")


def marker_line(source, name):
    """The line of `CALLSITE:name` in a target's source: the truth."""
    with open(os.path.join(TARGETS, source)) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"CALLSITE:{name}\b", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {source}")


class Symbols(SyncprofTestCase):

    def assertCallsite(self, row, function, source, marker):
        cs = row["callsite"]
        self.assertEqual(cs["function"], function, cs)
        self.assertEqual(cs["file"], os.path.join(TARGETS, source), cs)
        self.assertEqual(cs["line"], marker_line(source, marker), cs)

    def test_c_call_sites_and_global_lock_names(self):
        run = self.launch(["--top", "0"], self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "5", "--hold-us", "500"))
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        [row] = self.rows_for(run.reports[-1], truth["object"])
        self.assertCallsite(row, "timed_lock", "workload.c", "timed_lock")
        self.assertEqual(row["object_symbol"], "big_lock")
        [ctor] = self.rows_for(run.reports[-1], truth["ctor_lock"])
        self.assertEqual(ctor["object_symbol"], "ctor_lock")
        self.assertEqual(ctor["callsite"]["function"], "lock_before_main")

    def test_condvar_and_trylock_call_sites(self):
        run = self.launch(["--top", "0"], self.workload_cmd(
            "condvar", "--threads", "2", "--iters", "5", "--hold-us", "1000"))
        self.assertEqual(run.returncode, 0, run.stderr)
        [row] = self.rows_for(run.reports[-1], self.truth()["object"])
        self.assertCallsite(row, "condvar_worker", "workload.c", "cond_wait")
        self.assertEqual(row["object_symbol"], "cond")

        run = self.launch(["--top", "0"], self.workload_cmd(
            "trylock", "--threads", "2", "--iters", "10", "--hold-us", "1000"))
        self.assertEqual(run.returncode, 0, run.stderr)
        rows = [r for r in self.rows_for(run.reports[-1], self.truth()["object"])
                if r["failed"]]
        self.assertEqual(len(rows), 1)
        self.assertCallsite(rows[0], "trylock_worker", "workload.c", "trylock")

    def test_cxx_lock_guard_resolves_to_the_users_line(self):
        truth_path = self.path("truth.json")
        run = self.launch(["--top", "0"], [CXXLOCK, "--truth", truth_path,
                                           "--threads", "2", "--iters", "10"])
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        [row] = self.rows_for(run.reports[-1], truth["counter_object"])
        self.assertEqual(row["count"], truth["add_count"])
        self.assertCallsite(row, "app::Counter::add(long)", "cxxlock.cpp",
                            "counter_add")
        # The std::mutex member of a global object: its path.
        self.assertEqual(row["object_symbol"], "app::counter.mutex_")

    def test_call_sites_in_a_shared_library(self):
        truth_path = self.path("truth.json")
        run = self.launch(["--top", "0"], [CXXLOCK, "--truth", truth_path,
                                           "--threads", "2", "--iters", "10"])
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        [row] = self.rows_for(run.reports[-1], truth["shared_object"])
        self.assertEqual(row["count"], truth["shared_count"])
        self.assertEqual(row["callsite"]["module"], os.path.realpath(SHAREDLIB))
        self.assertCallsite(row, "shared_lock_work", "lib/sharedlock.c",
                            "shared_lock_work")
        self.assertEqual(row["object_symbol"], "shared_lock")

    def test_library_dlopened_after_attach(self):
        target = self.start_waiting_target(self.workload_cmd(
            "dlopen", "--lib", SHAREDLIB, "--iters", "10", "--wait-signal"))
        run = self.profile_to_the_end(target)
        truth = self.truth()
        [row] = self.rows_for(run.reports[-1], truth["object"])
        self.assertEqual(row["count"], truth["count"])
        self.assertCallsite(row, "shared_lock_work", "lib/sharedlock.c",
                            "shared_lock_work")
        self.assertEqual(row["object_symbol"], "shared_lock")

    def test_stripped_target_degrades_to_module_offset(self):
        run = self.launch(["--top", "0"], [STRIPPED, "mutex", "--truth",
                                           self.path("truth.json"), "--threads",
                                           "2", "--iters", "5", "--hold-us", "200"])
        self.assertEqual(run.returncode, 0, run.stderr)
        [row] = self.rows_for(run.reports[-1], self.truth()["object"])
        cs = row["callsite"]
        self.assertEqual(cs["module"], os.path.realpath(STRIPPED))
        self.assertIsNone(cs["function"])
        self.assertIsNone(cs["file"])
        self.assertIsNone(cs["line"])
        self.assertIsNone(row["object_symbol"])
        # The offset is the same code as in the unstripped build.
        run = self.launch(["--top", "0"], self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "5", "--hold-us", "200"))
        [full] = self.rows_for(run.reports[-1], self.truth()["object"])
        self.assertEqual(cs["offset"], full["callsite"]["offset"])

    def test_table_shows_names_and_short_lines(self):
        proc = subprocess.run(
            [SYNCPROF, "--mode", "full", "--", WORKLOAD, "mutex", "--threads", "2", "--iters", "5",
             "--hold-us", "500"], capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        line = marker_line("workload.c", "timed_lock")
        # Futile, when a wait was woken to wait again (under load).
        self.assertRegex(proc.stdout, rf"\nmutex +big_lock  workload\.c:{line} +"
                         r"\d+\.\d{5} +10 +\d+\.\d\d +\d+\.\d\d +0( +\d+)?\n")
        both = subprocess.run(
            [SYNCPROF, "--mode", "full", "--callsite", "both", "--", WORKLOAD, "mutex", "--threads",
             "1", "--iters", "2", "--hold-us", "100"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertIn(f"timed_lock (workload.c:{line})", both.stdout)
        func = subprocess.run(
            [SYNCPROF, "--mode", "full", "--callsite", "func", "--", WORKLOAD, "mutex", "--threads",
             "1", "--iters", "2", "--hold-us", "100"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertRegex(func.stdout, r"big_lock  timed_lock\+0x[0-9a-f]+ ")

    def test_module_paths_name_the_file_byte_for_byte(self):
        """A newline (the maps file prints it as \\012), a comma, a quote
        and bytes that are not UTF-8 in the program's path: JSON (through
        surrogateescape) gives back the very path; CSV prints '?' for each
        control or invalid byte, as the table does, and keeps the rest."""
        directory = os.fsencode(self.path("odd")) + b"/a\nb,\"c\xff\xe9"
        os.makedirs(directory)
        program = directory + b"/work\nload"
        shutil.copy(WORKLOAD, program)
        cmd = [os.fsdecode(program), "mutex", "--threads", "1", "--iters", "3",
               "--hold-us", "100", "--truth", self.path("truth.json")]
        run = self.launch(["--top", "0"], cmd)
        self.assertEqual(run.returncode, 0, run.stderr)
        [row] = self.rows_for(run.reports[-1], self.truth()["object"])
        self.assertEqual(os.fsencode(row["callsite"]["module"]), program)
        csv_out = self.path("report.csv")
        proc = subprocess.run([SYNCPROF, "--mode", "full", "--format", "csv",
                               "-o", csv_out, "--", *cmd],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(csv_out, newline="", errors="surrogateescape") as f:
            modules = {r["module"] for r in csv.DictReader(f)}
        shown = program
        for byte in (b"\n", b"\xff", b"\xe9"):
            shown = shown.replace(byte, b"?")
        self.assertIn(shown, {os.fsencode(m) for m in modules})
