#!/usr/bin/python3
"""Runs syncprof's tests: the cmocka unit tests, then the integration
tests (root only), and closes with one 'N passed, N failed, N skipped'
line.  --build picks the build whose binaries, test programs and
fixtures are tested (build/, or build-san/ for `make sanitize`).
The integration tests run in --jobs processes (SYNCPROF_TEST_JOBS,
default 2), a whole module to each as one ends; what fails beside the
others runs again alone, and the closing lines name each test that
passed only then.  --hogs N runs N busy loops beside them all (`make
test-loaded`): the tests must hold on a machine whose CPUs are taken."""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
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
    env.setdefault("SYNCPROF_TARGETS",
                   os.path.join(os.path.abspath(build), "tests", "targets"))
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


def integration_suite(pattern):
    """The modules that match pattern: one glob, or several separated by
    spaces or commas."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    here = os.path.join(ROOT, "tests", "integration")
    suite = unittest.TestSuite()
    for one in re.split(r"[\s,]+", pattern.strip()):
        suite.addTests(unittest.defaultTestLoader.discover(
            here, pattern=one, top_level_dir=here))
    return suite


def start_hogs(n):
    """n busy loops at the tests' own priority, for the whole run."""
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
            for _ in range(n)]
    if hogs:
        print(f"{n} busy loops run beside the tests "
              f"(PIDs {' '.join(str(h.pid) for h in hogs)})")
        sys.stdout.flush()
    return hogs


def stop_hogs(hogs):
    for hog in hogs:
        hog.kill()
        hog.wait()


