"""--what-if against tests/targets/whatif, workers that make items (one
per hold of work_lock) and print their own rate of items: an experiment's
entries well formed and borne out by the target's own holds and rate,
the errors of an unknown function or lock, null without the option, the
target left as before when syncprof is killed in the middle, and the
experiment across forked processes sharing one lock (--children).

How close the predictions come to the shorter version run for real is
test_whatif_accuracy.py's, and where the CPUs become the limit
test_whatif_cpubound.py's; the decoy lock and the CPU cap are measured
by make bench (whatif section, tests/bench/whatifbench.py) beside the
machine's load."""
import json
import os
import signal
import statistics
import subprocess
import threading
import time

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase

TARGET = os.path.join(BUILD, "tests", "targets", "whatif")
# The worker loop: 3 threads, a 200 us critical section, 20 us outside.
LOCK_BOUND = ["--threads", "3", "--hold-us", "200", "--work-us", "20"]
HOLD_NS = 200_000
# The same in 2 forked processes of 2 workers, one lock in shared memory.
PROCS = ["--procs", "2", "--threads", "2", "--hold-us", "200",
         "--work-us", "20"]
ENTRY_KEYS = {"object", "object_address", "site", "shorter_pct",
              "predicted_gain_pct", "low_pct", "high_pct", "progress",
              "bound", "lock_gain_pct", "cpu_cap_pct", "hold_ns",
              "hold_cpu_ns", "hold_cpu_share", "experiment_s", "injected_ns",
              "rate_before", "cpus_used", "cpus_could",
              "rate_during", "rate_after", "queue_gain_pct", "methods_agree",
              "holders", "stolen_pct", "reaches_progress",
              "delay_budget_ns", "windows", "handoff_ns",
              "handoff_predicted_ns", "handoff_woken_pct", "handoff_gain_pct",
              "probe_ns", "wake_curve", "wakes", "wakes_busy_pct",
              "handoff_below_curve_pct", "handoff_idle_pct"}


def machine_ticks():
    """/proc/stat's busy and stolen ticks, all CPUs."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return v[0] + v[1] + v[2] + v[5] + v[6], v[7]


def stolen_share(before, after):
    """The host's share (%) of the busy time between two readings."""
    busy, steal = after[0] - before[0], after[1] - before[1]
    return 100 * steal / (busy + steal) if busy + steal else 0


