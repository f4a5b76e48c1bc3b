"""make bench, sections duty and duty_mariadb: full mode that can stay
on (--duty PCT).

memcached (4 threads, servers.Memcached) under memcaslap, paired runs:
each profiled run right after an unprofiled one, for continuous full
mode (--hold) and --duty 50, 20 and 5 (--hold too); the slowdown is
the median of the ratios.  The figures that full mode measures are set
against continuous full mode's: the acquisition rate (lock calls per
second, --duty's estimated) and the mean hold time, each the median over
the pairs, from the JSON report, with what the switches cost: the share
of the run the probes were attached and the switches' kernel time per
cycle, a detach and an attach (JSON duty.attached_ns, switch_ns,
switches).  The rate --duty estimates is the one
the windows saw, the target probed, which is continuous full mode's
(lock calls per memcaslap operation would not do: the operations of the
periods off, unprobed, come faster).  The machine's
load average is quoted before and after.

Section duty_mariadb: the same pairs on Debian's MariaDB, a private
instance (servers.MariaDB) under sysbench oltp_read_write (4 threads).

Then the test targets, whose truth is their own (targets()): workload
(two threads on one mutex, 10,000 calls each with holds of 200 us,
every call timed by the target) and releaser hold (one thread timing its
own 1,500 holds of 3 ms and 1 ms, about 6 s), under continuous full
mode and --duty 50, 20 and 5, the medians over the runs of syncprof's
figure over the target's: lock calls, mean wait, holds and mean hold.
"""
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time

import servers

# Each load under --duty: the switches stretch the periods (up to 8 s)
# when they are slow, and a run needs many windows for its sampling
# error to fall (BENCH_DUTY_SECONDS: longer loads than the servers').
SECONDS = int(os.environ.get("BENCH_DUTY_SECONDS", str(servers.SECONDS)))

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SYNCPROF_BUILD", os.path.join(ROOT, "build"))
TARGETS = os.path.join(BUILD, "tests", "targets")

CASES = [
    ("full", ["--mode", "full", "--hold"]),
    ("duty 50", ["--mode", "full", "--hold", "--duty", "50"]),
    ("duty 20", ["--mode", "full", "--hold", "--duty", "20"]),
    ("duty 5", ["--mode", "full", "--hold", "--duty", "5"]),
]


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def profiled(syncprof, server, args):
    """One load under syncprof: the throughput, and the report's lock
    calls per second and mean hold."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        prof = subprocess.Popen([syncprof, "-v", "--pid", str(server.pid()), *args,
                                 "--top", "0", "-f", "json", "-o", out.name],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        seen = ""
        try:
            for line in prof.stderr:
                seen += line
                if "profiling PID" in line:
                    break
            else:
                raise RuntimeError(f"syncprof did not attach: {seen[-500:]}")
            ops = server.load()
            prof.send_signal(signal.SIGINT)
            seen += prof.communicate(timeout=120)[1]
        finally:
            if prof.poll() is None:
                prof.kill()
                prof.communicate()
        if prof.returncode != 0:
            raise RuntimeError(f"syncprof failed: {seen[-500:]}")
        with open(out.name) as f:
            report = json.loads(f.read().splitlines()[-1])
    calls = sum(r["count"] + r["failed"] for r in report["rows"])
    holds = sum(r["holds"] or 0 for r in report["rows"])
    hold_ns = sum(r["hold_ns"] or 0 for r in report["rows"])
    return {"ops_per_s": ops,
            "calls_per_s": calls / report["elapsed_s"],
            "hold_mean_ns": hold_ns / holds if holds else None,
            "duty": report["duty"]}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def share(r, key):
    """A --duty run's share of its time: the windows' (on_ns) or the
    probes' attached (attached_ns)."""
    d = r["duty"]
    return d[key] / (d["on_ns"] + d["off_ns"]) if d else None


def switch_ms(r):
    """A --duty run's kernel time per cycle of switches (a detach and an
    attach), in ms."""
    d = r["duty"]
    return d["switch_ns"] / d["switches"] / 1e6 if d and d["switches"] else None


