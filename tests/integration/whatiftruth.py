"""The real gain of shorter critical sections, measured by the target
itself (tests/targets/whatif --control), in the process syncprof
profiles: for the --what-if tests and make bench's whatif section.

The target makes items and prints its rate every window; an "ab FRAC"
line on its stdin makes its windows alternate between the critical
section as given ("base") and FRAC shorter ("short"), "ab 0" ends that.
Each short window is paired with the base windows on either side of it
(a loaded machine drifts by more than the effect); the real gain is the
median of those ratios, pooled over every time FRAC was measured: before
syncprof's experiment and after it, in that order for one fraction and
the other order for the other, so that a load that grows or falls over
the minute weighs on both sides of the prediction alike.  The windows
are made long enough for MIN_ITEMS items each at the rate the target
makes them (settle()): on a machine others keep busy a window of a few
items is noise.
"""
import os
import statistics
import subprocess
import threading

# Items per window, at least; the windows' length within these bounds.
MIN_ITEMS = 200
WINDOW_MS = (100, 600)
# A pinned target's nice, and its scheduling group's.
PRIORITY = -20


def pinned(cpu):
    """preexec_fn: the process on one CPU, at the highest priority."""
    def setup():
        os.sched_setaffinity(0, {cpu})
        os.setpriority(os.PRIO_PROCESS, 0, PRIORITY)
    return setup


class Truth:
    """A running tests/targets/whatif --control and its windows."""

    def __init__(self, target, args, window_ms=100, hang_s=240, cpu=None):
        """cpu: the target pinned to that one CPU at the highest
        priority, in a session of its own whose scheduling group
        (/proc/PID/autogroup) gets the same: the CPU it can have is
        then that one, whatever the machine's load."""
        self.hang_s = hang_s
        self.proc = subprocess.Popen([target, *args, "--control",
                                      "--seconds", "3600", "--window-ms",
                                      str(window_ms)],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     preexec_fn=(None if cpu is None
                                                 else pinned(cpu)),
                                     start_new_session=cpu is not None)
        self.pid = self.proc.pid
        group = f"/proc/{self.pid}/autogroup"
        if cpu is not None and os.path.exists(group):
            with open(group, "w") as f:
                f.write(str(PRIORITY))
        # (kind, rate, fraction), in the target's order, and the CPUs
        # the target used in each.
        self.windows = []
        self.cpus = []
        self.header = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            words = line.split()
            with self.cond:
                if words[:1] in (["rate"], ["base"], ["short"]):
                    self.windows.append((words[0], float(words[1]),
                                         float(words[5])))
                    self.cpus.append(float(words[7]))
                else:
                    self.header.append(words)
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def lines(self, n):
        """The first n lines that are not windows (--procs: lock, pids)."""
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.header) >= n,
                                      self.hang_s):
                raise RuntimeError("the target printed no header")
            return self.header[:n]

    def _count(self, frac):
        return sum(1 for _, _, f in self.windows if abs(f - frac) < 1e-3)

    def wait_windows(self, n, frac=0.0):
        """Until n more windows of fraction frac are printed (counted in
        windows, not seconds: a loaded machine prints them late)."""
        with self.cond:
            want = self._count(frac) + n
            if not self.cond.wait_for(lambda: self._count(frac) >= want
                                      or self.proc.poll() is not None,
                                      self.hang_s):
                raise RuntimeError(f"the target printed too few windows "
                                   f"of ab {frac}")
            if self.proc.poll() is not None:
                raise RuntimeError("the target ended")

    def settle(self, windows=5):
        """Waits for windows of holds as given, and sets the windows'
        length from their rate; returns it (ms)."""
        self.wait_windows(windows)
        rates = sorted(self.rates()[-windows:])
        rate = rates[len(rates) // 2]
        ms = WINDOW_MS[1] if rate <= 0 else 1000 * MIN_ITEMS / rate
        ms = int(min(max(ms, WINDOW_MS[0]), WINDOW_MS[1]))
        self.proc.stdin.write(f"window {ms}\n")
        self.proc.stdin.flush()
        # The window under way keeps its length.
        self.wait_windows(1)
        return ms

    def measure(self, frac, windows):
        """The shorter version for real: windows alternating base and
        frac shorter, then holds as given again."""
        self.send(frac)
        self.wait_windows(windows, frac)
        self.send(0)
        # The window under way when the line came keeps its fraction.
        self.wait_windows(1)

    def send(self, frac):
        self.proc.stdin.write(f"ab {frac}\n")
        self.proc.stdin.flush()

    def mark(self):
        """Where the windows are now: gain()'s bounds."""
        with self.cond:
            return len(self.windows)

    def around(self, experiment, windows, fracs=(0.25, 0.5)):
        """experiment() between two measurements of each fraction, in
        mirrored order (25%, 50%, experiment, 50%, 25%: a load that
        grows or falls over the minute weighs on both sides alike).
        Returns its result and the marks where the windows before it
        began, where it began and where it ended."""
        begin = self.mark()
        for frac in fracs:
            self.measure(frac, windows)
        middle = self.mark()
        result = experiment()
        resumed = self.mark()
        for frac in reversed(fracs):
            self.measure(frac, windows)
        return result, begin, middle, resumed

    def ratios(self, frac, since=0, until=None):
        with self.cond:
            w = list(self.windows[since:until])
        same = [i for i, (_, _, f) in enumerate(w) if abs(f - frac) < 1e-3]
        out = []
        for i in same:
            if (w[i][0] == "short" and 0 < i < len(w) - 1
                    and w[i - 1][0] == "base" and w[i + 1][0] == "base"
                    and abs(w[i - 1][2] - frac) < 1e-3
                    and abs(w[i + 1][2] - frac) < 1e-3
                    and w[i - 1][1] + w[i + 1][1] > 0):
                out.append(w[i][1] / ((w[i - 1][1] + w[i + 1][1]) / 2))
        return out

    def gain(self, frac, since=0, until=None):
        """The real gain in %, and the number of pairs it rests on (of
        the windows since..until: mark()'s)."""
        r = self.ratios(frac, since, until)
        if not r:
            raise RuntimeError(f"no paired windows of ab {frac}")
        return (statistics.median(r) - 1) * 100, len(r)

    def cpu_by_kind(self, since=0, until=None):
        """The median of the CPUs the target used in its windows, by
        (kind, fraction): ("base", 0.5), ("short", 0.5), ("rate", 0.0)."""
        with self.cond:
            w = list(zip(self.windows[since:until], self.cpus[since:until]))
        kinds = {}
        for (kind, _, frac), cpu in w:
            kinds.setdefault((kind, round(frac, 3)), []).append(cpu)
        return {k: statistics.median(v) for k, v in kinds.items()}

    def rates(self, frac=0.0):
        with self.cond:
            return [r for k, r, f in self.windows
                    if k == "rate" and abs(f - frac) < 1e-3]

    def close(self):
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.reader.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

