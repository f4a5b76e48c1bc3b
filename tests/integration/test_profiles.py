"""--format folded and --format pprof on real targets, held to the ground
truth the JSON is held to: the targets' own counts (exact) and clocks
(within the tolerance), per lock and, with whole stacks, per path: two
paths through one wrapper have the same exact counts in JSON and pprof.
go tool pprof reads every profile (-raw for the numbers, -top for the
names).  That one report renders the same totals in JSON, folded and
pprof is checked exactly by the unit tests (tests/unit/test_folded.c,
test_pprof.c)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase, with_mode

BLOCKING = os.path.join(BUILD, "tests", "targets", "blocking")
CXXLOCK = os.path.join(BUILD, "tests", "targets", "cxxlock")
# Two paths through one lock wrapper in a library without frame pointers,
# every acquisition blocking once, the truth per path (the stack tests').
STACKS_TARGET = os.path.join(BUILD, "tests", "targets", "stacks")
GO = shutil.which("go")
FOLDED_LINE = re.compile(r"^(\S.*) (\d+)$")
RAW_SAMPLE = re.compile(r"^\s+(\d+)\s+(\d+):((?:\s+\d+)*)\s*$")
RAW_LABEL = re.compile(r"(\w+):\[([^\]]*)\]")
RAW_LOCATION = re.compile(r"^\s+(\d+): 0x[0-9a-f]+ M=(\d+) (.*)$")
RAW_LINE = re.compile(r"^(.*?) (\S+):(\d+) s=\d+$")
WORKLOAD_SOURCE = os.path.join(ROOT, "tests", "targets", "workload.c")
BLOCKING_SOURCE = os.path.join(ROOT, "tests", "targets", "blocking.c")


def marker_line(path, name):
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"CALLSITE:{name}\b", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {path}")


def parse_folded(text):
    """[(frames outermost first, lock, wait_ns)]"""
    out = []
    for line in text.splitlines():
        m = FOLDED_LINE.match(line)
        if not m:
            raise AssertionError(f"not a folded line: {line!r}")
        elements = m.group(1).split(";")
        out.append((elements[:-1], elements[-1], int(m.group(2))))
    return out


def function_of(text):
    m = RAW_LINE.match(text.strip())
    return m.group(1) if m else text.strip().split(" ")[0]


class Profile:
    """A profile as go tool pprof -raw reads it."""

    def __init__(self, path):
        self.lines = {}         # location id -> [(function, file, line)]
        env = dict(os.environ, PPROF_TMPDIR=tempfile.gettempdir())
        env.setdefault("HOME", tempfile.gettempdir())
        self.env = env
        self.path = path
        raw = self.pprof("-raw")
        self.samples, self.locations = [], {}
        section, location = None, None
        for line in raw.splitlines():
            if line in ("Samples:", "Locations", "Mappings"):
                section = line
                continue
            if section == "Samples:":
                m = RAW_SAMPLE.match(line)
                if m:
                    self.samples.append({
                        "count": int(m.group(1)), "delay": int(m.group(2)),
                        "locations": [int(i) for i in m.group(3).split()],
                        "labels": {}})
                elif self.samples and RAW_LABEL.search(line):
                    self.samples[-1]["labels"].update(RAW_LABEL.findall(line))
            elif section == "Locations":
                m = RAW_LOCATION.match(line)
                text = m.group(3) if m else line
                if m:
                    location = int(m.group(1))
                    self.locations[location] = []
                    self.lines[location] = []
                if location is not None and text.strip():
                    self.locations[location].append(function_of(text))
                    m = RAW_LINE.match(text.strip())
                    self.lines[location].append(
                        (m.group(1), m.group(2), int(m.group(3))) if m else
                        (function_of(text), None, 0))

    def pprof(self, *args):
        proc = subprocess.run([GO, "tool", "pprof", *args, self.path],
                              capture_output=True, text=True, timeout=HANG_S,
                              env=self.env)
        if proc.returncode:
            raise AssertionError(f"go tool pprof {args}: {proc.stderr}")
        return proc.stdout

    def of(self, obj):
        return [s for s in self.samples if s["labels"].get("object") == obj]

    def functions(self, sample):
        """The sample's functions, leaf first, inlined calls included."""
        return [f for loc in sample["locations"] for f in self.locations[loc]]