class WhatIf(SyncprofTestCase):

    @staticmethod
    def stop(pid):
        """A launched target runs on after syncprof: not beside the next
        test."""
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def test_experiment_gives_well_formed_entries(self):
        # The plumbing, not the accuracy (make bench measures that, with
        # the load): an experiment on a running target gives one entry
        # per fraction, each a prediction inside its interval, from
        # holds and a rate the target's own truth bears out.
        target = subprocess.Popen([TARGET, *LOCK_BOUND, "--seconds", "120",
                                   "--window-ms", "200"],
                                  stdout=subprocess.PIPE, text=True)
        self.children.append(target)
        rates, held, cpus = [], [], []

        def read():
            # "rate R slow S ab F cpu C handoff H N holdcpu S"
            for line in target.stdout:
                words = line.split()
                rates.append(float(words[1]))
                cpus.append(float(words[7]))
                held.append(float(words[12]))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        stolen_before = machine_ticks()
        prof = self.start_syncprof(["--mode", "contended", "--pid",
                                    str(target.pid), "-d", "1",
                                    "--what-if=work_lock", "--progress",
                                    "item_done"])
        run = self.finish_syncprof(prof)
        stolen = stolen_share(stolen_before, machine_ticks())
        seen = list(rates)
        target.kill()
        target.wait()
        self.assertEqual(run.returncode, 0, run.stderr)
        entries = run.reports[-1]["what_if"]
        self.assertIsNotNone(entries, run.stderr)
        self.assertEqual(sorted((w["object"], w["shorter_pct"])
                                for w in entries),
                         [("work_lock", 25.0), ("work_lock", 50.0)])
        self.assertGreaterEqual(len(seen), 5, run.stderr)
        for w in entries:
            self.assertEqual(set(w), ENTRY_KEYS)
            self.assertEqual(w["progress"], "calls of item_done()")
            # Its holders make the items.
            self.assertIs(w["reaches_progress"], True, w)
            self.assertEqual(w["site"]["function"], "worker")
            self.assertLessEqual(w["low_pct"], w["predicted_gain_pct"], w)
            self.assertGreaterEqual(w["high_pct"], w["predicted_gain_pct"],
                                    w)
            self.assertIn(w["bound"], ("lock", "cpu"))
            if w["bound"] == "cpu":
                # The CPUs' cap, or below it at the knee.
                self.assertIsNotNone(w["cpu_cap_pct"], w)
                self.assertLessEqual(w["predicted_gain_pct"],
                                     w["cpu_cap_pct"] + 1e-6, w)
                self.assertLessEqual(w["predicted_gain_pct"],
                                     w["lock_gain_pct"], w)
            else:
                self.assertAlmostEqual(w["predicted_gain_pct"],
                                       w["lock_gain_pct"], places=6)
            self.assertGreater(w["experiment_s"], 0)
            self.assertLessEqual(w["experiment_s"], 30)
            self.assertGreater(w["injected_ns"], 0, w)
            # Holds of 200 us (longer when preempted): one a unit, so
            # the windows are the units' (65 of them, unless the budget
            # stopped them), and a budget of 3 to 10 s which the delay
            # stays within (a release in flight may pass it by its own
            # delay, 10 ms at most).
            self.assertLessEqual(w["windows"], 65, w)
            self.assertTrue(w["windows"] == 65 or w["injected_ns"] >=
                            w["delay_budget_ns"] - 10**7, w)
            self.assertGreaterEqual(w["delay_budget_ns"], 3 * 10**9, w)
            self.assertLessEqual(w["delay_budget_ns"], 10 * 10**9, w)
            self.assertLessEqual(w["injected_ns"],
                                 w["delay_budget_ns"] + 10**7, w)
            # Each item spins HOLD_NS of its thread's CPU clock under
            # work_lock: the mean hold's CPU time is at least most of
            # that, and never more than the hold.
            self.assertGreaterEqual(w["hold_cpu_ns"], 0.8 * HOLD_NS, w)
            self.assertLessEqual(w["hold_cpu_ns"], w["hold_ns"], w)
            # The holds' share of the target's CPU, as the target
            # measured it (its workers' thread clocks inside the lock
            # over its process clock), window by window.
            own = statistics.median(held)
            self.assertIsNotNone(w["hold_cpu_share"], w)
            self.assertLessEqual(w["hold_cpu_share"], 1, w)
            self.assertAlmostEqual(w["hold_cpu_share"], own,
                                   delta=0.15 * own, msg=(w, held))
            # The CPUs it used, as its process clock read them (its
            # windows, delayed ones among them: the spin is CPU too),
            # and at most the two it could have.
            mine = statistics.median(cpus)
            self.assertAlmostEqual(w["cpus_used"], mine, delta=0.2 * mine,
                                   msg=(w, cpus))
            self.assertLessEqual(w["cpus_used"], w["cpus_could"] + 1e-6, w)
            self.assertLessEqual(w["cpus_could"],
                                 len(os.sched_getaffinity(0)) + 1e-6, w)
            # Items per second as the target counted them, window by
            # window, while syncprof ran (a loaded machine moves it).
            self.assertGreaterEqual(w["rate_before"], 0.5 * min(seen),
                                    (w, seen))
            self.assertLessEqual(w["rate_before"], 2 * max(seen), (w, seen))
            self.assertGreater(w["rate_during"], 0, w)
            # The host's share of the busy time in the reference
            # windows, against /proc/stat's over the whole run.
            self.assertGreaterEqual(w["stolen_pct"], 0, w)
            self.assertLessEqual(abs(w["stolen_pct"] - stolen), 10,
                                 (w, stolen))
            # The queue's cross-check: the target's 3 workers hold it.
            self.assertEqual(w["holders"], 3, w)
            if w["queue_gain_pct"] is not None:
                self.assertGreaterEqual(w["queue_gain_pct"], 0, w)
                self.assertIsInstance(w["methods_agree"], bool, w)

    def test_sigkill_mid_experiment_leaves_the_target_as_before(self):
        # The target times its own unlock calls by its CPU clock: "slow"
        # is the share that took a quarter of the critical section or
        # more, which only syncprof's delay (a spin) does.
        target = subprocess.Popen([TARGET, *LOCK_BOUND, "--seconds", "60",
                                   "--window-ms", "200"],
                                  stdout=subprocess.PIPE, text=True)
        self.children.append(target)
        rates = []

        def read_rates(until):
            while time.monotonic() < until:
                line = target.stdout.readline()
                if not line:
                    break
                words = line.split()
                rates.append((time.monotonic(), float(words[1]),
                              float(words[3])))

        read_rates(time.monotonic() + 2)
        prof = self.start_syncprof(["--mode", "contended", "--pid",
                                    str(target.pid), "-d", "0.5",
                                    "--what-if=work_lock", "--progress",
                                    "item_done"])
        self.read_stderr_until(prof, "delays begin", "the delayed windows")
        # Well inside them: the target's own next windows.
        read_rates(time.monotonic() + 1.5)
        ours = self.prog_ids(prof.pid)
        loaded = json.loads(subprocess.run(
            ["bpftool", "--json", "prog", "show"], capture_output=True,
            text=True, timeout=HANG_S, check=True).stdout)
        self.assertIn("whatif_release",
                      [p.get("name") for p in loaded if p["id"] in ours])
        killed = time.monotonic()
        prof.kill()
        prof.wait()
        read_rates(time.monotonic() + 3)
        self.assertIsNone(target.poll(), "the target died with syncprof")
        delayed = [slow for t, r, slow in rates if t < killed]
        # After the kill: the window it fell in, and lines printed
        # before it but read after, left out.
        after = [(r, slow) for t, r, slow in rates if t > killed][3:]
        self.assertGreaterEqual(len(after), 5)
        # The delays were there (the windows alternate delayed and not).
        self.assertGreater(max(delayed[-6:]), 0.3, rates)
        # And are gone: no unlock slowed, no program of syncprof's left.
        self.assertLess(max(slow for r, slow in after), 0.05, after)
        # Its own: other tests may be running experiments meanwhile.
        progs = json.loads(subprocess.run(
            ["bpftool", "--json", "prog", "show"], capture_output=True,
            text=True, timeout=HANG_S, check=True).stdout)
        left = [p for p in progs if p["id"] in ours]
        self.assertEqual(left, [])
        target.kill()
        target.wait()

    @staticmethod
    def prog_ids(pid):
        """The IDs of the BPF programs process pid holds open."""
        ids = set()
        fdinfo = f"/proc/{pid}/fdinfo"
        for fd in os.listdir(fdinfo):
            try:
                with open(os.path.join(fdinfo, fd)) as f:
                    for line in f:
                        if line.startswith("prog_id:"):
                            ids.add(int(line.split()[1]))
            except OSError:
                pass
        return ids

    def test_unknown_function_and_lock_name_the_choices(self):
        prof = subprocess.run([SYNCPROF, "--what-if", "--progress",
                               "item_don", "-d", "1", "--", TARGET,
                               *LOCK_BOUND, "--seconds", "3"],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertNotEqual(prof.returncode, 0)
        self.assertIn("no function 'item_don'", prof.stderr)
        self.assertIn("item_done", prof.stderr)
        prof = subprocess.run([SYNCPROF, "--what-if=no_such_lock",
                               "--progress", "item_done", "-d", "1",
                               "--", TARGET, *LOCK_BOUND, "--seconds",
                               "3"],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertNotEqual(prof.returncode, 0)
        self.assertIn("no lock 'no_such_lock'", prof.stderr)
        self.assertIn("work_lock", prof.stderr)
        prof = subprocess.run([SYNCPROF, "--progress", "item_done", "--",
                               TARGET], capture_output=True, text=True,
                              timeout=HANG_S)
        self.assertEqual(prof.returncode, 2)
        self.assertIn("--what-if", prof.stderr)
        # Every process of the host is no experiment's place.
        prof = subprocess.run([SYNCPROF, "--what-if", "--all", "-d", "1"],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(prof.returncode, 2, prof.stderr)
        self.assertIn("not with --all or --serve", prof.stderr)

    def test_without_the_option_what_if_is_null(self):
        prof = self.start_syncprof(["--mode", "contended", "-d", "1"],
                                   [TARGET, *LOCK_BOUND, "--seconds", "3"])
        run = self.finish_syncprof(prof)
        self.stop(prof.target_pid)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("what_if", run.reports[-1])
        self.assertIsNone(run.reports[-1]["what_if"])

    def test_several_processes_sharing_a_lock(self):
        # The workers are in two forked children, the lock in memory
        # they share, the parent only counts: syncprof follows them with
        # --children, the delay must reach the holders in the children
        # (the target sees its unlocks slowed there) and the progress is
        # summed over the processes (the rate the target counts).
        target = subprocess.Popen([TARGET, *PROCS, "--seconds", "120",
                                   "--window-ms", "200"],
                                  stdout=subprocess.PIPE, text=True)
        self.children.append(target)
        lock = target.stdout.readline().split()
        pids = target.stdout.readline().split()
        self.assertEqual((lock[0], pids[0]), ("lock", "pids"))
        lines = []
        reader = threading.Thread(
            target=lambda: lines.extend((time.monotonic(),
                                         float(line.split()[1]),
                                         float(line.split()[3]))
                                        for line in target.stdout),
            daemon=True)
        reader.start()
        try:
            prof = self.start_syncprof(["--mode", "contended", "--pid",
                                        str(target.pid), "--children", "-d",
                                        "1", "--what-if", "--progress",
                                        "item_done"])
            run = self.finish_syncprof(prof)
            ended = time.monotonic()
            # The target's windows after syncprof: no unlock slowed.
            deadline = ended + HANG_S
            while (len([t for t, _, _ in lines if t > ended]) < 6
                   and time.monotonic() < deadline):
                time.sleep(0.2)
            seen = list(lines)
        finally:
            for pid in pids[1:]:
                self.stop(int(pid))
            target.kill()
            target.wait()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("in 3 processes", run.stderr)
        entries = run.reports[-1]["what_if"]
        self.assertIsNotNone(entries, run.stderr)
        self.assertEqual(sorted(w["shorter_pct"] for w in entries),
                         [25.0, 50.0], entries)
        during = [(r, slow) for t, r, slow in seen if t <= ended]
        after = [slow for t, _, slow in seen if t > ended][2:]
        for w in entries:
            self.assertEqual(set(w), ENTRY_KEYS)
            # The lock the children share, at its address in them.
            self.assertEqual(int(w["object_address"], 16),
                             int(lock[1], 16), w)
            self.assertLessEqual(w["low_pct"], w["predicted_gain_pct"], w)
            self.assertGreaterEqual(w["high_pct"], w["predicted_gain_pct"],
                                    w)
            self.assertGreater(w["injected_ns"], 0, w)
            # Both children's 2 workers held it, and made the items.
            self.assertEqual(w["holders"], 4, w)
            self.assertIs(w["reaches_progress"], True, w)
            # The holds were timed in the children: HOLD_NS of CPU each.
            self.assertGreaterEqual(w["hold_cpu_ns"], 0.8 * HOLD_NS, w)
            self.assertLessEqual(w["hold_cpu_ns"], w["hold_ns"], w)
            # Items of both children, as the parent counted them.
            rates = [r for r, _ in during]
            self.assertGreaterEqual(w["rate_before"], 0.5 * min(rates),
                                    (w, rates))
            self.assertLessEqual(w["rate_before"], 2 * max(rates),
                                 (w, rates))
        # The children's unlocks were slowed (only syncprof's spin takes
        # a quarter of a hold of CPU in an unlock), and are no more.
        self.assertGreater(max(slow for _, slow in during), 0.3, during)
        self.assertGreaterEqual(len(after), 3, seen)
        self.assertLess(max(after), 0.05, after)
