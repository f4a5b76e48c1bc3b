"""make bench, section duty: full mode that can stay on (--duty PCT).

memcached (4 threads, servers.Memcached) under memcaslap, paired runs:
each profiled run right after an unprofiled one, for continuous full
mode (--hold) and --duty 20 and --duty 50 (--hold too); the slowdown is
the median of the ratios.  The figures that full mode measures are set
against continuous full mode's: the acquisition rate (lock calls per
second, --duty's estimated) and the mean hold time, each the median over
the pairs, from the JSON report.  The rate --duty estimates is the one
the slices on saw, the target probed, which is continuous full mode's
(lock calls per memcaslap operation would not do: the operations of the
slices off, unprobed, come faster).  The machine's
load average is quoted before and after.
"""
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time

import servers

CASES = [
    ("full", ["--mode", "full", "--hold"]),
    ("duty 50", ["--mode", "full", "--hold", "--duty", "50"]),
    ("duty 20", ["--mode", "full", "--hold", "--duty", "20"]),
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


def duty(results, syncprof, pairs):
    out = results["duty"] = {"seconds": servers.SECONDS, "pairs": pairs,
                             "load_before": loadavg()}
    print(f"duty: memcached (4 threads) under memcaslap (2 threads, 16 "
          f"connections, {servers.SECONDS} s), paired runs, medians of "
          f"{pairs}; load average {out['load_before']:.1f} at the start")
    header = (f"{'mode':8} {'ops/s none':>10} {'with':>9} {'ratio':>6} "
              f"{'calls/s':>9} {'vs full':>8} {'hold ns':>8} {'vs full':>8} "
              f"{'on %':>5}")
    print(header)
    print("-" * len(header))
    server = servers.Memcached()
    runs = {name: [] for name, _ in CASES}
    try:
        for _ in range(pairs):
            for name, args in CASES:
                plain = server.load()
                prof = profiled(syncprof, server, args)
                prof["plain_ops_per_s"] = plain
                prof["ratio"] = prof["ops_per_s"] / plain
                prof["calls_per_op"] = prof["calls_per_s"] / prof["ops_per_s"]
                runs[name].append(prof)
    finally:
        server.stop()
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
            "on_share": median([x["duty"]["on_ns"] / (x["duty"]["on_ns"] +
                                                       x["duty"]["off_ns"])
                                for x in r if x["duty"]]),
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
        hold_vs = (f"{row['hold_vs_full']:7.3f}x" if row["hold_vs_full"]
                   else f"{'n/a':>8}")
        print(f"{name:8} {row['plain_ops_per_s']:10.0f} {row['ops_per_s']:9.0f} "
              f"{row['ratio']:5.2f}x {row['calls_per_s']:9.0f} "
              f"{row['calls_vs_full']:7.3f}x {row['hold_mean_ns'] or 0:8.0f} "
              f"{hold_vs} {on}")
    out["load_after"] = loadavg()
    print(f"(calls/s: lock calls counted, --duty's estimated, per second of "
          f"the report; hold ns: mean hold; load average "
          f"{out['load_after']:.1f} at the end)")
    print()
