"""Threads coming and going under full mode: the main thread leaving
before the others."""
import os
import re
import select
import signal
import subprocess
import time

from harness import SYNCPROF, SyncprofTestCase


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


class MainThreadExit(SyncprofTestCase):
    """pthread_exit in main while the workers go on locking: the kernel
    drops probes attached through the main thread, so syncprof attaches
    them again through a live one and says so."""

    def wait_for_stderr(self, proc, needle, seen=""):
        deadline = time.monotonic() + 30
        while needle not in seen:
            if time.monotonic() > deadline or proc.poll() is not None:
                self.fail(f"syncprof never said {needle!r}: {seen}")
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                seen += proc.stderr.readline()
        return seen

    def check_counts(self, run):
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        rows = self.rows_for(run.reports[-1], truth["object"])
        self.assertEqual(self.total(rows, "count"), truth["count"])
        self.assertEqual(truth["count"], 3 * 30)
        self.assertWithin(self.total(rows, "wait_ns"), truth["wait_ns"])

    def check_nothing_left_armed(self, prof):
        kinds = link_types(prof.pid)
        self.assertNotIn("uprobe_multi", kinds)
        self.assertNotIn("uretprobe_multi", kinds)
        self.assertIn("perf", kinds)

    def test_attach_counts_on_after_main_exits(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "3", "--iters", "30", "--hold-us", "2000",
            "--wait-signal", "--main-exits"))
        prof = self.start_syncprof(["--pid", str(target.pid)])
        self.go(target)
        self.wait_for_stderr(prof, "they follow thread")
        self.check_nothing_left_armed(prof)
        os.kill(target.pid, signal.SIGUSR2)
        self.assertEqual(target.wait(timeout=60), 0)
        self.check_counts(self.finish_syncprof(prof))

    def test_launch_counts_on_after_main_exits(self):
        out = self.path("report.json")
        prof = subprocess.Popen(
            [SYNCPROF, "-v", "--mode", "full", "--format", "json", "-o", out,
             "--", *self.workload_cmd("mutex", "--threads", "3", "--iters",
                                      "30", "--hold-us", "2000",
                                      "--main-exits")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(prof)
        prof.report_path = out
        seen = self.wait_for_stderr(prof, "they follow thread")
        pid = int(re.search(r"profiling PID (\d+)", seen).group(1))
        os.kill(pid, signal.SIGUSR2)
        self.check_counts(self.finish_syncprof(prof))