def paired(out, server, syncprof, pairs):
    """The pairs on one server, then the table: out[case] the medians."""
    runs = {name: [] for name, _ in CASES}
    for _ in range(pairs):
        for name, args in CASES:
            load = loadavg()
            plain = server.load()
            prof = profiled(syncprof, server, args)
            prof["load"] = load
            prof["plain_ops_per_s"] = plain
            prof["ratio"] = prof["ops_per_s"] / plain
            prof["calls_per_op"] = prof["calls_per_s"] / prof["ops_per_s"]
            runs[name].append(prof)
    header = (f"{'mode':8} {'ops/s none':>10} {'with':>9} {'ratio':>6} "
              f"{'calls/s':>9} {'vs full':>8} {'hold ns':>8} {'vs full':>8} "
              f"{'on %':>5} {'att %':>5} {'sw ms':>6}")
    print(header)
    print("-" * len(header))
    base = None
    for name, _ in CASES:
        r = runs[name]
        row = {
            "plain_ops_per_s": median([x["plain_ops_per_s"] for x in r]),
            "ops_per_s": median([x["ops_per_s"] for x in r]),
            "ratio": median([x["ratio"] for x in r]),
            "calls_per_op": median([x["calls_per_op"] for x in r]),
            "calls_per_s": median([x["calls_per_s"] for x in r]),
            "hold_mean_ns": median([x["hold_mean_ns"] for x in r]),
            "on_share": median([share(x, "on_ns") for x in r]),
            "attached_share": median([share(x, "attached_ns") for x in r]),
            "switch_ms": median([switch_ms(x) for x in r]),
            "runs": r,
        }
        if base is None:
            base = row
        row["calls_vs_full"] = row["calls_per_s"] / base["calls_per_s"]
        row["hold_vs_full"] = (row["hold_mean_ns"] / base["hold_mean_ns"]
                               if row["hold_mean_ns"] and base["hold_mean_ns"]
                               else None)
        out[name] = row
        on = f"{row['on_share'] * 100:5.1f}" if row["on_share"] else f"{'100':>5}"
        att = (f"{row['attached_share'] * 100:5.1f}" if row["attached_share"]
               else f"{'100':>5}")
        sw = f"{row['switch_ms']:6.0f}" if row["switch_ms"] else f"{'-':>6}"
        hold_vs = (f"{row['hold_vs_full']:7.3f}x" if row["hold_vs_full"]
                   else f"{'n/a':>8}")
        print(f"{name:8} {row['plain_ops_per_s']:10.0f} {row['ops_per_s']:9.0f} "
              f"{row['ratio']:5.2f}x {row['calls_per_s']:9.0f} "
              f"{row['calls_vs_full']:7.3f}x {row['hold_mean_ns'] or 0:8.0f} "
              f"{hold_vs} {on} {att} {sw}")
    print("pairs (ratio, calls/s, hold ns, attached, load): " + "; ".join(
        f"{name}: " + ", ".join(
            f"{x['ratio']:.2f}x {x['calls_per_s']:.0f} "
            f"{x['hold_mean_ns'] or 0:.0f} "
            f"{(share(x, 'attached_ns') or 1) * 100:.0f}% {x['load']:.1f}"
            for x in runs[name]) for name, _ in CASES))


LEGEND = ("(calls/s: lock calls counted, --duty's estimated, per second of "
          "the report; hold ns: mean hold; on %: the windows' share of the "
          "run, att %: the probes' (attached), sw ms: the switches' kernel "
          "time per cycle, a detach and an attach; load average {:.1f} at "
          "the end)")


def run_pairs(out, server, syncprof, pairs):
    """The paired runs on a server started for them, stopped after."""
    server.seconds = SECONDS
    try:
        paired(out, server, syncprof, pairs)
    finally:
        server.stop()
    out["load_after"] = loadavg()


def duty(results, syncprof, pairs):
    out = results["duty"] = {"seconds": SECONDS, "pairs": pairs,
                             "load_before": loadavg()}
    print(f"duty: memcached (4 threads) under memcaslap (2 threads, 16 "
          f"connections, {SECONDS} s), paired runs, medians of "
          f"{pairs}; load average {out['load_before']:.1f} at the start")
    run_pairs(out, servers.Memcached(), syncprof, pairs)
    print(LEGEND.format(out["load_after"]))
    print()


