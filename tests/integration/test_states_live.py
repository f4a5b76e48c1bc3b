"""The live screen's thread-state panel (--states --interval on a
terminal), in a real terminal as test_live.py drives it: one bar per
thread in the states' characters and colours (running | green, runnable +
yellow, lock wait # red, sleep . blue, stolen ~ magenta), G to group by name, d for the
totals, and the Thread states section of the final report."""
import os
import re
import shlex
import time

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase
from test_live import Tmux

STATES = os.path.join(BUILD, "tests", "targets", "states")
# A deadline for what the screen must come to show; only a hang reaches
# it (a loaded machine stalled syncprof's loop for 23 s once).
TIMEOUT = HANG_S
BAR = re.compile(r"^\s*(\d+|-)  (.+?)\s+\[([|+#.~ ]+)\]\s+([\d.]+)\s+([\d.]+)"
                 r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
# tmux capture-pane -e: an SGR sequence, then the cells it colours.
SGR_RUN = re.compile(r"\x1b\[([\d;]*)m([^\x1b]*)")
COLOURS = {"|": "32", "+": "33", "#": "31", ".": "34", "~": "35"}


def bars(text):
    """{name: (tid, bar, [run, rdy, lock, slp, stl])} from a capture."""
    out = {}
    for line in text.splitlines():
        m = BAR.match(line)
        if m:
            out[m.group(2)] = (m.group(1), m.group(3),
                               [float(m.group(i)) for i in range(4, 9)])
    return out


class StatesLive(SyncprofTestCase):

    def start(self, scenario, *target_args, width=150, height=40):
        target = self.start_waiting_target(
            [STATES, scenario, "--wait-signal", *target_args])
        cmd = " ".join(shlex.quote(a) for a in [
            SYNCPROF, "--states", "--interval", "0.5", "--pid", str(target.pid)])
        tmux = Tmux(f"{cmd}; echo syncprof-exit=$?; sleep 3600", width, height)
        self.addCleanup(tmux.kill)
        self.wait_for(tmux, lambda t: "Rdy%" in t, "the thread-state panel")
        self.go(target)
        return target, tmux

    def wait_for(self, tmux, predicate, what, escapes=False):
        deadline = time.monotonic() + TIMEOUT
        while True:
            text = tmux.run("capture-pane", "-p", *(["-e"] if escapes else []))
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                self.fail(f"{what}: not seen within {TIMEOUT} s:\n{text}")
            time.sleep(0.1)

    def test_bars_show_where_each_thread_is(self):
        _, tmux = self.start("mixed", "--iters", "400")
        def full_worker(t):
            w = bars(t).get("worker")
            # A window it lived through (the first holds its start).
            return w and "#" in w[1] and "|" in w[1] and sum(w[2]) > 99.5
        text = self.wait_for(tmux, full_worker, "the worker's bar")
        found = bars(text)
        self.assertIn("| running  + runnable  # lock wait  . sleep  ~ stolen",
                      text)
        # The idler sleeps through every window: a full bar of sleep.
        tid, bar, shares = found["idler"]
        self.assertRegex(tid, r"^\d+$")
        self.assertEqual(set(bar), {"."})
        self.assertAlmostEqual(sum(shares), 100.0, delta=0.3)
        # The worker runs, waits on the mutex, sleeps: in that order (and
        # any time a virtual machine's host stole from it last).
        _, bar, shares = found["worker"]
        self.assertRegex(bar, r"^\|+\+*#+\.+~* *$")
        # Of its time not waiting for a CPU (beside busy loops, most of
        # it) nor stolen, the 20 ms holds it waits for make half: a fifth
        # at least.
        self.assertGreater(shares[2], 0.2 * (100.0 - shares[1] - shares[4]),
                           shares)
        self.assertAlmostEqual(sum(shares), 100.0, delta=0.5)
        # The bar's cells in their colours.
        text = self.wait_for(tmux, lambda t: "worker" in t, "colours", escapes=True)
        line = next(l for l in text.splitlines() if "worker" in l and "[" in l)
        seen = {}
        for params, cells in SGR_RUN.findall(line):
            for c in set(cells) & set(COLOURS):
                seen.setdefault(c, set()).add(params)
        for c in ("|", "#", "."):
            self.assertIn(c, seen, line)
            self.assertTrue(any(COLOURS[c] in p.split(";") for p in seen[c]),
                            f"{c!r} drawn with {seen[c]}, not colour {COLOURS[c]}")

    def test_g_groups_threads_by_name(self):
        _, tmux = self.start("spin", "--threads", "4", "--spin-ms", "30000")
        text = self.wait_for(
            tmux, lambda t: len([n for n in bars(t) if n == "spinner"]) == 1
            and sum(1 for l in t.splitlines() if re.search(r"spinner\s+\[", l)) == 4,
            "four spinners' bars")
        # More spinners than CPUs: they wait for one.
        spin_bars = [l for l in text.splitlines() if re.search(r"spinner\s+\[", l)]
        self.assertTrue(any("+" in l for l in spin_bars), spin_bars)
        tmux.keys("G")
        text = self.wait_for(tmux, lambda t: "spinner \u00d74" in bars(t) and
                             sum(bars(t)["spinner \u00d74"][2]) > 99.5,
                             "the spinner group")
        tid, bar, shares = bars(text)["spinner \u00d74"]
        self.assertEqual(tid, "-")
        self.assertIn("|", bar)
        self.assertAlmostEqual(sum(shares), 100.0, delta=0.5)
        self.assertNotRegex(text, r"\d+  spinner\s+\[")
        tmux.keys("G")
        self.wait_for(tmux, lambda t: "spinner \u00d74" not in bars(t),
                      "one bar per thread again")
        # The help says what G does; any key closes it.
        tmux.keys("?")
        self.wait_for(tmux, lambda t: "G       thread states: one bar per thread"
                      in t, "the help's g line")
        tmux.keys("x")
        self.wait_for(tmux, lambda t: "Rdy%" in t, "the panel again")
        # Totals since attach, grouped.
        tmux.keys("G", "d")
        self.wait_for(tmux, lambda t: "  totals " in t and
                      "spinner \u00d74" in bars(t), "grouped totals")
        tmux.keys("q")
        text = self.wait_for(tmux, lambda t: "syncprof-exit=" in t, "the exit")
        self.assertIn("syncprof-exit=0", text)
        self.assertIn("Thread states: ", text)
        self.assertRegex(text, r"\n\s+-  spinner \u00d74\s+\d+\.\d{3}")
