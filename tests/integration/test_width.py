"""Reports fit the terminal they are printed to: in a tmux pane 80
columns wide, the live screen's key line leaves keys out whole (never a
word cut, g and H kept), and the final report after q, like the table
printed on a terminal without the live screen, narrows its columns as
the live screen does: no line wraps.  At 200 columns, or into a pipe
or a file, the table has every column at full width."""
import re
import shlex
import time

from harness import HANG_S, SYNCPROF, SyncprofTestCase
from test_live import Tmux

# --hold and --per-thread: the widest table full mode prints (154
# columns at full width).
WIDE = ["--mode", "full", "--hold", "--per-thread"]
FULL_TITLES = ("Wait Time (s)", "Average (us)", "Hold Time (s)",
               "Average Hold (us)", "Thread")
KEYS = ("q quit", "? help", "s sort", "g stacks", "H hist")
EVERY_KEY = (*KEYS, "w roots", "c coalesce", "t threads", "d deltas/totals",
             "r reset", "p pause", "+/- interval", "G group")


class Width(SyncprofTestCase):

    def start_target(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "3", "--iters", "100000", "--hold-us",
            "2000", "--wait-signal"))
        self.go(target)
        return target

    def pane(self, args, width, height=40):
        """syncprof ARGS in a pane; the pane, once syncprof has ended."""
        cmd = " ".join(shlex.quote(a) for a in [SYNCPROF, *args])
        tmux = Tmux(f"{cmd}; echo syncprof-exit=$?; sleep 3600", width,
                    height)
        self.addCleanup(tmux.kill)
        return tmux

    def joined(self, tmux):
        """The pane's lines, a wrapped line joined again (capture -J)."""
        return tmux.run("capture-pane", "-p", "-J").splitlines()

    def wait_text(self, tmux, needle, what):
        end = time.monotonic() + HANG_S
        while time.monotonic() < end:
            lines = self.joined(tmux)
            if any(needle in l for l in lines):
                return lines
            time.sleep(0.1)
        self.fail(f"{what}: not seen; the screen:\n" + "\n".join(self.joined(tmux)))

    def report_lines(self, lines):
        """From the report's summary line to syncprof's exit line."""
        start = next(i for i, l in enumerate(lines)
                     if l.startswith("syncprof: pid "))
        end = next(i for i, l in enumerate(lines) if "syncprof-exit=" in l)
        self.assertEqual(lines[end], "syncprof-exit=0", lines)
        return lines[start:end]

    def title(self, lines):
        return next(l for l in lines if l.startswith("Type "))

    def test_live_screen_and_its_final_report_at_80_columns(self):
        target = self.start_target()
        tmux = self.pane([*WIDE, "--interval", "0.5", "--pid",
                          str(target.pid)], 80)
        lines = self.wait_text(tmux, "big_lock", "a big_lock row")
        keys = lines[-1].rstrip()
        self.assertLessEqual(len(keys), 80, keys)
        for key in KEYS:
            self.assertIn(key, keys)
        # Whole keys only: every part between two spaces is a key.
        for part in keys.split("  "):
            self.assertTrue(part in EVERY_KEY or
                            re.fullmatch(r"l \S+/\S+/\S+", part), keys)
        status = next(l for l in lines if l.startswith("elapsed "))
        self.assertLessEqual(len(status), 80, status)
        self.assertRegex(status.rstrip(), r"(s|\d)$", status)
        tmux.keys("q")
        lines = self.wait_text(tmux, "syncprof-exit=", "syncprof's end")
        report = self.report_lines(lines)
        for line in report:
            self.assertLessEqual(len(line), 80, "\n".join(report))
        title = self.title(report)
        self.assertRegex(title, r"\bHold\b")
        self.assertTrue(any(re.match(r"^mutex +big_lock ", l) for l in report),
                        report)

    def test_the_table_on_a_terminal_at_80_and_200_columns(self):
        target = self.start_target()
        for width in (80, 200):
            with self.subTest(width=width):
                tmux = self.pane([*WIDE, "--duration", "1", "--pid",
                                  str(target.pid)], width)
                lines = self.wait_text(tmux, "syncprof-exit=", "the report")
                report = self.report_lines(lines)
                title = self.title(report)
                for line in report:
                    self.assertLessEqual(len(line), width, "\n".join(report))
                if width == 80:
                    self.assertNotIn("Hold Time (s)", title)
                else:
                    for name in FULL_TITLES:
                        self.assertIn(name, title)

    def test_a_pipe_and_a_file_get_full_width(self):
        target = self.start_target()
        out = self.path("table.txt")
        tmux = self.pane([*WIDE, "--duration", "1", "--pid", str(target.pid),
                          "-o", out], 80)
        self.wait_text(tmux, "syncprof-exit=", "the report")
        with open(out) as f:
            report = f.read().splitlines()
        title = self.title(report)
        for name in FULL_TITLES:
            self.assertIn(name, title)
        self.assertGreater(len(title), 80, title)
        # A pipe on the same terminal: the same full width.
        cmd = " ".join(shlex.quote(a) for a in
                       [SYNCPROF, *WIDE, "--duration", "1", "--pid",
                        str(target.pid)])
        tmux = Tmux(f"{cmd} | cat > {shlex.quote(out)}; "
                    f"echo syncprof-exit=$?; sleep 3600", 80, 40)
        self.addCleanup(tmux.kill)
        self.wait_text(tmux, "syncprof-exit=0", "the piped report")
        with open(out) as f:
            title = self.title(f.read().splitlines())
        for name in FULL_TITLES:
            self.assertIn(name, title)
