"""--why against tests/targets/convoy: holders that measure what they did
while they held (their CPU time, their wait for a CPU from
/proc/thread-self/schedstat, the rest asleep), and waiters whose waits
chain through them.  syncprof's split of each row's wait by the holder's
state must agree with the holder's own clocks, and a chain's wait must
land at the release site of the last holder."""
import os
import re
import subprocess

from harness import (BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase,
                     source_marker)
from test_profiles import GO, Profile
from test_waits import RELEASER

CONVOY = os.path.join(BUILD, "tests", "targets", "convoy")
SOURCE = os.path.join(ROOT, "tests", "targets", "convoy.c")
# The holder's clocks cover the stretch from its waiters' blocking to its
# unlock; syncprof's, the waiter's whole futex wait: they differ by the
# waiter's way into the kernel and the holder's polling for it.
TOLERANCE = 0.15
HOLDER_KEYS = {"running_ns", "runnable_ns", "lock_ns", "sleep_ns",
               "stolen_ns", "unknown_ns", "woken_ns"}


def marker_line(kind, name):
    return source_marker(SOURCE, kind, name)


def c_unlock_root():
    """The root label of C's unlock, as go tool pprof -g prints a frame."""
    return re.compile(r"^convoy_c \((.*/)?convoy\.c:%d\)$" %
                      marker_line("RELEASE", "c_unlock"))


def root_share(tags, root):
    """The percentage of go tool pprof -tags' "root" tag whose values
    match root (a compiled pattern); 0 when the tag is absent."""
    roots = re.search(r"(?m)^ root: Total .*\n((?:\s+\S.*\n?)*)", tags)
    if not roots:
        return 0.0
    return sum(float(m.group(1)) for m in re.finditer(
        r"\(\s*([\d.]+)%\): (.*)$", roots.group(1), re.M)
        if root.match(m.group(2)))


