#!/usr/bin/env python3
"""What the rows of exited processes cost syncprof: a fork/exec storm of
distinct programs that each contend a lock, followed by syncprof --serve.

The bench builds FOLD_PROGRAMS (default 20) distinct programs (each its
own source and file), each of whose FOLD_THREADS threads takes one static
mutex (PTHREAD_MUTEX_INITIALIZER: in the program's .bss, the same module
offset in every run) FOLD_ITERS times, holding it a while, so every run
waits on one call site; then exits.  A driver (sh) runs them one after
another, FOLD_RATE a second, for FOLD_SECONDS: every run is a new process
with its own addresses (ASLR).  syncprof follows the driver and its
children (--children --pid DRIVER --serve ADDR -o /dev/null), or the host
(FOLD_HOW=all); a scraper reads /metrics every 5 s (as Prometheus would).

Every FOLD_SAMPLE seconds it prints, per syncprof: the CPU it used since
the last sample (its threads' schedstat) as a share of one CPU, its VmRSS,
the rows of exited processes it keeps (syncprof_exited_rows, when the
build has it) and the series; with the host's load average.  FOLD_BASE:
an older syncprof run side by side on the same driver.

  python3 tests/bench/foldstorm.py build/syncprof [--json OUT]
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from storm import cpu_s

PROGRAMS = int(os.environ.get("FOLD_PROGRAMS", "20"))
THREADS = int(os.environ.get("FOLD_THREADS", "3"))
ITERS = int(os.environ.get("FOLD_ITERS", "20"))
RATE = float(os.environ.get("FOLD_RATE", "20"))
SECONDS = float(os.environ.get("FOLD_SECONDS", "300"))
SAMPLE = float(os.environ.get("FOLD_SAMPLE", "30"))
HOW = os.environ.get("FOLD_HOW", "children")
SCRAPE_S = 5

SOURCE = r"""
#include <pthread.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long sink = %(id)d;

