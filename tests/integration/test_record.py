"""--record, --chrome, --ring-size and --replay against real targets, read
back by the real uftrace (Debian's 0.13): every wait is a named span on
its thread whose durations match the target's own clock, the Chrome file
holds the same spans in the shape Perfetto reads, a ring too small for a
burst loses waits that are counted and marked where they were lost, and a
replayed report equals the live one."""
import json
import os
import re
import shutil
import subprocess
import time
import unittest

from harness import BUILD, HANG_S, ROOT, SYNCPROF, WORKLOAD, SyncprofTestCase

BLOCKING = os.path.join(BUILD, "tests", "targets", "blocking")
SOURCE = os.path.join(ROOT, "tests", "targets", "blocking.c")
UFTRACE = shutil.which("uftrace")
TOLERANCE = 0.03
WAIT_US = 200000
WAITS = 5
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def marker_line(name):
    with open(SOURCE) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"CALLSITE:{name}\b", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {SOURCE}")


def uftrace(*args):
    proc = subprocess.run([UFTRACE, *args], capture_output=True, text=True,
                          timeout=HANG_S)
    if proc.returncode:
        raise AssertionError(f"uftrace {args}: {proc.returncode}\n{proc.stderr}")
    return proc.stdout


# "  200.127 ms [  1214] | mutex big_lock @ blocking.c:85();" (a leaf) or
# "    1.001  s [  1206] | } /* futex 0x7f.. @ blocking.c:339 */" (an exit)
REPLAY_SPAN = re.compile(r"^\s*([\d.]+)\s+(ns|us|ms|s)\s+\[\s*(\d+)\]\s+\|\s*"
                         r"(?:\}\s*/\*\s*(.*?)\s*\*/|(.*?)\(\);)\s*$")
REPLAY_LOST = re.compile(r"/\* LOST (\d+) records!! \*/")


def replay_spans(text):
    """(tid, name, duration ns) of each span uftrace replay closed."""
    spans = []
    for line in text.splitlines():
        m = REPLAY_SPAN.match(line)
        if m:
            name = m.group(4) if m.group(4) is not None else m.group(5)
            spans.append((int(m.group(3)), name.strip(),
                          float(m.group(1)) * UNITS[m.group(2)]))
    return spans


