"""syncprof as a user that is not root, holding exactly the capabilities
the README documents (CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE,
CAP_DAC_READ_SEARCH, given by util-linux's setpriv as ambient
capabilities), profiles a target of that user in both modes, counts
exact.  Without CAP_DAC_READ_SEARCH, contended mode cannot read tracefs
(mode 0700) and says so, naming the capability."""
import json
import os
import shutil
import subprocess
import unittest

from harness import BUILD, SYNCPROF, SyncprofTestCase, parse_reports

STACKS = os.path.join(BUILD, "tests", "targets", "stacks")
NOBODY = 65534
DOCUMENTED = ["bpf", "perfmon", "sys_ptrace", "dac_read_search"]


def as_nobody(caps=()):
    """setpriv's prefix: uid and gid nobody, no groups, and caps as the
    inheritable and ambient sets (so the effective set after exec)."""
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if caps:
        listed = ",".join("+" + c for c in caps)
        prefix += [f"--inh-caps={listed}", f"--ambient-caps={listed}"]
    return prefix


@unittest.skipUnless(shutil.which("setpriv"), "util-linux's setpriv")
class Capabilities(SyncprofTestCase):

    def setUp(self):
        super().setUp()
        # A directory the unprivileged user writes: truth and report.
        self.shared = self.path("shared")
        os.mkdir(self.shared)
        os.chmod(self.tmp.name, 0o755)
        os.chown(self.shared, NOBODY, NOBODY)

    def profile(self, mode, caps):
        truth = os.path.join(self.shared, "truth.json")
        out = os.path.join(self.shared, "report.json")
        target = self.start_waiting_target(
            as_nobody() + [STACKS, "paths", "--wait-signal", "--iters", "10",
                           "--hold-us", "3000", "--truth", truth])
        prof = subprocess.Popen(
            as_nobody(caps) + [SYNCPROF, "-v", "--mode", mode, "--format",
                               "json", "-o", out, "--pid", str(target.pid)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.children.append(prof)
        return target, prof, truth, out

    def run_documented(self, mode):
        target, prof, truth, out = self.profile(mode, DOCUMENTED)
        seen = self.read_stderr_until(prof, "profiling PID", "syncprof did not attach")
        self.go(target)
        self.assertEqual(target.wait(timeout=60), 0)
        _, rest = prof.communicate(timeout=60)
        stderr = seen + prof.unread_stderr + rest
        self.assertEqual(prof.returncode, 0, stderr)
        self.assertNotIn("error", stderr)
        # No warning of a missing capability.  The calibration's warning
        # that most of its calls were slowed says the machine is busy
        # (beside other suites), which the capabilities do not decide.
        warnings = [line for line in stderr.splitlines()
                    if "warning:" in line
                    and "calibration unstable" not in line]
        self.assertEqual(warnings, [], stderr)
        with open(truth) as f:
            expected = json.load(f)
        with open(out) as f:
            report = parse_reports(f.read())[-1]
        rows = [r for r in report["rows"]
                if r["object"] == expected["object"] and r["type"] == "mutex"
                and r["callsite"]["function"] != "holder"]
        self.assertEqual(sum(r["count"] for r in rows),
                         sum(p["count"] for p in expected["paths"].values()),
                         report["rows"])

    def test_contended_with_the_documented_set(self):
        self.run_documented("contended")

    def test_full_with_the_documented_set(self):
        self.run_documented("full")

    def test_contended_says_what_is_missing(self):
        target, prof, _, _ = self.profile("contended", DOCUMENTED[:3])
        _, stderr = prof.communicate(timeout=60)
        self.assertEqual(prof.returncode, 1, stderr)
        self.assertIn("cannot read it (mode 700", stderr)
        self.assertIn("CAP_DAC_READ_SEARCH", stderr)
        self.assertNotIn("not mounted", stderr)
