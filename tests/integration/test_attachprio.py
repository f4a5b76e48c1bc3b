"""syncprof attaches at a raised priority (nice -15) and is back at the
nice it was started with once attached, every thread of it: started at
nice 5, each thread of syncprof reads nice 5 in /proc after --ready-fd
says it attached, in both modes (full mode calibrates in a child and
runs threads of its own), and -v says it attached at -15.  Leading its
session (setsid) with autogroups on, its session's scheduling group is
raised too, and back at its nice once attached.  A launched command
starts at the caller's nice, not syncprof's raised one."""
import os
import signal
import subprocess

from harness import HANG_S, SYNCPROF, SyncprofTestCase

STARTED_AT = 5


def autogroup_nice(pid):
    """The nice of pid's session's autogroup ("/autogroup-N nice K"), or
    None for a session in the boot-time group, which /proc shows empty (a
    container whose first process never called setsid)."""
    with open(f"/proc/{pid}/autogroup") as f:
        fields = f.read().split()
    return int(fields[-1]) if fields else None


def autogroups_on():
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def thread_nices(pid):
    """{tid: nice} of every thread of pid (/proc/PID/task/TID/stat)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[int(tid)] = int(fields[16])	# field 19: nice
    return out


class AttachPriority(SyncprofTestCase):

    def check_mode(self, mode):
        sleeper = subprocess.Popen(["sleep", "600"])
        self.children.append(sleeper)
        proc = self.popen_ready([SYNCPROF, "-v", "--mode", mode, "--pid",
                                 str(sleeper.pid), "-o", os.devnull],
                                preexec_fn=lambda: os.nice(STARTED_AT))
        nices = thread_nices(proc.pid)
        proc.report_path = self.path("none")
        proc.send_signal(signal.SIGINT)
        run = self.finish_syncprof(proc)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(set(nices.values()), {STARTED_AT},
                         f"threads' nice after attach: {nices}")
        self.assertIn(f"attaching at nice -15 (started at {STARTED_AT})",
                      run.stderr)

    def test_contended(self):
        self.check_mode("contended")

    def test_full(self):
        self.check_mode("full")

    def test_session_leader_raises_its_autogroup_and_puts_it_back(self):
        if not autogroups_on():
            self.skipTest("sched_autogroup is off: nice weighs across sessions")
        sleeper = subprocess.Popen(["sleep", "600"])
        self.children.append(sleeper)
        proc = self.popen_ready([SYNCPROF, "-v", "--mode", "contended",
                                 "--pid", str(sleeper.pid), "-o", os.devnull],
                                start_new_session=True)
        group = autogroup_nice(proc.pid)
        proc.report_path = self.path("none")
        proc.send_signal(signal.SIGINT)
        run = self.finish_syncprof(proc)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("its session's scheduling group (autogroup) at nice "
                      "-15 too (started at 0)", run.stderr)
        self.assertEqual(group, 0, run.stderr)

    def test_not_leading_its_session_leaves_the_autogroup_alone(self):
        # The caller's session (this test's) must not be raised with it.
        before = autogroup_nice(os.getpid()) if autogroups_on() else None
        sleeper = subprocess.Popen(["sleep", "600"])
        self.children.append(sleeper)
        proc = self.popen_ready([SYNCPROF, "-v", "--mode", "contended",
                                 "--pid", str(sleeper.pid), "-o", os.devnull])
        proc.report_path = self.path("none")
        proc.send_signal(signal.SIGINT)
        run = self.finish_syncprof(proc)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("autogroup", run.stderr)
        if before is not None:
            self.assertEqual(autogroup_nice(os.getpid()), before)

    def test_a_launched_command_starts_at_the_callers_nice(self):
        # nice(1) without arguments prints the nice it runs at.
        run = subprocess.run([SYNCPROF, "-v", "--mode", "contended", "-o",
                              os.devnull, "--", "nice"],
                             capture_output=True, text=True, timeout=HANG_S,
                             preexec_fn=lambda: os.nice(STARTED_AT))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(f"attaching at nice -15 (started at {STARTED_AT})",
                      run.stderr)
        self.assertEqual(run.stdout.split(), [str(STARTED_AT)], run.stdout)