def mariadb(results, syncprof, pairs, threads=4):
    """MariaDB (servers.MariaDB, private) under sysbench oltp_read_write,
    the same pairs and figures as memcached's."""
    out = results["duty_mariadb"] = {"seconds": SECONDS,
                                     "pairs": pairs, "threads": threads,
                                     "load_before": loadavg()}
    print(f"duty_mariadb: MariaDB under sysbench oltp_read_write ({threads} "
          f"threads, {SECONDS} s), paired runs, medians of {pairs}; "
          f"load average {out['load_before']:.1f} at the start")
    missing = servers.MariaDB.missing()
    if missing:
        print(f"duty_mariadb: skipped: make deps BENCH=1 installs {missing}")
        print()
        return
    run_pairs(out, servers.MariaDB(threads), syncprof, pairs)
    print(LEGEND.format(out["load_after"]).replace("lock calls", "lock calls "
                                                   "(pthread)"))
    print()


def hold_line():
    """The releaser's line of the timed mutex holds (/* HOLD:mutex */)."""
    with open(os.path.join(ROOT, "tests", "targets", "releaser.c")) as f:
        for number, text in enumerate(f, 1):
            if "/* HOLD:mutex */" in text:
                return number
    raise RuntimeError("no HOLD:mutex in releaser.c")


def target_run(syncprof, args, command):
    """One launched target under syncprof: its report and its truth."""
    with tempfile.TemporaryDirectory() as tmp:
        out, truth = os.path.join(tmp, "r.json"), os.path.join(tmp, "t.json")
        run = subprocess.run([syncprof, "-f", "json", "-o", out, "--top", "0",
                              "--no-coalesce", *args, "--",
                              *[truth if a == "TRUTH" else a for a in command]],
                             capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            raise RuntimeError(f"syncprof failed: {run.stderr[-500:]}")
        with open(out) as f:
            report = json.loads(f.read().splitlines()[-1])
        with open(truth) as f:
            return report, json.load(f)


def target_ratios(syncprof, args, line):
    """syncprof's figures over the targets' own, for one run of each."""
    report, truth = target_run(syncprof, args, [
        os.path.join(TARGETS, "workload"), "mutex", "--threads", "2",
        "--iters", "10000", "--hold-us", "200", "--truth", "TRUTH"])
    rows = [r for r in report["rows"]
            if r["object"] == truth["object"] and r["type"] == "mutex"]
    count = sum(r["count"] for r in rows)
    wait = sum(r["wait_ns"] for r in rows)
    out = {"calls": count / truth["count"],
           "mean_wait": (wait / count) / (truth["wait_ns"] / truth["count"])}
    report, truth = target_run(syncprof, [*args, "--hold"], [
        os.path.join(TARGETS, "releaser"), "hold", "--truth", "TRUTH",
        "--iters", "1500", "--hold-us", "3000", "--hold2-us", "1000"])
    rows = [r for r in report["rows"]
            if r["object"] == truth["big_lock"] and r["type"] == "mutex" and
            r["callsite"]["line"] == line]
    holds = sum(r["holds"] for r in rows)
    hold_ns = sum(r["hold_ns"] for r in rows)
    expected = truth["holds"]["mutex"]
    out["holds"] = holds / expected["count"]
    out["mean_hold"] = (hold_ns / holds) / (expected["ns"] / expected["count"])
    out["attached"] = (report["duty"]["attached_ns"] /
                       (report["duty"]["on_ns"] + report["duty"]["off_ns"])
                       if report["duty"] else 1.0)
    return out


def targets(results, syncprof, runs):
    out = results["duty_targets"] = {"runs": runs, "load_before": loadavg()}
    print(f"duty on the test targets, syncprof's figure over the target's "
          f"own, medians of {runs}; load average {out['load_before']:.1f} "
          f"at the start")
    header = (f"{'mode':8} {'calls':>7} {'wait':>7} {'holds':>7} "
              f"{'hold':>7} {'attached':>8}")
    print(header)
    print("-" * len(header))
    line = hold_line()
    for name, args in CASES:
        args = [a for a in args if a != "--hold"]
        r = [target_ratios(syncprof, args, line) for _ in range(runs)]
        row = {k: median([x[k] for x in r]) for k in r[0]}
        row["runs"] = r
        out[name] = row
        print(f"{name:8} {row['calls']:6.3f}x {row['mean_wait']:6.3f}x "
              f"{row['holds']:6.3f}x {row['mean_hold']:6.3f}x "
              f"{row['attached'] * 100:7.1f}%")
    out["load_after"] = loadavg()
    print(f"(calls, holds: the estimates over the target's counts; wait, "
          f"hold: the means; attached: the share of the run the probes were "
          f"in; load average {out['load_after']:.1f} at the end)")
    print()