static void *worker(void *arg)
{
	struct timespec hold = { 0, 100 * 1000 };

	for (int i = 0; i < %(iters)d; i++) {
		pthread_mutex_lock(&lock);
		nanosleep(&hold, 0);
		sink++;
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

int main(void)
{
	pthread_t t[%(threads)d];

	for (int i = 0; i < %(threads)d; i++)
		pthread_create(&t[i], 0, worker, 0);
	for (int i = 0; i < %(threads)d; i++)
		pthread_join(t[i], 0);
	return 0;
}
"""


def build(d):
    exes, jobs = [], []
    for i in range(PROGRAMS):
        src, exe = os.path.join(d, f"contend{i}.c"), os.path.join(d, f"contend{i}")
        with open(src, "w") as f:
            f.write(SOURCE % {"id": i, "iters": ITERS, "threads": THREADS})
        jobs.append(subprocess.Popen(["cc", "-O1", "-pthread", "-o", exe, src]))
        exes.append(exe)
    for j in jobs:
        if j.wait():
            raise RuntimeError("cannot build the storm's programs")
    script = os.path.join(d, "storm.sh")
    runs = int(SECONDS * RATE)
    gap = 1.0 / RATE
    with open(script, "w") as f:
        f.write("read go\ni=0\n"
                f"while [ $i -lt {runs} ]; do\n"
                f"  for p in {' '.join(exes)}; do\n"
                f"    $p & sleep {gap:.3f}\n"
                "    i=$((i+1))\n"
                "  done\n"
                "done\nwait\n")
    return script


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Prof:
    def __init__(self, name, binary, driver_pid):
        self.name, self.port = name, free_port()
        target = (["--all"] if HOW == "all" else
                  ["--children", "--pid", str(driver_pid)])
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            [binary, *target, "--serve", f"127.0.0.1:{self.port}",
             "--ready-fd", str(w), "-o", "/dev/null"], pass_fds=(w,),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(w)
        if not os.read(r, 64):
            raise RuntimeError(f"syncprof {name} did not attach")
        os.close(r)
        self.metrics = {}
        self.failed = 0
        self.stop = False
        self.scraper = threading.Thread(target=self.scrape, daemon=True)
        self.scraper.start()

    def scrape(self):
        while not self.stop:
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{self.port}/metrics", timeout=10) as f:
                    text = f.read().decode()
                metrics = {}
                for m in re.finditer(r'^(syncprof_exited_rows|syncprof_series)'
                                     r'(?:\{processes="(\w+)"\})? (\S+)$',
                                     text, re.M):
                    name = m.group(1) + (f"_{m.group(2)}" if m.group(2) else "")
                    metrics[name] = float(m.group(3))
                if "syncprof_exited_rows_named" in metrics:
                    metrics["syncprof_exited_rows"] = (
                        metrics["syncprof_exited_rows_named"] +
                        metrics["syncprof_exited_rows_forgotten"])
                self.metrics = metrics
            except OSError:
                self.failed += 1
            time.sleep(SCRAPE_S)

    def sample(self):
        return {"cpu_s": cpu_s(self.proc.pid), "rss_mb": rss_mb(self.proc.pid),
                "exited_rows": self.metrics.get("syncprof_exited_rows"),
                "forgotten": self.metrics.get("syncprof_exited_rows_forgotten"),
                "series": self.metrics.get("syncprof_series")}

    def end(self):
        self.stop = True
        self.proc.terminate()
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("syncprof")
    ap.add_argument("--json")
    args = ap.parse_args()
    binaries = [("this", args.syncprof)]
    if os.environ.get("FOLD_BASE"):
        binaries.append(("base", os.environ["FOLD_BASE"]))
    with tempfile.TemporaryDirectory() as d:
        script = build(d)
        driver = subprocess.Popen(["sh", script], stdin=subprocess.PIPE,
                                  text=True, stdout=subprocess.DEVNULL)
        profs = [Prof(n, b, driver.pid) for n, b in binaries]
        print(f"foldstorm: {PROGRAMS} programs x {THREADS} threads, "
              f"{RATE:g} runs/s for {SECONDS:g} s, syncprof {HOW}", flush=True)
        print(f"{'t (s)':>6} {'load':>5} " + " ".join(
            f"{p.name + ' CPU%':>10} {'RSS MB':>7} {'rows':>7}" for p in profs),
            flush=True)
        last = {p.name: p.sample() for p in profs}
        first = dict(last)
        t0 = tlast = time.monotonic()
        driver.stdin.write("go\n")
        driver.stdin.close()
        samples = []
        while True:
            done = driver.poll() is not None
            time.sleep(0 if done else SAMPLE)
            now = time.monotonic()
            row = {"t": round(now - t0), "load": loadavg()}
            cells = []
            for p in profs:
                s = p.sample()
                s["cpu_pct"] = 100 * (s["cpu_s"] - last[p.name]["cpu_s"]) / (now - tlast)
                last[p.name] = s
                row[p.name] = s
                rows = "-" if s["exited_rows"] is None else f"{s['exited_rows']:.0f}"
                cells.append(f"{s['cpu_pct']:10.2f} {s['rss_mb']:7.1f} {rows:>7}")
            tlast = now
            samples.append(row)
            print(f"{row['t']:6} {row['load']:5.1f} " + " ".join(cells), flush=True)
            if done:
                break
        total = {p.name: 100 * (last[p.name]["cpu_s"] - first[p.name]["cpu_s"]) /
                 (tlast - t0) for p in profs}
        print("over the storm: " + ", ".join(
            f"{n} {c:.2f}% of a CPU" for n, c in total.items()) +
            "; failed scrapes " + ", ".join(f"{p.name} {p.failed}" for p in profs),
            flush=True)
        for p in profs:
            p.end()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"programs": PROGRAMS, "rate": RATE, "seconds": SECONDS,
                       "how": HOW, "samples": samples, "cpu_pct": total}, f,
                      indent=1)


if __name__ == "__main__":
    sys.exit(main())
