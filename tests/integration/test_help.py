"""syncprof --help: each section header has its own options under it, no
header repeats, and every option the parser knows is shown once."""
import re
import subprocess
import unittest

from harness import SYNCPROF

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
        every = [opt for _, opts in sections for opt in opts]
        self.assertEqual(len(every), len(set(every)), every)


class Diagnostics(unittest.TestCase):

    def test_libbpf_lines_carry_one_prefix(self):
        proc = subprocess.run([SYNCPROF, "-vv", "-d", "0.2", "--", "true"],
                              capture_output=True, text=True, timeout=120)
        self.assertIn("libbpf: ", proc.stderr)
        self.assertNotIn("libbpf: libbpf:", proc.stderr)
