#!/usr/bin/env python3
"""make soak: syncprof --all --serve for SOAK_MINUTES on a busy host, and
whether its memory, files and CPU stay bounded.

The host runs, all started and stopped here:
  - a fork/exec storm: a fresh copy of /bin/true under a new name is
    written, run and deleted, about STORM_RATE times a second, so every
    exec is a program syncprof has not seen (a new inode, deleted after);
  - tests/targets/dlchurn --copies: one process dlopening a new copy of
    a library, calling it and dlclosing and deleting it, every
    CHURN_PAUSE_MS;
  - PostgreSQL 15 (tests/integration/pgcluster.py) under pgbench -C (a
    new backend per transaction) at a bounded rate;
  - Debian's Prometheus scraping syncprof's /metrics every 5 s.

Every SAMPLE_S it reads syncprof's VmRSS, its open files (and those
whose link ends in "(deleted)"), its CPU time and the host's load.  At
the end it stops the workloads, lets syncprof settle, takes a last
sample, asks Prometheus how its scrapes went, and judges:
  - RSS and open files flat after the warm-up (10 minutes, or a sixth of
    a shorter run): no sample after it more than 10% above the first
    sample after it;
  - no deleted file held: no descriptor open on a deleted file on disk
    that no other process maps in two samples in a row, nor once the
    workloads are gone (memfd copies are memory; a file another process
    still maps is in use, not held); every "(deleted)" link at the end,
    and the most seen while they ran, are reported;
  - CPU at most 1% of one CPU over the whole run (reported either way,
    and the share after the warm-up beside it);
  - zero failed scrapes (every scrape Prometheus made of syncprof up);
  - syncprof alive throughout and exiting 0 on SIGTERM.
The summary is printed and written as JSON (--json); the exit status
is 1 when a judgement fails, 2 when the soak could not run.

Root is needed (BPF, and runuser for PostgreSQL).  Standard library only.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

WARMUP_S = 600          # flat after the first 10 minutes...
WARMUP_SHARE = 6        # ...or a sixth of a shorter run
FLAT = 0.10             # within 10%
CPU_BOUND = 0.01        # of one CPU
SAMPLE_S = 30
SCRAPE_INTERVAL = "5s"
STORM_RATE = 10         # new programs run a second, at most
CHURN_PAUSE_MS = 100    # between two library copies
PGBENCH_RATE = 20       # transactions (new backends) a second
SETTLE_S = 15           # after the workloads stop, before the last sample
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(f"soak: {msg}", file=sys.stderr, flush=True)


def mapped_elsewhere(pid):
    """The paths (" (deleted)" and all) that processes other than pid
    map now."""
    paths = set()
    for other in os.listdir("/proc"):
        if not other.isdigit() or int(other) == pid:
            continue
        try:
            with open(f"/proc/{other}/maps", errors="surrogateescape") as f:
                for line in f:
                    fields = line.rstrip("\n").split(None, 5)
                    if len(fields) == 6:
                        paths.add(fields[5])
        except OSError:
            continue        # gone meanwhile, or a kernel thread
    return paths


def proc_sample(pid):
    """{rss_kb, fds, deleted, held, cpu_s} of a live process: deleted
    counts every descriptor whose link ends in "(deleted)"; held lists
    those that are files on a disk (not memfd memory) that no other
    process maps, which nothing but syncprof keeps alive."""
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f
                   if line.startswith("VmRSS:"))
    fds = 0
    deleted = []
    fd_dir = f"/proc/{pid}/fd"
    for name in os.listdir(fd_dir):
        try:
            link = os.readlink(os.path.join(fd_dir, name))
        except FileNotFoundError:
            continue        # closed meanwhile
        fds += 1
        if link.endswith("(deleted)"):
            deleted.append(link)
    disk = [d for d in deleted if not d.startswith("/memfd:")]
    in_use = mapped_elsewhere(pid) if disk else set()
    held = sorted(d for d in disk if d not in in_use)
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime and stime: fields 14 and 15, the 12th and 13th after comm.
    cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
    return {"rss_kb": rss, "fds": fds, "deleted": len(deleted),
            "deleted_files": sorted(deleted), "held": held, "cpu_s": cpu}


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


class Storm(threading.Thread):
    """Writes, runs and deletes a new copy of /bin/true, at most rate a
    second, until stopped; counts the runs and the failures."""

    def __init__(self, workdir, rate):
        super().__init__(daemon=True)
        self.dir = os.path.join(workdir, "storm")
        os.mkdir(self.dir)
        self.period = 1.0 / rate
        self.stop = threading.Event()
        self.runs = self.failures = 0

    def run(self):
        n = 0
        while not self.stop.is_set():
            started = time.monotonic()
            path = os.path.join(self.dir, f"true-{n}")
            n += 1
            shutil.copy(shutil.which("true"), path)
            if subprocess.run([path]).returncode:
                self.failures += 1
            self.runs += 1
            os.unlink(path)
            self.stop.wait(max(0.0, self.period - (time.monotonic() - started)))


def start_syncprof(syncprof, port, workdir, timeout):
    """syncprof --all --serve 127.0.0.1:PORT, once it says it attached."""
    from harness import read_line
    read_end, write_end = os.pipe()
    stderr = open(os.path.join(workdir, "syncprof.stderr"), "w")
    try:
        proc = subprocess.Popen(
            [syncprof, "--ready-fd", str(write_end), "--all",
             "--serve", f"127.0.0.1:{port}", "-o", os.devnull],
            pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=stderr)
    finally:
        os.close(write_end)
        stderr.close()
    try:
        line = read_line(read_end, timeout)
    finally:
        os.close(read_end)
    if not line.startswith("ready "):
        proc.kill()
        proc.wait()
        raise RuntimeError(f"syncprof did not attach ({line!r}): "
                           + tail(os.path.join(workdir, "syncprof.stderr")))
    return proc


def tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def wait_first_scrape(api, timeout):
    import promserver
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if [v for _, v in promserver.query_all(api, 'up{job="syncprof"}')] == [1.0]:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    raise RuntimeError("Prometheus did not scrape syncprof")


def scrape_record(api, seconds):
    """What Prometheus saw of its scrapes of syncprof over the last
    seconds: how many, how many failed, the longest, the samples of the
    last one, and the target's health and last error."""
    import promserver

    def one(promql):
        result = promserver.query_all(api, promql)
        return result[0][1] if result else None

    window = f"[{int(seconds)}s]"
    sel = '{job="syncprof"}'
    scrapes = one(f"count_over_time(up{sel}{window})")
    up = one(f"sum_over_time(up{sel}{window})")
    targets = promserver.api_get(api, "targets")["activeTargets"]
    target = next(t for t in targets if t["labels"].get("job") == "syncprof")
    return {
        "scrapes": int(scrapes or 0),
        "failed": int((scrapes or 0) - (up or 0)),
        "max_duration_s": one(f"max_over_time(scrape_duration_seconds{sel}{window})"),
        "samples_last": one(f"scrape_samples_scraped{sel}"),
        "samples_max": one(f"max_over_time(scrape_samples_scraped{sel}{window})"),
        "health": target["health"],
        "last_error": target["lastError"],
    }


