"""Waits across processes, against tests/targets/pshared: a parent holds a
process-shared mutex in shared anonymous memory while its forked
children wait for it, one at a time; each hold computes, then sleeps, and
ends at a known unlock line.  The children time their waits, the parent
its holds' clocks (CPU time, wait for a CPU, wall).  --blame must charge
the children's waits to the parent's unlock line, --why --children must
split them by the parent's own clocks, and /debug/pprof/mutex, read by go
tool pprof, must name the parent's function."""
import json
import os
import re
import signal
import subprocess

from harness import BUILD, ROOT, SyncprofTestCase, source_marker
from test_profiles import GO
from test_why import root_share
import test_serve

PSHARED = os.path.join(BUILD, "tests", "targets", "pshared")
SOURCE = os.path.join(ROOT, "tests", "targets", "pshared.c")
CHILDREN = 2
ITERS = 10
# The child's wait starts as it enters the futex, which the parent sees
# by polling, and ends when it runs again: the parent's clocks bound the
# split from both sides (from its turn given, and from the futex seen),
# and the wakeup at the end, which a loaded machine stretches, is within
# this share of them.
TOLERANCE = 0.10
BLAMED = 0.90
LOCK_NAME = "(struct board *)->lock"


def line_of(kind, name):
    return source_marker(SOURCE, kind, name)


