"""syncprof attaches at a raised priority (nice -15) and is back at the
nice it was started with once attached, every thread of it: started at
nice 5, each thread of syncprof reads nice 5 in /proc after --ready-fd
says it attached, in both modes (full mode calibrates in a child and
runs threads of its own), and -v says it attached at -15."""
import os
import signal
import subprocess

from harness import SYNCPROF, SyncprofTestCase

STARTED_AT = 5


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
