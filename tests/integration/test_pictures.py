"""The pictures docs/profiles.md and docs/recording.md promise, drawn in
headless Chromium as a person would see them, from a real run on a
target whose functions and lock are known (two paths, path_a() and
path_b(), through one wrapper, stackwrap_lock(), on the mutex
stack_lock):

* `go tool pprof -http ... -tagleaf=type,object` on `--format pprof`:
  the flame graph at /ui/flamegraph draws each path's stack with the
  lock's type and object on top;
* speedscope on `--format folded`: every frame drawn, and its totals are
  the folded file's;
* speedscope on `--chrome FILE`: one timeline per thread, each thread's
  total the trace's.

Each check reads the rendered DOM (after the page's scripts ran) and a
screenshot that must show coloured boxes, not a blank or an error page.
A failing check keeps its screenshot and prints where it is."""
import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase, free_port, read_line
import chromium

STACKS_TARGET = os.path.join(BUILD, "tests", "targets", "stacks")
TARGET = [STACKS_TARGET, "paths", "--iters", "20", "--hold-us", "3000"]
PATHS = [("path_a", "stackwrap_lock", "mutex", "stack_lock"),
         ("path_b", "stackwrap_lock", "mutex", "stack_lock")]
FOLDED_LOCK = "[mutex stack_lock]"
GO = shutil.which("go")
# make deps installs speedscope from the npm registry under the build
# directory; one installed on PATH (npm install -g speedscope) does too.
SPEEDSCOPE = next((p for p in (
    os.path.join(BUILD, "npm", "node_modules", ".bin", "speedscope"),
    os.path.join(ROOT, "build", "npm", "node_modules", ".bin", "speedscope"),
    shutil.which("speedscope") or "") if os.access(p, os.X_OK)), None)
SPEEDSCOPE_TOOLBAR = 24  # pixels; its selected view's button is blue
# What the docs tell a user to type, and the tests run (syncprof's own
# line with the target in place of -p PID -d SECS).
DOCS = {"profiles.md": ["sudo ./syncprof -f pprof -o locks.pb.gz -p",
                        "go tool pprof -http localhost:8080 -tagleaf=type,object locks.pb.gz",
                        "sudo ./syncprof -f folded -o locks.folded -p",
                        "speedscope locks.folded"],
        "recording.md": ["--chrome trace.json", "speedscope trace.json"]}
OPENING = re.compile(r"^Opening (\S+) in your default browser", re.M)
SPEEDSCOPE_ROW = re.compile(r"^([\d,.]+\S*) \([\d.<]+%\)$")
DURATION = re.compile(r"^([\d.]+)(ns|µs|ms|s)$")
UNITS_NS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def texts(dom):
    """The page's text nodes, in order, stripped, the empty ones left out."""
    dom = re.sub(r"<(script|style)\b.*?</\1>", "", dom, flags=re.S)
    out = [t.strip() for t in re.findall(r">([^<>]*)<", dom)]
    return [t.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
            for t in out if t]


def flame_boxes(dom):
    """pprof's flame graph (d3-flame-graph): [(x, y, width, name)] of each
    box it drew (an SVG group of a rectangle and its label)."""
    boxes = []
    for attrs in re.findall(r"<g ([^>]*class=\"frame\"[^>]*)>", dom):
        a = dict(re.findall(r'(\w+)="([^"]*)"', attrs))
        x, y = map(float, re.match(r"translate\(([-\d.e]+),([-\d.e]+)\)",
                                   a["transform"]).groups())
        boxes.append((x, y, float(a["width"]), a["name"]))
    return boxes


def stacks_drawn(boxes):
    """Each leaf box's stack, root first, by geometry: a box's parent is
    the one drawn a row above it whose span holds its own."""
    rows = {}
    for box in boxes:
        rows.setdefault(box[1], []).append(box)
    ys = sorted(rows)
    parents = {}
    for above, y in zip(ys, ys[1:]):
        for box in rows[y]:
            parents[box] = next((p for p in rows[above]
                                 if p[0] - 0.5 <= box[0]
                                 and box[0] + box[2] <= p[0] + p[2] + 0.5), None)
    has_child = set(parents.values())
    stacks = []
    for box in boxes:
        if box in has_child:
            continue
        stack = [box]
        while parents.get(stack[-1]):
            stack.append(parents[stack[-1]])
        stacks.append(stack[::-1])
    return stacks


def sandwich_totals(dom):
    """speedscope's sandwich table: {symbol name: total}, the total as
    speedscope printed it (a number, or a duration)."""
    t, out = texts(dom), {}
    for i in range(len(t) - 2):
        if SPEEDSCOPE_ROW.match(t[i]) and SPEEDSCOPE_ROW.match(t[i + 1]):
            out[t[i + 2]] = SPEEDSCOPE_ROW.match(t[i]).group(1)
    return out


def duration_ns(text):
    m = DURATION.match(text)
    return float(m.group(1)) * UNITS_NS[m.group(2)] if m else None


class Docs(unittest.TestCase):

    def test_the_docs_give_the_commands_drawn_here(self):
        for name, commands in DOCS.items():
            with open(os.path.join(ROOT, "docs", name)) as f:
                text = f.read()
            for command in commands:
                self.assertIn(command, text, f"docs/{name}")