class SharedMemory(SyncprofTestCase):
    # --serve as test_serve starts and stops it (stderr read as it comes).
    start_serve = test_serve.Serve.start_serve
    stop_serve = test_serve.Serve.stop_serve

    def pshared(self, *args):
        return [PSHARED, "--children", str(CHILDREN), "--iters", str(ITERS),
                "--spin-us", "3000", "--sleep-us", "3000",
                "--truth", self.tmp.name, *args]

    def read(self, name):
        with open(self.path(name)) as f:
            return json.load(f)

    def children_wait(self):
        kids = [self.read(f"child-{c}.json") for c in range(CHILDREN)]
        self.assertEqual([k["count"] for k in kids], [ITERS] * CHILDREN)
        return sum(k["wait_ns"] for k in kids)

    def attach(self, *args):
        target = self.start_waiting_target(self.pshared("--wait-signal"))
        if "--mode" not in args:
            args = ("--mode", "contended", *args)
        run = self.profile_to_the_end(target, "--children", "--top", "0",
                                      *args)
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0, run.stderr)
        return report

    def waiters_row(self, report):
        line = line_of("CALLSITE", "pshared_wait")
        rows = [r for r in report["rows"] if r["callsite"]["line"] == line]
        self.assertEqual(len(rows), 1, report["rows"])
        row = rows[0]
        self.assertEqual(row["type"], "mutex")
        self.assertEqual(row["count"], CHILDREN * ITERS)
        self.assertEqual(row["callsite"]["function"], "child_wait")
        return row

    def test_blame_charges_the_children_to_the_parents_unlock(self):
        self.check_blame("contended")

    def test_full_mode_blame_charges_the_parents_unlock(self):
        """Full mode finds the release by the lock's address: the page
        was mapped before the fork, so it is the same in every process."""
        self.check_blame("full")

    def check_blame(self, mode):
        report = self.attach("--blame", "--mode", mode)
        truth = self.read("parent.json")
        row = self.waiters_row(report)
        # The waits are the children's own; one name for the lock.
        self.assertWithin(row["wait_ns"], self.children_wait(), TOLERANCE)
        self.assertEqual(row["object_symbol"], LOCK_NAME)
        unlock = line_of("RELEASE", "pshared_unlock")
        ours = [b for b in report["blame"]
                if b["release"] and b["release"]["line"] == unlock]
        self.assertTrue(ours, report["blame"])
        for b in ours:
            self.assertEqual(b["release"]["function"], "parent_hold")
            self.assertEqual(b["object"], row["object"])
            self.assertEqual(b["object_symbol"], LOCK_NAME)
        blamed = sum(b["wait_ns"] for b in ours)
        self.assertGreaterEqual(blamed, BLAMED * self.children_wait(),
                                report["blame"])
        self.assertEqual(sum(b["count"] for b in ours), CHILDREN * ITERS)
        # Released by the parent: its process, not the waiters'.
        self.assertIn(truth["pid"], {p["pid"] for p in report["processes"]})

    def test_one_lock_at_different_addresses_is_one_object(self):
        """--remap: each child maps the shared page again (a memfd) at
        another address than the parent's; the kernel keys the futex by
        the page, and so must syncprof: one object, named once, from
        every process, its waits charged to the parent's unlock."""
        target = self.start_waiting_target(self.pshared("--remap",
                                                        "--wait-signal"))
        run = self.profile_to_the_end(target, "--children", "--top", "0",
                                      "--mode", "contended", "--blame",
                                      "--per-process", "--no-coalesce")
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0, run.stderr)
        parent = self.read("parent.json")
        kids = [self.read(f"child-{c}.json") for c in range(CHILDREN)]
        for kid in kids:
            self.assertNotEqual(kid["lock"], parent["lock"])
        line = line_of("CALLSITE", "pshared_wait")
        rows = [r for r in report["rows"] if r["callsite"]["line"] == line]
        self.assertEqual(sorted(r["pid"] for r in rows),
                         sorted(k["pid"] for k in kids), report["rows"])
        # The first process to map the page keeps its addresses.
        self.assertEqual({r["object"] for r in rows}, {parent["lock"]})
        self.assertEqual({r["object_symbol"] for r in rows}, {LOCK_NAME})
        for kid in kids:
            mine = [r for r in rows if r["pid"] == kid["pid"]][0]
            self.assertEqual(mine["count"], kid["count"])
            self.assertWithin(mine["wait_ns"], kid["wait_ns"], TOLERANCE)
        unlock = line_of("RELEASE", "pshared_unlock")
        ours = [b for b in report["blame"]
                if b["release"] and b["release"]["line"] == unlock]
        self.assertEqual({b["object"] for b in ours}, {parent["lock"]})
        self.assertEqual({b["pid"] for b in ours}, {parent["pid"]})
        self.assertGreaterEqual(sum(b["wait_ns"] for b in ours),
                                BLAMED * self.children_wait(),
                                report["blame"])

    def test_why_splits_the_childrens_wait_by_the_parents_clocks(self):
        self.check_why(self.attach("--why"))

    def check_why(self, report):
        truth = self.read("parent.json")
        row = self.waiters_row(report)
        holder = row["why"]["holder"]
        self.assertEqual(sum(holder.values()), row["wait_ns"])
        self.why_context = f"syncprof's split {holder}, the holder's {truth}"
        # The child's wait starts between the parent's two stretches'
        # starts (its turn given; seen in the futex): each state's truth
        # lies between the two.
        running, asleep, held = self.holder_states(truth, "holder")
        running_all, asleep_all, held_all = self.holder_states(truth, "turn")
        self.assertBetween(holder["running_ns"], running, running_all,
                           "running")
        self.assertBetween(holder["sleep_ns"] + holder["stolen_ns"], asleep,
                           asleep_all, "asleep or stolen")
        self.assertBetween(holder["running_ns"] + holder["runnable_ns"] +
                           holder["sleep_ns"] + holder["stolen_ns"], held,
                           held_all, "held")
        # The chains end at the parent's unlock, in the parent's states.
        unlock = line_of("RELEASE", "pshared_unlock")
        at_unlock = [r for r in row["why"]["roots"]
                     if r["frame"] and r["frame"]["line"] == unlock]
        self.assertGreaterEqual(sum(r["wait_ns"] for r in at_unlock),
                                BLAMED * row["wait_ns"], row["why"])
        by_state = {r["state"]: r["wait_ns"] for r in at_unlock}
        self.assertBetween(by_state.get("running", 0), running, running_all,
                           "root running")
        self.assertBetween(by_state.get("sleep", 0) +
                           by_state.get("stolen", 0), asleep, asleep_all,
                           "root asleep or stolen")

    @staticmethod
    def holder_states(truth, stretch):
        """(running, asleep, wall) of the parent's holder_* or turn_*
        clocks; asleep is the rest of the wall clock, which holds the
        time a virtual machine's host ran something else on the parent's
        CPU too (syncprof's stolen)."""
        cpu = truth[f"{stretch}_cpu_ns"]
        delay = truth[f"{stretch}_run_delay_ns"]
        wall = truth[f"{stretch}_wall_ns"]
        return cpu, wall - cpu - delay, wall

    def assertBetween(self, measured, low, high, what):
        """measured within [low, high] widened by TOLERANCE of low."""
        self.assertGreater(low, 0, f"{what}: the target measured nothing")
        self.assertGreaterEqual(measured, low - TOLERANCE * low,
                                f"{what}: syncprof {measured} below the "
                                f"holder's {low}; {self.why_context}")
        self.assertLessEqual(measured, max(low, high) + TOLERANCE * low,
                             f"{what}: syncprof {measured} above the "
                             f"holder's {high}; {self.why_context}")

    def test_why_follows_several_pids(self):
        """--why --pid PARENT,CHILD,CHILD: processes that exist at attach,
        their threads' states read from /proc, the same split."""
        target = self.start_waiting_target(self.pshared("--fork-first",
                                                        "--wait-signal"))
        with open(f"/proc/{target.pid}/task/{target.pid}/children") as f:
            kids = f.read().split()
        self.assertEqual(len(kids), CHILDREN)
        prof = self.start_syncprof(["--pid", ",".join([str(target.pid)] +
                                                      kids),
                                    "--mode", "contended", "--why",
                                    "--top", "0"])
        self.go(target)
        self.assertEqual(target.wait(timeout=120), 0)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[-1]
        self.assertEqual(report["dropped"], 0, run.stderr)
        self.check_why(report)

    def test_served_profiles_name_the_parents_function(self):
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        target = self.start_waiting_target(self.pshared("--wait-signal"))
        proc, base = self.start_serve("--pid", str(target.pid), "--children",
                                      "--why")
        self.go(target)
        self.assertEqual(target.wait(timeout=120), 0)
        waited = self.children_wait()
        env = dict(os.environ, PPROF_TMPDIR=self.tmp.name, HOME=self.tmp.name)
        top = subprocess.run(
            [GO, "tool", "pprof", "-timeout", "120", "-top", "-cum",
             "-unit", "ns", base + "/debug/pprof/mutex"],
            capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(top.returncode, 0, top.stderr)
        # -top's rows: flat flat% sum% cum cum% name; the parent's
        # function holds (almost) the whole of the children's wait.
        cum = {}
        for line in top.stdout.splitlines():
            fields = line.split()
            if len(fields) >= 6 and fields[3].endswith("ns"):
                cum[" ".join(fields[5:])] = float(fields[3][:-2])
        self.assertIn("parent_hold", cum, top.stdout)
        self.assertGreaterEqual(cum["parent_hold"], BLAMED * waited,
                                top.stdout)
        # --why served: the children's block profile has its chains end
        # at the parent's unlock.
        tags = subprocess.run(
            [GO, "tool", "pprof", "-timeout", "120", "-tags",
             base + "/debug/pprof/block"],
            capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(tags.returncode, 0, tags.stderr)
        unlock = re.compile(r"^parent_hold \((.*/)?pshared\.c:%d\)$" %
                            line_of("RELEASE", "pshared_unlock"))
        self.assertGreaterEqual(root_share(tags.stdout, unlock),
                                BLAMED * 100, tags.stdout)
        self.stop_serve(proc)