# syncprof's own gauges of what it holds, read from Prometheus with each
# sample: where memory goes when RSS grows.
OWN_GAUGES = ("syncprof_cache_modules", "syncprof_cache_modules_unmapped",
              "syncprof_cache_files", "syncprof_cache_open_files",
              "syncprof_cache_memory_bytes", "syncprof_cache_evictions_total",
              "syncprof_processes_followed", "syncprof_series",
              "syncprof_dropped_total")


def own_gauges(api):
    """{name: value summed over its series} of OWN_GAUGES, as Prometheus
    last scraped them; {} when it cannot answer."""
    import promserver
    names = "|".join(OWN_GAUGES)
    try:
        result = promserver.query_all(
            api, f'{{__name__=~"{names}",job="syncprof"}}')
    except (OSError, ValueError):
        return {}
    out = {}
    for labels, value in result:
        out[labels["__name__"]] = out.get(labels["__name__"], 0) + value
    return out


def judge(samples, final, warmup_s, run_s, cpu_s, scrapes, exit_status):
    """[(name, passed, detail)]."""
    after = [s for s in samples if s["t"] >= warmup_s] + [final]
    checks = []
    for key, what in (("rss_kb", "RSS"), ("fds", "open files")):
        base = after[0][key]
        top = max(s[key] for s in after)
        growth = (top - base) / base if base else 0.0
        checks.append((f"{what} flat after {warmup_s / 60:.1f} min",
                       growth <= FLAT,
                       f"{base} at {after[0]['t']:.0f} s, at most {top} "
                       f"after ({growth:+.1%}; bound +{FLAT:.0%})"))
    most = max(s["deleted"] for s in samples + [final])
    # Held: open, deleted and mapped by no other process in two samples
    # in a row (a sample may fall between the last unmap and syncprof
    # seeing it; SAMPLE_S later it must be closed), or at the end.
    runs = samples + [final]
    kept = sorted({f for a, b in zip(runs, runs[1:])
                   for f in set(a["held"]) & set(b["held"])})
    spans = {f: [s["t"] for s in runs if f in s["held"]] for f in kept}
    checks.append(("no deleted file held", not kept,
                   f"{len(kept)} deleted files on disk that no other process "
                   f"maps kept open from one sample to the next "
                   + "; ".join(f"{f} from {min(t):.0f} s to {max(t):.0f} s"
                               for f, t in spans.items())
                   + f"; {len(final['held'])} after the workloads ended; "
                   f"{final['deleted']} deleted links then "
                   f"{final['deleted_files'][:5]}; at most {most} while they ran"))
    share = cpu_s / run_s
    checks.append((f"CPU at most {CPU_BOUND:.0%} of one CPU", share <= CPU_BOUND,
                   f"{share:.2%} ({cpu_s:.1f} s in {run_s:.0f} s)"))
    checks.append(("zero failed scrapes",
                   scrapes["scrapes"] > 0 and scrapes["failed"] == 0
                   and scrapes["health"] == "up",
                   f"{scrapes['failed']} of {scrapes['scrapes']} failed, "
                   f"health {scrapes['health']} {scrapes['last_error']!r}"))
    checks.append(("syncprof exits 0 on SIGTERM", exit_status == 0,
                   f"exit status {exit_status}"))
    return checks