class Pictures(SyncprofTestCase):

    def setUp(self):
        super().setUp()
        if not chromium.CHROMIUM:
            self.skipTest("no chromium on PATH: make deps installs Debian's "
                          "chromium")
        # The screenshots' directory outlives a failed test.
        self.pictures = tempfile.mkdtemp(prefix="syncprof-pictures-")
        self.keep = False
        self.addCleanup(lambda: self.keep or shutil.rmtree(self.pictures, True))
        self.browser = chromium.Chromium(self.pictures, HANG_S)

    @contextlib.contextmanager
    def picture(self, name, url):
        """Takes url's screenshot; a failed check inside names it."""
        path = self.browser.screenshot(url, os.path.join(self.pictures, name))
        try:
            yield path
        except AssertionError as e:
            self.keep = True
            raise AssertionError(f"{e}\nthe screenshot: {path}") from None

    def assertColourful(self, path, least, skip_top=0):
        areas = chromium.colour_areas(path, skip_top)
        self.assertGreaterEqual(len(areas), least,
                                f"{path}: {len(areas)} coloured areas, "
                                f"{sorted(areas.items(), key=lambda a: -a[1])[:8]}")

    def profile(self, *args):
        """syncprof args -- the target, run to its end in the pictures'
        directory (the default mode, as the docs' commands)."""
        proc = subprocess.run([SYNCPROF, *args, "--", *TARGET], cwd=self.pictures,
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def speedscope_url(self, name):
        """`speedscope FILE` as typed: it writes the profile into a script
        beside it and prints the page it hands to the browser (here, none:
        BROWSER=true and no display), which Chromium then opens."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        env.update(TMPDIR=self.pictures, BROWSER="true")
        proc = subprocess.run([SPEEDSCOPE, name], cwd=self.pictures, env=env,
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        m = OPENING.search(proc.stdout)
        self.assertTrue(m, f"speedscope {name} said {proc.stdout!r}")
        return m.group(1)

    def need_speedscope(self):
        if not SPEEDSCOPE:
            self.skipTest("speedscope is not installed: make deps installs it "
                          "from the npm registry (npm install --prefix build/npm "
                          "speedscope)")

    def test_pprof_flame_graph_draws_each_stack_with_its_lock(self):
        if not GO:
            self.skipTest("no go tool pprof: make deps installs golang-go")
        self.profile("-f", "pprof", "-o", "locks.pb.gz")
        port = free_port()
        server = subprocess.Popen(
            [GO, "tool", "pprof", "-no_browser", "-http", f"127.0.0.1:{port}",
             "-tagleaf=type,object", "locks.pb.gz"], cwd=self.pictures,
            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.addCleanup(server.stdout.close)
        self.addCleanup(server.wait)
        self.addCleanup(server.kill)
        line = read_line(server.stdout.fileno(), HANG_S)
        self.assertIn("Serving web UI on", line)
        url = f"http://127.0.0.1:{port}/ui/flamegraph"
        with self.picture("pprof-flamegraph.png", url) as png:
            boxes = flame_boxes(self.browser.dom(url, ready=flame_boxes))
            stacks = [tuple(b[3] for b in s) for s in stacks_drawn(boxes)]
            for path in PATHS:
                self.assertTrue(any(s[-len(path):] == path for s in stacks),
                                f"{url}: no stack ending {' > '.join(path)} "
                                f"among {stacks}")
            narrow = [b for b in boxes
                      if b[3] in {n for p in PATHS for n in p} and b[2] < 50]
            self.assertFalse(narrow, f"{url}: boxes too narrow to read")
            self.assertColourful(png, 8)

    def test_speedscope_draws_the_folded_stacks(self):
        self.need_speedscope()
        self.profile("-f", "folded", "-o", "locks.folded")
        with open(os.path.join(self.pictures, "locks.folded")) as f:
            folded = [line.rsplit(" ", 1) for line in f.read().splitlines()]
        url = self.speedscope_url("locks.folded")
        with self.picture("speedscope-folded.png", url) as png:
            totals = sandwich_totals(self.browser.dom(url + "&view=sandwich",
                                                      ready=sandwich_totals))
            for name in {n for p in PATHS for n in p[:2]} | {FOLDED_LOCK}:
                expected = sum(int(ns) for stack, ns in folded
                               if name in stack.split(";"))
                self.assertIn(name, totals, f"{url}: no frame {name}: {totals}")
                self.assertEqual(int(totals[name].replace(",", "")), expected,
                                 f"{url}: {name}'s total")
            self.assertColourful(png, 8, SPEEDSCOPE_TOOLBAR)

    def test_speedscope_draws_the_chrome_timeline(self):
        self.need_speedscope()
        self.profile("--chrome", "trace.json")
        with open(os.path.join(self.pictures, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        spans = [e for e in events if e["ph"] == "X"]
        per_thread = {}
        for e in spans:
            per_thread[e["tid"]] = per_thread.get(e["tid"], 0) + e["dur"] * 1e3
        url = self.speedscope_url("trace.json")
        with self.picture("speedscope-chrome.png", url) as png:
            dom = self.browser.dom(url + "&view=sandwich", ready=sandwich_totals)
            t = texts(dom)
            shown = {}
            for i, text in enumerate(t[:-1]):
                m = re.search(r"\(tid (\d+)\)$", text)
                if m and duration_ns(t[i + 1]) is not None:
                    shown[int(m.group(1))] = duration_ns(t[i + 1])
            self.assertEqual(set(shown), set(per_thread),
                             f"{url}: threads {shown}, the trace's {per_thread}")
            for tid, ns in per_thread.items():
                self.assertAlmostEqual(shown[tid], ns, delta=max(ns * 0.005, 1e4),
                                       msg=f"{url}: thread {tid}'s total")
            names = sandwich_totals(dom)
            self.assertTrue(names, f"{url}: no span drawn")
            span_names = {e["name"] for e in spans}
            for name in names:
                self.assertTrue(any(name.startswith(s) for s in span_names),
                                f"{url}: {name!r} is none of {span_names}")
            self.assertColourful(png, 1, SPEEDSCOPE_TOOLBAR)


if __name__ == "__main__":
    unittest.main()
