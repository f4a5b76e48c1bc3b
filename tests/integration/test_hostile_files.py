"""What syncprof writes, when another user races it or the disk fills:
links planted in a recording's directory while syncprof records are never
written through (a planter running as nobody races syncprof, as an
attacker would); a directory that is not syncprof's caller's, or not
empty, is refused; a full tmpfs says "No space left on device" and names
the file, for the recording and for -o."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase

BLOCKING = os.path.join(BUILD, "tests", "targets", "blocking")
NOBODY = 65534
SETPRIV = shutil.which("setpriv")
UFTRACE = shutil.which("uftrace")
# Every name syncprof writes in a recording's directory, but the .dat files
# (their names are the target's thread ids).
PLANTED = ["syncprof.meta", "syncprof.names", "info", "task.txt",
           "syncprof-waits.sym", "sid-0.map"]

# The planter, as nobody: once syncprof's log appears in DIR, it either
# plants links in DIR itself (when it may write there), or moves DIR away
# and puts a directory of links in its place (when DIR's parent is its).
PLANTER = textwrap.dedent("""
    import os, sys, time
    parent, name, victims, planted = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    d = os.path.join(parent, name)
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(d, "syncprof.events")):
        if time.monotonic() > deadline:
            sys.exit("no syncprof.events appeared")
        time.sleep(0.001)
    def plant(where):
        n = 0
        for i, f in enumerate(planted):
            try:
                os.symlink(os.path.join(victims, f"victim{i}"), os.path.join(where, f))
                n += 1
            except OSError:
                pass
        return n
    n = plant(d)
    if not n:
        os.rename(d, d + ".moved")
        os.mkdir(d)
        n = plant(d)
    print(n, flush=True)
""")


class HostileFiles(SyncprofTestCase):

    def setUp(self):
        super().setUp()
        if not SETPRIV:
            self.skipTest("util-linux's setpriv is needed")
        # A place nobody can reach (the test's own directory is root's 0700).
        self.shared = tempfile.mkdtemp(prefix="syncprof-shared-")
        os.chmod(self.shared, 0o755)
        self.addCleanup(shutil.rmtree, self.shared, True)
        self.victims = self.path("victims")
        os.mkdir(self.victims)
        for i in range(len(PLANTED)):
            with open(os.path.join(self.victims, f"victim{i}"), "w") as f:
                f.write("precious\n")

    def record(self, directory, *extra, iters=5):
        return subprocess.Popen(
            [SYNCPROF, "--mode", "contended", "--record", directory, *extra,
             "--", BLOCKING, "mutex", "--iters", str(iters), "--hold-us", "200000"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def planter(self, parent, name):
        return subprocess.Popen(
            [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             sys.executable, "-c", PLANTER, parent, name, self.victims, *PLANTED],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def check_victims(self):
        for i in range(len(PLANTED)):
            with open(os.path.join(self.victims, f"victim{i}")) as f:
                self.assertEqual(f.read(), "precious\n", f"victim{i} was written through")

    def race(self, parent, name):
        planter = self.planter(parent, name)
        self.children.append(planter)
        proc = self.record(os.path.join(parent, name))
        self.children.append(proc)
        out, err = proc.communicate(timeout=HANG_S)
        planted, why = planter.communicate(timeout=HANG_S)
        self.assertEqual(planter.returncode, 0, why)
        self.assertGreater(int(planted), 0, "the planter planted nothing")
        self.check_victims()
        return proc.returncode, err

    def test_links_planted_in_its_own_open_directory(self):
        """The caller's empty directory, writable by all: nobody plants
        links at the names syncprof writes at the end.  They are replaced,
        and the recording is whole."""
        directory = os.path.join(self.shared, "rec")
        os.mkdir(directory)
        os.chmod(directory, 0o777)
        code, err = self.race(self.shared, "rec")
        self.assertEqual(code, 0, err)
        for name in ("syncprof.meta", "syncprof.names", "info", "task.txt"):
            self.assertFalse(os.path.islink(os.path.join(directory, name)), name)
        proc = subprocess.run([SYNCPROF, "--replay", directory, "-f", "json"],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        if UFTRACE:
            subprocess.run([UFTRACE, "replay", "-d", directory], check=True,
                           capture_output=True, timeout=HANG_S)

    def test_the_directory_moved_away_and_replaced_by_links(self):
        """A parent directory of nobody's: the recording's directory is
        renamed and a directory of links put in its place.  syncprof goes
        on writing into the directory it made, wherever it is now."""
        os.chown(self.shared, NOBODY, NOBODY)
        code, err = self.race(self.shared, "rec")
        self.assertEqual(code, 0, err)
        moved = os.path.join(self.shared, "rec.moved")
        self.assertTrue(os.path.isfile(os.path.join(moved, "syncprof.meta")))

    def test_a_directory_of_another_user_is_refused(self):
        directory = os.path.join(self.shared, "theirs")
        os.mkdir(directory)
        os.chown(directory, NOBODY, NOBODY)
        proc = self.record(directory, iters=1)
        self.children.append(proc)
        _, err = proc.communicate(timeout=HANG_S)
        self.assertEqual(proc.returncode, 1, err)
        self.assertIn(f"{directory} belongs to user {NOBODY}", err)
        self.assertEqual(os.listdir(directory), [])

    # --- a full disk -------------------------------------------------------

    def full_tmpfs(self):
        mount = self.path("small")
        os.mkdir(mount)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755",
                        "syncprof-test", mount], check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", mount])
        return mount

    def fill(self, mount):
        fd = os.open(os.path.join(mount, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * 512)
        except OSError:
            pass
        finally:
            os.close(fd)

    def test_a_full_disk_names_the_recording_file(self):
        mount = self.full_tmpfs()
        directory = os.path.join(mount, "rec")
        proc = self.record(directory, "-v", iters=3)
        self.children.append(proc)
        # Full once syncprof has begun to record.
        self.read_stderr_until(proc, "profiling PID", "syncprof did not attach")
        self.fill(mount)
        _, err = proc.communicate(timeout=HANG_S)
        err = getattr(proc, "unread_stderr", "") + err
        self.assertEqual(proc.returncode, 1, err)
        # One error, naming the recording and the full disk; none after.
        errors = [l for l in err.splitlines() if "error:" in l]
        self.assertEqual(len(errors), 1, err)
        self.assertIn(f"the recording in {directory} stopped: its file "
                      "system is full (No space left on device)", errors[0])
        self.assertNotIn("Input/output error", err)

    def test_a_full_disk_names_the_output_file(self):
        mount = self.full_tmpfs()
        self.fill(mount)
        out = os.path.join(mount, "report.json")
        proc = subprocess.run(
            [SYNCPROF, "--mode", "contended", "--format", "json", "-o", out, "--",
             BLOCKING, "mutex", "--iters", "1", "--hold-us", "1000"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f"cannot write {out}: No space left on device", proc.stderr)
