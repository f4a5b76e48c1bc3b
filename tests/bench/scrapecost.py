#!/usr/bin/python3
"""What one scrape of --serve costs syncprof at a given number of series.

Two copies of the workload (named apart, so their series are apart) each
lock N heap mutexes once per round in full mode with --no-coalesce: one
series per object, 2 x N in all (default N 250: ~500 series, the default
--max-series).  Then GET /metrics and /debug/pprof/block, each many
times: syncprof's CPU per scrape (the sum of its threads' run time from
/proc/PID/task/*/schedstat, in ns), the wall time per scrape and the
bytes.  The first scrape of each is given apart: it names the programs'
call sites and stacks (DWARF), which later scrapes find cached; in full
mode that first naming is slow, as syncprof's own DWARF reader takes
rwlocks that full mode's uprobes on libc trap.

With --postgres: Debian's PostgreSQL 15 under pgbench -c 32 instead,
syncprof --serve --pid <postmaster> --children in its default mode, the
scrapes made while pgbench runs (as Prometheus would).

  tests/bench/scrapecost.py [--objects N] [--scrapes N] [--postgres]
                            [--json FILE]

Run as root from the repository, after make and make test-bins.  The
host's load average is printed with the figures.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SYNCPROF_BUILD", os.path.join(ROOT, "build"))
SYNCPROF = os.path.join(ROOT, "syncprof")
WORKLOAD = os.path.join(BUILD, "tests", "targets", "workload")


def cpu_ns(pid):
    """The run time of every thread of pid, in ns."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def get(url):
    with urllib.request.urlopen(url, timeout=120) as r:
        return r.read()


def cost(pid, url, n):
    """(CPU s, wall s, bytes) per GET of url, over n GETs."""
    size = 0
    c0, t0 = cpu_ns(pid), time.monotonic()
    for _ in range(n):
        size = len(get(url))
    return ((cpu_ns(pid) - c0) * 1e-9 / n, (time.monotonic() - t0) / n, size)


PG_BIN = "/usr/lib/postgresql/15/bin"


def as_postgres(*cmd, **kwargs):
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd],
                          capture_output=True, text=True, **kwargs)


class Postgres:
    """A PostgreSQL of its own, in a directory of its own."""

    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "pg")
        os.mkdir(self.dir)
        shutil.chown(self.dir, "postgres", "postgres")
        self.data = os.path.join(self.dir, "data")
        self.port = str(20000 + os.getpid() % 20000)
        init = as_postgres(os.path.join(PG_BIN, "initdb"), "-D", self.data,
                           "-A", "trust", timeout=300)
        if init.returncode:
            sys.exit(f"initdb: {init.stderr}")
        self.server = subprocess.Popen(
            ["runuser", "-u", "postgres", "--", os.path.join(PG_BIN, "postgres"),
             "-D", self.data, "-p", self.port, "-k", self.dir,
             "-c", "listen_addresses=", "-c", "max_connections=64"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while as_postgres(os.path.join(PG_BIN, "pg_isready"), "-h", self.dir,
                          "-p", self.port).returncode:
            if time.monotonic() > deadline:
                sys.exit("PostgreSQL did not start")
            time.sleep(0.2)
        self.pgbench("-i", "-s", "4").check_returncode()
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.pid = int(f.readline())

    def pgbench_cmd(self, *args):
        return ["runuser", "-u", "postgres", "--", os.path.join(PG_BIN, "pgbench"),
                "-h", self.dir, "-p", self.port, *args, "postgres"]

    def pgbench(self, *args):
        return subprocess.run(self.pgbench_cmd(*args), capture_output=True,
                              text=True, timeout=600)

    def stop(self):
        if self.server.poll() is None:
            as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m",
                        "fast", "-w", "stop", timeout=120)
            self.server.wait(timeout=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=250)
    ap.add_argument("--scrapes", type=int, default=50)
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="syncprof-scrapecost-")
    os.chmod(tmp, 0o755)       # PostgreSQL runs as its own user
    targets, prof, pg, bench = [], None, None, None
    try:
        if args.postgres:
            pg = Postgres(tmp)
            cmd = [SYNCPROF, "-v", "--serve", "127.0.0.1:0", "-o", os.devnull,
                   "--pid", str(pg.pid), "--children"]
        else:
            for name in ("scrapecost_a", "scrapecost_b"):
                path = os.path.join(tmp, name)
                shutil.copy(WORKLOAD, path)
                p = subprocess.Popen([path, "many", "--objects",
                                      str(args.objects), "--wait-signal",
                                      "--wait-end"],
                                     stdout=subprocess.PIPE, text=True)
                p.stdout.readline()         # "ready PID"
                targets.append(p)
            cmd = [SYNCPROF, "-v", "--serve", "127.0.0.1:0", "-o", os.devnull,
                   "--mode", "full", "--no-coalesce", "--max-series",
                   # room for every object: a tenth is for "other"
                   str((2 * args.objects + 2) * 10 // 9 + 3)]
            for p in targets:
                cmd += ["--pid", str(p.pid)]
        prof = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        base = None
        for line in prof.stderr:
            m = re.search(r"serving on (http://[0-9.:]+)/", line)
            if m:
                base = m.group(1)
            if "profiling PID" in line:
                break
        if not base:
            sys.exit("syncprof --serve did not start")
        drain = subprocess.Popen(["cat"], stdin=prof.stderr,
                                 stdout=subprocess.DEVNULL)
        if pg:
            bench = subprocess.Popen(pg.pgbench_cmd("-c", "32", "-j", "2",
                                                    "-T", "90"),
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            time.sleep(15)
        for p in targets:
            p.send_signal(signal.SIGUSR1)
        for p in targets:
            p.stdout.readline()         # "done PID": every object locked
        text = get(base + "/metrics").decode()
        series = int(re.search(r"(?m)^syncprof_series (\d+)$", text).group(1))
        out = {"series": series, "load": os.getloadavg()[0],
               "target": "pgbench -c 32" if pg else
               f"2 x {args.objects} objects, --no-coalesce"}
        print(f"{out['target']}: {series} series, load average {out['load']:.1f} "
              f"({os.cpu_count()} CPUs)")
        for path, n in (("/metrics", args.scrapes),
                        ("/debug/pprof/block", max(5, args.scrapes // 5))):
            first = cost(prof.pid, base + path, 1)
            cpu, wall, size = cost(prof.pid, base + path, n)
            out[path] = {"first_cpu_s": first[0], "first_wall_s": first[1],
                         "cpu_s": cpu, "wall_s": wall, "bytes": size,
                         "scrapes": n}
            print(f"  {path:<20} {cpu * 1e3:7.2f} ms CPU, {wall * 1e3:7.2f} ms "
                  f"wall, {size} bytes per scrape ({n} scrapes; the first: "
                  f"{first[0] * 1e3:.2f} ms CPU, {first[1] * 1e3:.2f} ms wall)")
        if bench:
            bench.wait(timeout=300)
            bench = None
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
        prof.send_signal(signal.SIGTERM)
        prof.wait(timeout=60)
        drain.wait(timeout=60)
        prof = None
    finally:
        if bench:
            bench.kill()
            bench.wait()
        if pg:
            pg.stop()
        if prof:
            prof.kill()
            prof.wait()
        for p in targets:
            p.send_signal(signal.SIGUSR1)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
