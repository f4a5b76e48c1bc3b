"""Shared helpers for syncprof's integration tests: run syncprof against
target programs built by `make test`, read its JSON reports and the
targets' own ground truth."""
import json
import os
import re
import select
import signal
import socket
import subprocess
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SYNCPROF_BUILD", os.path.join(ROOT, "build"))
# A build of its own (build-san/) has its syncprof inside; the default
# build links ./syncprof at the top.
SYNCPROF = (os.path.join(BUILD, "syncprof")
            if os.path.exists(os.path.join(BUILD, "syncprof"))
            else os.path.join(ROOT, "syncprof"))
WORKLOAD = os.path.join(BUILD, "tests", "targets", "workload")
STATIC_SPIN = os.path.join(BUILD, "tests", "targets", "static_spin")

# How long the tests wait for anything they start (syncprof, a target, a
# tool) before calling it a hang.  Only a hang reaches it: beside four busy
# loops and other builds (load 20 on 2 CPUs) one launch took over 60 s, and
# syncprof's loop stalled 23 s once.  Lower it to find hangs faster.
HANG_S = float(os.environ.get("SYNCPROF_TEST_HANG_S", "240"))

# Uprobe round trips are slow here (~20 us): keep call counts small and
# waits long, so the per-call probe cost stays well inside the tolerance.
TOLERANCE = 0.03
# How far below the target's clock a sum of waits may read (assertWithin).
UNDER_TOLERANCE = 0.10


def source_marker(path, kind, name):
    """The line of a target's source that holds the comment /* KIND:name */."""
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"/\* {kind}:{name} \*/", text):
                return number
    raise AssertionError(f"no {kind}:{name} in {path}")


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now, for a server a
    test starts (other tests run beside it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_mode(args):
    """Full mode unless the test picks one: most files check the exact
    counts of every acquisition, which only full mode gives."""
    return list(args) if "--mode" in args else ["--mode", "full", *args]


# What ASan, LSan and UBSan print (make sanitize): a run that printed one
# failed, whatever its exit status.
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "runtime error:")


class Run:
    """One finished syncprof run."""

    def __init__(self, returncode, stdout, stderr, reports):
        for marker in SANITIZER_REPORTS:
            if stderr and marker in stderr:
                raise AssertionError(f"sanitizer report from syncprof:\n{stderr}")
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.reports = reports


def read_line(fd, timeout):
    """One line from a pipe, within timeout seconds; '' at end-of-file or
    the deadline."""
    deadline = time.monotonic() + timeout
    got = b""
    while not got.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 256)
        if not chunk:
            break
        got += chunk
    return got.decode(errors="replace")


def parse_reports(text):
    return [json.loads(line) for line in text.splitlines()
            if line.startswith("{")]


def kill_with_target(proc):
    """Kills syncprof and the target it launched (never one it attached
    to): a launched target left behind keeps syncprof's pipes open, and a
    read of them waits."""
    if proc.poll() is None:
        proc.kill()
    target = getattr(proc, "target_pid", None)
    if target and getattr(proc, "launched", False):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass


def rest_of_stderr(proc, timeout=2.0):
    """What is left on proc's stderr, read for at most timeout seconds
    (a process that inherited the pipe may hold it open)."""
    if not proc.stderr:
        return ""
    fd, got = proc.stderr.fileno(), b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            got += chunk
    return got.decode(errors="replace")