def test_ids(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from test_ids(t)
        else:
            yield t.id()


def alone_reasons(suite):
    """{test id: why} for the tests whose class says they need the
    machine to themselves (its run_alone attribute)."""
    reasons = {}
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            reasons.update(alone_reasons(t))
        elif getattr(t, "run_alone", None):
            reasons[t.id()] = t.run_alone
    return reasons


def run_ids(ids, summary=None):
    """Runs the named tests here; returns (passed, failed ids, skipped,
    times) and writes them to summary (a shard's JSON) when given."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    suite = unittest.defaultTestLoader.loadTestsFromNames(ids)
    runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout,
                                     resultclass=Result)
    result = runner.run(suite)
    failed = []
    for t, _ in result.failures + result.errors:
        # A subtest's test, once; a class or module fixture by its name.
        name = getattr(t, "test_case", t).id()
        if name not in failed:
            failed.append(name)
    skipped = len(result.skipped)
    passed = result.testsRun - len(failed) - skipped
    if summary:
        with open(summary, "w") as f:
            json.dump({"passed": passed, "failed": failed,
                       "skipped": skipped, "times": result.times}, f)
    return passed, failed, skipped, result.times


def modules_of(ids):
    """The tests by module, the biggest first: a module runs whole in one
    process (its tests share their targets)."""
    modules = {}
    for i in ids:
        modules.setdefault(i.split(".")[0], []).append(i)
    return sorted(modules.values(), key=len, reverse=True)


def run_integration(build, pattern, jobs):
    """The integration tests in `jobs` processes at once (they mostly wait
    on their targets' sleeps), a module to each as one ends.  A test that
    fails under that load is run again alone, and counts as failed only if
    it fails there too.  Returns (passed, failed, skipped, the names of
    the tests that passed only alone)."""
    if os.geteuid() != 0:
        print("integration tests need root (BPF and uprobes); not run")
        return 0, 1, 0, []
    os.environ["SYNCPROF_BUILD"] = os.path.abspath(build)
    suite = integration_suite(pattern)
    ids = list(dict.fromkeys(test_ids(suite)))
    if jobs <= 1:
        passed, failed, skipped, times = run_ids(ids)
        print_slowest(times)
        return passed, len(failed), skipped, []
    # Tests that need the machine to themselves run after the others.
    reasons = alone_reasons(suite)
    solo = [i for i in ids if i in reasons]
    passed = skipped = 0
    failed, times = [], []
    with tempfile.TemporaryDirectory(prefix="syncprof-tests.") as tmp:
        queue = list(enumerate(modules_of([i for i in ids
                                           if i not in reasons])))
        running = []
        while queue or running:
            while queue and len(running) < jobs:
                n, tests = queue.pop(0)
                base = os.path.join(tmp, f"module{n}")
                with open(base + ".txt", "w") as f:
                    f.write("\n".join(tests))
                log = open(base + ".log", "w")
                running.append((subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), "--build",
                     build, "--shard", base + ".txt", "--summary",
                     base + ".json"],
                    cwd=ROOT, stdout=log, stderr=subprocess.STDOUT), log, base))
            time.sleep(0.2)
            for entry in [e for e in running if e[0].poll() is not None]:
                proc, log, base = entry
                running.remove(entry)
                log.close()
                with open(base + ".log") as f:
                    sys.stdout.write(f.read())
                sys.stdout.flush()
                try:
                    with open(base + ".json") as f:
                        got = json.load(f)
                except (OSError, ValueError):
                    print(f"{base}: ended without a summary "
                          f"(exit {proc.returncode})")
                    failed.append(base)
                    continue
                passed += got["passed"]
                skipped += got["skipped"]
                failed += got["failed"]
                times += [tuple(t) for t in got["times"]]
    if solo:
        print(f"\n{len(solo)} run by themselves, as their classes ask:")
        for why in sorted(set(reasons[i] for i in solo)):
            print(f"  {why}")
        sys.stdout.flush()
        got = run_ids(solo)
        passed += got[0]
        skipped += got[2]
        times += [tuple(t) for t in got[3]]
        solo_failed = got[1]
    else:
        solo_failed = []
    print_slowest(times)
    # Only tests can run again: not a process or a fixture that broke;
    # and not those that ran alone already.
    if not failed or any(f not in ids for f in failed):
        return passed, len(failed) + len(solo_failed), skipped, []
    print(f"\n{len(failed)} failed beside other tests; each again, alone:")
    sys.stdout.flush()
    again, still, skipped_again, _ = run_ids(failed)
    return (passed + again, len(still) + len(solo_failed),
            skipped + skipped_again, sorted(set(failed) - set(still)))


def print_slowest(times):
    print("slowest integration tests:")
    for secs, name in sorted(times, reverse=True)[:12]:
        print(f"  {secs:6.1f} s  {name}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--unit-only", action="store_true")
    parser.add_argument("--no-unit", action="store_true",
                        help="the integration tests only")
    parser.add_argument("--pattern", default="test_*.py",
                        help="integration modules: a glob, or globs "
                        "separated by spaces or commas")
    parser.add_argument("--jobs", type=int,
                        default=int(os.environ.get("SYNCPROF_TEST_JOBS", "2")),
                        help="integration test processes at once")
    parser.add_argument("--hogs", type=int,
                        default=int(os.environ.get("SYNCPROF_TEST_HOGS", "0")),
                        help="busy loops to run beside the tests")
    parser.add_argument("--shard", help=argparse.SUPPRESS)
    parser.add_argument("--summary", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.shard:
        os.environ["SYNCPROF_BUILD"] = os.path.abspath(args.build)
        with open(args.shard) as f:
            run_ids(f.read().split(), args.summary)
        return 0
    # Stopped from outside, the busy loops go too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    hogs = start_hogs(args.hogs)
    started = time.monotonic()
    try:
        up, uf, us = (0, 0, 0) if args.no_unit else run_unit(args.build)
        ip = ifail = iskip = 0
        alone = []
        if not args.unit_only:
            ip, ifail, iskip, alone = run_integration(args.build, args.pattern,
                                                      args.jobs)
    finally:
        stop_hogs(hogs)
    passed, failed, skipped = up + ip, uf + ifail, us + iskip
    # Fragile tests stay in sight: each that passed only alone, by name,
    # right above the count.
    if alone:
        print(f"\npassed only when run again alone ({len(alone)}; they "
              f"failed beside the other tests{' and the busy loops' if hogs else ''}):")
        for name in alone:
            print(f"  {name}")
    busy = f" beside {len(hogs)} busy loops" if hogs else ""
    print(f"{passed} passed, {failed} failed, {skipped} skipped, "
          f"{len(alone)} passed only alone{busy} "
          f"({time.monotonic() - started:.0f} s)")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
