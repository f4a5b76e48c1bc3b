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
scrapes made while pgbench runs (as Prometheus would).  With --all:
syncprof --all --serve, the host as it is (no workload of its own; with
--postgres too, pgbench runs meanwhile).

Each GET also says what it cost the loop that reads the probes (the
rest is the server's threads'): syncprof_serve_loop_seconds_total's
change over the GETs, per GET, apart for the reads a request asks
("read": what a /metrics costs the loop) and the profiles' copies and
names ("profiles").  --syncprof runs another build (one from before a
change, with that counter).

  tests/bench/scrapecost.py [--objects N] [--scrapes N] [--postgres] [--all]
                            [--syncprof PATH] [--json FILE]

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


LOOP = re.compile(r'(?m)^syncprof_serve_loop_seconds_total\{work="(\w+)"\} (\S+)$')


def loop_s(base):
    """syncprof_serve_loop_seconds_total by work: {} if not served.  A
    pause first, so the reads and names of the GETs before are in it (a
    scrape within 100 ms of a read is answered from that read)."""
    time.sleep(0.3)
    return {w: float(v) for w, v in LOOP.findall(get(base + "/metrics").decode())}


def cost(pid, base, path, n):
    """(CPU s, wall s, bytes, loop s by work) per GET of path, over n GETs."""
    size = 0
    l0 = loop_s(base)
    c0, t0 = cpu_ns(pid), time.monotonic()
    for _ in range(n):
        size = len(get(base + path))
    cpu, wall = (cpu_ns(pid) - c0) * 1e-9 / n, (time.monotonic() - t0) / n
    l1 = loop_s(base)
    return (cpu, wall, size, {w: (l1[w] - l0.get(w, 0)) / n for w in l1})


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
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--syncprof", default=SYNCPROF)
    ap.add_argument("--json")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="syncprof-scrapecost-")
    os.chmod(tmp, 0o755)       # PostgreSQL runs as its own user
    targets, prof, pg, bench = [], None, None, None
    try:
        if args.postgres:
            pg = Postgres(tmp)
        if args.all:
            cmd = [args.syncprof, "--serve", "127.0.0.1:0", "-o", os.devnull,
                   "--all"]
        elif args.postgres:
            cmd = [args.syncprof, "--serve", "127.0.0.1:0", "-o", os.devnull,
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
            cmd = [args.syncprof, "--serve", "127.0.0.1:0", "-o", os.devnull,
                   "--mode", "full", "--no-coalesce", "--max-series",
                   # room for every object: a tenth is for "other"
                   str((2 * args.objects + 2) * 10 // 9 + 3)]
            for p in targets:
                cmd += ["--pid", str(p.pid)]
        ready_r, ready_w = os.pipe()
        prof = subprocess.Popen([cmd[0], "--ready-fd", str(ready_w), *cmd[1:]],
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True,
                                pass_fds=(ready_w,))
        os.close(ready_w)
        base = None
        for line in prof.stderr:
            m = re.search(r"serving on (http://[0-9.:]+)/", line)
            if m:
                base = m.group(1)
                break
        # "ready PID" once attached
        if not base or not os.read(ready_r, 64).startswith(b"ready"):
            sys.exit("syncprof --serve did not start")
        os.close(ready_r)
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
        # --all: the loop's first read comes after its start's work
        while args.all and not re.search(r"(?m)^syncprof_processes_followed [1-9]",
                                         get(base + "/metrics").decode()):
            time.sleep(0.5)
        text = get(base + "/metrics").decode()
        series = int(re.search(r"(?m)^syncprof_series (\d+)$", text).group(1))
        out = {"series": series, "load": os.getloadavg()[0],
               "target": ", ".join(t for t in ("--all" if args.all else "",
                                               "pgbench -c 32" if pg else "")
                                   if t) or
               f"2 x {args.objects} objects, --no-coalesce"}
        print(f"{out['target']}: {series} series, load average {out['load']:.1f} "
              f"({os.cpu_count()} CPUs)")
        for path, n in (("/metrics", args.scrapes),
                        ("/debug/pprof/block", max(5, args.scrapes // 5)),
                        ("/debug/pprof/mutex", max(5, args.scrapes // 5))):
            first = cost(prof.pid, base, path, 1)
            cpu, wall, size, loop = cost(prof.pid, base, path, n)
            out[path] = {"first_cpu_s": first[0], "first_wall_s": first[1],
                         "first_loop_s": first[3], "cpu_s": cpu,
                         "wall_s": wall, "bytes": size, "loop_s": loop,
                         "scrapes": n}
            said = ", ".join(f"{w} {v * 1e3:.2f}" for w, v in loop.items())
            first_said = ", ".join(f"{w} {v * 1e3:.2f}"
                                   for w, v in first[3].items())
            print(f"  {path:<20} {cpu * 1e3:7.2f} ms CPU, {wall * 1e3:7.2f} ms "
                  f"wall, {size} bytes per scrape ({n} scrapes; the first: "
                  f"{first[0] * 1e3:.2f} ms CPU, {first[1] * 1e3:.2f} ms wall)")
            print(f"  {'':<20} the loop's: {said or 'not said'} ms per scrape "
                  f"(the first: {first_said or 'not said'} ms)")
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