def stop(proc, sig=signal.SIGTERM, timeout=60):
    if proc is None or proc.poll() is not None:
        return None if proc is None else proc.returncode
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def soak(args, workdir):
    from harness import HANG_S, SYNCPROF, free_port
    from pgcluster import PgCluster
    import promserver

    build = os.path.abspath(args.build)
    syncprof = SYNCPROF     # build/syncprof, or the ./syncprof it links
    dlchurn = os.path.join(build, "tests", "targets", "dlchurn")
    sharedlib = os.path.join(build, "tests", "targets", "libsharedlock.so")
    for path in (syncprof, dlchurn, sharedlib):
        if not os.path.exists(path):
            raise RuntimeError(f"{path} missing: make test-bins")
    if not promserver.PROMETHEUS:
        raise RuntimeError("no prometheus: 'make deps' installs it")
    run_s = args.minutes * 60
    warmup_s = min(WARMUP_S, run_s / WARMUP_SHARE)
    summary = {"command": None, "minutes": args.minutes, "warmup_s": warmup_s,
               "host": {"cpus": os.cpu_count(), "load_start": loadavg()}}
    children = []
    pg = PgCluster(HANG_S)
    storm = None
    try:
        log("starting PostgreSQL")
        pg.start()
        port = free_port()
        prof = start_syncprof(syncprof, port, workdir, HANG_S)
        children.append(prof)
        summary["command"] = (f"{syncprof} --all --serve 127.0.0.1:{port} "
                              "-o /dev/null")
        log(f"syncprof {prof.pid} attached: {summary['command']}")
        pdir = os.path.join(workdir, "prometheus")
        os.mkdir(pdir)
        prom, api = promserver.start(pdir, f"127.0.0.1:{port}",
                                     interval=SCRAPE_INTERVAL)
        children.append(prom)
        wait_first_scrape(api, HANG_S)
        log(f"Prometheus {api} scrapes it every {SCRAPE_INTERVAL}")
        copies = os.path.join(workdir, "copies")
        os.mkdir(copies)
        churn = subprocess.Popen(
            [dlchurn, "--lib", sharedlib, "--copies", copies, "--warmup", "0",
             "--cycles", str(10 ** 9), "--pause-ms", str(CHURN_PAUSE_MS)],
            stdout=subprocess.DEVNULL)
        children.append(churn)
        bench = subprocess.Popen(
            pg.pgbench_argv("-n", "-C", "-c", "4", "-j", "2",
                            "-R", str(PGBENCH_RATE), "-T", str(int(run_s))),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        children.append(bench)
        storm = Storm(workdir, STORM_RATE)
        storm.start()

        t0 = time.monotonic()
        first = proc_sample(prof.pid)
        summary["attach_cpu_s"] = round(first["cpu_s"], 2)
        samples = []
        log(f"soaking {args.minutes} min, a sample every {SAMPLE_S} s, "
            f"warm-up {warmup_s:.0f} s")
        while True:
            now = time.monotonic() - t0
            if now >= run_s:
                break
            time.sleep(min(SAMPLE_S, run_s - now))
            if prof.poll() is not None:
                raise RuntimeError(f"syncprof ended ({prof.returncode}): "
                                   + tail(os.path.join(workdir, "syncprof.stderr")))
            if churn.poll() is not None:
                raise RuntimeError(f"dlchurn ended ({churn.returncode})")
            if bench.poll() is not None and now < run_s - 2 * SAMPLE_S:
                raise RuntimeError(f"pgbench ended ({bench.returncode}): "
                                   + bench.stderr.read()[-500:])
            s = proc_sample(prof.pid)
            s["t"] = time.monotonic() - t0
            s["load"] = loadavg()
            s["own"] = own_gauges(api)
            samples.append(s)
            log(f"{s['t']:6.0f} s  RSS {s['rss_kb'] / 1024:6.1f} MiB  "
                f"files {s['fds']:4d} ({s['deleted']} deleted, {len(s['held'])} unmapped)  "
                f"CPU {s['cpu_s'] - first['cpu_s']:6.1f} s  load {s['load'][0]:.2f}  "
                f"modules {s['own'].get('syncprof_cache_modules', '?')}  "
                f"processes {s['own'].get('syncprof_processes_followed', '?')}  "
                f"series {s['own'].get('syncprof_series', '?')}")
        elapsed = time.monotonic() - t0
        end_sample = proc_sample(prof.pid)
        storm.stop.set()
        storm.join()
        stop(churn)
        try:
            bench_out, bench_err = bench.communicate(timeout=2 * SAMPLE_S)
        except subprocess.TimeoutExpired:
            stop(bench)
            bench_out, bench_err = bench.communicate()
        summary["workloads"] = {
            "storm_runs": storm.runs, "storm_failures": storm.failures,
            "storm_rate_per_s": round(storm.runs / elapsed, 2),
            "dlchurn_pause_ms": CHURN_PAUSE_MS,
            "pgbench": [line for line in bench_out.splitlines()
                        if line.startswith(("number of transactions actually",
                                            "tps", "number of failed"))]
                       or bench_err.splitlines()[-3:],
        }
        time.sleep(SETTLE_S)
        final = proc_sample(prof.pid)
        final["t"] = time.monotonic() - t0
        final["load"] = loadavg()
        final["own"] = own_gauges(api)
        scrapes = scrape_record(api, elapsed + SETTLE_S)
        cpu_s = end_sample["cpu_s"] - first["cpu_s"]
        warm = next((s for s in samples if s["t"] >= warmup_s), None)
        if warm:
            summary["cpu_after_warmup"] = round(
                (end_sample["cpu_s"] - warm["cpu_s"]) / (elapsed - warm["t"]), 4)
        exit_status = stop(prof)
        children.remove(prof)
        summary["syncprof_stderr_tail"] = tail(
            os.path.join(workdir, "syncprof.stderr"), 5)
        checks = judge(samples, final, warmup_s, elapsed, cpu_s, scrapes,
                       exit_status)
        summary.update({
            "elapsed_s": round(elapsed, 1),
            "start": first, "samples": samples, "final": final,
            "cpu_s": round(cpu_s, 2), "cpu_share": round(cpu_s / elapsed, 4),
            "scrapes": scrapes, "exit_status": exit_status,
            "checks": [{"name": n, "passed": p, "detail": d}
                       for n, p, d in checks],
        })
        summary["host"]["load_end"] = loadavg()
        summary["host"]["load_mean_1m"] = round(
            sum(s["load"][0] for s in samples) / max(1, len(samples)), 2)
        summary["passed"] = all(p for _, p, _ in checks)
        return summary
    finally:
        if storm:
            storm.stop.set()
            storm.join()
        for child in reversed(children):
            stop(child)
        pg.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float,
                        default=float(os.environ.get("SOAK_MINUTES", 60)),
                        help="how long (default SOAK_MINUTES or 60)")
    parser.add_argument("--build", default="build",
                        help="the build directory (default build)")
    parser.add_argument("--json", default=None,
                        help="where the summary goes (default BUILD/soak.json)")
    parser.add_argument("--judge", metavar="JSON", default=None,
                        help="judge a summary written before, without a run")
    args = parser.parse_args()
    if args.judge:
        with open(args.judge) as f:
            summary = json.load(f)
        checks = judge(summary["samples"], summary["final"],
                       summary["warmup_s"], summary["elapsed_s"],
                       summary["cpu_s"], summary["scrapes"],
                       summary["exit_status"])
        summary["checks"] = [{"name": n, "passed": p, "detail": d}
                             for n, p, d in checks]
        summary["passed"] = all(p for _, p, _ in checks)
        return report(summary, args.judge)
    if args.minutes < 1:
        parser.error("--minutes must be at least 1")
    if os.geteuid() != 0:
        print("soak: needs root (BPF, and runuser for PostgreSQL)", file=sys.stderr)
        return 2
    os.environ["SYNCPROF_BUILD"] = os.path.abspath(args.build)
    workdir = tempfile.mkdtemp(prefix="syncprof-soak-")
    try:
        summary = soak(args, workdir)
    except (RuntimeError, AssertionError, OSError) as e:
        print(f"soak: could not run: {e}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return report(summary, args.json or os.path.join(args.build, "soak.json"))


def report(summary, out):
    """Writes the summary to out and prints it; the exit status."""
    with open(out, "w") as f:
        json.dump(summary, f, indent=1)
    print(f"soak: {summary['minutes']} min, load {summary['host']['load_mean_1m']} "
          f"(1-min mean) on {summary['host']['cpus']} CPUs; summary in {out}")
    for c in summary["checks"]:
        print(f"  {'PASS' if c['passed'] else 'FAIL'}  {c['name']}: {c['detail']}")
    if "cpu_after_warmup" in summary:
        print(f"  (CPU after the warm-up: {summary['cpu_after_warmup']:.2%})")
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
