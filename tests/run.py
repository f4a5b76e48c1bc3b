#!/usr/bin/python3
"""Runs syncprof's tests: the cmocka unit tests, then the integration
tests (root only), and closes with one 'N passed, N failed, N skipped'
line.  --build picks the build whose binaries, test programs and
fixtures are tested (build/, or build-san/ for `make sanitize`)."""
import argparse
import glob
import os
import re
import subprocess
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_unit(build):
    """Each cmocka binary prints '[  PASSED  ] N test(s).',
    '[  FAILED  ] N test(s)...' and '[  SKIPPED ] N test(s)...'; a crash
    counts as one failure."""
    passed = failed = skipped = 0
    env = dict(os.environ)
    env.setdefault("SYNCPROF_FIXTURES",
                   os.path.join(os.path.abspath(build), "tests", "fixtures"))
    for binary in sorted(glob.glob(os.path.join(build, "tests/unit/test_*"))):
        if binary.endswith((".o", ".d")):
            continue
        proc = subprocess.run([binary], cwd=ROOT, capture_output=True,
                              text=True, timeout=300, env=env)
        out = proc.stdout + proc.stderr
        p = sum(int(n) for n in re.findall(r"\[  PASSED  \] (\d+) test", out))
        f = sum(int(n) for n in re.findall(r"\[  FAILED  \] (\d+) test", out))
        s = sum(int(n) for n in re.findall(r"\[  SKIPPED \] (\d+) test", out))
        if proc.returncode != 0 and f == 0:
            f = 1
        passed += p
        failed += f
        skipped += s
        name = os.path.basename(binary)
        print(f"unit {name}: {p} passed, {f} failed, {s} skipped")
        if f or s:
            sys.stdout.write(out)
    return passed, failed, skipped


class Result(unittest.TextTestResult):
    """Also keeps each test's wall time, for the slowest-tests list."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.times = []

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        self.times.append((time.monotonic() - self._started, test.id()))
        super().stopTest(test)


def run_integration(build, pattern):
    if os.geteuid() != 0:
        print("integration tests need root (BPF and uprobes); not run")
        return 0, 1, 0
    os.environ["SYNCPROF_BUILD"] = os.path.abspath(build)
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    suite = unittest.defaultTestLoader.discover(
        os.path.join(ROOT, "tests", "integration"), pattern=pattern,
        top_level_dir=os.path.join(ROOT, "tests", "integration"))
    runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                     resultclass=Result)
    result = runner.run(suite)
    print("slowest integration tests:")
    for secs, name in sorted(result.times, reverse=True)[:12]:
        print(f"  {secs:6.1f} s  {name}")
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    return result.testsRun - failed - skipped, failed, skipped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--unit-only", action="store_true")
    parser.add_argument("--pattern", default="test_*.py")
    args = parser.parse_args()
    up, uf, us = run_unit(args.build)
    ip = ifail = iskip = 0
    if not args.unit_only:
        ip, ifail, iskip = run_integration(args.build, args.pattern)
    passed, failed, skipped = up + ip, uf + ifail, us + iskip
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
