#!/usr/bin/python3
"""--what-if on a real server: PostgreSQL's WALWriteLock under pgbench
(make bench's whatif_pg section; also runnable alone, as root, after make).

The setting: commit_delay.  A backend that flushes the WAL at commit
takes WALWriteLock (LWLockAcquireOrWait in XLogFlush) and, with
commit_delay > 0 and commit_siblings other backends in a transaction,
sleeps commit_delay microseconds while it holds it, then writes and
syncs the WAL (XLogWrite) and releases it.  So commit_delay lengthens
exactly that lock's holds, and lowering it shortens them by a known
amount.

1. A private cluster (tests/integration/pgcluster.py), scale 2,
   commit_delay = DELAY_US, commit_siblings = 1.
2. The prediction, on the unchanged server: pgbench -c CLIENTS runs,
   its backends started; syncprof --pid <postmaster> --children -d 2
   --what-if=0xADDR --progress CommitTransactionCommand, ADDR
   WALWriteLock's address (MainLWLockArray[8], read from the
   postmaster's memory: the segment is mapped before the fork, one
   address in every backend).
3. The real gain: the mean hold h syncprof measured gives the delay that
   makes holds 25% and 50% shorter, commit_delay - s x h; pgbench runs
   of RUN_S seconds alternate between the two settings (reloaded between
   runs), each shorter run paired with the runs beside it; the median of
   the ratios of their tps is the real gain.

Prints the prediction, its interval and bound, the real gain and the
load average; --json FILE writes them too.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

import benchmain

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from pgcluster import PG_BIN, PgCluster, as_postgres  # noqa: E402

SYNCPROF = os.path.join(ROOT, "syncprof")
DELAY_US = int(os.environ.get("WHATIF_PG_DELAY_US", "4000"))
CLIENTS = os.environ.get("WHATIF_PG_CLIENTS", "8")
RUN_S = 3
PAIRS = int(os.environ.get("WHATIF_PG_PAIRS", "5"))
# WHATIF_PG_VERBOSE=1: syncprof's debug lines (each window's rate).
VERBOSE = "-vv" if os.environ.get("WHATIF_PG_VERBOSE") else "-v"
HANG_S = 300
# PostgreSQL 15's lwlocknames.txt: WALWriteLock is main lock 8.
WAL_WRITE_LOCK = 8


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def set_delay(pg, us):
    psql = as_postgres(os.path.join(PG_BIN, "psql"), "-h", pg.dir, "-p",
                       pg.port, "-qAt", "-c",
                       f"ALTER SYSTEM SET commit_delay = {int(us)}", "-c",
                       "ALTER SYSTEM SET commit_siblings = 1", "-c",
                       "SELECT pg_reload_conf()", "postgres",
                       timeout=HANG_S)
    if psql.returncode:
        raise RuntimeError(f"psql: {psql.stderr}")
    # The backends read the new value at their next command.
    time.sleep(0.3)


def tps(pg, seconds):
    run = pg.pgbench("-n", "-c", CLIENTS, "-j", "2", "-T", str(seconds))
    m = re.search(r"tps = ([0-9.]+) \(without initial", run.stdout)
    if run.returncode or not m:
        raise RuntimeError(f"pgbench: {run.stderr}{run.stdout}")
    return float(m.group(1))


def predict(pg, addr):
    load = subprocess.Popen(pg.pgbench_argv("-n", "-c", CLIENTS, "-j", "2",
                                            "-T", "120"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        # Its backends forked, connected and in their loop.
        time.sleep(2)
        out = os.path.join(pg.dir, "whatif.json")
        prof = subprocess.run([SYNCPROF, VERBOSE, "--mode", "contended", "--pid",
                               str(pg.postmaster()), "--children", "-d", "2",
                               f"--what-if=0x{addr:x}", "--progress",
                               "CommitTransactionCommand", "--format",
                               "json", "-o", out], capture_output=True,
                              text=True, timeout=HANG_S)
    finally:
        load.terminate()
        load.communicate(timeout=HANG_S)
    if prof.returncode:
        raise RuntimeError(f"syncprof: {prof.stderr}")
    with open(out) as f:
        report = [json.loads(line) for line in f if line.startswith("{")][-1]
    if not report.get("what_if"):
        raise RuntimeError(f"no what_if: {prof.stderr}")
    notes = [line for line in prof.stderr.splitlines() if "--what-if" in line]
    return report["what_if"], notes


def real_gain(pg, shorter_us):
    """Paired runs: base, shorter, base, ... ; the median ratio, in %."""
    runs = []
    for i in range(2 * PAIRS + 1):
        short = i % 2 == 1
        set_delay(pg, shorter_us if short else DELAY_US)
        runs.append((short, tps(pg, RUN_S)))
    set_delay(pg, DELAY_US)
    ratios = [r / ((runs[i - 1][1] + runs[i + 1][1]) / 2)
              for i, (short, r) in enumerate(runs) if short]
    return (statistics.median(ratios) - 1) * 100, runs


def whatif_postgres(results):
    """make bench's whatif_pg section: results["whatif_pg"]."""
    pg = PgCluster(HANG_S)
    try:
        pg.start()
    except AssertionError as e:
        # make bench goes on with its other sections.
        raise RuntimeError(f"PostgreSQL: {e}") from e
    result = {"commit_delay_us": DELAY_US, "clients": CLIENTS,
              "load_before": load_average(), "rows": []}
    try:
        set_delay(pg, DELAY_US)
        addr = pg.main_lwlock(WAL_WRITE_LOCK)
        base = tps(pg, RUN_S)
        entries, notes = predict(pg, addr)
        for line in notes:
            print(line)
        print(f"--what-if on PostgreSQL: WALWriteLock (0x{addr:x}), "
              f"commit_delay {DELAY_US} us, pgbench -c {CLIENTS}, "
              f"{base:.0f} tps before")
        print(f"{'short':>5} {'pred':>7} {'[low,':>8} {'high]':>8} bnd  "
              f"{'lock':>7} {'queue':>7} {'hold us':>8} {'delay us':>8} "
              f"{'real':>7} {'error':>7} inside")
        w = entries[0]
        print(f"experiment: {w['windows']} windows, delay budget "
              f"{w['delay_budget_ns'] / 1e9:.2f} s, injected "
              f"{w['injected_ns'] / 1e9:.2f} s, {w['experiment_s']:.1f} s")
        for w in sorted(entries, key=lambda w: w["shorter_pct"]):
            s = w["shorter_pct"] / 100
            hold_us = w["hold_ns"] / 1e3
            shorter_us = DELAY_US - s * hold_us
            row = {"shorter_pct": w["shorter_pct"],
                   "predicted_pct": w["predicted_gain_pct"],
                   "low_pct": w["low_pct"], "high_pct": w["high_pct"],
                   "bound": w["bound"], "hold_us": hold_us,
                   "lock_gain_pct": w["lock_gain_pct"],
                   "cpu_cap_pct": w["cpu_cap_pct"],
                   "windows": w["windows"],
                   "delay_budget_ns": w["delay_budget_ns"],
                   "injected_ns": w["injected_ns"],
                   "queue_gain_pct": w["queue_gain_pct"],
                   "rate_before": w["rate_before"],
                   "experiment_s": w["experiment_s"]}
            if shorter_us < 0:
                print(f"{w['shorter_pct']:4.0f}%: the hold ({hold_us:.0f} "
                      f"us) is longer than commit_delay: not made for "
                      f"real")
                result["rows"].append(row)
                continue
            real, runs = real_gain(pg, shorter_us)
            err = ((w["predicted_gain_pct"] - real) / real * 100
                   if real else None)
            inside = w["low_pct"] <= real <= w["high_pct"]
            row.update({"commit_delay_shorter_us": shorter_us,
                        "real_pct": real, "runs_tps": runs,
                        "error_pct": err, "inside": inside})
            result["rows"].append(row)
            errs = f"{err:+6.1f}%" if err is not None else "      -"
            queue = w["queue_gain_pct"]
            queue = f"{queue:7.1f}" if queue is not None else "      -"
            print(f"{w['shorter_pct']:4.0f}% {w['predicted_gain_pct']:7.1f} "
                  f"[{w['low_pct']:6.1f}, {w['high_pct']:7.1f}] "
                  f"{w['bound']:<4} {w['lock_gain_pct']:7.1f} {queue} "
                  f"{hold_us:8.0f} {shorter_us:8.0f} "
                  f"{real:7.1f} {errs} {'yes' if inside else 'no'}")
    finally:
        pg.stop()
    result["load_after"] = load_average()
    print(f"load average (1 min): {result['load_before']:.1f} before, "
          f"{result['load_after']:.1f} after, on {os.cpu_count()} CPUs")
    print()
    results["whatif_pg"] = result


def main():
    return benchmain.section_main(__doc__, "whatifpg",
                                  "BPF, uprobes, the postgres user",
                                  whatif_postgres)


if __name__ == "__main__":
    sys.exit(main())