class Record(SyncprofTestCase):

    def setUp(self):
        super().setUp()
        if not UFTRACE:
            self.skipTest("uftrace is not installed (make deps installs it)")
        self.dir = self.path("rec")
        self.chrome = self.path("trace.json")

    def known_waits(self, mode, *extra):
        """The known-wait target: 5 waits of ~200 ms on big_lock."""
        run = self.launch(["--mode", mode, "--record", self.dir,
                           "--chrome", self.chrome, "-N", "0", *extra],
                          [BLOCKING, "mutex", "--iters", str(WAITS),
                           "--hold-us", str(WAIT_US),
                           "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1)
        self.assertEqual(run.reports[0]["dropped"], 0)
        return run.reports[0], self.truth()

    def label(self):
        return f"mutex big_lock @ blocking.c:{marker_line('blocking_mutex')}"

    def replay(self, *args):
        proc = subprocess.run([SYNCPROF, "--replay", self.dir, *args],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def chrome_trace(self):
        with open(self.chrome) as f:
            trace = json.load(f)
        self.check_chrome_structure(trace)
        return trace

    def check_chrome_structure(self, trace):
        """What Perfetto's and Chrome's JSON importers need of each event."""
        self.assertIsInstance(trace, dict)
        self.assertIsInstance(trace["traceEvents"], list)
        self.assertEqual(trace["displayTimeUnit"], "ns")
        tids, named = set(), set()
        for e in trace["traceEvents"]:
            self.assertIn(e["ph"], ("X", "M", "i"), e)
            self.assertIsInstance(e["name"], str)
            self.assertIsInstance(e["pid"], int)
            self.assertIsInstance(e["tid"], int)
            if e["ph"] == "M":
                self.assertIn(e["name"], ("process_name", "thread_name"))
                self.assertIsInstance(e["args"]["name"], str)
                self.assertTrue(e["args"]["name"])
                if e["name"] == "thread_name":
                    named.add(e["tid"])
                continue
            self.assertIsInstance(e["ts"], (int, float))
            self.assertGreaterEqual(e["ts"], 0)
            self.assertIsInstance(e["cat"], str)
            tids.add(e["tid"])
            if e["ph"] == "X":
                self.assertIsInstance(e["dur"], (int, float))
                self.assertGreaterEqual(e["dur"], 0)
                for key in ("type", "object", "object_symbol", "callsite",
                            "function", "file", "line", "owner_tid",
                            "wait_ns", "counted", "failed"):
                    self.assertIn(key, e["args"])
                self.assertEqual(e["cat"], e["args"]["type"])
            else:
                self.assertEqual(e["s"], "t")
                self.assertGreater(e["args"]["lost"], 0)
        self.assertEqual(tids - named, set(), "threads without a name")

    # --- the known waits -----------------------------------------------

    def check_known_waits(self, mode):
        report, truth = self.known_waits(mode)
        row = [r for r in report["rows"] if r["object"] == truth["object"]
               and r["type"] == "mutex"
               and r["callsite"]["line"] == marker_line("blocking_mutex")]
        self.assertEqual(len(row), 1, report["rows"])

        spans = [s for s in replay_spans(uftrace("replay", "-d", self.dir))
                 if s[1] == self.label()]
        self.assertEqual(len(spans), WAITS, spans)
        self.assertEqual({s[0] for s in spans}, {truth["waiter_tid"]})
        self.assertWithin(sum(s[2] for s in spans), truth["wait_ns"],
                          TOLERANCE, "uftrace replay")
        for s in spans:
            self.assertGreater(s[2], 0.9 * WAIT_US * 1000)

        trace = self.chrome_trace()
        waits = [e for e in trace["traceEvents"]
                 if e["ph"] == "X" and e["name"] == self.label()]
        self.assertEqual(len(waits), WAITS)
        self.assertEqual({e["tid"] for e in waits}, {truth["waiter_tid"]})
        self.assertEqual({e["pid"] for e in waits}, {truth["pid"]})
        total_us = sum(e["dur"] for e in waits)
        self.assertWithin(total_us * 1000, truth["wait_ns"], TOLERANCE, "chrome")
        # The same spans as uftrace's, to the digits it prints (three in
        # its unit: a microsecond under a second, a millisecond above).
        for e, s in zip(sorted(waits, key=lambda e: e["ts"]), spans):
            digit = 1_000_000 if s[2] >= 1_000_000_000 else 1000
            self.assertAlmostEqual(e["dur"] * 1000, s[2], delta=digit)
        args = waits[0]["args"]
        self.assertEqual(args["type"], "mutex")
        self.assertEqual(args["object"], truth["object"])
        self.assertEqual(args["object_symbol"], "big_lock")
        self.assertEqual(args["function"], "wait_mutex")
        self.assertEqual(args["line"], marker_line("blocking_mutex"))
        self.assertEqual(args["callsite"], f"blocking.c:{args['line']}")
        self.assertEqual(sum(e["args"]["wait_ns"] for e in waits),
                         row[0]["wait_ns"])
        if mode == "contended":
            self.assertEqual({e["args"]["owner_tid"] for e in waits},
                             {truth["holder_tid"]})
        names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
                 if e["name"] == "thread_name"}
        self.assertEqual(names[truth["pid"]], "blocking")
        return report

    def test_contended_waits_are_named_spans(self):
        self.check_known_waits("contended")

    def test_full_mode_waits_are_named_spans(self):
        self.check_known_waits("full")

    def test_uftrace_report_dump_info_and_tui_read_it(self):
        report, truth = self.known_waits("contended")
        label = self.label()
        rows = [l for l in uftrace("report", "-d", self.dir).splitlines()
                if l.rstrip().endswith(label)]
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0].split()[4], str(WAITS))   # Calls

        dump = json.loads(uftrace("dump", "--chrome", "-d", self.dir))
        ours = [e for e in dump["traceEvents"] if e.get("name") == label]
        self.assertEqual(sorted(e["ph"] for e in ours), ["B"] * WAITS + ["E"] * WAITS)

        raw = uftrace("dump", "-d", self.dir)
        self.assertEqual(raw.count(f"[entry] {label}("), WAITS)

        info = uftrace("info", "-d", self.dir)
        self.assertRegex(info, r"exe image\s*:\s*\S*/blocking\n")
        self.assertRegex(info, rf"task list\s*:.*{truth['waiter_tid']}")

        screen = self.tui_screen(label)
        self.assertIn(f"({WAITS}) {label}", screen)

    def tui_screen(self, expect):
        """uftrace tui in a private tmux server, until `expect` shows."""
        socket = f"syncprof-record-{os.getpid()}"

        def tmux(*args):
            return subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", *args],
                                  capture_output=True, text=True, timeout=HANG_S).stdout

        tmux("new-session", "-d", "-x", "150", "-y", "30",
             f"{UFTRACE} tui -d {self.dir}")
        self.addCleanup(tmux, "kill-server")
        deadline = time.monotonic() + HANG_S
        screen = ""
        while time.monotonic() < deadline:
            screen = tmux("capture-pane", "-p")
            if expect in screen:
                break
            time.sleep(0.2)
        tmux("send-keys", "q")
        return screen

    # --- losses ---------------------------------------------------------

    def test_tiny_ring_loses_counts_and_marks_a_burst(self):
        run = self.launch(["--mode", "full", "--record", self.dir,
                           "--chrome", self.chrome, "--ring-size", "4096",
                           "-N", "0", "-n"],
                          [BLOCKING, "uncontended", "--threads", "4",
                           "--iters", "5000", "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[0]
        # What the kernel saw: every call is in the stats map.
        seen = sum(r["count"] + r["failed"] for r in report["rows"])
        self.assertGreaterEqual(seen, 4 * 5000)
        self.assertIn("ring buffer was full", run.stderr)

        raw = uftrace("dump", "-d", self.dir)
        entries = len(re.findall(r"\[entry\] (?!\(waits lost\))", raw))
        lost = self.raw_lost(raw)
        self.assertGreater(sum(lost), 0, "a 4 KiB ring kept up with the burst")
        self.assertEqual(entries + sum(lost), seen)
        self.assertEqual(sum(lost), report["dropped"])

        # uftrace replay shows each loss where it happened.
        text = uftrace("replay", "-d", self.dir)
        shown = [int(n) for n in REPLAY_LOST.findall(text)]
        self.assertEqual(sum(shown), sum(lost))

        trace = self.chrome_trace()
        waits = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        marks = [e for e in trace["traceEvents"] if e["ph"] == "i"]
        self.assertEqual(len(waits), entries)
        self.assertEqual(sum(e["args"]["lost"] for e in marks), sum(lost))
        self.assertEqual(trace["otherData"]["lost"], sum(lost))

        # Each mark sits in its thread's gap: after its previous wait.
        last_end = {}
        for e in sorted(trace["traceEvents"], key=lambda e: (e.get("ts", 0),
                                                            e["ph"] != "X")):
            if e["ph"] == "X":
                last_end[e["tid"]] = e["ts"] + e["dur"]
            elif e["ph"] == "i":
                self.assertGreaterEqual(e["ts"], last_end.get(e["tid"], 0) - 0.001)

    @staticmethod
    def raw_lost(raw):
        """The counts of uftrace dump's LOST records (its address field)."""
        return [int(m, 16) for m in re.findall(r"\[lost \] .*?\(([0-9a-f]+)\)", raw)]

    # --- replay ----------------------------------------------------------

    @staticmethod
    def without_stacks(reports):
        """A recording keeps each wait's call site, not its frames: a
        replayed row's stacks are empty, its numbers the live ones.  Nor
        does it keep the waits in progress at the end (null when replayed)."""
        for report in reports:
            report.pop("waiting", None)
            for row in report["rows"]:
                row.pop("stacks", None)
        return reports

    def check_replay_equals_live(self, live_args, *report_args, target=None):
        target = target or [BLOCKING, "mutex", "--iters", "8", "--hold-us",
                            "20000", "--truth", self.path("truth.json")]
        run = self.launch(["--record", self.dir, *live_args, *report_args],
                          target)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(run.reports)
        replayed = [json.loads(l) for l in
                    self.replay("-f", "json", *report_args).splitlines()]
        self.assertEqual(self.without_stacks(replayed),
                         self.without_stacks(run.reports))
        return run.reports

    def test_replay_equals_live_contended(self):
        self.check_replay_equals_live(["--mode", "contended"])

    def test_replay_equals_live_full_per_thread_no_coalesce(self):
        self.check_replay_equals_live(["--mode", "full"], "-T", "-n", "-N", "0",
                                      "-s", "max")

    # The numbers of a row that a wait moved across a window's edge changes.
    ROW_NUMBERS = ("count", "wait_ns", "avg_ns", "max_ns", "failed", "failed_ns",
                   "hist", "p50_ns", "p99_ns", "objects")

    def assert_same_but_edge_waits(self, replayed, live):
        """Interval reports, replayed: a wait that ended within microseconds
        of a window's read can be counted in the next window live (it
        reached the map after the read) and in its own when replayed (it
        carries the window it began to be counted in; replay.c).  Every
        report's other fields are equal; per row, the totals over all
        reports are equal, and at each window's edge the running counts
        differ by at most one wait."""
        self.assertEqual(len(replayed), len(live))
        totals = {}
        for i, (rep, liv) in enumerate(zip(replayed, live)):
            self.assertEqual({k: v for k, v in rep.items()
                              if k not in ("rows", "rows_total")},
                             {k: v for k, v in liv.items()
                              if k not in ("rows", "rows_total")})
            for side, report in (("replayed", rep), ("live", liv)):
                for row in report["rows"]:
                    ident = json.dumps({k: v for k, v in row.items()
                                        if k not in self.ROW_NUMBERS},
                                       sort_keys=True)
                    t = totals.setdefault(ident, {
                        s: {"count": [0] * len(live), "wait_ns": 0,
                            "failed": 0, "hist": {}}
                        for s in ("replayed", "live")})[side]
                    t["count"][i] += row["count"]
                    t["wait_ns"] += row["wait_ns"]
                    t["failed"] += row["failed"]
                    for bucket, n in row["hist"]:
                        t["hist"][bucket] = t["hist"].get(bucket, 0) + n
        for ident, t in totals.items():
            rep, liv = t["replayed"], t["live"]
            for field in ("wait_ns", "failed", "hist"):
                self.assertEqual(rep[field], liv[field], ident)
            self.assertEqual(sum(rep["count"]), sum(liv["count"]), ident)
            run_rep = run_liv = 0
            for a, b in zip(rep["count"], liv["count"]):
                run_rep, run_liv = run_rep + a, run_liv + b
                self.assertLessEqual(abs(run_rep - run_liv), 1, ident)

    def test_replay_equals_live_intervals(self):
        run = self.launch(["--record", self.dir, "--mode", "contended",
                           "--interval", "0.25", "-N", "0"],
                          [BLOCKING, "condvar", "--iters", "24", "--hold-us",
                           "40000", "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        replayed = [json.loads(l) for l in
                    self.replay("-f", "json", "-N", "0").splitlines()]
        self.assert_same_but_edge_waits(self.without_stacks(replayed),
                                        self.without_stacks(run.reports))
        # An interval's report and the final one at least: a loaded machine
        # can hold syncprof's loop past several 0.25 s windows of this
        # ~0.5 s run (it stalled 23 s once beside busy loops and builds).
        self.assertGreaterEqual(len(run.reports), 2)

    def test_replay_equals_live_table(self):
        out = self.path("table.txt")
        proc = subprocess.run(
            [SYNCPROF, "--mode", "contended", "--record", self.dir, "-o", out,
             "--", BLOCKING, "mutex", "--iters", "4", "--hold-us", "20000"],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            live = f.read()
        self.assertIn("big_lock", live)
        self.assertEqual(self.replay(), live)
        # --chrome converts a recording, too.
        self.replay("--chrome", self.chrome, "-o", self.path("again.txt"))
        self.chrome_trace()

    def test_record_attached_process(self):
        target = self.start_waiting_target(
            [BLOCKING, "sem", "--iters", "6", "--hold-us", "20000",
             "--truth", self.path("truth.json"), "--wait-signal"])
        run = self.profile_to_the_end(target, "--mode", "contended",
                                      "--record", self.dir)
        truth = self.truth()
        spans = [s for s in replay_spans(uftrace("replay", "-d", self.dir))
                 if s[1].startswith("sem ")
                 and s[1].endswith(f"@ blocking.c:{marker_line('blocking_sem')}")]
        self.assertEqual(len(spans), 6)
        replayed = [json.loads(l) for l in self.replay("-f", "json").splitlines()]
        self.assertEqual(self.without_stacks(replayed),
                         self.without_stacks(run.reports))
        self.assertEqual(truth["count"], 6)

    # --- the directory and bad input -------------------------------------

    def check_refused(self, mine):
        """syncprof --record DIR into a DIR that holds the file mine: it is
        refused, and every file there stays."""
        with open(os.path.join(self.dir, mine), "w") as f:
            f.write("mine\n")
        before = sorted(os.listdir(self.dir))
        proc = subprocess.run([SYNCPROF, "--record", self.dir, "--", BLOCKING,
                               "mutex", "--iters", "1", "--hold-us", "1000"],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"{self.dir} is not empty", proc.stderr)
        self.assertEqual(sorted(os.listdir(self.dir)), before)

    def test_an_older_recording_is_kept_not_replaced(self):
        """A directory that holds anything is refused: syncprof deletes
        no file it did not make (a user's *.sym or 1.dat included)."""
        self.known_waits("contended")
        self.check_refused("1.sym")

    def test_refuses_a_directory_that_is_not_empty(self):
        os.mkdir(self.dir)
        self.check_refused("notes.txt")

    def test_sigkill_mid_record_then_replay_and_uftrace(self):
        """SIGKILL while recording: what is on the disk reads, with
        --replay (which says it was cut short) and with uftrace, up to the
        last checkpoint at least; the target runs on unharmed."""
        proc = subprocess.Popen(
            [SYNCPROF, "-v", "--mode", "contended", "--record", self.dir, "--",
             BLOCKING, "mutex", "--iters", "40", "--hold-us", "100000",
             "--truth", self.path("truth.json")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(proc)
        self.read_stderr_until(proc, "profiling PID", "syncprof did not attach")
        meta = os.path.join(self.dir, "syncprof.meta")
        deadline = time.monotonic() + 60
        events = 0
        while events < 5:
            self.assertLess(time.monotonic(), deadline, "no checkpoint with 5 waits")
            time.sleep(0.1)
            with open(meta) as f:
                fields = dict(l.rstrip("\n").split("\t", 1) for l in f if "\t" in l)
            self.assertEqual(fields.get("partial"), "1")
            events = int(fields["events"])
        proc.kill()
        proc.wait()
        # The target, on its own now, finishes its work.
        pid = int(fields["pid"])
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(self.truth()["count"], 40)
        replay = subprocess.run([SYNCPROF, "--replay", self.dir, "-f", "json"],
                                capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(replay.returncode, 0, replay.stderr)
        self.assertIn("was cut short", replay.stderr)
        reports = [json.loads(l) for l in replay.stdout.splitlines()]
        counted = sum(r["count"] for rep in reports for r in rep["rows"]
                      if r["object_symbol"] == "big_lock")
        self.assertGreaterEqual(counted, events)
        self.assertLessEqual(counted, 40)
        spans = [s for s in replay_spans(uftrace("replay", "-d", self.dir))
                 if s[1] == self.label()]
        self.assertGreaterEqual(len(spans), events)
        self.assertLessEqual(len(spans), counted)

    def test_a_full_disk_ends_the_recording_with_one_error(self):
        """--record onto a file system that fills up: one error, naming
        the recording and the full disk, and nothing after it; the
        profile goes on to its report, the run ends with status 1, and
        --replay (and uftrace) read what was written, --replay saying it
        was cut short by a full disk."""
        small = self.path("small")
        os.mkdir(small)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs",
                        small], check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", small])
        # Room for the recording's first files, not for its waits.
        with open(os.path.join(small, "filler"), "wb") as f:
            f.write(b"\0" * ((1 << 20) - (96 << 10)))
        rec = os.path.join(small, "rec")
        out = self.path("report.json")
        proc = subprocess.run(
            [SYNCPROF, "--mode", "full", "--format", "json", "-o", out,
             "--record", rec, "--", WORKLOAD, "mutex", "--iters", "20000",
             "--truth", self.path("truth.json")],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        errors = [l for l in proc.stderr.splitlines() if "error:" in l]
        self.assertEqual(len(errors), 1, proc.stderr)
        self.assertRegex(errors[0], rf"the recording in {re.escape(rec)} "
                         r"stopped: its file system is full \(No space")
        # The profile itself went on: its report counts every lock call.
        with open(out) as f:
            live = [json.loads(l) for l in f if l.startswith("{")]
        truth = self.truth()
        big = self.rows_for(live[-1], truth["object"])
        self.assertEqual(self.total(big, "count"), truth["count"])
        replay = subprocess.run([SYNCPROF, "--replay", rec, "-f", "json"],
                                capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(replay.returncode, 0, replay.stderr)
        self.assertIn("was cut short by a full disk", replay.stderr)
        self.assertNotIn("killed?", replay.stderr)
        reports = [json.loads(l) for l in replay.stdout.splitlines()]
        counted = sum(r["count"] for rep in reports for r in rep["rows"]
                      if r["object_symbol"] == "big_lock")
        self.assertGreater(counted, 0)
        self.assertLess(counted, truth["count"])
        uftrace("replay", "-d", rec)

    def test_bad_input(self):
        cases = [
            (["--record", self.dir, "--ring-size", "5000", "-p", "1"], 2,
             "power of two"),
            (["--ring-size", "64K", "-p", "1"], 2, "needs --record"),
            (["--replay", self.dir, "-p", "1"], 2, "does not apply"),
            (["--replay", self.path("nothing")], 1, "not a syncprof recording"),
        ]
        for args, code, message in cases:
            with self.subTest(args=args):
                proc = subprocess.run([SYNCPROF, *args], capture_output=True,
                                      text=True, timeout=HANG_S)
                self.assertEqual(proc.returncode, code, proc.stderr)
                self.assertIn(message, proc.stderr)


if __name__ == "__main__":
    unittest.main()
