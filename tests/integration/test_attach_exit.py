"""Processes that end at awkward times.  A target killed while syncprof
attaches (after the first line -v prints, while the tables and programs
load): exit 0, exactly one warning that says so, never an error line, in
both modes, alone and with --children.  Zombie children present at
attach: --children ends when the target does, not never.  A PID reused
by a new child: followed as a new process, and syncprof ends when it
does, not when the process that had its PID did."""
import os
import signal
import subprocess
import time

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase, parse_reports

TARGETS = os.path.join(BUILD, "tests", "targets")
# The first line -v prints, before the long part of the attach: the
# unwind tables and the BPF programs' load (full mode's calibration runs
# beside the load, and says its figures after it).
FIRST_LINE = {"contended": "contended mode:", "full": "full mode:"}
GONE = "exited while syncprof attached"


class AttachExit(SyncprofTestCase):

    def kill_during_attach(self, mode, *args):
        target = self.start_waiting_target(
            [os.path.join(TARGETS, "stacks"), "paths", "--wait-signal"])
        out = self.path("report.json")
        proc = subprocess.Popen(
            [SYNCPROF, "-v", "--mode", mode, "--format", "json", "-o", out,
             "--pid", str(target.pid), *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.children.append(proc)
        seen = self.read_stderr_until(proc, FIRST_LINE[mode],
                                      "syncprof did not start attaching")
        target.kill()
        target.wait()
        _, rest = proc.communicate(timeout=120)
        stderr = seen + proc.unread_stderr + rest
        self.assertEqual(proc.returncode, 0, stderr)
        self.assertNotIn("error", stderr)
        self.assertNotIn("libbpf:", stderr)
        self.assertEqual(stderr.count(GONE), 1, stderr)
        with open(out) as f:
            for report in parse_reports(f.read()):
                self.assertEqual(report["rows"], [])
        return stderr

    def test_contended(self):
        stderr = self.kill_during_attach("contended")
        self.assertEqual(stderr.count("warning:"), 1, stderr)

    def test_full(self):
        stderr = self.kill_during_attach("full")
        self.assertEqual(stderr.count("warning:"), 1, stderr)

    def test_children_contended(self):
        self.kill_during_attach("contended", "--children")

    def test_children_full(self):
        self.kill_during_attach("full", "--children")


class NameAtExit(SyncprofTestCase):
    """A PID caught before its exec (a shell about to exec the program)
    that execs and exits while syncprof attaches: exit 0, and the
    process named as it was when it exited, never as the shell."""

    def run_exec_during_attach(self, mode):
        workload = os.path.join(TARGETS, "workload")
        shell = subprocess.Popen(
            ["bash", "-c", f"read line; exec {workload} mutex --threads 1 "
             "--iters 1 --hold-us 1000"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.children.append(shell)
        # Caught as the shell: once it runs, before its exec.
        deadline = time.monotonic() + HANG_S
        while open(f"/proc/{shell.pid}/comm").read().strip() != "bash":
            self.assertLess(time.monotonic(), deadline, "no shell")
            time.sleep(0.01)
        out = self.path("report.json")
        proc = subprocess.Popen(
            [SYNCPROF, "-v", "--mode", mode, "--format", "json", "-o", out,
             "--pid", str(shell.pid)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.children.append(proc)
        seen = self.read_stderr_until(proc, FIRST_LINE[mode],
                                      "syncprof did not start attaching")
        shell.stdin.write("go\n")
        shell.stdin.close()
        _, rest = proc.communicate(timeout=120)
        stderr = seen + proc.unread_stderr + rest
        shell.wait(timeout=120)     # reaped only now: a zombie till then
        self.assertEqual(proc.returncode, 0, stderr)
        self.assertNotIn("error", stderr)
        self.assertLessEqual(stderr.count(GONE), 1, stderr)
        for line in stderr.splitlines():
            if GONE in line:
                self.assertIn(f"PID {shell.pid} (workload) {GONE}", line)
        with open(out) as f:
            [report] = parse_reports(f.read())
        self.assertEqual(report["comm"], "workload")

    def test_contended(self):
        self.run_exec_during_attach("contended")

    def test_full(self):
        self.run_exec_during_attach("full")


class Zombies(SyncprofTestCase):

    def run_with_zombies(self, mode):
        target = self.start_waiting_target(
            [os.path.join(TARGETS, "zombies"), "--zombies", "3",
             "--live-ms", "300", "--wait-signal"])
        prof = self.start_syncprof(["--pid", str(target.pid), "--children",
                                    "--mode", mode])
        self.go(target)
        self.assertEqual(target.wait(timeout=60), 0)
        # No --duration: it ends because every followed process ended.
        run = self.finish_syncprof(prof, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("every followed process exited", run.stderr)
        self.assertNotIn("error", run.stderr)

    def test_zombies_contended(self):
        self.run_with_zombies("contended")

    def test_zombies_full(self):
        self.run_with_zombies("full")


class PidReuse(SyncprofTestCase):

    def test_a_new_child_with_a_reused_pid(self):
        for mode in ("contended", "full"):
            with self.subTest(mode=mode):
                target = self.start_waiting_target(
                    [os.path.join(TARGETS, "zombies"), "--zombies", "0",
                     "--reuse-ms", "1500", "--wait-signal"])
                prof = self.start_syncprof(["--pid", str(target.pid),
                                            "--children", "--mode", mode])
                self.go(target)
                line = target.stdout.readline()
                self.assertTrue(line.startswith("reused "), line)
                child = int(line.split()[1])
                self.assertEqual(target.wait(timeout=60), 0)
                run = self.finish_syncprof(prof, timeout=60)
                self.assertEqual(run.returncode, 0, run.stderr)
                # It ended with the last followed process, not before
                # (gone, or a zombie its new parent has not reaped yet).
                try:
                    with open(f"/proc/{child}/stat") as f:
                        state = f.read().rsplit(")", 1)[1].split()[0]
                except FileNotFoundError:
                    state = "gone"
                if state not in ("gone", "Z", "X"):
                    os.kill(child, signal.SIGKILL)
                self.assertIn(state, ("gone", "Z", "X"),
                              f"syncprof ended before PID {child}: {run.stderr}")
                self.assertEqual(run.stderr.count(f"following PID {child}"), 2,
                                 run.stderr)
