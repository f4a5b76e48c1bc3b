"""Bad input: each case ends with a one-line reason on stderr and a
non-zero exit, and never harms the target."""
import os
import shutil
import subprocess
import time

from harness import (BUILD, HANG_S, STATIC_SPIN, SYNCPROF, WORKLOAD,
                     SyncprofTestCase)


def syncprof(*args, timeout=HANG_S, **kw):
    return subprocess.run([SYNCPROF, *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def process_state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def kernel_thread_pid():
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[6]) & 0x00200000:  # PF_KTHREAD
            return int(entry)
    return None


class BadInput(SyncprofTestCase):

    def assertFails(self, proc, message, code=None):
        self.assertNotEqual(proc.returncode, 0, proc.stdout)
        if code is not None:
            self.assertEqual(proc.returncode, code)
        self.assertIn(message, proc.stderr)
        self.assertEqual(proc.stdout, "", "no report on failure")

    def test_pid_that_does_not_exist(self):
        pid = 4194304 - 7  # above any pid_max in use here
        self.assertFails(syncprof("--pid", str(pid)), f"no process with PID {pid}")

    def test_pid_that_has_exited(self):
        zombie = subprocess.Popen(["true"])
        self.children.append(zombie)
        deadline = time.monotonic() + HANG_S
        while process_state(zombie.pid) != "Z":
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.01)
        self.assertFails(syncprof("--pid", str(zombie.pid)), "has exited")

    def test_kernel_thread(self):
        pid = kernel_thread_pid()
        self.assertIsNotNone(pid, "this kernel shows no kernel thread")
        self.assertFails(syncprof("--pid", str(pid)), "is a kernel thread")

    def test_no_permission(self):
        setpriv = shutil.which("setpriv")
        self.assertIsNotNone(setpriv, "util-linux's setpriv is needed")
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--iters", "1", "--wait-signal"))
        proc = subprocess.run(
            [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
             "--inh-caps=-all", SYNCPROF, "--pid", str(target.pid)],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertFails(proc, "permission denied")
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)

    def test_static_target_launched(self):
        proc = syncprof("--", STATIC_SPIN, "1")
        self.assertFails(proc, "is statically linked")
        self.assertNotIn("ready", proc.stdout, "it must not have run")

    def test_static_target_by_pid(self):
        target = self.start_waiting_target([STATIC_SPIN, "3"])
        self.assertFails(syncprof("--pid", str(target.pid)), "is statically linked")
        self.assertIsNone(target.poll(), "the target runs on")

    def test_command_that_does_not_exist(self):
        self.assertFails(syncprof("--", "/nonexistent/program"),
                         "cannot run '/nonexistent/program': No such file")

    def test_ready_fd_that_is_not_open_for_writing(self):
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        self.addCleanup(os.close, write_end)
        for fd in ("99", str(read_end), "-1", "x"):
            with self.subTest(fd=fd):
                proc = syncprof("--ready-fd", fd, "--", "true",
                                pass_fds=(read_end, write_end))
                self.assertFails(proc, f"invalid --ready-fd '{fd}'", code=2)

    def test_unknown_flag(self):
        proc = syncprof("--frobnicate", "--pid", "1")
        self.assertFails(proc, "syncprof: error: unrecognized option '--frobnicate'",
                         code=2)
        self.assertIn("syncprof --help", proc.stderr)
        self.assertFails(syncprof("--pid"),
                         "syncprof: error: option '--pid' requires an argument",
                         code=2)

    def test_every_choice_error_lists_the_choices(self):
        for option, choices in [("--mode", "contended or full"),
                                ("--sort", "total, mean, max or count"),
                                ("--format", "table, csv or json"),
                                ("--callsite", "line, func or both"),
                                ("--probe-at", "auto or entry"),
                                ("--type", "mutex, rec_mutex, condvar, rwlock-r, "
                                 "rwlock-w, sem, libc-lock, futex, barrier, "
                                 "spinlock or join")]:
            with self.subTest(option=option):
                proc = syncprof(option, "bogus", "--pid", "1")
                self.assertFails(proc, f"syncprof: error: invalid {option} "
                                 f"'bogus': choose ", code=2)
                for choice in choices.replace(",", "").split(" or "):
                    for word in choice.split():
                        self.assertIn(word, proc.stderr)

    def test_a_thread_id_is_widened_to_its_process(self):
        # Runs until the cleanup kills it: however long the attach takes,
        # the target outlives syncprof.
        target = subprocess.Popen([os.path.join(BUILD, "tests/targets/demo"), "2"],
                                  stdout=subprocess.DEVNULL)
        self.children.append(target)
        deadline = time.monotonic() + HANG_S
        tids = []
        while not tids:
            self.assertLess(time.monotonic(), deadline, "demo started no thread")
            tids = [int(t) for t in os.listdir(f"/proc/{target.pid}/task")
                    if int(t) != target.pid]
            time.sleep(0.01)
        proc = syncprof("--pid", str(tids[0]), "--duration", "0.5")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"PID {tids[0]} is a thread of process {target.pid}: "
                      f"profiling all of process {target.pid}", proc.stderr)
        self.assertIn(f"pid {target.pid} (demo)", proc.stdout)
        self.assertIsNone(target.poll(), "the target runs on")

    def test_malformed_values(self):
        for args, message in [
                (["--pid", "12ab"], "invalid --pid '12ab'"),
                (["--pid", "-5"], "invalid --pid '-5'"),
                (["--duration", "soon", "--pid", "1"], "invalid --duration 'soon'"),
                (["--interval", "0", "--pid", "1"], "invalid --interval '0'"),
                (["--top", "-1", "--pid", "1"], "invalid --top '-1'"),
                (["--sort", "fastest", "--pid", "1"], "invalid --sort 'fastest'"),
                (["--format", "xml", "--pid", "1"], "invalid --format 'xml'"),
                (["--map-size", "0", "--pid", "1"], "invalid --map-size '0'"),
                (["--stack-depth", "128", "--pid", "1"], "invalid --stack-depth '128'"),
                (["--skip", "", "--pid", "1"], "invalid --skip ''"),
                (["--tid", "x", "--pid", "1"], "invalid --tid 'x'"),
                (["--min-wait", "10x", "--pid", "1"],
                 "invalid --min-wait '10x': expected a duration: a number "
                 "of seconds, or a number and a unit: ns, us, ms, s, m or h"),
                (["--duration", "1d", "--pid", "1"],
                 "invalid --duration '1d': expected a duration above 0 and "
                 "at most a year: a number of seconds, or a number and a "
                 "unit: ns, us, ms, s, m or h"),
                (["--object", "", "--pid", "1"], "invalid --object ''")]:
            with self.subTest(args=args):
                self.assertFails(syncprof(*args), message, code=2)

    def test_object_not_in_the_target(self):
        proc = syncprof("--object", "no_such_variable_anywhere", "-d", "1", "--",
                        os.path.join(BUILD, "tests/targets/demo"), "1", "1")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("syncprof: error: --object 'no_such_variable_anywhere': no "
                      "global or static variable of that name", proc.stderr)

    def test_pid_and_command_together(self):
        self.assertFails(syncprof("--pid", "1", "--", "true"), "not both", code=2)

    def test_nothing_to_profile(self):
        self.assertFails(syncprof(), "nothing to profile", code=2)

    def test_full_map_drops_are_counted_and_reported(self):
        objects, size = 64, 8
        run = self.launch(["--map-size", str(size), "--top", "0"], self.workload_cmd(
            "many", "--threads", "1", "--objects", str(objects)))
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[-1]
        self.assertLessEqual(report["rows_total"], size)
        self.assertGreaterEqual(report["dropped"], objects - size)
        counted = self.total(report["rows"], "count")
        # Every lock call is either in a row or in the drop count.
        self.assertGreaterEqual(counted + report["dropped"], objects)
        self.assertIn("DROPPED", run.stderr)
        self.assertIn("--map-size 8: raise it", run.stderr)
        self.assertEqual(report["dropped_causes"]["map_full"], report["dropped"])
        table = syncprof("--mode", "full", "--map-size", str(size), "--", WORKLOAD, "many",
                         "--threads", "1", "--objects", str(objects))
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertRegex(table.stdout, r"dropped (\d{2,})")
        # Loudly: a line of its own under the table, not only the header.
        self.assertRegex(table.stdout, r"\n-+\nDROPPED \d{2,} events: .*"
                         r"beyond the kernel's row table \(--map-size 8: raise it\)")