class SyncprofTestCase(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="syncprof-test-")
        self.addCleanup(self.tmp.cleanup)
        self.children = []
        self.addCleanup(self._reap_children)

    def _reap_children(self):
        for child in self.children:
            kill_with_target(child)
            child.wait()
            for stream in (child.stdout, child.stderr):
                if stream:
                    stream.close()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def workload_cmd(self, scenario, *args, truth="truth.json"):
        return [WORKLOAD, scenario, "--truth", self.path(truth), *args]

    def truth(self, name="truth.json"):
        with open(self.path(name)) as f:
            return json.load(f)

    def launch(self, syncprof_args, command, timeout=HANG_S):
        """syncprof [args] --format json -o FILE -- command"""
        out = self.path("report.json")
        proc = subprocess.run(
            [SYNCPROF, "--format", "json", "-o", out, *with_mode(syncprof_args),
             "--", *command],
            capture_output=True, text=True, timeout=timeout)
        return Run(proc.returncode, proc.stdout, proc.stderr, self._read_reports(out))

    def _read_reports(self, path):
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return parse_reports(f.read())

    def start_waiting_target(self, command):
        """Starts a target that prints 'ready PID' and waits for SIGUSR1."""
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        self.children.append(proc)
        line = proc.stdout.readline()
        self.assertTrue(line.startswith("ready "), f"target said {line!r}")
        return proc

    def wait_done(self, target):
        """A --wait-end target's 'done PID': its work is over, its truth
        written, and it waits for go() to exit."""
        line = target.stdout.readline()
        self.assertTrue(line.startswith("done "), f"target said {line!r}")

    def start_syncprof(self, args, command=None):
        """syncprof -v --format json -o FILE args [-- command]; returns
        once it is attached (and a launched command let go), with
        proc.target_pid the profiled process (the launched command's)."""
        out = self.path("report.json")
        argv = [SYNCPROF, "-v", "--format", "json", "-o", out,
                *with_mode(args)]
        if command:
            argv += ["--", *command]
        proc = self.popen_ready(argv)
        proc.report_path = out
        proc.launched = bool(command)
        return proc

    def popen_ready(self, argv, timeout=HANG_S, **popen_args):
        """Starts syncprof (argv[0]) with --ready-fd on a pipe and waits
        for its 'ready PID' line: the one way the tests know it attached,
        in every mode.  Never a fixed sleep: a loaded machine attaches
        late.  End-of-file (syncprof ended without attaching) or the
        deadline, meant only to end a hang, fails the test with
        syncprof's stderr.  Returns the process, stdout and stderr piped
        unless popen_args say otherwise; proc.target_pid is the PID in
        the line."""
        read_end, write_end = os.pipe()
        popen_args.setdefault("stdout", subprocess.PIPE)
        popen_args.setdefault("stderr", subprocess.PIPE)
        try:
            proc = subprocess.Popen(
                [argv[0], "--ready-fd", str(write_end), *argv[1:]],
                pass_fds=(write_end,), text=True, **popen_args)
        finally:
            os.close(write_end)
        self.children.append(proc)
        try:
            line = read_line(read_end, timeout)
        finally:
            os.close(read_end)
        if not line.startswith("ready "):
            kill_with_target(proc)
            self.fail(f"syncprof did not attach ({line!r}): "
                      f"{rest_of_stderr(proc)}")
        proc.target_pid = int(line.split()[1])
        return proc

    def read_stderr_until(self, proc, needle, what, timeout=HANG_S):
        """proc's stderr up to the end of the line that holds needle; the
        rest stays for finish_syncprof.  Reads the pipe itself: select()
        cannot see lines a buffered reader has already taken in."""
        fd = proc.stderr.fileno()
        seen = getattr(proc, "unread_stderr", "").encode()
        proc.unread_stderr = ""
        deadline = time.monotonic() + timeout
        while needle.encode() not in seen:
            if time.monotonic() > deadline or proc.poll() is not None:
                kill_with_target(proc)
                self.fail(f"{what}: {seen.decode(errors='replace')}"
                          f"{rest_of_stderr(proc)}")
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                seen += os.read(fd, 65536)
        end = seen.find(b"\n", seen.find(needle.encode()))
        end = len(seen) if end < 0 else end + 1
        proc.unread_stderr = seen[end:].decode(errors="replace")
        return seen[:end].decode(errors="replace")

    def finish_syncprof(self, proc, timeout=HANG_S):
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # What it said before it hung is the clue: SIGINT first (its
            # report), then SIGKILL.
            proc.send_signal(signal.SIGINT)
            try:
                stdout, stderr = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
            self.fail(f"syncprof did not end within {timeout} s: "
                      f"{getattr(proc, 'unread_stderr', '')}{stderr}")
        stderr = getattr(proc, "unread_stderr", "") + stderr
        return Run(proc.returncode, stdout, stderr,
                   self._read_reports(proc.report_path))

    def go(self, target):
        os.kill(target.pid, signal.SIGUSR1)

    def profile_to_the_end(self, target, *args):
        """Attaches syncprof to a waiting target, lets the target run to
        its end, and returns syncprof's finished run."""
        prof = self.start_syncprof(["--pid", str(target.pid), *args])
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run

    # --- reading reports -------------------------------------------------

    @staticmethod
    def rows_for(report, obj, kind=None):
        return [r for r in report["rows"]
                if r["object"] == obj and (kind is None or r["type"] == kind)]

    @staticmethod
    def total(rows, field):
        return sum(r[field] for r in rows)

    def assertInside(self, measured, truth, what="wait"):
        """Each probed interval lies inside the target's own clock_gettime
        pair, so syncprof can never report more than the target saw."""
        self.assertGreater(measured, 0, f"{what}: syncprof measured nothing")
        self.assertLessEqual(measured, truth,
                             f"{what}: syncprof {measured} > target {truth}")

    def assertWithin(self, measured, truth, tolerance=TOLERANCE, what="wait"):
        """Never above the target's clock; below it by at most tolerance,
        or UNDER_TOLERANCE: the target's clock also runs while the waiter
        is preempted around the futex wait (before it, after the wake),
        which a loaded machine stretches; counts are checked exactly
        elsewhere, so a lost wait does not hide in this margin."""
        self.assertGreater(truth, 0, f"{what}: the target measured nothing")
        self.assertInside(measured, truth, what)
        error = abs(measured - truth) / truth
        allowed = max(tolerance, UNDER_TOLERANCE)
        self.assertLessEqual(
            error, allowed,
            f"{what}: syncprof {measured} vs target {truth} "
            f"({error * 100:.2f}% > {allowed * 100:.0f}%)")
