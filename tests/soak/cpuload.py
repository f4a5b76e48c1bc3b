#!/usr/bin/env python3
"""syncprof --all --serve's CPU under a fixed load, for before/after
comparisons of its own cost (docs/performance.md).

The load is the soak's without its clock (tests/soak/soak.py): a storm
of new programs (a fresh copy of /bin/true written, run and deleted, at
most STORM_RATE a second), dlchurn --copies every CHURN_PAUSE_MS,
optionally PostgreSQL under pgbench -C (--pg), and /metrics fetched
every SCRAPE_S seconds (by urllib, not Prometheus).  Each run starts a
fresh syncprof, waits for it to attach, starts the load, and reports the
CPU syncprof spent during the load (its attach left out), the storm's
runs and the host's load.  Several binaries (--syncprof, repeatable) are
run interleaved, --runs times each, and the medians printed; --perf DIR
records each run with perf record -g --call-graph dwarf.

Root is needed (BPF).  Standard library only.
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import soak  # noqa: E402  (Storm, proc_sample, start_syncprof, ...)

SCRAPE_S = 5


class Scraper(threading.Thread):
    """GETs /metrics every SCRAPE_S seconds; counts the failures."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.url = f"http://127.0.0.1:{port}/metrics"
        self.stop = threading.Event()
        self.scrapes = self.failures = 0

    def run(self):
        while not self.stop.wait(SCRAPE_S):
            try:
                with urllib.request.urlopen(self.url, timeout=10) as r:
                    r.read()
            except OSError:
                self.failures += 1
            self.scrapes += 1


def one_run(binary, args, build, pg, perf_out):
    """{cpu_s, storm_runs, load} of one run of binary under the load."""
    from harness import HANG_S, free_port
    workdir = tempfile.mkdtemp(prefix="syncprof-cpuload-")
    children = []
    storm = scraper = None
    try:
        port = free_port()
        prof = soak.start_syncprof(binary, port, workdir, HANG_S)
        children.append(prof)
        perf = None
        if perf_out:
            perf = subprocess.Popen(
                ["perf", "record", "-q", "-g", "--call-graph", "dwarf,16384",
                 "-F", str(args.perf_freq), "-p", str(prof.pid),
                 "-o", perf_out], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            time.sleep(1)   # perf attached before the load starts
        copies = os.path.join(workdir, "copies")
        os.mkdir(copies)
        churn = subprocess.Popen(
            [os.path.join(build, "tests", "targets", "dlchurn"),
             "--lib", os.path.join(build, "tests", "targets",
                                   "libsharedlock.so"),
             "--copies", copies, "--warmup", "0", "--cycles", str(10 ** 9),
             "--pause-ms", str(soak.CHURN_PAUSE_MS)],
            stdout=subprocess.DEVNULL)
        children.append(churn)
        if pg:
            bench = subprocess.Popen(
                pg.pgbench_argv("-n", "-C", "-c", "4", "-j", "2", "-R",
                                str(soak.PGBENCH_RATE), "-T",
                                str(int(args.seconds) + 5)),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            children.append(bench)
        storm = soak.Storm(workdir, soak.STORM_RATE)
        scraper = Scraper(port)
        first = soak.proc_sample(prof.pid)
        load0 = soak.loadavg()[0]
        storm.start()
        scraper.start()
        time.sleep(args.seconds)
        last = soak.proc_sample(prof.pid)
        load1 = soak.loadavg()[0]
        if prof.poll() is not None:
            raise RuntimeError(f"{binary} ended ({prof.returncode})")
        storm.stop.set()
        scraper.stop.set()
        storm.join()
        scraper.join()
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=120)
        status = soak.stop(prof)
        children.remove(prof)
        return {"cpu_s": last["cpu_s"] - first["cpu_s"],
                "attach_cpu_s": first["cpu_s"], "storm_runs": storm.runs,
                "storm_failures": storm.failures,
                "scrapes": scraper.scrapes,
                "scrape_failures": scraper.failures,
                "load": (load0 + load1) / 2, "exit": status}
    finally:
        if storm:
            storm.stop.set()
            storm.join()
        if scraper:
            scraper.stop.set()
        for child in reversed(children):
            soak.stop(child)
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build",
                        help="where the targets are (default build)")
    parser.add_argument("--syncprof", action="append", default=[],
                        help="a binary to measure (repeatable; default "
                             "the build's)")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of each binary, interleaved (default 3)")
    parser.add_argument("--seconds", type=float, default=60,
                        help="the load's length a run (default 60)")
    parser.add_argument("--pg", action="store_true",
                        help="PostgreSQL under pgbench -C too")
    parser.add_argument("--perf", metavar="DIR", default=None,
                        help="perf record each run into DIR")
    parser.add_argument("--perf-freq", type=int, default=499)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("cpuload: needs root (BPF)", file=sys.stderr)
        return 2
    build = os.path.abspath(args.build)
    os.environ["SYNCPROF_BUILD"] = build
    from harness import HANG_S, SYNCPROF
    binaries = [os.path.abspath(b) for b in args.syncprof] or [SYNCPROF]
    pg = None
    if args.pg:
        from pgcluster import PgCluster
        pg = PgCluster(HANG_S)
        pg.start()
    results = {b: [] for b in binaries}
    try:
        for r in range(args.runs):
            for i, b in enumerate(binaries):
                perf_out = (os.path.join(args.perf, f"perf-{i}-{r}.data")
                            if args.perf else None)
                res = one_run(b, args, build, pg, perf_out)
                results[b].append(res)
                print(f"cpuload: run {r} {b}: {res['cpu_s']:.2f} s CPU in "
                      f"{args.seconds:.0f} s ({res['cpu_s'] / args.seconds:.2%}),"
                      f" attach {res['attach_cpu_s']:.2f} s, storm "
                      f"{res['storm_runs']} runs ({res['storm_failures']} "
                      f"failed), scrapes {res['scrapes']} "
                      f"({res['scrape_failures']} failed), load "
                      f"{res['load']:.2f}, exit {res['exit']}", flush=True)
    finally:
        if pg:
            pg.stop()
    for b, runs in results.items():
        cpu = statistics.median(r["cpu_s"] for r in runs)
        print(f"cpuload: {b}: median {cpu:.2f} s CPU in {args.seconds:.0f} s "
              f"({cpu / args.seconds:.2%} of one CPU) over {len(runs)} runs; "
              f"runs {[round(r['cpu_s'], 2) for r in runs]}, load "
              f"{statistics.mean(r['load'] for r in runs):.2f} on average")
    return 0


if __name__ == "__main__":
    sys.exit(main())
