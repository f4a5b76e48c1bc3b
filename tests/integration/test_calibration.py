"""Full mode's calibration (the probes' own time, subtracted from every
call): measured per kind of probed instruction, and steady on a machine
whose CPUs are taken by busy loops."""
import subprocess
import time

from harness import HANG_S, SyncprofTestCase

HOGS = 6    # busy loops, on a 2-CPU machine


def cpu_ticks(pid):
    """utime + stime of process pid, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


class Calibration(SyncprofTestCase):

    def figures(self, *args):
        """calibration_site_ns of a short full-mode run."""
        run = self.launch(["--top", "0", *args], self.workload_cmd(
            "mutex", "--threads", "1", "--iters", "2", "--hold-us", "100"),
            timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.reports[-1]["calibration_site_ns"], run.stderr

    def start_hogs(self):
        """Returns once every loop has run: CPU time on its clock."""
        hogs = []
        for _ in range(HOGS):
            hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
            self.children.append(hog)
            hogs.append(hog)
        deadline = time.monotonic() + HANG_S
        for hog in hogs:
            while cpu_ticks(hog.pid) == 0:
                self.assertLess(time.monotonic(), deadline, "a loop never ran")
                time.sleep(0.01)

    def test_each_kind_of_site_is_measured(self):
        quiet, _ = self.figures()
        # pthread_mutex_lock's probe site is emulated (a jne); its first
        # instruction is single-stepped, dearer by far.
        self.assertGreater(quiet["emulated"], 0)
        self.assertGreater(quiet["stepped"], quiet["emulated"])

    def test_figures_hold_under_a_cpu_hog(self):
        # At a single-stepped site (~14 us here) the old figure, a median
        # of round means, read 68-102 us under these busy loops.
        quiet, _ = self.figures("--probe-at", "entry")
        self.start_hogs()
        busy, stderr = self.figures("--probe-at", "entry")
        self.assertLessEqual(busy["stepped"], quiet["stepped"] * 1.5 + 1000,
                             (quiet, busy, stderr))
