"""README.md: its quick start runs as written against the bundled demo and
prints what its samples show, in shape; `make demo` too.  Every relative
link and #anchor in README.md and docs/*.md resolves.  The README stays a
quick start (400 lines at most) whose generated blocks are what
tests/docs/readme_samples.py writes, its package table the Makefile's,
and the build group (all `make demo` installs) holds every header the
build includes."""
import collections
import glob
import os
import re
import subprocess
import sys
import unittest
import urllib.request

from harness import (BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase, free_port,
                     read_line)

sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
import readme_samples as samples  # noqa: E402

README = os.path.join(ROOT, "README.md")
REPORT = {("summary", ""), ("rule", ""), ("row", "")}


def readme_text():
    with open(README) as f:
        return f.read()


def run_samples(text):
    """{name: (command, output lines)} of the README's run samples."""
    out = {}
    for name, (_, _, body) in samples.blocks(text).items():
        if name != "packages":
            lines = samples.fenced(body)
            out[name] = (lines[0][2:], lines[1:])
    return out


def slug(title):
    """GitHub's anchor for a heading."""
    title = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return title.replace(" ", "-")


def markdown_anchors(path):
    """Every heading's anchor (repeats get -1, -2 ...)."""
    seen, out, fence = collections.Counter(), set(), False
    with open(path) as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            m = not fence and re.match(r"^#+ (.*)", line)
            if m:
                base = slug(m.group(1))
                out.add(base if not seen[base] else f"{base}-{seen[base]}")
                seen[base] += 1
    return out


def markdown_links(path):
    """(line number, target) of each inline link outside code."""
    out, fence = [], False
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            line = re.sub(r"`[^`]*`", "", line)
            out += [(number, t) for t in re.findall(r"\]\(([^)\s]+)\)", line)]
    return out


class QuickStart(SyncprofTestCase):
    """The README's commands, run as a user would type them."""

    def setUp(self):
        super().setUp()
        self.demo = samples.Demo(BUILD, timeout=HANG_S)
        self.addCleanup(self.demo.stop)

    def assertShape(self, expected, lines, command):
        missing = expected - samples.shape(lines)
        self.assertFalse(missing, f"{command}: the README shows {missing}, "
                                  f"the run printed:\n" + "\n".join(lines))

    def run_syncprof(self, command, argv):
        proc = subprocess.run(argv, cwd=self.tmp.name, capture_output=True,
                              text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, f"{command}: {proc.stderr}")
        return proc.stdout

    def open_flame_graph(self, command, argv, objects):
        """go tool pprof -http: served on a port of the test's, without a
        browser; its flame graph names the locks (-tagleaf)."""
        port = free_port()
        at = argv.index("-http") + 1
        argv = [*argv[:3], "-no_browser", *argv[3:at], f"127.0.0.1:{port}",
                *argv[at + 1:]]
        proc = subprocess.Popen(argv, cwd=self.tmp.name, text=True,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        line = read_line(proc.stdout.fileno(), HANG_S)
        self.assertIn("Serving web UI on", line, command)
        url = f"http://127.0.0.1:{port}/ui/flamegraph"
        with urllib.request.urlopen(url, timeout=HANG_S) as page:
            html = page.read().decode()
        names = set(re.findall(r'(?<=[\[,])"([^"]*)"', html))
        self.assertTrue(names & set(samples.TYPES), f"{url}: no lock type")
        self.assertTrue(names & objects, f"{url}: none of {objects}")
        proc.stdout.close()

    def test_quick_start_runs_as_written(self):
        text = readme_text()
        commands = samples.quickstart(text)
        shown = {command: (name, lines)
                 for name, (command, lines) in run_samples(text).items()}
        shown_demo = run_samples(text)["demo"][1]
        self.assertTrue(commands and commands[0].startswith("PID="), commands)
        objects, ran = set(), 0
        for command in commands[1:]:
            argv = samples.argv_of(command, self.demo.pid, SYNCPROF)
            if argv[0] == SYNCPROF:
                stdout = self.run_syncprof(command, argv)
                lines = stdout.splitlines()
                objects |= {line.split()[1] for line in lines
                            if samples.kind(line) == "row"}
                if command in shown:
                    name, sample = shown[command]
                    self.assertShape(samples.shape(sample),
                                     samples.excerpt(name, stdout), command)
                elif "-o" in argv:
                    out = os.path.join(self.tmp.name, argv[argv.index("-o") + 1])
                    with open(out, "rb") as f:
                        self.assertEqual(f.read(2), b"\x1f\x8b", command)
                else:  # "the first report is the table above"
                    table = {s for s in samples.shape(shown_demo) if s[0] != "title"}
                    self.assertShape(table, lines, command)
            elif argv[:4] == ["go", "tool", "pprof", "-http"]:
                self.open_flame_graph(command, argv, objects)
            else:
                self.fail(f"the test does not know how to run {command!r}")
            ran += 1
        self.assertGreaterEqual(ran, 5)

    def test_make_demo(self):
        if os.path.realpath(BUILD) != os.path.realpath(os.path.join(ROOT, "build")):
            self.skipTest("make demo builds build/, not this build")
        command, sample = run_samples(readme_text())["demo"]
        self.assertEqual(command, "make demo")
        output = samples.run_make("demo")
        self.assertShape(samples.shape(sample), samples.excerpt("demo", output),
                         command)


class Links(unittest.TestCase):

    def test_every_relative_link_and_anchor_resolves(self):
        files = [README, *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]
        bad = []
        for path in files:
            for number, target in markdown_links(path):
                if re.match(r"^[a-z]+:", target):
                    continue
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) \
                    if file else path
                where = f"{os.path.relpath(path, ROOT)}:{number}: {target}"
                if not os.path.exists(dest):
                    bad.append(f"{where}: no such file")
                elif anchor and anchor not in markdown_anchors(dest):
                    bad.append(f"{where}: no such heading")
        self.assertFalse(bad, "\n".join(bad))


    def test_docs_named_in_the_sources_exist(self):
        """Messages, comments and the man page name docs/X.md files."""
        bad = []
        for path in glob.glob(os.path.join(ROOT, "user", "**", "*.[ch8]"),
                              recursive=True):
            with open(path, errors="replace") as f:
                for name in set(re.findall(r"docs/[\w.-]+\.md", f.read())):
                    if not os.path.exists(os.path.join(ROOT, name)):
                        bad.append(f"{os.path.relpath(path, ROOT)}: {name}")
        self.assertFalse(bad, "\n".join(bad))


