"""Locks inside global structs and arrays named by their member path
from DWARF (jobs.not_empty, table[3].lock, outer.inner.mu), in both
modes, in the JSON and in the table: the target writes each lock's
address under the path it expects.  --object takes the same paths.
Locks inside a malloc'ed struct are named by the type the waiting call
took them through ("(struct heapq *)->slots[2].lock"), and one taken
through an untyped pointer keeps its address."""
import os
import re
import subprocess

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase

MEMBERS = os.path.join(BUILD, "tests", "targets", "members")
SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "targets", "members.c")
ITERS = 4
# The heap locks' waits: the line of each, and the row's type.
HEAP_SITES = {"(struct heapq *)->lock": ("heap_lock", "mutex"),
              "(struct heapq *)->inner.mu": ("heap_inner", "mutex"),
              "(struct heapq *)->slots[2].lock": ("heap_slot", "mutex"),
              "(struct heapq *)->not_empty": ("heap_wait", "condvar")}


def marker_line(name):
    with open(SOURCE) as f:
        for number, text in enumerate(f, 1):
            if f"CALLSITE:{name} " in text:
                return number
    raise AssertionError(f"no CALLSITE:{name} in members.c")


class Members(SyncprofTestCase):

    def members_cmd(self):
        return [MEMBERS, "--iters", str(ITERS), "--truth", self.path("truth.json")]

    def check_mode(self, mode):
        run = self.launch(["--mode", mode, "--top", "0", "--no-coalesce"],
                          self.members_cmd())
        self.assertEqual(run.returncode, 0, run.stderr)
        report, truth = run.reports[-1], self.truth()
        # Every lock the target made block has its rows, each named by
        # its path; the condvar's mutex re-acquire blocks in contended
        # mode only by chance.
        for path, address in truth["objects"].items():
            rows = self.rows_for(report, address)
            if path != "jobs.lock" or mode == "full":
                self.assertTrue(rows, f"{mode}: no row of {path} at {address}: "
                                f"{report['rows']}")
            for row in rows:
                self.assertEqual(row["object_symbol"], path, row)
        # The waiters' own calls: each of them blocked.
        lock_line, wait_line = marker_line("member_lock"), marker_line("member_wait")
        for path in ("table[3].lock", "outer.inner.mu"):
            [row] = [r for r in self.rows_for(report, truth["objects"][path])
                     if r["callsite"]["line"] == lock_line]
            self.assertEqual(row["count"], ITERS, row)
        [wait] = [r for r in self.rows_for(report, truth["objects"]["jobs.not_empty"])
                  if r["callsite"]["line"] == wait_line]
        self.assertEqual(wait["type"], "condvar")
        if mode == "full":
            self.assertEqual(wait["count"], truth["cond_waits"], wait)
        else:
            self.assertGreaterEqual(wait["count"], 1, wait)
            self.assertLessEqual(wait["count"], truth["cond_waits"], wait)
        self.check_heap(mode, report, truth)

    def check_heap(self, mode, report, truth):
        """Each heap lock's waits at its line, named by its type; the
        condvar's mutex re-acquire by the mutex's; the untyped one not."""
        for path, (marker, kind) in HEAP_SITES.items():
            line = marker_line(marker)
            [row] = [r for r in self.rows_for(report, truth["heap"][path], kind)
                     if r["callsite"]["line"] == line]
            self.assertEqual(row["object_symbol"], path, row)
            if kind == "mutex" or mode == "full":
                self.assertEqual(row["count"], ITERS if kind == "mutex"
                                 else truth["heap_cond_waits"], row)
        for row in self.rows_for(report, truth["heap"]["(struct heapq *)->lock"],
                                 "mutex"):
            if row["callsite"]["line"] == marker_line("heap_wait"):
                self.assertEqual(row["object_symbol"], "(struct heapq *)->lock")
        untyped = self.rows_for(report, truth["untyped"])
        self.assertTrue(untyped, f"{mode}: no row of the untyped heap lock")
        for row in untyped:
            self.assertIsNone(row["object_symbol"], row)

    def test_contended_mode(self):
        self.check_mode("contended")

    def test_full_mode(self):
        self.check_mode("full")

    def test_table_shows_the_paths(self):
        proc = subprocess.run(
            [SYNCPROF, "--mode", "full", "--top", "0", "--no-coalesce", "--",
             *self.members_cmd()], capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        line = marker_line("member_lock")
        for path in ("table[3].lock", "outer.inner.mu"):
            self.assertRegex(proc.stdout, rf"\nmutex +{re.escape(path)}  "
                             rf"members\.c:{line} ")
        self.assertRegex(proc.stdout, rf"\ncondvar +jobs\.not_empty  "
                         rf"members\.c:{marker_line('member_wait')} ")
        for path, (marker, kind) in HEAP_SITES.items():
            self.assertRegex(proc.stdout, rf"\n{kind} +{re.escape(path)}  "
                             rf"members\.c:{marker_line(marker)} ")
        # The untyped heap lock: its address, as before.
        self.assertRegex(proc.stdout, rf"\nmutex +0x[0-9a-f]+  "
                         rf"members\.c:{marker_line('member_lock')} ")

    def test_object_filter_takes_a_path(self):
        run = self.launch(["--mode", "full", "--top", "0", "--no-coalesce",
                           "--object", "table[3].lock"], self.members_cmd())
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        rows = run.reports[-1]["rows"]
        self.assertTrue(rows)
        self.assertEqual({r["object"] for r in rows}, {truth["objects"]["table[3].lock"]})
        self.assertEqual(sum(r["count"] for r in rows), 2 * ITERS, rows)
        # The condvar's futex word lies inside the member: its waits count.
        run = self.launch(["--mode", "contended", "--top", "0",
                           "--object", "jobs.not_empty"], self.members_cmd())
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual({r["object_symbol"] for r in run.reports[-1]["rows"]},
                         {"jobs.not_empty"})
        proc = subprocess.run(
            [SYNCPROF, "--object", "jobs.no_such_member", "--", *self.members_cmd()],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--object 'jobs.no_such_member': no global or static variable",
                      proc.stderr)
