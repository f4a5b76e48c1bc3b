"""The live screen (--interval with a terminal on stdout), driven through
a real terminal: syncprof runs in a tmux pane, keys go in with send-keys
and the screen comes back with capture-pane.  Every wait polls the screen
with a deadline (the VMs are slow and noisy); only "the screen did not
change" needs a fixed wait."""
import itertools
import os
import re
import shlex
import signal
import subprocess
import time

from columnmodel import help_lines
from harness import (BUILD, HANG_S, ROOT, SYNCPROF, WORKLOAD,
                     SyncprofTestCase, source_marker)

CONVOY = os.path.join(BUILD, "tests", "targets", "convoy")
CONVOY_SOURCE = os.path.join(ROOT, "tests", "targets", "convoy.c")
DEMO = os.path.join(BUILD, "tests", "targets", "demo")
LOCKORDER = os.path.join(BUILD, "tests", "targets", "lockorder")
# A deadline for what the screen must come to show; only a hang reaches
# it (a loaded machine stalled syncprof's loop for 23 s once).
TIMEOUT = HANG_S
_sockets = itertools.count()

# Average is '-' for a row without a count (sorted as a mean of 0).  A
# narrow screen writes numbers with units ("1.23ms", "12.3M").
TIME = r"\d+\.\d+|\d+(?:\.\d+)?(?:ns|us|ms|s|h)"
ROW = re.compile(r"^(mutex|rec_mutex|condvar)\s+(\[\s*\d+\]|\S+)\s+(\S+)\s+"
                 rf"({TIME})\s+(\d+(?:\.\d+)?[MGT]?)\s+({TIME}|-)((?:\s+\S+)*)\s*$")
SETTINGS = re.compile(r"^sort (\w+)  show (?:all|locks|events)  coalesce (on|off)  "
                      r"per-thread (on|off)  "
                      r"(deltas|totals) ([\d.]+) s(?: since (\w+))?  "
                      r"rows (\d+)/(\d+)(  PAUSED)?")
SHOW = re.compile(r"^sort \w+  show (all|locks|events)  ")
# The line before the first event row.
EVENTS = "Waiting for events, not for a lock"
LOCK_TYPES = ("mutex", "rec_mutex")
STATUS = re.compile(r"^elapsed ([\d.]+) s  mode (\w+)  interval ([\d.]+) s  "
                    r"threads (\d+)  events/s (\d+)  dropped (\d+)  at \d\d:\d\d:\d\d\s*$")
# The sort column's title is marked with a '*'; compact on a narrow screen.
TITLE = re.compile(r"^Type\s+Object\s+Call site\s+\*?Wait(?: Time \(s\))?\s+"
                   r"\*?Count\s+\*?(?:Average \(us\)|Avg)")


def number(text, unit):
    """A cell in the table's unit (unit: "s" or "us"), compact or not."""
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "h": 3600.0,
             "M": 1e6, "G": 1e9, "T": 1e12}
    m = re.match(r"^([\d.]+)(ns|us|ms|s|h|M|G|T)?$", text)
    if not m.group(2):
        return float(m.group(1))
    value = float(m.group(1)) * scale[m.group(2)]
    return value if m.group(2) in "MGT" else value / scale[unit]
SUMMARY = re.compile(r"^syncprof: pid (\d+) \((.*)\)  mode full  elapsed ([\d.]+) s")


class Screen:
    """One capture of the pane, parsed."""

    def __init__(self, text):
        self.text = text
        self.lines = text.splitlines()
        self.settings = self.status = self.title = None
        for line in self.lines:
            self.settings = self.settings or SETTINGS.match(line)
            self.status = self.status or STATUS.match(line)
            if TITLE.match(line) and self.title is None:
                self.title = line
        self.rows = []
        for line in self.lines:
            # The final report's sections after the table are not rows.
            if line.startswith(("Who made them wait:", "Waiting now:")):
                break
            m = ROW.match(line)
            if not m:
                continue
            extra = m.group(7).split()
            row = {"type": m.group(1), "object": m.group(2),
                   "callsite": m.group(3), "wait": number(m.group(4), "s"),
                   "count": int(number(m.group(5), "")),
                   "avg": 0.0 if m.group(6) == "-" else number(m.group(6), "us"),
                   "line": line}
            # The optional columns, in the title's order; Thread is
            # "TID name" while the thread lives.  A compact Max is "Max".
            names = [n for n in ("Max (us)", "Failed", "Futile", "Thread",
                                 "Owner")
                     if self.title and re.search(
                         r"\bMax\b" if n == "Max (us)" else re.escape(n),
                         self.title)]
            names.sort(key=lambda n: re.search(r"\bMax\b" if n == "Max (us)"
                                               else re.escape(n),
                                               self.title).start())
            for name in names:
                if not extra:
                    break
                row[name] = extra.pop(0)
                if name == "Max (us)":
                    row[name] = str(number(row[name], "us"))
                if name == "Thread" and len(extra) > len(names) - names.index(name) - 1:
                    row["Thread name"] = extra.pop(0)
            self.rows.append(row)

    @property
    def live(self):
        return self.settings is not None and self.lines[0].startswith("syncprof  PID")

    def show(self):
        """The classes of rows shown: all, locks or events."""
        m = next((SHOW.match(l) for l in self.lines if SHOW.match(l)), None)
        return m.group(1) if m else None

    def setting(self, name):
        index = {"sort": 1, "coalesce": 2, "per-thread": 3, "view": 4,
                 "since": 6, "paused": 9}[name]
        return self.settings.group(index) if self.settings else None

    def interval(self):
        return float(self.status.group(3)) if self.status else None

    def rule(self):
        """The dashes under the titles."""
        for i, line in enumerate(self.lines):
            if TITLE.match(line) and i + 1 < len(self.lines):
                return self.lines[i + 1]
        return None

    def keyed(self):
        """Row identities in screen order."""
        return [(r["type"], r["object"], r["callsite"], r.get("Thread"))
                for r in self.rows]