class Shape(unittest.TestCase):

    def test_readme_is_a_quick_start(self):
        text = readme_text()
        self.assertLessEqual(len(text.rstrip("\n").split("\n")), 400)
        first = re.search(r"```\n(.*?)```", text, re.S).group(1).splitlines()
        self.assertTrue(first[0].startswith("make demo"), first)
        self.assertTrue(first[1].startswith("make test"), first)
        self.assertLess(len(samples.quickstart(text)), 20)

    def test_samples_have_the_shape_the_script_writes(self):
        text = readme_text()
        found = run_samples(text)
        self.assertEqual(set(found), set(samples.KEEP))
        commands = samples.quickstart(text)
        for name, (command, lines) in found.items():
            if name == "demo":
                self.assertEqual(command, "make demo")
            else:
                self.assertIn(command, commands, f"sample {name}")
            firsts = [part[0] for part in samples.sections(
                "\n".join(line for line in lines if line != "..."))]
            for keep in samples.KEEP[name]:
                self.assertTrue(any(f.startswith(keep) for f in firsts),
                                f"sample {name}: no section {keep!r}")
            kinds = samples.shape(lines)
            if name in ("demo", "stacks"):
                self.assertLessEqual(REPORT, kinds, f"sample {name}")
            self.assertIn(("row", ""), kinds, f"sample {name}")
        self.assertIn(("frame", ""), samples.shape(found["stacks"][1]))

    def test_package_table_is_the_makefiles(self):
        _, _, body = samples.blocks(readme_text())["packages"]
        self.assertEqual(body, samples.packages_block())


def system_headers():
    """The system headers syncprof's sources (and protoc-c's output)
    include, as the compiler finds them."""
    names = set()
    sources = [*glob.glob(os.path.join(ROOT, "user", "**", "*.[ch]"), recursive=True),
               *glob.glob(os.path.join(ROOT, "bpf", "**", "*.[ch]"), recursive=True),
               *glob.glob(os.path.join(BUILD, "**", "*.pb-c.h"), recursive=True)]
    for path in sources:
        with open(path, errors="replace") as f:
            names |= set(re.findall(r"^#include <([^>]+)>", f.read(), re.M))
    paths = {}
    for name in sorted(names):
        deps = subprocess.run(["cc", "-M", "-x", "c", "-"], input=f"#include <{name}>\n",
                              capture_output=True, text=True).stdout
        found = [p for p in deps.replace("\\", " ").split() if p.endswith("/" + name)]
        paths[name] = found[0] if found else None
    return paths


class Packages(unittest.TestCase):

    def test_the_build_group_holds_every_header_the_build_includes(self):
        """make demo installs only the build group: every header syncprof
        is compiled with comes from it (or what it depends on)."""
        group = samples.make_var("DEB_BUILD_PKGS")
        closure = subprocess.run(
            ["apt-cache", "depends", "--recurse", "--no-recommends",
             "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces",
             "--no-enhances", *group], capture_output=True, text=True,
            check=True).stdout
        closure = {line.strip("<>") for line in closure.splitlines()
                   if not line.startswith(" ")}
        headers = system_headers()
        owners = {}
        found = subprocess.run(["dpkg", "-S", *filter(None, headers.values())],
                               capture_output=True, text=True).stdout
        for line in found.splitlines():
            pkgs, _, path = line.partition(": ")
            owners[path] = {p.strip().split(":")[0] for p in pkgs.split(",")}
        bad = []
        for name, path in headers.items():
            owner = owners.get(path, set())
            if not path or not owner & closure:
                bad.append(f"<{name}>: {path or 'not found'} is in "
                           f"{sorted(owner) or 'no package'}, not in the "
                           "build group (DEB_BUILD_PKGS) or its dependencies")
        self.assertFalse(bad, "\n".join(bad))


if __name__ == "__main__":
    unittest.main()
