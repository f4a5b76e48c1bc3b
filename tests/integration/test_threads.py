"""Threads coming and going under full mode: the main thread leaving
before the others."""
import os
import re
import signal
import subprocess

from harness import HANG_S, SYNCPROF, WORKLOAD as WORKLOAD_BIN, SyncprofTestCase


def link_types(pid):
    """The kinds of BPF links process pid holds, from its fdinfo."""
    kinds = []
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                text = f.read()
        except OSError:
            continue
        m = re.search(r"^link_type:\s*(\S+)", text, re.M)
        if m:
            kinds.append(m.group(1))
    return kinds


# What syncprof says once main has exited: the probes follow a live thread,
# or (uprobe_multi links, kernel 6.13 and later) stay attached for the
# others, two guards keeping their breakpoints in.
FOLLOWED = "attached through exited; they "


class MainThreadExit(SyncprofTestCase):
    """pthread_exit in main while the workers go on locking: probes
    attached through the main thread as perf links go with it, so syncprof
    attaches them again through a live one; uprobe_multi links stay.
    Either way it says so, and every call is counted."""
    # After main exits, until syncprof's guards stand (their perf-event
    # probes take a few hundred ms to attach), another syncprof's probes
    # leaving the same libc functions take this process's out, and the
    # calls of that moment are lost; these counts are exact.
    run_alone = ("main-thread exits: until the guards stand, a neighbour's "
                 "probes leaving libc take these out")

    def wait_for_stderr(self, proc, needle):
        return self.read_stderr_until(
            proc, needle, f"syncprof never said {needle!r}")

    def check_counts(self, run):
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        rows = self.rows_for(run.reports[-1], truth["object"])
        self.assertEqual(self.total(rows, "count"), truth["count"])
        self.assertEqual(truth["count"], 3 * 30)
        self.assertWithin(self.total(rows, "wait_ns"), truth["wait_ns"])

    def check_links(self, prof, said):
        """Followed: the links through main are closed, the new ones are
        per thread; stayed: main's uprobe_multi links are still there."""
        kinds = link_types(prof.pid)
        if "they follow thread" in said:
            self.assertNotIn("uprobe_multi", kinds)
            self.assertNotIn("uretprobe_multi", kinds)
            self.assertIn("perf", kinds)
        else:
            self.assertIn("they stay attached", said)
            self.assertIn("uprobe_multi", kinds)
            self.assertIn("uretprobe_multi", kinds)

    def test_attach_counts_on_after_main_exits(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "3", "--iters", "30", "--hold-us", "2000",
            "--wait-signal", "--main-exits"))
        prof = self.start_syncprof(["--pid", str(target.pid)])
        self.go(target)
        self.check_links(prof, self.wait_for_stderr(prof, FOLLOWED))
        os.kill(target.pid, signal.SIGUSR2)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        self.check_counts(self.finish_syncprof(prof))

    def test_launch_counts_on_after_main_exits(self):
        prof = self.start_syncprof(
            ["--mode", "full"], self.workload_cmd(
                "mutex", "--threads", "3", "--iters", "30", "--hold-us",
                "2000", "--main-exits"))
        self.wait_for_stderr(prof, FOLLOWED)
        os.kill(prof.target_pid, signal.SIGUSR2)
        self.check_counts(self.finish_syncprof(prof))

    def test_probes_stay_in_when_another_tool_goes(self):
        """Once main has exited, uprobe_multi links filter by memory that
        is gone: when another tool's probe on the same libc functions
        goes, the kernel would take this process's breakpoints out (the
        calls from then on lost, unsaid).  syncprof's guards, the same
        sites as perf-event probes through live threads whose programs
        return at once, keep them in: nothing moves, every call counted."""
        prof = self.start_syncprof(
            ["--mode", "full"], self.workload_cmd(
                "mutex", "--threads", "3", "--iters", "30", "--hold-us",
                "2000", "--main-exits"))
        said = self.wait_for_stderr(prof, FOLLOWED)
        if "they follow thread" in said:
            self.skipTest("the probes moved when main exited (perf-event "
                          "probes, or a kernel before 6.13)")
        other = subprocess.run(
            [SYNCPROF, "--mode", "full", "--top", "0", "--", WORKLOAD_BIN,
             "mutex", "--threads", "2", "--iters", "3", "--hold-us", "1000"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(other.returncode, 0, other.stderr)
        # The guards: perf-event links beside main's uprobe_multi ones.
        self.assertIn("perf", link_types(prof.pid))
        os.kill(prof.target_pid, signal.SIGUSR2)
        run = self.finish_syncprof(prof)
        self.assertNotIn("they follow thread", run.stderr)
        self.check_counts(run)

    def test_hold_and_blame_count_on_after_main_exits(self):
        """The unlock probes of --hold and --blame follow the live thread
        too: every acquisition's hold is timed, before and after."""
        prof = self.start_syncprof(
            ["--mode", "full", "--hold", "--blame"], self.workload_cmd(
                "mutex", "--threads", "3", "--iters", "30", "--hold-us",
                "2000", "--main-exits"))
        self.wait_for_stderr(prof, FOLLOWED)
        os.kill(prof.target_pid, signal.SIGUSR2)
        run = self.finish_syncprof(prof)
        self.check_counts(run)
        rows = self.rows_for(run.reports[-1], self.truth()["object"])
        self.assertEqual(self.total(rows, "holds"), 3 * 30)
        # Each hold sleeps 2 ms in the target.
        self.assertGreaterEqual(self.total(rows, "hold_ns"), 3 * 30 * 2_000_000)
        blamed = [b for b in run.reports[-1]["blame"]
                  if b["object"] == self.truth()["object"]]
        self.assertGreater(sum(b["count"] for b in blamed), 0)


class RowTable(SyncprofTestCase):
    """The kernel's row table holds the rows of live threads: rows of
    exited ones are taken out and kept by syncprof, and a mutex's holder
    splits rows only with --per-thread."""

    def test_thread_churn_keeps_every_row(self):
        # 1500 threads of 1-3 rows each through a table of 1024: the
        # rows of exited threads leave it every second (<1000 a second),
        # and so do their histograms and hold times.
        churn = 1500
        run = self.launch(["--map-size", "1024", "--top", "0", "-n",
                           "--mode", "full", "--hold"],
                          self.workload_cmd("churn", "--threads", "2",
                                            "--hold-us", "500", "--churn",
                                            str(churn)), timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        report = run.reports[-1]
        self.assertEqual(report["dropped"], 0, report["dropped_causes"])
        long_lived = self.rows_for(report, truth["object"])
        self.assertEqual(self.total(long_lived, "count"), truth["count"])
        self.assertInside(self.total(long_lived, "wait_ns"), truth["wait_ns"])
        short_lived = self.rows_for(report, truth["churn_lock"])
        self.assertEqual(self.total(short_lived, "count"), churn)
        self.assertEqual(self.total(short_lived, "holds"), churn)
        for row in long_lived + short_lived:
            self.assertEqual(sum(n for _, n in row["hist"]), row["count"])

    def test_thread_churn_per_thread_rows_keep_their_threads(self):
        churn = 300
        run = self.launch(["--map-size", "1024", "--top", "0", "-T", "-n",
                           "--interval", "0.3"],
                          self.workload_cmd("churn", "--threads", "2",
                                            "--hold-us", "500", "--churn",
                                            str(churn)), timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        rows = [r for rep in run.reports
                for r in self.rows_for(rep, truth["churn_lock"])]
        self.assertEqual(self.total(rows, "count"), churn)
        self.assertEqual(len({r["tid"] for r in rows}), churn)
        self.assertNotIn(0, {r["tid"] for r in rows})
        for t in truth["threads"]:
            mine = [r for rep in run.reports
                    for r in self.rows_for(rep, truth["object"])
                    if r["tid"] == t["tid"]]
            self.assertEqual(self.total(mine, "count"), t["count"])

    def test_64_threads_on_8_mutexes_contended_drop_nothing(self):
        # Rows by holder would be 64 x 63 x 8: more than the 1024 rows.
        args = ["--mode", "contended", "--top", "0"]
        cmd = self.workload_cmd("heap", "--threads", "64", "--objects", "8",
                                "--iters", "10", "--hold-us", "200")
        for extra in (["--map-size", "1024"], []):
            with self.subTest(extra=extra):
                run = self.launch(args + extra, cmd, timeout=HANG_S)
                self.assertEqual(run.returncode, 0, run.stderr)
                truth = self.truth()
                report = run.reports[-1]
                self.assertEqual(report["dropped"], 0,
                                 report["dropped_causes"])
                rows = [r for r in report["rows"]
                        if r["callsite"]["function"] == "timed_lock"]
                self.assertGreater(self.total(rows, "count"), 0)
                self.assertLessEqual(self.total(rows, "count"),
                                     truth["count"])