class Tmux:
    """A private tmux server with one pane running COMMAND."""

    def __init__(self, command, width=160, height=40):
        self.socket = f"syncprof-live-{os.getpid()}-{next(_sockets)}"
        self.run("new-session", "-d", "-x", str(width), "-y", str(height),
                 command)

    def run(self, *args, check=True):
        proc = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True, timeout=HANG_S)
        if check and proc.returncode:
            raise AssertionError(f"tmux {args}: {proc.stderr}")
        return proc.stdout

    def capture(self):
        return Screen(self.run("capture-pane", "-p"))

    def keys(self, *keys):
        self.run("send-keys", *keys)

    def literal(self, text):
        self.run("send-keys", "-l", "--", text)

    def alternate_on(self):
        return self.run("display-message", "-p", "#{alternate_on}").strip() == "1"

    def resize(self, width, height):
        self.run("resize-window", "-x", str(width), "-y", str(height))

    def pane_pid(self):
        return int(self.run("display-message", "-p", "#{pane_pid}").strip())

    def kill(self):
        self.run("kill-server", check=False)


class Live(SyncprofTestCase):

    # --- driving ---------------------------------------------------------

    def start_live(self, target_pid, *args, width=160, height=40, stdin=None):
        """syncprof --interval 0.5 --pid PID ARGS in a fresh pane; returns
        once the screen is up.  The pane's shell records the terminal's
        modes before and after, and syncprof's exit status."""
        self.stty_before = self.path("stty.before")
        self.stty_after = self.path("stty.after")
        cmd = " ".join(shlex.quote(a) for a in
                       [SYNCPROF, "--mode", "full", "--interval", "0.5", "--pid", str(target_pid), *args])
        if stdin:
            cmd += f" < {shlex.quote(stdin)}"
        # The shell traps SIGINT (a handler, reset to default in syncprof)
        # so that Ctrl-C in the pane reaches syncprof and the shell lives on.
        script = (f"trap : INT; stty -g > {self.stty_before}; {cmd}; "
                  f"echo syncprof-exit=$?; stty -g > {self.stty_after}; sleep 3600")
        tmux = Tmux(script, width, height)
        self.addCleanup(tmux.kill)
        self.wait_for(tmux, lambda s: s.live, "the live screen")
        return tmux

    def wait_for(self, tmux, predicate, what, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            screen = tmux.capture()
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                self.fail(f"{what}: not seen within {timeout} s; the screen:\n"
                          f"{screen.text}")
            time.sleep(0.1)

    def stable(self, tmux):
        """A capture that equals the next one: not taken mid-redraw."""
        last = tmux.capture()
        for _ in range(50):
            time.sleep(0.05)
            now = tmux.capture()
            if now.text == last.text:
                return now
            last = now
        return last

    def wait_exit(self, tmux):
        screen = self.wait_for(tmux, lambda s: "syncprof-exit=" in s.text,
                               "syncprof's exit")
        code = int(re.search(r"syncprof-exit=(\d+)", screen.text).group(1))
        return screen, code

    def start_mutex_target(self, *extra):
        """Two threads on big_lock for a long time (killed in cleanup)."""
        return self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "100000", "--hold-us", "2000",
            "--wait-signal", *extra))

    @staticmethod
    def big_lock_rows(screen):
        """The workers' rows: big_lock at timed_lock's call site."""
        return [r for r in screen.rows if r["object"] == "big_lock"
                and r["callsite"].startswith("workload.c:")]

    @staticmethod
    def big_lock_count(screen):
        """big_lock's acquisitions, at whatever call site."""
        return sum(r["count"] for r in screen.rows if r["object"] == "big_lock")

    @staticmethod
    def whole_line(path):
        """Whether path holds a line and its end."""
        try:
            with open(path) as f:
                return f.read().endswith("\n")
        except FileNotFoundError:
            return False

    def assertCleanExit(self, tmux, screen, code):
        """Exit 0, the main screen back, the modes as before, the final
        report in the normal table format."""
        self.assertEqual(code, 0, screen.text)
        self.assertFalse(tmux.alternate_on(), "still on the alternate screen")
        # The shell makes the file before stty writes its line into it.
        self.wait_for(tmux, lambda s: self.whole_line(self.stty_after), "stty")
        with open(self.stty_before) as a, open(self.stty_after) as b:
            self.assertEqual(a.read(), b.read(), "terminal modes not restored")
        self.assertFalse(screen.live, screen.text)
        self.assertTrue(any(SUMMARY.match(line) for line in screen.lines), screen.text)
        # A final report without waits is its summary line alone.
        if not any(l.endswith("  no waits") for l in screen.lines):
            self.assertIsNotNone(screen.title, screen.text)
        self.assertNotIn("\x1b", screen.text)

    # --- the screen ------------------------------------------------------

    def test_header_marks_a_lock_order_cycle(self):
        """--lock-order: the header marks a cycle as soon as one is found."""
        target = self.start_waiting_target(
            [LOCKORDER, "abba", "--wait-signal", "--linger-ms", "60000"])
        tmux = self.start_live(target.pid, "--lock-order")
        self.assertNotIn("LOCK ORDER", tmux.capture().lines[0])
        self.go(target)
        screen = self.wait_for(tmux, lambda s: "LOCK ORDER: 1 cycle" in s.lines[0],
                               "the lock-order mark")
        self.assertTrue(screen.lines[0].startswith("syncprof  PID"))

    def test_header_and_rows_appear(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid)
        self.assertTrue(tmux.alternate_on())
        self.go(target)
        # The workers, and the main thread (glibc's TLS lock in
        # pthread_create).
        screen = self.wait_for(tmux, lambda s: self.big_lock_rows(s)
                               and s.status and int(s.status.group(4)) >= 2,
                               "a big_lock row and the threads")
        head = screen.lines[0]
        self.assertIn(f"PID {target.pid}", head)
        self.assertIn("workload mutex --truth", head)
        self.assertIn("--threads 2", head)
        self.assertEqual(screen.status.group(2), "full")
        self.assertEqual(screen.interval(), 0.5)
        self.assertEqual(screen.status.group(6), "0")
        self.assertEqual(screen.setting("sort"), "total")
        self.assertEqual(screen.setting("coalesce"), "on")
        self.assertEqual(screen.setting("per-thread"), "off")
        self.assertEqual(screen.setting("view"), "deltas")
        # Events per second: ~400 locks/s; anything sane, never 0 here.
        screen = self.wait_for(tmux, lambda s: s.status and int(s.status.group(5)) > 0,
                               "events per second")
        # 160 columns hold the optional columns.
        self.assertIn("Max (us)", screen.title)
        self.assertIn("Failed", screen.title)
        row = self.big_lock_rows(screen)[0]
        self.assertEqual(row["type"], "mutex")
        self.assertRegex(row["callsite"], r"^workload\.c:\d+$")
        self.assertEqual(row["Failed"], "0")
        self.assertGreater(row["count"], 0)
        # The key line at the bottom.
        self.assertIn("q quit", screen.lines[-1])

    def test_H_shows_the_selected_rows_histogram(self):
        demo = subprocess.Popen([DEMO, "4"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self.children.append(demo)
        tmux = self.start_live(demo.pid, "--cumulative")
        self.wait_for(tmux, lambda s: len(s.rows) >= 3, "demo rows")
        # The event rows alone: the condvars' waits, whose histograms
        # fit in the pane whole.
        tmux.literal("l")
        tmux.literal("l")
        self.wait_for(tmux, lambda s: s.show() == "events" and len(s.rows) >= 2,
                      "the condvar rows")
        tmux.keys("p")
        self.wait_for(tmux, lambda s: s.setting("paused"), "PAUSED")

        def pane(screen):
            titles = [i for i, l in enumerate(screen.lines)
                      if l.startswith("Waits (ns) of ")]
            return screen.lines[titles[0]:] if titles else None

        tmux.keys("H")
        screen = self.wait_for(tmux, pane, "the histogram pane")
        screen = self.stable(tmux)
        lines = pane(screen)
        first = screen.rows[0]
        self.assertTrue(lines[0].startswith(
            f"Waits (ns) of {first['type']} {first['object']} {first['callsite']}: "),
            lines[0])
        buckets = [l for l in lines[1:] if re.match(r"^  \[\S+(, \S+\))?\s+\d+ \|[@ ]{52}\|$", l)]
        self.assertTrue(buckets, screen.text)
        # The counts of the buckets add up to the title's.
        self.assertEqual(sum(int(re.search(r"(\d+) \|", b).group(1)) for b in buckets),
                         int(re.search(r": (\d+)  \(Up/Down row  H close\)", lines[0]).group(1)))
        # Down selects the next row, whose histogram the pane shows.
        tmux.keys("Down")
        second = screen.rows[1]
        self.wait_for(tmux, lambda s: pane(s) and pane(s)[0].startswith(
            f"Waits (ns) of {second['type']} {second['object']} {second['callsite']}: "),
            "the second row's histogram")
        tmux.keys("H")
        self.wait_for(tmux, lambda s: not pane(s), "the pane closed")

    def test_dropped_events_are_said_loudly(self):
        """A table too small for the rows: the line under the header says
        how many events were dropped and what to do; so does the final
        table."""
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid, "--map-size", "1")
        self.go(target)
        screen = self.wait_for(
            tmux, lambda s: s.status and int(s.status.group(6)) > 0
            and any(line.startswith("DROPPED") for line in s.lines),
            "the drop line")
        line = next(line for line in screen.lines if line.startswith("DROPPED"))
        self.assertIn("--map-size 1: raise it", line)
        self.assertEqual(screen.lines.index(line), 3)
        tmux.keys("q")
        screen, code = self.wait_exit(tmux)
        self.assertEqual(code, 0)
        self.assertTrue(any(line.startswith("DROPPED") and "raise it" in line
                            for line in screen.lines), screen.text)

    def test_s_cycles_the_sort_and_reorders_the_rows(self):
        demo = subprocess.Popen([DEMO, "4"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self.children.append(demo)
        tmux = self.start_live(demo.pid, "--cumulative")
        self.wait_for(tmux, lambda s: len(s.rows) >= 6 and
                      float(s.settings.group(5)) >= 2, "demo rows over 2 s")
        # Paused, the data stay: only the order may change.
        tmux.keys("p")
        paused = self.wait_for(tmux, lambda s: s.setting("paused"), "PAUSED")
        columns = {"total": "wait", "mean": "avg", "count": "count",
                   "max": "Max (us)"}
        orders = {}
        for sort in ("total", "mean", "max", "count", "total"):
            if sort != "total" or orders:
                tmux.keys("s")
            screen = self.wait_for(tmux, lambda s: s.setting("sort") == sort,
                                   f"sort {sort}")
            screen = self.stable(tmux)
            self.assertEqual(sorted(screen.keyed()), sorted(paused.keyed()))
            # The lock rows first, then the condvar waits; each sorted.
            locks = [r["type"] in LOCK_TYPES for r in screen.rows]
            self.assertEqual(locks, sorted(locks, reverse=True), screen.text)
            for group in (True, False):
                values = [float(r[columns[sort]]) for r in screen.rows
                          if (r["type"] in LOCK_TYPES) == group]
                self.assertEqual(values, sorted(values, reverse=True),
                                 f"not sorted by {sort}:\n{screen.text}")
            orders.setdefault(sort, screen.keyed())
            self.assertEqual(orders[sort], screen.keyed(),
                             "the same sort gave another order")
        # Workers wait on the queue's condvar most, but a lock comes
        # first; the condvar is the first event by total, never by count
        # (each job locks the queue's mutex twice).
        self.assertIn(orders["total"][0][0], LOCK_TYPES)
        self.assertEqual(next(k for k in orders["total"]
                              if k[0] not in LOCK_TYPES)[1], "queue.not_empty")
        self.assertNotEqual(orders["total"], orders["count"])

    def test_c_toggles_coalescing(self):
        target = self.start_waiting_target(self.workload_cmd(
            "heap", "--objects", "4", "--threads", "2", "--iters", "100000",
            "--hold-us", "2000", "--wait-signal"))
        tmux = self.start_live(target.pid)
        self.go(target)
        # The first refresh may come before every object has been waited
        # on (a busy machine runs the workers late): the row counts them
        # as they come, so wait for the four, in one coalesced row.
        self.wait_for(tmux, lambda s: [r["object"] for r in self.heap_rows(s)]
                      == ["[           4]"], "one row of the four objects")
        tmux.keys("c")
        screen = self.wait_for(tmux, lambda s: s.setting("coalesce") == "off"
                               and len(self.heap_rows(s)) == 4,
                               "four rows, one per object")
        objects = {r["object"] for r in self.heap_rows(screen)}
        self.assertEqual(len(objects), 4, screen.text)
        for obj in objects:
            self.assertRegex(obj, r"^0x[0-9a-f]+$")
        tmux.keys("c")
        self.wait_for(tmux, lambda s: s.setting("coalesce") == "on" and
                      [r["object"] for r in self.heap_rows(s)] == ["[           4]"],
                      "coalesced again")

    @staticmethod
    def heap_rows(screen):
        """The workers' rows: timed_lock's call site in workload.c."""
        return [r for r in screen.rows if r["callsite"].startswith("workload.c:")]

    def test_t_splits_rows_by_thread_and_d_switches_to_totals(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid)
        self.go(target)
        self.wait_for(tmux, self.big_lock_rows, "a big_lock row")
        tmux.keys("t")
        screen = self.wait_for(tmux, lambda s: s.setting("per-thread") == "on"
                               and len(self.big_lock_rows(s)) == 2,
                               "a big_lock row per thread")
        self.assertIn("Thread", screen.title)
        tids = {int(r["Thread"]) for r in self.big_lock_rows(screen)}
        self.assertEqual({r.get("Thread name") for r in self.big_lock_rows(screen)},
                         {"workload"})
        self.assertEqual(len(tids), 2)
        self.assertTrue(tids <= {int(t) for t in os.listdir(f"/proc/{target.pid}/task")})
        tmux.keys("d")
        screen = self.wait_for(tmux, lambda s: s.setting("view") == "totals",
                               "totals")
        self.assertEqual(screen.setting("since"), "attach")
        first = sum(r["count"] for r in self.big_lock_rows(screen))
        # Totals grow from refresh to refresh.
        self.wait_for(tmux, lambda s: sum(r["count"] for r in self.big_lock_rows(s))
                      > first, "growing totals")
        tmux.keys("t", "d")
        self.wait_for(tmux, lambda s: s.setting("view") == "deltas" and
                      s.setting("per-thread") == "off" and
                      len(self.big_lock_rows(s)) == 1 and "Thread" not in s.title,
                      "back to one row of deltas")

    def test_r_resets_the_counts(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid, "--cumulative")
        self.go(target)
        screen = self.wait_for(tmux, lambda s: self.big_lock_rows(s) and
                               self.big_lock_rows(s)[0]["count"] >= 800,
                               "800 acquisitions in the totals")
        before = self.big_lock_rows(screen)[0]["count"]
        tmux.keys("r")
        screen = self.wait_for(tmux, lambda s: s.setting("since") == "reset",
                               "totals since reset")
        # The first view after the reset is the reset itself: empty, or
        # what ended in the moment since.
        after = self.big_lock_rows(screen)
        self.assertTrue(not after or after[0]["count"] < before / 2, screen.text)
        screen = self.wait_for(tmux, self.big_lock_rows, "counting again")
        self.assertLess(self.big_lock_rows(screen)[0]["count"], before / 2,
                        screen.text)
        self.assertLess(float(screen.settings.group(5)),
                        float(screen.status.group(1)))

    def test_p_pauses_and_plus_minus_change_the_interval(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid)
        self.go(target)
        self.wait_for(tmux, self.big_lock_rows, "a big_lock row")
        tmux.keys("p")
        paused = self.wait_for(tmux, lambda s: s.setting("paused"), "PAUSED")
        paused = self.stable(tmux)
        time.sleep(2.0)	# four intervals: nothing may move
        self.assertEqual(tmux.capture().text, paused.text)
        tmux.keys("p")
        resumed = self.wait_for(tmux, lambda s: not s.setting("paused") and
                                s.status.group(1) != paused.status.group(1),
                                "a refresh after the resume")
        self.assertGreaterEqual(float(resumed.status.group(1)),
                                float(paused.status.group(1)) + 2.0)
        for key, interval in (("+", 1.0), ("+", 2.0), ("-", 1.0), ("-", 0.5),
                              ("-", 0.2), ("-", 0.1), ("-", 0.1), ("+", 0.2)):
            tmux.literal(key)
            self.wait_for(tmux, lambda s: s.interval() == interval,
                          f"interval {interval} after {key}")
        # At 0.2 s the screen moves on quickly.
        first = self.stable(tmux).status.group(1)
        self.wait_for(tmux, lambda s: s.status.group(1) != first, "refreshes",
                      timeout=HANG_S)

    def test_resize_relayouts(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid, width=160, height=40)
        self.go(target)
        screen = self.wait_for(tmux, self.big_lock_rows, "a big_lock row")
        self.assertIn("Max (us)", screen.title)
        self.assertIn("Failed", screen.title)
        self.assertEqual(len(screen.rule()), len(screen.title))
        self.assertEqual(len(screen.lines), 40)
        # No wait failed: Failed gives way first, then the numbers
        # narrow (units, short titles) before Max goes.
        for width, height, has_max, has_failed in ((100, 30, True, False),
                                                   (84, 20, True, False),
                                                   (60, 20, False, False),
                                                   (160, 40, True, True)):
            tmux.resize(width, height)
            screen = self.wait_for(
                tmux, lambda s: s.title and len(s.lines) == height and
                bool(re.search(r"\bMax\b", s.title)) == has_max and
                ("Failed" in s.title) == has_failed and self.big_lock_rows(s),
                f"the layout for {width}x{height}")
            # tmux's capture drops a line's trailing blanks, so a title
            # line that ends in blanks reads shorter than the rule.
            self.assertLessEqual(len(screen.title), len(screen.rule()))
            self.assertLessEqual(len(screen.rule()), width)
            if width <= 84 or width == 160:
                self.assertEqual("Wait Time (s)" in screen.title, width == 160,
                                 screen.title)
            self.assertIn("q quit", screen.lines[height - 1])
            for line in screen.lines:
                self.assertLessEqual(len(line), width)

    def test_scrolls_shows_owner_and_cuts_in_the_documented_order(self):
        """One column model with the table: per-thread rows have Thread
        (with the thread's name) and Owner; the table scrolls past the rows
        that fit; at 80x24 the numbers narrow and Max goes, while Thread,
        whole call sites and Failed (when a row shown failed) stay."""
        demo = subprocess.Popen([DEMO, "4"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self.children.append(demo)
        tmux = self.start_live(demo.pid, "--mode", "contended", "-T",
                               width=140, height=14)
        screen = self.wait_for(
            tmux, lambda s: s.title and "Owner" in s.title and
            any(r.get("Owner", "-") != "-" for r in s.rows) and
            int(s.settings.group(8)) > len(s.rows) + 2,
            "per-thread rows with owners, more than fit")
        self.assertIn("*Wait Time (s)", screen.title)
        self.assertEqual(screen.title.index("Owner") > screen.title.index("Thread"),
                         True)
        for row in screen.rows:
            self.assertEqual(row.get("Thread name"), "demo", row["line"])
        self.assertEqual(screen.show(), "all")
        # Paused: the rows stay as they are while the keys move.  A page
        # down lands on row fit + 1 only if a whole page lies below it
        # (the last page is shown full), and each window's rows differ:
        # paused again until the frozen table is two pages and more.
        for _ in range(20):
            tmux.keys("p")
            screen = self.wait_for(tmux, lambda s: s.setting("paused"),
                                   "PAUSED")
            # The rows shown, as the screen counts them: an event row
            # (show all) is one too, and ROW does not parse it.
            fit = int(screen.settings.group(7))
            if int(screen.settings.group(8)) >= 2 * fit + 2:
                break
            tmux.keys("p")
            self.wait_for(tmux, lambda s: not s.setting("paused"), "resumed")
        else:
            self.fail(f"the table never held two pages: {screen.text}")
        self.assertNotIn("from row", screen.lines[2])
        # End: the last rows, the table scrolled; Home: back to the top.
        tmux.keys("End")
        screen = self.wait_for(tmux, lambda s: " from row " in s.lines[2],
                               "scrolled to the end")
        # The last page, full: its first row, its rows, the total (one
        # refresh's screen: the rows of each window differ).
        first = int(re.search(r"from row (\d+)", screen.lines[2]).group(1))
        self.assertEqual(first + int(screen.settings.group(7)) - 1,
                         int(screen.settings.group(8)), screen.text)
        tmux.keys("Home")
        self.wait_for(tmux, lambda s: " from row " not in s.lines[2], "the top")
        tmux.keys("NPage")
        screen = self.wait_for(tmux, lambda s: " from row " in s.lines[2],
                               "a page down")
        self.assertEqual(re.search(r"from row (\d+)", screen.lines[2]).group(1),
                         str(fit + 1))
        tmux.keys("p")
        self.wait_for(tmux, lambda s: not s.setting("paused"), "resumed")
        # Sorted by count: the mark moves.
        tmux.keys("s")
        tmux.keys("s")
        tmux.keys("s")
        self.wait_for(tmux, lambda s: s.setting("sort") == "count" and
                      "*Count" in s.title, "the mark on Count")
        # 80x24, as a terminal opens: the columns that tell the rows
        # apart stay (Thread, call sites whole, Failed when a row shown
        # failed: the housekeeper's timed waits), the numbers narrow.
        tmux.keys("s")
        tmux.resize(80, 24)
        # Redrawn for the new width (compact titles), not the old lines
        # tmux cut to it.
        screen = self.wait_for(
            tmux, lambda s: len(s.lines) == 24 and s.setting("sort") == "total"
            and s.title and len(s.title) <= 80 and len(s.rows) >= 4
            and "Wait Time (s)" not in s.title,
            "the layout for 80x24")
        self.assertIn("Thread", screen.title)
        self.assertNotIn("Wait Time (s)", screen.title)
        self.assertIn("Wait", screen.title)
        for row in screen.rows:
            self.assertRegex(row["callsite"], r"^demo\.c:\d+$", row["line"])
            self.assertRegex(row["Thread"], r"^\d+$", row["line"])
        for line in screen.lines:
            self.assertLessEqual(len(line), 80)
        tmux.literal("l")
        tmux.literal("l")
        # The housekeeper's timed wait times out every 50 ms: failed.
        screen = self.wait_for(
            tmux, lambda s: s.show() == "events" and len(s.lines) == 24 and
            s.title and "Failed" in s.title and
            any(r["object"] == "house_cond" and r.get("Failed", "0") != "0"
                for r in s.rows),
            "the events at 80x24, the housekeeper's failed waits among them")
        self.assertIn("Thread", screen.title, screen.text)
        for row in screen.rows:
            self.assertEqual(row["type"], "condvar", row["line"])
            self.assertRegex(row["callsite"], r"^demo\.c:\d+$", row["line"])
            self.assertRegex(row["Thread"], r"^\d+$", row["line"])
        for line in screen.lines:
            self.assertLessEqual(len(line), 80)

    def test_l_shows_locks_or_events_and_locks_come_first(self):
        """The demo waits on locks and on its queue's condvars: the lock
        rows come first, a line says what the condvar rows are; l shows
        the locks alone, then the events alone, then both again, and the
        header and the key line say which."""
        demo = subprocess.Popen([DEMO, "4"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self.children.append(demo)
        tmux = self.start_live(demo.pid, "--mode", "contended", "--cumulative")

        def kinds(screen):
            return [r["type"] in LOCK_TYPES for r in screen.rows]

        screen = self.wait_for(
            tmux, lambda s: True in kinds(s) and False in kinds(s),
            "lock and condvar rows")
        self.assertEqual(kinds(screen), sorted(kinds(screen), reverse=True),
                         screen.text)
        events = [i for i, l in enumerate(screen.lines) if l.startswith(EVENTS)]
        self.assertEqual(len(events), 1, screen.text)
        first_event = next(r["line"] for r in screen.rows
                           if r["type"] not in LOCK_TYPES)
        self.assertEqual(screen.lines[events[0] + 1], first_event)
        self.assertEqual(screen.show(), "all")
        self.assertIn("l [all]/locks/events", screen.lines[-1])
        for show, locks in (("locks", True), ("events", False)):
            tmux.literal("l")
            screen = self.wait_for(tmux, lambda s: s.show() == show and s.rows,
                                   f"show {show}")
            self.assertEqual(set(kinds(screen)), {locks}, screen.text)
            self.assertEqual(any(l.startswith(EVENTS) for l in screen.lines),
                             not locks, screen.text)
            self.assertIn(f"[{show}]", screen.lines[-1])
        tmux.literal("l")
        screen = self.wait_for(tmux, lambda s: s.show() == "all" and
                               True in kinds(s) and False in kinds(s), "show all")
        self.assertEqual(kinds(screen), sorted(kinds(screen), reverse=True))

    def test_help_shows_the_keys(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid)
        tmux.literal("?")
        screen = self.wait_for(tmux, lambda s: "Any other key closes this help."
                               in s.text, "the help")
        for key in ("s ", "c ", "t ", "d ", "l ", "r ", "p ", "+ -", "q ",
                    "Up Down", "g Enter", "PgUp PgDn"):
            self.assertTrue(any(line.startswith("  " + key) for line in screen.lines),
                            f"{key!r} missing from the help")
        # ? again: every column in its one line, the model's.
        tmux.literal("?")
        screen = self.wait_for(tmux, lambda s: "Any key closes this help."
                               in s.text, "the columns' help")
        for titles, about in help_lines():
            line = re.compile(rf"^  {re.escape(titles)} +{re.escape(about)}\s*$")
            self.assertTrue(any(line.match(l) for l in screen.lines),
                            f"{titles!r} missing from the help:\n{screen.text}")
        tmux.keys("x")
        self.wait_for(tmux, lambda s: s.title is not None, "the table again")

    # --- stacks ----------------------------------------------------------

    PANE = re.compile(r"^Stacks of (\S+) (\S+) (\S+): (\d+) stacks?, lines")

    def pane(self, screen):
        """The stack pane's title (type, object, call site) and its lines."""
        for i, line in enumerate(screen.lines):
            m = self.PANE.match(line)
            if m:
                return m.groups()[:3], screen.lines[i + 1:-1]
        return None, []

    def select(self, tmux, want):
        """Pauses, then moves the selection to the first row `want` accepts."""
        tmux.keys("p")
        screen = self.wait_for(tmux, lambda s: s.setting("paused"), "PAUSED")
        screen = self.stable(tmux)
        index = next(i for i, r in enumerate(screen.rows) if want(r))
        tmux.keys("Home")
        for _ in range(index):
            tmux.keys("Down")
        return screen.rows[index]

    def test_g_shows_the_selected_rows_stacks(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid)
        self.go(target)
        self.wait_for(tmux, self.big_lock_rows, "a big_lock row")
        row = self.select(tmux, lambda r: r["object"] == "big_lock"
                          and r["callsite"].startswith("workload.c:"))
        self.assertIsNone(self.pane(tmux.capture())[0])
        tmux.keys("g")
        screen = self.wait_for(tmux, lambda s: self.pane(s)[0], "the stack pane")
        title, lines = self.pane(screen)
        self.assertEqual(title, ("mutex", "big_lock", row["callsite"]), screen.text)
        # Its stacks as -g prints them: a share, then frames; the call
        # site's function among them.
        self.assertRegex(lines[0], r"^    --\d+\.\d\d%-- \d+ waits? ")
        self.assertTrue(any(l.startswith("            timed_lock (workload.c:")
                            for l in lines), screen.text)
        # The table is still there, shorter, with its keys.
        self.assertTrue(self.big_lock_rows(screen))
        tmux.keys("p")
        tmux.keys("s")
        screen = self.wait_for(tmux, lambda s: s.setting("sort") == "mean"
                               and not s.setting("paused") and self.pane(s)[0],
                               "sort mean beside the pane")
        # The selection stayed on its row through refreshes and the sort.
        self.assertEqual(self.pane(screen)[0], title, screen.text)
        tmux.keys("g")
        screen = self.wait_for(tmux, lambda s: s.title and not self.pane(s)[0],
                               "the pane closed")
        self.assertTrue(self.big_lock_rows(screen))

    def test_stacks_option_opens_the_pane_and_the_final_report_shows_them(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid, "-g")
        self.go(target)
        screen = self.wait_for(tmux, lambda s: self.pane(s)[0]
                               and self.pane(s)[1] and self.big_lock_rows(s),
                               "the pane at start")
        tmux.keys("q")
        screen, code = self.wait_exit(tmux)
        self.assertCleanExit(tmux, screen, code)
        # -g's lines under the final report's rows.
        at = next(i for i, l in enumerate(screen.lines)
                  if ROW.match(l) and " big_lock " in l)
        self.assertRegex(screen.lines[at + 1], r"^    --\d+\.\d\d%-- ")
        self.assertTrue(any(l.startswith("            timed_lock (workload.c:")
                            for l in screen.lines[at + 2:]), screen.text)

    # --- roots (--why) ---------------------------------------------------

    ROOTS = re.compile(r"^Roots of (.*), lines (\d+)-(\d+) of (\d+)  "
                       r"\(w (close|every row)  PgUp/PgDn\)$")
    HOLDER = re.compile(r"^Holder during ([\d.]+) s: (.*)$")

    def roots(self, screen):
        """The roots pane: (what it covers, {state: %} of the holder,
        [(heading, row)]), or None."""
        at = next((i for i, l in enumerate(screen.lines)
                   if self.ROOTS.match(l)), None)
        if at is None:
            return None
        m = self.HOLDER.match(screen.lines[at + 1])
        if not m:
            return None
        holder = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)%", m.group(2))}
        heading, rows = None, []
        for line in screen.lines[at + 2:-1]:
            row = ROW.match(line)
            if row:
                rows.append((heading, {"object": row.group(2),
                                       "site": row.group(3),
                                       "wait": number(row.group(4), "s")}))
            elif line.endswith(":"):
                heading = line
        return self.ROOTS.match(screen.lines[at]).group(1), holder, rows

    def test_w_shows_where_the_chains_end(self):
        """--why on 80 columns: w shows the selected row's roots as the
        table's sections do, then every row's; A's wait on the convoy
        lands at C's unlock, as in test_why.py's JSON.  The convoy runs
        its rounds and waits: the screen's totals are the run its truth
        measured, and the shares are bounded by it as test_why.py's are
        (a busy machine makes the part outside the chain long)."""
        iters = 4
        target = self.start_waiting_target(
            [CONVOY, "convoy", "--wait-signal", "--wait-end", "--iters",
             str(iters), "--truth", self.path("truth.json")])
        tmux = self.start_live(target.pid, "--mode", "contended", "--why",
                               width=80, height=40)
        self.go(target)
        a_wait = f"convoy.c:{source_marker(CONVOY_SOURCE, 'CALLSITE', 'a_wait')}"
        c_unlock = f"convoy.c:{source_marker(CONVOY_SOURCE, 'RELEASE', 'c_unlock')}"
        self.assertIn("w roots", tmux.capture().lines[-1])
        # Totals since attach (the settings line, longer, is cut at 80
        # columns: the key line says PAUSED).
        tmux.keys("d")
        self.wait_done(target)
        truth = self.truth()
        self.wait_for(tmux, lambda s: any(
            r["callsite"] == a_wait and r["count"] >= iters for r in s.rows),
            "all of A's waits")
        tmux.keys("p")
        self.wait_for(tmux, lambda s: s.lines[-1].startswith("PAUSED"),
                      "PAUSED")
        screen = self.stable(tmux)
        index = next(i for i, r in enumerate(screen.rows)
                     if r["callsite"] == a_wait)
        row = screen.rows[index]
        tmux.keys("Home", *["Down"] * index)
        tmux.keys("w")
        screen = self.wait_for(tmux, lambda s: self.roots(s)
                               and self.roots(s)[2], "the roots pane")
        what, holder, rows = self.roots(screen)
        self.assertEqual(what, f"mutex l1 {a_wait}", screen.text)
        # 40 lines hold the whole pane.
        m = next(self.ROOTS.match(l) for l in screen.lines if self.ROOTS.match(l))
        self.assertEqual((m.group(2), m.group(3)), ("1", m.group(4)), screen.text)
        # A's holder, B, waited on l2 all the time but the part of A's
        # wait outside the chain (B woken by C's release until its lock of
        # l2 returned, B running from there to its unlock of l1, A woken
        # and waiting for a CPU), by the convoy's own clocks; 15% for the
        # ways into and out of the kernel, 1 for the screen's rounding.
        outside = (truth["b_woken_ns"] + truth["b_tail_ns"] +
                   truth["a_woken_ns"]) / truth["wait_a_ns"]
        self.assertLess(outside, 0.5, "the chain covers too little to tell")
        least = 1 - outside - 0.15
        self.assertGreaterEqual(holder.get("lock", 0), 100 * least - 1,
                                f"{truth}\n{screen.text}")
        # The chain ends at C's unlock, split by C's states.
        self.assertTrue(all(r["object"] == "l1" for _, r in rows), rows)
        at_c = sum(r["wait"] for _, r in rows if r["site"] == c_unlock)
        self.assertGreaterEqual(at_c, least * row["wait"] * 0.99,
                                f"{truth}\n{screen.text}")
        self.assertIn("the last holder slept (I/O, timers, poll):",
                      [h for h, _ in rows])
        self.assertTrue(all(len(l) <= 80 for l in screen.lines))
        # Every row: B's waits too, charged to C.
        tmux.keys("w")
        screen = self.wait_for(tmux, lambda s: self.roots(s) and
                               self.roots(s)[0] == "every row", "every row")
        objects = {r["object"] for _, r in self.roots(screen)[2]
                   if r["site"] == c_unlock}
        self.assertEqual(objects, {"l1", "l2"}, screen.text)
        tmux.keys("w")
        self.wait_for(tmux, lambda s: not self.roots(s) and s.title,
                      "the pane closed")
        tmux.literal("?")
        self.wait_for(tmux, lambda s: any(l.startswith("  w       where the chains")
                                          for l in s.lines), "w in the help")

    # --- leaving ---------------------------------------------------------

    def test_q_restores_the_terminal_and_prints_the_final_report(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid, "-v")
        self.go(target)
        self.wait_for(tmux, self.big_lock_rows, "a big_lock row")
        # The final report keeps the settings the keys left.
        tmux.keys("t")
        self.wait_for(tmux, lambda s: s.setting("per-thread") == "on", "per-thread")
        tmux.keys("q")
        screen, code = self.wait_exit(tmux)
        self.assertCleanExit(tmux, screen, code)
        self.assertIn("Thread", screen.title)
        rows = self.big_lock_rows(screen)
        self.assertEqual(len(rows), 2, screen.text)
        self.assertGreater(rows[0]["count"], 0)
        summary = next(SUMMARY.match(l) for l in screen.lines if SUMMARY.match(l))
        self.assertEqual(int(summary.group(1)), target.pid)
        self.assertEqual(summary.group(2), "workload")
        # -v's messages from before the screen are on the main screen.
        self.assertIn(f"profiling PID {target.pid}", screen.text)

    def test_ctrl_c_quits_cleanly(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid)
        self.go(target)
        self.wait_for(tmux, self.big_lock_rows, "a big_lock row")
        tmux.keys("C-c")
        screen, code = self.wait_exit(tmux)
        self.assertCleanExit(tmux, screen, code)
        self.assertEqual(len(self.big_lock_rows(screen)), 1, screen.text)
        self.assertIsNone(target.poll(), "the target died")

    def test_sigterm_ends_the_screen_with_the_final_report(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid, "-v")
        self.go(target)
        self.wait_for(tmux, self.big_lock_rows, "a big_lock row")
        shell = tmux.pane_pid()
        with open(f"/proc/{shell}/task/{shell}/children") as f:
            children = [int(p) for p in f.read().split()]
        self.assertEqual(len(children), 1)
        with open(f"/proc/{children[0]}/comm") as f:
            self.assertEqual(f.read().strip(), "syncprof")
        os.kill(children[0], signal.SIGTERM)
        screen, code = self.wait_exit(tmux)
        self.assertCleanExit(tmux, screen, code)
        self.assertEqual(len(self.big_lock_rows(screen)), 1, screen.text)
        # Held while the screen was up, printed after it.
        self.assertIn("stopping on signal 15", screen.text)

    def test_target_exit_ends_the_screen_with_totals_since_attach(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "300", "--hold-us", "2000",
            "--wait-signal"))
        tmux = self.start_live(target.pid, "-v")
        self.go(target)
        screen, code = self.wait_exit(tmux)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        self.assertCleanExit(tmux, screen, code)
        self.assertIn(f"PID {target.pid} exited", screen.text)
        self.assertEqual(len(self.big_lock_rows(screen)), 1, screen.text)
        # Every acquisition since attach, not the last interval's.
        self.assertEqual(self.big_lock_count(screen), self.truth()["count"])

    def test_keys_come_from_the_terminal_when_stdin_is_not_one(self):
        target = self.start_mutex_target()
        tmux = self.start_live(target.pid, stdin="/dev/null")
        tmux.keys("s")
        self.wait_for(tmux, lambda s: s.setting("sort") == "mean", "sort mean")
        tmux.keys("q")
        screen, code = self.wait_exit(tmux)
        self.assertCleanExit(tmux, screen, code)

    # --- no screen -------------------------------------------------------

    def test_a_pipe_gets_plain_reports(self):
        target = self.start_mutex_target()
        self.go(target)
        run = subprocess.run([SYNCPROF, "--mode", "full", "--interval", "0.5", "--duration", "2.2",
                              "--pid", str(target.pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("\x1b", run.stdout)
        summaries = [l for l in run.stdout.splitlines() if SUMMARY.match(l)]
        self.assertGreaterEqual(len(summaries), 4, run.stdout)
        self.assertNotIn("syncprof  PID", run.stdout)

    def test_batch_and_json_keep_plain_reports_on_a_terminal(self):
        target = self.start_mutex_target()
        self.go(target)
        for args, pattern in ((["--batch"], SUMMARY),
                              (["--format", "json"], re.compile(r'^\{"schema": '))):
            cmd = " ".join(shlex.quote(a) for a in
                           [SYNCPROF, "--mode", "full", "--interval", "0.5", "--duration", "2.2",
                            "--pid", str(target.pid), *args])
            # Tall enough for the JSON lines, which the pane wraps.
            tmux = Tmux(f"{cmd}; echo syncprof-exit=$?; sleep 3600", 160, 200)
            self.addCleanup(tmux.kill)
            screen, code = self.wait_exit(tmux)
            self.assertEqual(code, 0, screen.text)
            self.assertFalse(screen.live, screen.text)
            reports = [l for l in screen.lines if pattern.match(l)]
            self.assertGreaterEqual(len(reports), 4, screen.text)
