"""syncprof --help: each section header has its own options under it, no
header repeats, and every option the parser knows is shown once.  Every
column the table can print is explained in one line, the model's
(columnmodel.py reads it from the source), in --help and the man page."""
import os
import re
import subprocess
import unittest

from columnmodel import help_lines
from harness import ROOT, SYNCPROF

HEADER = re.compile(r"^ (\S.*):$")
OPTION = re.compile(r"^  (?:-\w, |    )(--[a-z][a-z-]*)")


class Help(unittest.TestCase):

    def sections(self):
        text = subprocess.run([SYNCPROF, "--help"], capture_output=True,
                              text=True, timeout=30, check=True).stdout
        sections, current = [], None
        for line in text.splitlines():
            m = HEADER.match(line)
            if m:
                current = (m.group(1), [])
                sections.append(current)
                continue
            m = OPTION.match(line)
            if m and current:
                current[1].append(m.group(1))
        return sections, text

    def test_every_header_has_options_and_none_repeats(self):
        sections, text = self.sections()
        names = [name for name, _ in sections]
        self.assertGreaterEqual(len(names), 6, text)
        self.assertEqual(len(names), len(set(names)), f"repeated: {names}")
        for name, options in sections:
            self.assertTrue(options, f"section {name!r} has no options:\n{text}")

    def test_options_sit_under_their_own_header(self):
        sections, _ = self.sections()
        where = {opt: name for name, opts in sections for opt in opts}
        self.assertTrue(where["--record"].startswith("Timeline"))
        self.assertTrue(where["--stack-depth"].startswith("Stacks"))
        self.assertTrue(where["--tid"].startswith("Filters"))
        self.assertTrue(where["--states"].startswith("Thread states"))
        self.assertTrue(where["--map-size"].startswith("Limits"))
        self.assertTrue(where["--serve"].startswith("Serving"))
        self.assertTrue(where["--max-series"].startswith("Serving"))
        self.assertTrue(where["--duration"].startswith("When to report"))
        every = [opt for _, opts in sections for opt in opts]
        self.assertEqual(len(every), len(set(every)), every)


def column_line(titles, about):
    return re.compile(rf"^  {re.escape(titles)} +{re.escape(about)}$")


class Columns(unittest.TestCase):

    def test_help_explains_every_column(self):
        text = subprocess.run([SYNCPROF, "--help"], capture_output=True,
                              text=True, timeout=30, check=True).stdout
        lines = text.splitlines()
        start = next(i for i, l in enumerate(lines)
                     if l.startswith("Columns of the table"))
        part = lines[start + 1:]
        want = help_lines()
        self.assertEqual(len(part), len(want), text)
        for line, (titles, about) in zip(part, want):
            self.assertRegex(line, column_line(titles, about))
            self.assertLess(len(line), 80, line)

    def test_the_man_page_says_the_same(self):
        with open(os.path.join(ROOT, "user", "syncprof.8")) as f:
            page = f.read()
        block = re.search(r"The columns, one line each.*?\n\.nf\n(.*?)\n\.fi\n",
                          page, re.S).group(1)
        lines = [l.replace("\\-", "-").replace("\\(aq", "'")
                  .replace("\\e", "\\") for l in block.splitlines()]
        want = help_lines()
        self.assertEqual(len(lines), len(want), block)
        for line, (titles, about) in zip(lines, want):
            self.assertRegex(line, column_line(titles, about))


class Diagnostics(unittest.TestCase):

    def test_libbpf_lines_carry_one_prefix(self):
        proc = subprocess.run([SYNCPROF, "-vv", "-d", "0.2", "--", "true"],
                              capture_output=True, text=True, timeout=120)
        self.assertIn("libbpf: ", proc.stderr)
        self.assertNotIn("libbpf: libbpf:", proc.stderr)
