"""Files the target controls, planted to hurt: its /tmp/perf-PID.map as a
FIFO, a link to /dev/zero or /dev/urandom, a /dev/zero device node, a
sparse file of a gigabyte, a link to a root-only file, a map another
user planted.  The target (stacks jit) runs code from anonymous memory,
so every report looks its frames up in the map.  syncprof must end on
-d and on SIGINT with its report, keep its memory bounded, read nothing
it was not meant to, and say once what it skipped and why."""
import os
import select
import signal
import stat
import subprocess
import time

from harness import BUILD, SYNCPROF, SyncprofTestCase, parse_reports

STACKS = os.path.join(BUILD, "tests", "targets", "stacks")
# A map line that covers every user address: whatever the JIT's address,
# a map that is read names its frame so.
COVER_ALL = "0 7fffffffffff {}\n"
# syncprof's own tables for this target are a few tens of MB.
MAX_RSS_KB = 256 * 1024


class HostilePerfMap(SyncprofTestCase):

    def start_target(self, iters=100000):
        """The target outlives syncprof's -d 2: the map is read for
        reports of a live process (a gone one's PID may be reused, and
        beside busy loops its events can be read after it exited)."""
        target = self.start_waiting_target(
            [STACKS, "jit", "--wait-signal", "--iters", str(iters),
             "--hold-us", "2000", "--truth", self.path("truth.json")])
        perf_map = f"/tmp/perf-{target.pid}.map"
        self.addCleanup(lambda: os.path.lexists(perf_map) and os.remove(perf_map))
        return target, perf_map

    def profile(self, target, *args, stop=None):
        """syncprof -v --pid TARGET args, reaped here for its rusage:
        (returncode, stderr, reports, max RSS in KB).  stop(proc) is
        called once it attached and the target was let go."""
        out = self.path("report.json")
        proc = subprocess.Popen(
            [SYNCPROF, "-v", "--mode", "contended", "--top", "0", "--format",
             "json", "-o", out, "--pid", str(target.pid), *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.children.append(proc)
        self.read_stderr_until(proc, "profiling PID", "syncprof did not attach")
        self.go(target)
        if stop:
            stop(proc)
        err = (getattr(proc, "seen", "") + proc.unread_stderr).encode()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                chunk = os.read(proc.stderr.fileno(), 65536)
                if not chunk:
                    break
                err += chunk
        else:
            proc.kill()
            self.fail(f"syncprof did not end: {err.decode(errors='replace')}")
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        with open(out) as f:
            reports = parse_reports(f.read())
        return proc.returncode, err.decode(errors="replace"), reports, usage.ru_maxrss

    def jit_frames(self, reports):
        """The frame each JIT stack has above path_jit."""
        self.assertTrue(reports, "no report")
        found = []
        for row in reports[-1]["rows"]:
            for s in row["stacks"]:
                names = [f["function"] for f in s["frames"]]
                if "path_jit" in names:
                    found.append(s["frames"][names.index("path_jit") + 1])
        self.assertTrue(found, reports[-1]["rows"])
        return found

    def assertEnded(self, rc, err, reports, rss_kb, skipped):
        self.assertEqual(rc, 0, err)
        self.assertNotIn("error", err)
        self.assertEqual(err.count("skipped /"), 1, err)
        self.assertIn(skipped, err)
        self.assertLess(rss_kb, MAX_RSS_KB, f"syncprof's RSS reached {rss_kb} KB")
        for frame in self.jit_frames(reports):
            self.assertIsNone(frame["module"])
            self.assertIsNone(frame["function"], frame)

    def test_fifo_ends_on_duration(self):
        target, perf_map = self.start_target()
        os.mkfifo(perf_map)
        self.assertEnded(*self.profile(target, "-d", "2"),
                         "a FIFO, not a regular file")

    def test_fifo_ends_on_sigint(self):
        """Every interval's report reads the map; SIGINT after the first
        one still ends the run with its final report (of the whole run)."""
        target, perf_map = self.start_target()
        os.mkfifo(perf_map)

        def first_report_then_sigint(proc):
            proc.seen = self.read_stderr_until(proc, "skipped",
                                               "no report read the map")
            proc.send_signal(signal.SIGINT)

        rc, err, reports, rss = self.profile(
            target, "--interval", "1", "--cumulative",
            stop=first_report_then_sigint)
        self.assertIn("stopping on signal 2", err)
        self.assertEnded(rc, err, reports, rss, "a FIFO, not a regular file")

    def test_link_to_dev_zero(self):
        target, perf_map = self.start_target()
        os.symlink("/dev/zero", perf_map)
        self.assertEnded(*self.profile(target, "-d", "2"),
                         "a symbolic link, not followed")

    def test_dev_zero_device_node(self):
        target, perf_map = self.start_target()
        os.mknod(perf_map, stat.S_IFCHR | 0o666, os.makedev(1, 5))
        self.assertEnded(*self.profile(target, "-d", "2"),
                         "a character device, not a regular file")

    def test_link_to_dev_urandom(self):
        target, perf_map = self.start_target()
        os.symlink("/dev/urandom", perf_map)
        self.assertEnded(*self.profile(target, "-d", "2"),
                         "a symbolic link, not followed")

    def test_link_to_a_root_only_file(self):
        """Root's file, in a directory only root may enter: read through
        the link, it would name the JIT's frame."""
        target, perf_map = self.start_target()
        private = self.path("private")
        os.mkdir(private, 0o700)
        secret = os.path.join(private, "secret")
        with open(secret, "w") as f:
            f.write(COVER_ALL.format("secret_stub"))
        os.chmod(secret, 0o600)
        os.symlink(secret, perf_map)
        rc, err, reports, rss = self.profile(target, "-d", "2")
        self.assertNotIn("secret_stub", "".join(str(r) for r in reports))
        self.assertEnded(rc, err, reports, rss, "a symbolic link, not followed")

    def test_map_planted_by_another_user(self):
        """A map in /tmp that someone other than the target's user (and
        root) wrote is not the target's: not read."""
        target, perf_map = self.start_target()
        with open(perf_map, "w") as f:
            f.write(COVER_ALL.format("planted_stub"))
        os.chown(perf_map, 65534, 65534)
        rc, err, reports, rss = self.profile(target, "-d", "2")
        self.assertEqual(rc, 0, err)
        self.assertIn("owned by uid 65534, not by the target's user", err)
        self.assertNotIn("planted_stub", "".join(str(r) for r in reports))
        for frame in self.jit_frames(reports):
            self.assertIsNone(frame["function"], frame)

    def test_sparse_gigabyte(self):
        """A regular file of 1 GiB, all holes but its first line: the
        first 64 MiB are read, the name found, memory bounded."""
        target, perf_map = self.start_target()
        with open(perf_map, "w") as f:
            f.write(COVER_ALL.format("sparse_stub"))
            f.truncate(1 << 30)
        rc, err, reports, rss = self.profile(target, "-d", "2")
        self.assertEqual(rc, 0, err)
        self.assertIn("larger than 64 MiB", err)
        self.assertLess(rss, MAX_RSS_KB, f"syncprof's RSS reached {rss} KB")
        for frame in self.jit_frames(reports):
            self.assertEqual(frame["function"], "sparse_stub")