class Profiles(SyncprofTestCase):

    def setUp(self):
        super().setUp()
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")

    def launch_format(self, fmt, args, command):
        out = self.path(f"profile.{fmt}")
        proc = subprocess.run([SYNCPROF, "--format", fmt, "-o", out,
                               *with_mode(args), "--", *command],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return out

    def workload(self):
        return self.workload_cmd("mutex", "--threads", "2", "--iters", "60",
                                 "--hold-us", "3000")

    def blocking(self):
        return [BLOCKING, "mutex", "--truth", self.path("truth.json"),
                "--iters", "30", "--hold-us", "3000"]

    # --- folded ---------------------------------------------------------

    def check_folded(self, args, command, lock, leaf, tolerance):
        path = self.launch_format("folded", args, command)
        with open(path) as f:
            lines = parse_folded(f.read())
        truth = self.truth()
        mine = [(frames, value) for frames, l, value in lines if l == lock]
        self.assertTrue(mine, f"no {lock} line in {lines}")
        # The innermost frame, next to the lock, is the call site's; the
        # root is the class.
        self.assertTrue(all(frames and frames[-1] == leaf for frames, _ in mine),
                        mine)
        self.assertTrue(all(frames[0] == "[lock]" for frames, _ in mine), mine)
        self.assertWithin(sum(v for _, v in mine), truth["wait_ns"], tolerance)
        # One line per distinct stack: no two lines read the same.
        texts = [";".join(frames + [l]) for frames, l, _ in lines]
        self.assertEqual(len(texts), len(set(texts)))
        self.assertEqual(texts, sorted(texts))
        return lines

    def test_folded_full_mode_waits_match_the_truth(self):
        self.check_folded(["--mode", "full"], self.workload(),
                          "[mutex big_lock]", "timed_lock", 0.03)

    def test_folded_contended_mode_waits_match_the_truth(self):
        self.check_folded(["--mode", "contended"], self.blocking(),
                          "[mutex big_lock]", "wait_mutex", 0.02)

    # --- pprof ----------------------------------------------------------

    def check_pprof(self, args, command, leaf, tolerance):
        profile = Profile(self.launch_format("pprof", args, command))
        truth = self.truth()
        samples = profile.of("big_lock")
        self.assertTrue(samples, profile.samples)
        self.assertTrue(all(s["labels"]["type"] == "mutex" for s in samples))
        self.assertTrue(all(s["labels"]["class"] == "lock" for s in samples))
        self.assertEqual(sum(s["count"] for s in samples), truth["count"])
        self.assertWithin(sum(s["delay"] for s in samples), truth["wait_ns"],
                          tolerance)
        for s in samples:
            self.assertEqual(profile.functions(s)[0], leaf, s)
        return profile

    def test_pprof_full_mode_counts_exact_and_go_tool_pprof_names_them(self):
        profile = self.check_pprof(["--mode", "full"], self.workload(),
                                   "timed_lock", 0.03)
        top = profile.pprof("-top")
        self.assertIn("Type: delay", top)
        self.assertRegex(top, r"Build ID: [0-9a-f]{40}")
        self.assertRegex(top, r"(?m)^.*%.*%.*%\s+timed_lock$")
        top = profile.pprof("-top", "-sample_index=contentions")
        self.assertIn("Type: contentions", top)
        self.assertRegex(top, r"(?m)^\s+120\s.*\stimed_lock$")
        # The class label keeps the lock waits apart from the events.
        top = profile.pprof("-top", "-sample_index=contentions",
                            "-tagfocus=class=lock")
        self.assertRegex(top, r"(?m)^\s+120\s.*\stimed_lock$")

    def test_pprof_contended_mode_counts_exact(self):
        self.check_pprof(["--mode", "contended"], self.blocking(),
                         "wait_mutex", 0.02)

    # --- inlined calls ----------------------------------------------------

    def cxxlock(self):
        return [CXXLOCK, "--truth", self.path("truth.json"), "--threads", "2",
                "--iters", "10"]

    def test_inlined_calls_are_frames_of_their_own(self):
        """std::lock_guard -> std::mutex::lock -> __gthread_mutex_lock, all
        inlined into app::Counter::add(long): one location whose lines
        name each, innermost first, and folded frames marked _[i]."""
        profile = Profile(self.launch_format("pprof", ["--mode", "full"],
                                             self.cxxlock()))
        truth = self.truth()
        samples = profile.of("app::counter.mutex_")
        self.assertEqual(sum(s["count"] for s in samples), truth["add_count"])
        # pprof shows C++ names without their parameters and templates.
        leaf = profile.locations[samples[0]["locations"][0]]
        self.assertEqual(leaf[:4], ["__gthread_mutex_lock", "std::mutex::lock",
                                    "std::lock_guard::lock_guard",
                                    "app::Counter::add"], leaf)

        path = self.launch_format("folded", ["--mode", "full"], self.cxxlock())
        with open(path) as f:
            lines = [l for l in parse_folded(f.read())
                     if l[1] == "[mutex app::counter.mutex_]"]
        self.assertTrue(lines)
        for frames, _, _ in lines:
            self.assertEqual(frames[-1], "__gthread_mutex_lock_[i]", frames)
            self.assertIn("std::mutex::lock()_[i]", frames)
            add = [f for f in frames if f.startswith("app::Counter::add(long)")]
            self.assertEqual(len(add), 1, frames)
            self.assertLess(frames.index(add[0]),
                            frames.index("std::mutex::lock()_[i]"))

    def test_pprof_needs_an_output_file(self):
        proc = subprocess.run([SYNCPROF, "--format", "pprof", "--", "true"],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("-o FILE", proc.stderr)
        self.assertEqual(proc.stdout, "")


class StackProfiles(SyncprofTestCase):
    """Whole stacks in the outputs: the call site's function, its caller
    (the thread's function), then libc's start_thread.  Full mode walks
    the calls that waited; one that did not keeps its call site alone."""

    def setUp(self):
        super().setUp()
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")

    launch_format = Profiles.launch_format
    workload = Profiles.workload
    blocking = Profiles.blocking

    def check(self, mode, command, source, marker, callers, tolerance):
        """callers: the innermost functions of every big_lock stack."""
        args = ["--mode", mode, "--stack-depth", "32"]
        profile = Profile(self.launch_format("pprof", args, command))
        truth = self.truth()
        samples = profile.of("big_lock")
        self.assertEqual(sum(s["count"] for s in samples), truth["count"])
        self.assertWithin(sum(s["delay"] for s in samples), truth["wait_ns"],
                          tolerance)
        line = marker_line(source, marker)
        walked = 0
        for s in samples:
            functions = profile.functions(s)
            # The innermost frame is the call site: the same line.
            leaf = profile.lines[s["locations"][0]][-1]
            self.assertTrue(leaf[1].endswith(os.path.basename(source)), leaf)
            self.assertEqual(leaf[2], line, leaf)
            if mode == "full" and functions == callers[:1]:
                continue    # a call that did not wait: its call site only
            self.assertEqual(functions[:2], callers, functions)
            self.assertIn("start_thread", functions)
            walked += s["delay"]
        # Full mode walks the calls that waited: nearly all the delay.
        self.assertGreater(walked, 0.9 * truth["wait_ns"])
        top = profile.pprof("-top", "-cum")
        self.assertRegex(top, rf"(?m)\s{callers[1]}$")

        path = self.launch_format("folded", args, command)
        with open(path) as f:
            lines = [l for l in parse_folded(f.read()) if l[1] == "[mutex big_lock]"]
        self.assertTrue(lines)
        for frames, _, _ in lines:
            self.assertEqual(frames[0], "[lock]", frames)
            frames = frames[1:]
            if mode == "full" and frames == callers[:1]:
                continue
            self.assertEqual(frames[-2:], callers[::-1], frames)
            self.assertIn("start_thread", frames)
        self.assertWithin(sum(v for _, _, v in lines), self.truth()["wait_ns"],
                          tolerance)

    def test_full_mode_stacks_in_folded_and_pprof(self):
        self.check("full", self.workload(), WORKLOAD_SOURCE, "timed_lock",
                   ["timed_lock", "mutex_worker"], 0.03)

    def test_contended_mode_stacks_in_folded_and_pprof(self):
        self.check("contended", self.blocking(), BLOCKING_SOURCE,
                   "blocking_mutex", ["wait_mutex", "waiter"], 0.02)

    # --- two paths through one wrapper: JSON, folded, pprof ----------------

    def check_paths(self, mode):
        command = [STACKS_TARGET, "paths", "--iters", "20", "--hold-us", "3000",
                   "--truth", self.path("truth.json")]
        args = ["--mode", mode, "--stack-depth", "32", "--top", "0"]
        # Three runs, each against its own truth.
        run = self.launch(args, command)
        self.assertEqual(run.returncode, 0, run.stderr)
        json_truth = self.truth()
        json_counts = {}
        for row in run.reports[0]["rows"]:
            if row["object_symbol"] != "stack_lock":
                continue
            for stack in row["stacks"]:
                names = [f["function"] for f in stack["frames"]]
                for name in ("path_a", "path_b"):
                    if name in names:
                        json_counts[name] = json_counts.get(name, 0) + stack["count"]
        profile = Profile(self.launch_format("pprof", args, command))
        pprof_truth = self.truth()
        path = self.launch_format("folded", args, command)
        folded_truth = self.truth()
        with open(path) as f:
            folded = [l for l in parse_folded(f.read()) if l[1] == "[mutex stack_lock]"]
        for name in ("path_a", "path_b"):
            # Counts are exact in every output: each acquisition blocks once.
            self.assertEqual(json_counts.get(name), json_truth["paths"][name]["count"])
            samples = [s for s in profile.of("stack_lock")
                       if name in profile.functions(s)]
            self.assertEqual(sum(s["count"] for s in samples),
                             pprof_truth["paths"][name]["count"])
            self.assertEqual(sum(s["count"] for s in samples), json_counts[name])
            self.assertWithin(sum(s["delay"] for s in samples),
                              pprof_truth["paths"][name]["wait_ns"])
            for s in samples:
                self.assertEqual(profile.functions(s)[:2], ["stackwrap_lock", name])
            mine = [(frames, v) for frames, _, v in folded if name in frames]
            self.assertTrue(mine, folded)
            for frames, _ in mine:
                self.assertEqual(frames[-2:], [name, "stackwrap_lock"], frames)
            self.assertWithin(sum(v for _, v in mine),
                              folded_truth["paths"][name]["wait_ns"])
        top = profile.pprof("-top", "-cum")
        for name in ("path_a", "path_b", "stackwrap_lock"):
            self.assertRegex(top, rf"(?m)\s{name}$")

    def test_two_paths_in_json_folded_and_pprof_contended(self):
        self.check_paths("contended")

    def test_two_paths_in_json_folded_and_pprof_full(self):
        self.check_paths("full")

    def test_g_prints_each_rows_stacks(self):
        proc = subprocess.run(
            [SYNCPROF, "--mode", "contended", "--stack-depth", "32", "-g",
             "-o", self.path("table.txt"), "--", *self.workload()],
            capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(self.path("table.txt")) as f:
            lines = f.read().splitlines()
        at = next(i for i, l in enumerate(lines)
                  if re.match(r"^mutex\s+big_lock\s", l))
        self.assertRegex(lines[at + 1], r"^    --\d+\.\d\d%-- \d+ waits? ")
        frames = []
        for l in lines[at + 2:]:
            if not l.startswith("            "):
                break
            frames.append(l.strip())
        self.assertRegex(frames[0], r"^timed_lock \(workload\.c:\d+\)$")
        self.assertRegex(frames[1], r"^mutex_worker \(workload\.c:\d+\)$")
        self.assertTrue(any(f.startswith("start_thread") for f in frames), frames)


if __name__ == "__main__":
    unittest.main()
