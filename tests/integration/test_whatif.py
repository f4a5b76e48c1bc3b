"""--what-if against tests/targets/whatif: workers that make items, one
per hold of work_lock, and measure their own rate of items.  The target's
own truth is the shorter version run for real: with --ab FRAC its windows
alternate between the critical section as given and FRAC shorter, and
each short window is paired with the base windows beside it (a busy
machine drifts by more than the effect); the median of those ratios is
the real gain.  syncprof's prediction, made on the unchanged target, must
be within 20% (relative) of it, and the real gain inside its interval."""
import json
import os
import signal
import statistics
import subprocess
import time

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase, kill_with_target

TARGET = os.path.join(BUILD, "tests", "targets", "whatif")
# The worker loop: 3 threads, a 200 us critical section, 20 us outside.
LOCK_BOUND = ["--threads", "3", "--hold-us", "200", "--work-us", "20"]
RELATIVE = 0.20


def real_gain(args, frac, seconds=6):
    """The target's own gain from critical sections frac shorter, in %:
    the median of its paired windows."""
    out = subprocess.run([TARGET, *args, "--ab", str(frac), "--seconds",
                          str(seconds), "--window-ms", "100"],
                         capture_output=True, text=True, timeout=HANG_S,
                         check=True).stdout.split("\n")
    windows = [(line.split()[0], float(line.split()[1]))
               for line in out if line.strip()]
    ratios = [rate / ((windows[i - 1][1] + windows[i + 1][1]) / 2)
              for i, (kind, rate) in enumerate(windows)
              if kind == "short" and 0 < i < len(windows) - 1]
    return (statistics.median(ratios) - 1) * 100


class WhatIf(SyncprofTestCase):

    def predict(self, target_args, *syncprof_args, seconds=60):
        """syncprof's predictions on the target as given: a short profile,
        then the experiment; the target killed once the report is out."""
        prof = self.start_syncprof(["--mode", "contended", "-d", "1",
                                    "--progress", "item_done",
                                    *syncprof_args],
                                   [TARGET, *target_args, "--seconds",
                                    str(seconds)])
        run = self.finish_syncprof(prof)
        self.stop(prof.target_pid)
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[-1]
        self.assertIsNotNone(report["what_if"], run.stderr)
        return report, run.stderr

    @staticmethod
    def stop(pid):
        """A launched target runs on after syncprof: not beside the next
        measurement."""
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    @staticmethod
    def entry(report, obj, shorter):
        found = [w for w in report["what_if"]
                 if w["object"] == obj and w["shorter_pct"] == shorter]
        assert len(found) == 1, report["what_if"]
        return found[0]

    def assertPredicts(self, entry, reals):
        """reals: the real gain measured just before the prediction and
        just after it; their mean is the truth, their spread how far the
        machine's load moved it meanwhile."""
        pred = entry["predicted_gain_pct"]
        real = statistics.mean(reals)
        what = (f"{entry['object']} {entry['shorter_pct']:.0f}% shorter: "
                f"predicted {pred:.1f}% [{entry['low_pct']:.1f}, "
                f"{entry['high_pct']:.1f}] ({entry['bound']}), real "
                f"{real:.1f}% (before {reals[0]:.1f}%, after "
                f"{reals[1]:.1f}%)")
        self.assertLessEqual(abs(pred - real), RELATIVE * real, what)
        self.assertLessEqual(entry["low_pct"], max(reals), what)
        self.assertGreaterEqual(entry["high_pct"], min(reals), what)
        self.assertLessEqual(entry["low_pct"], pred, what)
        self.assertGreaterEqual(entry["high_pct"], pred, what)

    def test_prediction_matches_the_shorter_version_run_for_real(self):
        before = {s: real_gain(LOCK_BOUND, s / 100) for s in (25, 50)}
        report, err = self.predict(LOCK_BOUND, "--what-if=work_lock")
        self.assertEqual({w["object"] for w in report["what_if"]},
                         {"work_lock"})
        for w in report["what_if"]:
            self.assertEqual(w["progress"], "calls of item_done()")
            self.assertEqual(w["site"]["function"], "worker")
            self.assertGreater(w["experiment_s"], 0)
            self.assertLessEqual(w["experiment_s"], 30)
        for shorter in (25, 50):
            self.assertPredicts(self.entry(report, "work_lock", shorter),
                                (before[shorter],
                                 real_gain(LOCK_BOUND, shorter / 100)))

    def test_decoy_with_more_wait_is_predicted_at_no_gain(self):
        # Four threads that sleep under decoy_lock: more wait than
        # work_lock, and no item needs it.
        args = LOCK_BOUND + ["--decoy-threads", "4", "--decoy-hold-us",
                             "1000"]
        report, err = self.predict(args, "--what-if")
        wait = {}
        for row in report["rows"]:
            wait[row["object_symbol"]] = (wait.get(row["object_symbol"], 0)
                                          + row["wait_ns"])
        self.assertGreater(wait["decoy_lock"], wait["work_lock"], wait)
        for shorter in (25, 50):
            decoy = self.entry(report, "decoy_lock", shorter)
            self.assertLessEqual(decoy["predicted_gain_pct"], 2.0, decoy)
            work = self.entry(report, "work_lock", shorter)
            self.assertGreater(work["predicted_gain_pct"],
                               5 * max(decoy["predicted_gain_pct"], 2.0),
                               (work, decoy))

    def test_bottleneck_moving_to_the_cpus_caps_the_prediction(self):
        # Two threads with as much work outside the lock as in it: the
        # lock bounds them, and holds half as long would need more than
        # the two CPUs they can run on (or, beside other builds, than
        # the CPU they get).
        args = ["--threads", "2", "--hold-us", "150", "--work-us", "150"]
        before = real_gain(args, 0.5)
        report, err = self.predict(args, "--what-if=work_lock")
        half = self.entry(report, "work_lock", 50)
        self.assertEqual(half["bound"], "cpu", half)
        self.assertIsNotNone(half["cpu_cap_pct"])
        self.assertLess(half["predicted_gain_pct"], half["lock_gain_pct"],
                        half)
        self.assertAlmostEqual(half["predicted_gain_pct"],
                               half["cpu_cap_pct"], places=6)
        self.assertPredicts(half, (before, real_gain(args, 0.5)))

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
        progs = subprocess.run(["bpftool", "prog", "show"],
                               capture_output=True, text=True,
                               timeout=HANG_S).stdout
        self.assertNotIn("whatif_release", progs)
        target.kill()
        target.wait()

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

    def test_without_the_option_what_if_is_null(self):
        prof = self.start_syncprof(["--mode", "contended", "-d", "1"],
                                   [TARGET, *LOCK_BOUND, "--seconds", "3"])
        run = self.finish_syncprof(prof)
        self.stop(prof.target_pid)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("what_if", run.reports[-1])
        self.assertIsNone(run.reports[-1]["what_if"])
