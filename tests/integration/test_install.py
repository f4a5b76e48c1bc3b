"""make install: the binary, a man page that man renders and that lists
every option --help lists, a bash completion that loads and completes;
-V prints the versions."""
import os
import re
import subprocess
import tempfile
import unittest

from harness import HANG_S, ROOT, SYNCPROF


def long_options(text):
    return set(re.findall(r"--[a-z][a-z-]+", text))


class Install(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="syncprof-install-")
        self.addCleanup(self.tmp.cleanup)
        self.dest = self.tmp.name
        proc = subprocess.run(["make", "-s", "--no-print-directory", "install",
                               f"DESTDIR={self.dest}", "PREFIX=/usr"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def installed(self, path):
        return os.path.join(self.dest, path.lstrip("/"))

    def test_install_places_binary_man_page_and_completion(self):
        binary = self.installed("/usr/sbin/syncprof")
        self.assertTrue(os.access(binary, os.X_OK))
        version = subprocess.run([binary, "-V"], capture_output=True, text=True)
        self.assertEqual(version.returncode, 0)
        self.assertRegex(version.stdout, r"^syncprof \d+\.\d+ \(libbpf \d+\.\d+\)\n$")
        self.assertTrue(os.path.isfile(
            self.installed("/usr/share/bash-completion/completions/syncprof")))
        proc = subprocess.run(["make", "-s", "--no-print-directory", "uninstall",
                               f"DESTDIR={self.dest}", "PREFIX=/usr"],
                              cwd=ROOT, capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertFalse(os.path.exists(binary))
        self.assertFalse(os.path.exists(self.installed("/usr/share/man/man8/syncprof.8")))

    def test_systemd_unit_serves_all_on_loopback(self):
        unit = self.installed("/usr/lib/systemd/system/syncprof.service")
        with open(unit) as f:
            text = f.read()
        start = re.search(r"^ExecStart=(\S+) (.*)$", text, re.M)
        self.assertTrue(start, text)
        self.assertEqual(start.group(1), "/usr/sbin/syncprof")
        args = start.group(2).split()
        self.assertIn("--all", args)
        self.assertTrue(args[args.index("--serve") + 1].startswith("127.0.0.1:"))
        self.assertRegex(text, r"(?m)^WantedBy=multi-user.target$")
        # Its command line is one syncprof accepts: a bad option would
        # exit 2 before anything else; --help after it stops there.
        binary = self.installed("/usr/sbin/syncprof")
        proc = subprocess.run([binary, *args, "--help"], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_man_page_renders_and_documents_every_option(self):
        page = self.installed("/usr/share/man/man8/syncprof.8")
        env = dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0")
        proc = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                              env=env, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("warning", proc.stderr)
        text = re.sub(r".\x08", "", proc.stdout)  # overstrike, if any
        for section in ("SYNOPSIS", "MODES", "OPTIONS", "REPORT", "JSON",
                        "PROFILES", "EXIT STATUS", "EXAMPLES"):
            self.assertIn(section, text)
        self.assertIn("--no-coalesce", text)
        # Options compared on the source: rendering may hyphenate.
        with open(page) as f:
            source = f.read().replace("\\-", "-")
        helped = long_options(subprocess.run([SYNCPROF, "--help"], capture_output=True,
                                             text=True).stdout)
        documented = long_options(source)
        self.assertEqual(helped - documented, set(), "options missing from the man page")
        self.assertEqual(documented - helped, set(),
                         "the man page documents options --help does not know")

    def test_completion_loads_and_completes(self):
        script = self.installed("/usr/share/bash-completion/completions/syncprof")

        def complete(*words):
            line = " ".join(f"'{w}'" for w in words)
            proc = subprocess.run(
                ["bash", "--norc", "-c",
                 f'source "{script}" && complete -p syncprof >/dev/null && '
                 f'COMP_WORDS=({line}) && COMP_CWORD=$(({len(words)} - 1)) && '
                 f'_syncprof && printf "%s\\n" "${{COMPREPLY[@]}}"'],
                capture_output=True, text=True, timeout=HANG_S)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            return proc.stdout.split()

        self.assertEqual(complete(SYNCPROF, "--sor"), ["--sort"])
        self.assertEqual(sorted(complete(SYNCPROF, "--format", "")),
                         sorted(["table", "csv", "json", "folded", "pprof"]))
        self.assertEqual(sorted(complete(SYNCPROF, "--mode", "")), ["contended", "full"])
        self.assertIn(str(os.getpid()), complete(SYNCPROF, "--pid", str(os.getpid())))
        self.assertIn("--per-thread", complete(SYNCPROF, "--per"))
        self.assertIn("true", complete(SYNCPROF, "--", "tru"))
        self.assertEqual(sorted(complete(SYNCPROF, "--type", "rw")),
                         ["rwlock-r", "rwlock-w"])
        self.assertIn("--min-wait", complete(SYNCPROF, "--min"))
        # Every DURATION the same rule: seconds, or a number and a unit.
        for option in ("-d", "--interval", "--min-wait"):
            offered = complete(SYNCPROF, option, "")
            self.assertIn("1", offered)
            self.assertTrue(any(re.fullmatch(r"\d+(ms|us|m)", w)
                                for w in offered), offered)
        # --tid offers the threads of the --pid given.
        self.assertEqual(complete(SYNCPROF, "--pid", str(os.getpid()), "--tid", ""),
                         sorted(os.listdir(f"/proc/{os.getpid()}/task"), key=str))


if __name__ == "__main__":
    unittest.main()