class Why(SyncprofTestCase):

    def run_convoy(self, scenario, *args, syncprof_args=("--why",),
                   mode="contended"):
        target = self.start_waiting_target(
            [CONVOY, scenario, "--wait-signal", "--truth",
             self.path("truth.json"), *args])
        run = self.profile_to_the_end(target, "--mode", mode, "--top",
                                      "0", "--no-coalesce", *syncprof_args)
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0, run.stderr)
        return report, self.truth()

    def row_at(self, report, obj, marker, kind="mutex"):
        line = marker_line("CALLSITE", marker)
        rows = [r for r in report["rows"] if r["object"] == obj and
                r["type"] == kind and r["callsite"]["line"] == line]
        self.assertEqual(len(rows), 1, f"rows at {marker}: {report['rows']}")
        return rows[0]

    def assertNear(self, measured, truth, what, tolerance=TOLERANCE):
        self.assertGreater(truth, 0, f"{what}: the target measured nothing")
        error = abs(measured - truth) / truth
        self.assertLessEqual(error, tolerance,
                             f"{what}: syncprof {measured} vs target {truth} "
                             f"({error * 100:.1f}%)")

    def assertHolderState(self, measured, truth_ns, outside, what):
        """A state of the holder's, against the holder's own clocks over
        its stretch; a waiter's wait outside that stretch (it blocked
        before the holder began, or was woken after it released: long on
        a busy machine) may land in any state, so it widens the bound
        upwards only, by the target's own measure of it."""
        self.assertGreater(truth_ns, 0, f"{what}: the target measured nothing")
        self.assertGreaterEqual(measured, truth_ns * (1 - TOLERANCE),
                                f"{what}: syncprof {measured} vs target {truth_ns}")
        self.assertLessEqual(measured, truth_ns * (1 + TOLERANCE) + outside,
                             f"{what}: syncprof {measured} vs target {truth_ns}"
                             f" and {outside} outside the holder's stretch")

    def at_release(self, row, marker):
        line = marker_line("RELEASE", marker)
        return sum(r["wait_ns"] for r in row["why"]["roots"]
                   if r["frame"] and r["frame"]["line"] == line)

    def holder_truth(self, truth):
        """C's CPU time, run_delay, and the rest of its stretch: asleep,
        and (in a virtual machine) on a CPU the host ran something else
        on, which neither of C's clocks counts: syncprof's sleep plus
        stolen."""
        cpu, delay = truth["holder_cpu_ns"], truth["holder_run_delay_ns"]
        return cpu, delay, truth["holder_wall_ns"] - cpu - delay

    def check_parts_add_up(self, row):
        holder = row["why"]["holder"]
        self.assertEqual(set(holder), HOLDER_KEYS)
        self.assertEqual(sum(holder.values()), row["wait_ns"])
        self.assertEqual(sum(r["wait_ns"] for r in row["why"]["roots"]),
                         row["wait_ns"])

    def outside_chain(self, truth, waiter):
        """The part of a waiter's wait, by the target's own clocks, that
        the chain to C's release does not cover: A's ("l1") while B was
        not waiting (B woken by C's release, until its lock of l2
        returned; B running from there to its unlock of l1; then A woken:
        the waits for a CPU are long on a busy machine); B's
        ("l2") outside C's measured stretch (before it, and B woken after
        C's release)."""
        if waiter == "l1":
            return (truth["b_woken_ns"] + truth["b_tail_ns"] +
                    truth["a_woken_ns"])
        return max(0, truth["wait_b_ns"] - truth["holder_wall_ns"])

    def least_in_chain(self, wait_ns, outside):
        """How much of a wait the chain covers, at the least."""
        self.assertLess(outside, 0.5 * wait_ns,
                        "the chain covers too small a part of the wait to tell")
        return wait_ns - outside - TOLERANCE * wait_ns

    def a_behind_b(self, a, truth):
        """How much of A's wait (row a) B spent waiting, at the least."""
        return self.least_in_chain(a["wait_ns"], self.outside_chain(truth, "l1"))

    def check_chain_through_b(self, report, truth, b, release, root_fn):
        """A waited for B, which waited for C (B's row b): A's holder was
        in a lock wait, both chains end at C's release, and B's holder
        split is C's own clocks."""
        a = self.row_at(report, truth["l1"], "a_wait")
        for row in (a, b):
            self.check_parts_add_up(row)
        least = self.a_behind_b(a, truth)
        self.assertGreaterEqual(a["why"]["holder"]["lock_ns"], least)
        self.assertGreaterEqual(self.at_release(a, release), least)
        self.assertGreaterEqual(self.at_release(b, release), self.least_in_chain(
            b["wait_ns"], self.outside_chain(truth, "l2")))
        root = max(a["why"]["roots"], key=lambda r: r["wait_ns"])
        self.assertEqual(root["frame"]["function"], root_fn)
        self.assertIn(root["state"], ("running", "runnable", "sleep",
                                      "stolen"))
        self.assertEqual(report["why_chains_cut"], 0)
        # B's holder is C: its clocks, as C measured them, and B's wait
        # outside C's measured stretch, by B's own clock, in any state.
        cpu, delay, asleep = self.holder_truth(truth)
        outside = self.outside_chain(truth, "l2")
        holder = b["why"]["holder"]
        self.assertHolderState(holder["running_ns"], cpu, outside, "C running")
        self.assertHolderState(holder["sleep_ns"] + holder["stolen_ns"],
                               asleep, outside, "C asleep or stolen")
        self.assertHolderState(holder["running_ns"] + holder["runnable_ns"] +
                               holder["sleep_ns"] + holder["stolen_ns"],
                               truth["holder_wall_ns"], outside, "C held")
        # By state at the root: C's sleep and its computing apart.
        line = marker_line("RELEASE", release)
        by_state = {r["state"]: r["wait_ns"] for r in b["why"]["roots"]
                    if r["frame"] and r["frame"]["line"] == line}
        self.assertHolderState(by_state.get("sleep", 0) +
                               by_state.get("stolen", 0), asleep, outside,
                               "root asleep or stolen")
        self.assertHolderState(by_state.get("running", 0), cpu, outside,
                               "root running")

    def test_convoy_is_charged_to_the_last_holders_release(self):
        report, truth = self.run_convoy("convoy", "--iters", "6")
        b = self.row_at(report, truth["l2"], "b_wait")
        self.check_chain_through_b(report, truth, b, "c_unlock", "convoy_c")

    def test_rwlock_writer_is_the_holder(self):
        """C holds an rwlock as a writer (glibc's __cur_writer names it):
        B's wait, as a reader or as a writer, is split by C's clocks, and
        A's wait behind B is charged through B to C's unlock."""
        for args, marker, kind in (((), "b_rwait", "rwlock-r"),
                                   (("--b-writes",), "b_wwait", "rwlock-w")):
            with self.subTest(kind):
                report, truth = self.run_convoy("rwlock", "--iters", "6",
                                                *args)
                b = self.row_at(report, truth["l2"], marker, kind)
                self.check_chain_through_b(report, truth, b, "c_rwunlock",
                                           "convoy_c")

    def test_full_mode_follows_the_convoy(self):
        """Full mode: the lock call's probes bracket each wait, the holder
        is read from the lock at the call's entry, and the release (with
        the releaser's clocks) at the unlock's: the same chain, to C's
        unlock, and the same split by C's own clocks, for a mutex and for
        an rwlock a writer holds."""
        for scenario, marker, kind, release in (
                ("convoy", "b_wait", "mutex", "c_unlock"),
                ("rwlock", "b_rwait", "rwlock-r", "c_rwunlock")):
            with self.subTest(scenario):
                report, truth = self.run_convoy(scenario, "--iters", "6",
                                                mode="full")
                b = self.row_at(report, truth["l2"], marker, kind)
                self.check_chain_through_b(report, truth, b, release,
                                           "convoy_c")
                # Every row adds up, those of calls that never blocked
                # too (the lock function's own time: unknown).
                for row in report["rows"]:
                    self.check_parts_add_up(row)

    def test_rwlock_held_by_readers_has_no_owner(self):
        """Readers leave no owner word: a writer waiting on a reader's
        hold is charged to the reader's unlock as `unknown`, and so is A's
        wait behind it, through B."""
        report, truth = self.run_convoy("rwlock", "--iters", "4",
                                        "--b-writes", "--c-reads")
        b = self.row_at(report, truth["l2"], "b_wwait", "rwlock-w")
        self.check_parts_add_up(b)
        self.assertEqual(b["why"]["holder"]["unknown_ns"], b["wait_ns"])
        for root in b["why"]["roots"]:
            self.assertEqual(root["state"], "unknown")
            self.assertEqual(root["frame"]["line"],
                             marker_line("RELEASE", "c_rwunlock"))
        # A's holder B spent A's wait in that lock wait, then on its way
        # to the unlock of l1 (a loaded machine stretches that): the
        # lock-wait share goes on to C's unlock, unknown as B's was.
        a = self.row_at(report, truth["l1"], "a_wait")
        self.check_parts_add_up(a)
        lock = a["why"]["holder"]["lock_ns"]
        self.assertGreaterEqual(lock, 0.5 * a["wait_ns"])
        line = marker_line("RELEASE", "c_rwunlock")
        at_c = [r for r in a["why"]["roots"]
                if r["frame"] and r["frame"]["line"] == line]
        self.assertEqual({r["state"] for r in at_c}, {"unknown"})
        self.assertNear(sum(r["wait_ns"] for r in at_c), lock,
                        "A's lock-wait share at C's unlock", 0.01)

    def test_starved_holder_waits_for_a_cpu_as_its_schedstat_says(self):
        for mode in ("contended", "full"):
            with self.subTest(mode):
                report, truth = self.run_convoy(
                    "convoy", "--starve", "--iters", "4", "--work-ms", "10",
                    mode=mode)
                b = self.row_at(report, truth["l2"], "b_wait")
                self.check_parts_add_up(b)
                cpu, delay, asleep = self.holder_truth(truth)
                holder = b["why"]["holder"]
                # B's wait beyond C's measured stretch, by B's own clock.
                outside = self.outside_chain(truth, "l2")
                self.assertHolderState(holder["runnable_ns"], delay, outside,
                                       "C runnable (schedstat)")
                self.assertHolderState(holder["running_ns"], cpu, outside,
                                       "C running")
                self.assertHolderState(holder["sleep_ns"] + holder["stolen_ns"],
                                       asleep, outside, "C asleep or stolen")
                a = self.row_at(report, truth["l1"], "a_wait")
                self.assertGreaterEqual(self.at_release(a, "c_unlock"),
                                        self.a_behind_b(a, truth))

    def test_holder_in_blocking_io_shows_as_its_sleep(self):
        report, truth = self.run_convoy("io", "--iters", "5")
        w = self.row_at(report, truth["l1"], "w_wait")
        self.check_parts_add_up(w)
        cpu, delay, asleep = self.holder_truth(truth)
        self.assertNear(w["why"]["holder"]["sleep_ns"], asleep, "H in read()")
        top = max(w["why"]["roots"], key=lambda r: r["wait_ns"])
        self.assertEqual(top["state"], "sleep")
        self.assertEqual(top["frame"]["line"], marker_line("RELEASE", "h_unlock"))

    def test_condvar_has_no_owner_and_is_charged_to_its_releaser(self):
        run = self.launch(["--mode", "contended", "--why", "--top", "0",
                           "--no-coalesce"],
                          [RELEASER, "condvar", "--truth", self.path("truth.json"),
                           "--iters", "10", "--hold-us", "3000"])
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        rows = [r for r in run.reports[0]["rows"]
                if r["object"] == truth["cond"] and r["type"] == "condvar"]
        self.assertEqual(len(rows), 1, run.reports[0]["rows"])
        why = rows[0]["why"]
        self.assertEqual(why["holder"]["unknown_ns"], rows[0]["wait_ns"])
        self.assertTrue(why["roots"])
        for root in why["roots"]:
            self.assertEqual(root["state"], "unknown")
            self.assertEqual(root["frame"]["function"], "cond_releaser")

    def test_pprof_splits_each_row_by_its_roots(self):
        """--why --format pprof, read by go tool pprof: every sample of a
        row labelled with its root, the row's samples adding up to the
        waiter's own clock, and go tool pprof -tags putting the leaf's
        wait at C's unlock."""
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        out = self.path("why.pb.gz")
        target = self.start_waiting_target(
            [CONVOY, "convoy", "--wait-signal", "--truth",
             self.path("truth.json"), "--iters", "6"])
        self.profile_to_the_end(target, "--mode", "contended",
                                "--no-coalesce", "--why", "--format",
                                "pprof", "-o", out)
        truth = self.truth()
        profile = Profile(out)
        c_unlock = c_unlock_root()
        for obj, leaf, wait in (("l1", "convoy_a", truth["wait_a_ns"]),
                                ("l2", "convoy_b", truth["wait_b_ns"])):
            samples = profile.of(obj)
            self.assertTrue(samples, profile.samples)
            for s in samples:
                self.assertIn("root", s["labels"], s)
                self.assertEqual(profile.functions(s)[0], leaf, s)
                self.assertEqual("root_state" in s["labels"],
                                 s["labels"]["root"] != "none", s)
            # The split keeps the row: its count exact, its wait the
            # waiter's own.
            self.assertEqual(sum(s["count"] for s in samples), 6)
            total = sum(s["delay"] for s in samples)
            self.assertNear(total, wait, f"{obj}'s samples")
            at_c = sum(s["delay"] for s in samples
                       if c_unlock.match(s["labels"]["root"]))
            least = self.least_in_chain(total, self.outside_chain(truth, obj))
            self.assertGreaterEqual(at_c, least, samples)
            if obj == "l1":
                a_share = 100.0 * least / total
        # What a user of go tool pprof reads: the roots of A's wait.
        tags = profile.pprof("-tags", "-tagfocus=object=^l1$")
        self.assertGreaterEqual(root_share(tags, c_unlock), a_share, tags)
        top = profile.pprof("-top", "-tagfocus=root=convoy_c")
        self.assertRegex(top, r"(?m)\sconvoy_a$")

    def test_without_the_option_why_is_null(self):
        report, _ = self.run_convoy("convoy", "--iters", "2", syncprof_args=())
        self.assertTrue(report["rows"])
        for row in report["rows"]:
            self.assertIn("why", row)
            self.assertIsNone(row["why"])
        self.assertIsNone(report["why_chains_cut"])

    def test_table_names_where_the_chains_end(self):
        proc = subprocess.run(
            [SYNCPROF, "--why", "--", CONVOY, "convoy", "--iters", "2"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Why they waited: what the holder did", proc.stdout)
        self.assertIn("Where the chains end: the last holder slept", proc.stdout)
        self.assertRegex(proc.stdout, rf"Chain ends at.*\n-+\nmutex .*convoy\.c:"
                         rf"{marker_line('RELEASE', 'c_unlock')}")

    def test_the_whole_machine_is_refused(self):
        """Several processes are followed (test_shared_memory.py); every
        thread of the machine is not."""
        proc = subprocess.run([SYNCPROF, "--why", "--all"],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--why follows the processes given", proc.stderr)
