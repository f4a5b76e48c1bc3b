#!/usr/bin/python3
"""Runs syncprof's tests: the cmocka unit tests, then the integration
tests (root only), and closes with one 'N passed, N failed' line."""
import argparse
import glob
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_unit(build):
    """Each cmocka binary prints '[  PASSED  ] N test(s).' and
    '[  FAILED  ] N test(s)...'; a crash counts as one failure."""
    passed = failed = 0
    for binary in sorted(glob.glob(os.path.join(build, "tests/unit/test_*"))):
        if binary.endswith((".o", ".d")):
            continue
        proc = subprocess.run([binary], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        out = proc.stdout + proc.stderr
        p = sum(int(n) for n in re.findall(r"\[  PASSED  \] (\d+) test", out))
        f = sum(int(n) for n in re.findall(r"\[  FAILED  \] (\d+) test", out))
        if proc.returncode != 0 and f == 0:
            f = 1
        passed += p
        failed += f
        name = os.path.basename(binary)
        print(f"unit {name}: {p} passed, {f} failed")
        if f:
            sys.stdout.write(out)
    return passed, failed


class Result(unittest.TextTestResult):
    pass


def run_integration(build, pattern):
    if os.geteuid() != 0:
        print("integration tests need root (BPF and uprobes); not run")
        return 0, 1
    os.environ["SYNCPROF_BUILD"] = os.path.abspath(build)
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    suite = unittest.defaultTestLoader.discover(
        os.path.join(ROOT, "tests", "integration"), pattern=pattern,
        top_level_dir=os.path.join(ROOT, "tests", "integration"))
    runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                     resultclass=Result)
    result = runner.run(suite)
    failed = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    return result.testsRun - failed - skipped, failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--unit-only", action="store_true")
    parser.add_argument("--pattern", default="test_*.py")
    args = parser.parse_args()
    up, uf = run_unit(args.build)
    ip = ifail = 0
    if not args.unit_only:
        ip, ifail = run_integration(args.build, args.pattern)
    passed, failed = up + ip, uf + ifail
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
