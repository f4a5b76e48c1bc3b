"""--states against tests/targets/states, whose threads measure themselves:
a worker that computes, sleeps and blocks on a mutex in known amounts
(CLOCK_THREAD_CPUTIME_ID for running; clock_gettime around each sleep and
lock call, less the CPU wait inside it that the kernel's schedstat
reports; schedstat's run_delay for runnable), and spinners that outnumber
the CPUs and compare their wall clock with their CPU time.  syncprof's
states must match within 5%.  In a virtual machine the host may run
something else while a thread is on a CPU: neither the thread's CPU clock
nor its run_delay counts that, syncprof counts it as stolen, so the
target's wall clock less its CPU time is compared with syncprof's
runnable plus stolen.  Also: grouping sums, a thread alive before
attach, interval windows that add up, the CSV file, the lock source of
full mode."""
import csv
import os
import subprocess

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase

STATES = os.path.join(BUILD, "tests", "targets", "states")
TOLERANCE = 0.05
HOLD_NS = 20_000_000        # the states target's default --hold-ms
NCPU = os.cpu_count() or 1


class States(SyncprofTestCase):

    def states_cmd(self, scenario, *args):
        return [STATES, scenario, "--truth", self.path("truth.json"), *args]

    def launch_states(self, scenario, *syncprof_args, target_args=(),
                      mode="contended"):
        run = self.launch(["--mode", mode, "--states", *syncprof_args],
                          self.states_cmd(scenario, *target_args))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertGreaterEqual(len(run.reports), 1)
        for report in run.reports:
            self.assertEqual(report["dropped"], 0)
            self.assertIn("threads", report)
        return run, self.truth()

    @staticmethod
    def thread(report, tid):
        rows = [t for t in report["threads"] if t["tid"] == tid]
        return rows[0] if len(rows) == 1 else None

    def assertClose(self, measured, truth, scale, what):
        """|measured - truth| within TOLERANCE of scale (the truth itself,
        or the thread's life for small parts)."""
        self.assertGreater(scale, 0, what)
        error = abs(measured - truth) / scale
        self.assertLessEqual(
            error, TOLERANCE,
            f"{what}: syncprof {measured} vs target {truth} "
            f"({error * 100:.2f}% of {scale} > {TOLERANCE * 100:.0f}%)")

    def assertCloseUp(self, measured, truth, scale, tail, what):
        """assertClose, with the upper bound widened by tail: a part of
        the thread's life after its own last read, which syncprof counts
        and the target cannot (its return and exit, beside busy loops a
        wait for a CPU)."""
        self.assertGreaterEqual(
            measured, truth - TOLERANCE * scale,
            f"{what}: syncprof {measured} vs target {truth} (scale {scale})")
        self.assertLessEqual(
            measured, truth + TOLERANCE * scale + tail,
            f"{what}: syncprof {measured} vs target {truth} (scale {scale},"
            f" {tail} after the threads' last reads)")

    def assertAddsUp(self, t):
        self.assertEqual(t["running_ns"] + t["runnable_ns"] + t["lock_ns"] +
                         t["sleep_ns"] + t["stolen_ns"], t["alive_ns"], t)

    def check_worker(self, report, truth, iters):
        w = truth["threads"][0]
        t = self.thread(report, w["tid"])
        self.assertIsNotNone(t, f"no worker {w['tid']} in {report['threads']}")
        self.assertEqual(t["comm"], "worker")
        self.assertAddsUp(t)
        self.assertClose(t["running_ns"], w["cpu_ns"], w["cpu_ns"], "running")
        self.assertClose(t["sleep_ns"], w["sleep_ns"], w["sleep_ns"], "sleep")
        # syncprof ends a lock wait at the wake, the target at its reads
        # of run_delay around the call: where the wait ends and the CPU
        # wait begins differs by at most the thread's CPU wait (beside
        # busy loops, not small).
        self.assertLessEqual(
            abs(t["lock_ns"] - w["lock_ns"]),
            TOLERANCE * w["lock_ns"] + w["run_delay_ns"],
            f"lock wait: syncprof {t['lock_ns']} vs target {w['lock_ns']}, "
            f"its CPU wait {w['run_delay_ns']}")
        self.assertCloseUp(t["runnable_ns"], w["run_delay_ns"], w["wall_ns"],
                           truth["end_ns"] - w["end_ns"], "runnable")
        self.assertEqual(set(t["lock_by_type"]), {"mutex"})
        self.assertEqual(t["lock_by_type"]["mutex"], t["lock_ns"])
        self.assertEqual(t["state"], "exited")
        self.assertIsNotNone(t["born_ns"])
        self.assertIsNotNone(t["exit_ns"])
        # Each lock call blocked for the holder's 20 ms at least: there
        # was a lock wait to measure.
        self.assertGreater(w["lock_ns"], iters * HOLD_NS * 0.95)
        return t

    def test_worker_matches_its_own_clock(self):
        run, truth = self.launch_states(
            "mixed", target_args=("--iters", "15"))
        report = run.reports[-1]
        self.check_worker(report, truth, 15)
        # The main thread waits in pthread_join: a futex wait of no lock
        # type, counted as sleep.
        main = self.thread(report, truth["pid"])
        self.assertIsNotNone(main)
        self.assertEqual(main["lock_ns"], 0)
        self.assertGreater(main["futex_ns"], 0)
        self.assertLessEqual(main["futex_ns"], main["sleep_ns"])
        for t in report["threads"]:
            self.assertAddsUp(t)
            self.assertEqual(t["threads_in_group"], 1)

    def test_full_mode_names_the_lock_wait(self):
        run, truth = self.launch_states(
            "mixed", mode="full", target_args=("--iters", "10"))
        report = run.reports[-1]
        self.assertEqual(report["mode"], "full")
        self.check_worker(report, truth, 10)

    def spin_check(self, report, truth, grouped):
        spinners = truth["threads"]
        self.assertGreater(len(spinners), NCPU)
        if grouped:
            rows = [t for t in report["threads"] if t["comm"] == "spinner"]
            self.assertEqual(len(rows), 1, report["threads"])
            g = rows[0]
            self.assertIsNone(g["tid"])
            self.assertEqual(g["threads_in_group"], len(spinners))
            self.assertIsNone(g["state"])
            pairs = [(g, spinners)]
        else:
            pairs = [(self.thread(report, s["tid"]), [s]) for s in spinners]
        for t, group in pairs:
            self.assertIsNotNone(t)
            self.assertAddsUp(t)
            cpu = sum(s["cpu_ns"] for s in group)
            wall = sum(s["wall_ns"] for s in group)
            delay = sum(s["run_delay_ns"] for s in group)
            # On a run queue before the first instruction: runnable to
            # syncprof (from its creation), outside the thread's own wall
            # clock (from its first instruction); tens of milliseconds
            # beside busy loops.
            before = sum(s["start_delay_ns"] for s in group)
            # After each one's last read of its clocks: up to the main
            # thread's join of them all, at most.
            after = sum(truth["end_ns"] - s["end_ns"] for s in group)
            self.assertClose(t["running_ns"], cpu, cpu, "running")
            # Runnable: the kernel's own count, within 5% of its life;
            # with stolen: the target's wall clock less its CPU time (a
            # spinner never sleeps).
            self.assertCloseUp(t["runnable_ns"], delay, wall, after,
                               "runnable vs run_delay")
            self.assertCloseUp(t["runnable_ns"] + t["stolen_ns"],
                               wall - cpu + before, wall, after,
                               "runnable + stolen vs wall - cpu")
            self.assertEqual(t["lock_ns"], 0)
            # More spinners than CPUs: each waits a good part of the time.
            self.assertGreater(t["runnable_ns"], 0.2 * wall, t)

    def test_oversubscribed_threads_wait_for_a_cpu(self):
        run, truth = self.launch_states(
            "spin", target_args=("--threads", str(2 * NCPU), "--spin-ms", "600"))
        self.spin_check(run.reports[-1], truth, grouped=False)

    def test_group_threads_sums_a_name(self):
        run, truth = self.launch_states(
            "spin", "--group-threads",
            target_args=("--threads", str(2 * NCPU), "--spin-ms", "600"))
        report = run.reports[-1]
        self.spin_check(report, truth, grouped=True)
        names = [t["comm"] for t in report["threads"]]
        self.assertEqual(len(names), len(set(names)), "one entry per name")
        for t in report["threads"]:
            self.assertIsNone(t["tid"])

    def test_thread_alive_before_attach_fills_the_window(self):
        target = self.start_waiting_target(self.states_cmd(
            "mixed", "--iters", "5", "--wait-signal"))
        run = self.profile_to_the_end(target, "--mode", "contended", "--states")
        report = run.reports[-1]
        truth = self.truth()
        window = report["end_ns"] - report["start_ns"]
        self.assertEqual(round(report["elapsed_s"] * 1e9 / 1000),
                         round(window / 1000))
        idlers = [t for t in report["threads"] if t["comm"] == "idler"]
        self.assertEqual(len(idlers), 1, report["threads"])
        idler = idlers[0]
        # Seeded from /proc at attach: counted from the window's start.
        self.assertIsNone(idler["born_ns"])
        self.assertIsNotNone(idler["exit_ns"])
        self.assertAddsUp(idler)
        # It sleeps until the main thread, done at the truth's end_ns,
        # wakes it to exit: alive from the window's start to its exit,
        # asleep for nearly all of it up to that end (after it, beside
        # busy loops, a wait for a CPU).
        self.assertGreaterEqual(idler["exit_ns"], truth["end_ns"])
        self.assertEqual(idler["alive_ns"],
                         idler["exit_ns"] - report["start_ns"])
        self.assertGreater(idler["sleep_ns"],
                           0.95 * (truth["end_ns"] - report["start_ns"]))
        self.check_worker(report, truth, 5)

    def test_interval_windows_add_up(self):
        run, truth = self.launch_states(
            "mixed", "--interval", "0.2", target_args=("--iters", "15"))
        # At least one pair of consecutive windows (the target runs ~4
        # windows; a loaded machine can delay syncprof's timer past one).
        self.assertGreaterEqual(len(run.reports), 2)
        worker = truth["threads"][0]["tid"]
        totals = dict.fromkeys(("running_ns", "runnable_ns", "lock_ns",
                                "sleep_ns"), 0)
        for report in run.reports:
            window = report["end_ns"] - report["start_ns"]
            for t in report["threads"]:
                self.assertAddsUp(t)
                if t["born_ns"] is None and t["exit_ns"] is None:
                    # Alive throughout: its states add up to the window.
                    self.assertEqual(t["alive_ns"], window, t)
                else:
                    self.assertLess(t["alive_ns"], window + 1, t)
                    if t["born_ns"] is not None:
                        self.assertGreaterEqual(t["born_ns"], report["start_ns"])
                    if t["exit_ns"] is not None:
                        self.assertLessEqual(t["exit_ns"], report["end_ns"])
                if t["tid"] == worker:
                    for key in totals:
                        totals[key] += t[key]
        # Consecutive windows: the reports after the previous ones.
        for a, b in zip(run.reports, run.reports[1:]):
            self.assertEqual(a["end_ns"], b["start_ns"])
        w = truth["threads"][0]
        self.assertClose(totals["running_ns"], w["cpu_ns"], w["cpu_ns"], "running")
        self.assertClose(totals["lock_ns"], w["lock_ns"], w["lock_ns"], "lock")
        self.assertClose(totals["sleep_ns"], w["sleep_ns"], w["sleep_ns"], "sleep")

    def test_states_csv(self):
        path = self.path("states.csv")
        run, truth = self.launch_states(
            "mixed", "--interval", "0.3", "--states-csv", path,
            target_args=("--iters", "8"))
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        with open(path) as f:
            header = f.readline().strip().split(",")
        self.assertEqual(header[:15], [
            "report", "pid", "start_ns", "end_ns", "tid", "comm", "threads",
            "alive_ns", "running_ns", "runnable_ns", "lock_ns", "sleep_ns",
            "state", "born_ns", "exit_ns"])
        self.assertIn("mutex_ns", header)
        self.assertIn("futex_ns", header)
        # One line per thread per report, with the JSON's numbers.
        self.assertEqual(len(rows), sum(len(r["threads"]) for r in run.reports))
        by_key = {(int(r["report"]), int(r["tid"])): r for r in rows}
        for report in run.reports:
            for t in report["threads"]:
                line = by_key[(report["sequence"], t["tid"])]
                self.assertEqual(int(line["pid"]), report["pid"])
                self.assertEqual(int(line["start_ns"]), report["start_ns"])
                self.assertEqual(line["comm"], t["comm"])
                for key in ("alive_ns", "running_ns", "runnable_ns", "lock_ns",
                            "sleep_ns"):
                    self.assertEqual(int(line[key]), t[key])
                self.assertEqual(int(line["mutex_ns"]),
                                 t["lock_by_type"].get("mutex", 0))
                self.assertEqual(int(line["futex_ns"]), t["futex_ns"])

    def test_table_section(self):
        out = self.path("report.txt")
        proc = subprocess.run(
            [SYNCPROF, "--states", "--group-threads", "-o", out, "--",
             *self.states_cmd("spin", "--threads", "3", "--spin-ms", "200")],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            text = f.read()
        self.assertIn("Thread states: 5 threads in 3 groups", text)
        self.assertRegex(text, r"\n\s+-  spinner \u00d73\s+\d+\.\d{3}\s+\d+\.\d%")
        self.assertIn("Lock wait by type", text)

    def test_states_csv_needs_its_own_file_with_format_csv(self):
        proc = subprocess.run([SYNCPROF, "--states", "--format", "csv", "--",
                               "true"], capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--states-csv", proc.stderr)
