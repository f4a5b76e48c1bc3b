#!/usr/bin/python3
"""How close --what-if's predictions come (make bench's whatif section).

Measured, not asserted: on a loaded machine the method is less sure than
its interval says (docs/what-if.md, "Where it misses"), so these figures
are printed beside the load they were taken under rather than held to a
threshold in make test.

Against tests/targets/whatif, workers that make items (one hold of
work_lock each) and measure their own rate of items.  The truth is the
shorter version run for real: told on its stdin (--control), the
target's windows alternate between the critical section as given and
FRAC shorter, each short window paired with the base windows beside it
(a busy machine drifts by more than the effect); the median of those
ratios is the real gain, measured just before and just after syncprof's
prediction (made with --mode contended -d 1 --progress item_done on the
unchanged target), in the very process syncprof profiles
(whatiftruth.py: the same threads, the same scheduling group).  The
lock, cpu and procs cases give their errors against the pooled median
of before and after, WHATIF_REPEAT runs each (3), and print each case's
median error with the load it was measured under.
The cases:

  lock     3 workers, 200 us held, 20 us outside: the lock bounds them;
           predicted vs real gain for 25% and 50% shorter, the error
           relative to the mean real gain, and whether the real gains
           fall inside the interval.
  decoy    the same plus 4 threads sleeping 1 ms under decoy_lock, which
           has more wait than work_lock and which no item needs: its
           predicted gain (ideally 0) beside work_lock's.
  cpu      4 workers, holds of 150 us asleep and 100 us of work, 190 us
           of work outside, pinned to one CPU at the highest priority
           (whatiftruth.py's cpu=): the lock bounds them, half as long
           holds would make the CPU the limit, so the prediction should
           be capped (bound "cpu") below the lock's own arithmetic;
           predicted vs real for 25% and 50% shorter, paired in the
           same process (test_whatif_cpubound.py's case).
  procs    2 forked processes of 2 workers each, one lock in memory
           they share (--procs 2), profiled with --children: the delay
           goes into the holder processes, the progress is summed over
           them; predicted vs real for 25% and 50% shorter.

The load average (1 minute) is printed before and after each case.
Each paired row is followed by the handoffs syncprof timed (now and
with the holds shorter, JSON handoff_ns and handoff_predicted_ns), the
points of the gain their move past the slope's line would add
(handoff_gain_pct, not in the prediction), the prediction and its error
with them, and the
wake-up curve (idle before: latency, us).  WHATIF_CASES picks cases
(lock,cpu,procs,decoy), WHATIF_HOLD_US the lock case's hold (200).

  tests/bench/whatifbench.py [--json FILE]

Run as root from the repository, after make and make test-bins.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile

import benchmain

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from whatiftruth import Truth  # noqa: E402
BUILD = os.environ.get("SYNCPROF_BUILD", os.path.join(ROOT, "build"))
SYNCPROF = os.path.join(ROOT, "syncprof")
TARGET = os.path.join(BUILD, "tests", "targets", "whatif")
# The lock case's hold (WHATIF_HOLD_US: 100 puts it on the guest's fast
# side of the wake-up's step, docs/what-if.md).
LOCK_BOUND = ["--threads", "3", "--hold-us",
              os.environ.get("WHATIF_HOLD_US", "200"), "--work-us", "20"]
DECOY = LOCK_BOUND + ["--decoy-threads", "4", "--decoy-hold-us", "1000"]
CPU_BOUND = ["--threads", "4", "--hold-us", "100", "--hold-sleep-us", "150",
             "--work-us", "190"]
PROCS = ["--procs", "2", "--threads", "2", "--hold-us", "200", "--work-us",
         "20"]
# A run that hangs is ended: longer than any experiment takes.
HANG_S = 300
# Windows per fraction on each side of a paired case's experiment, and
# the paired cases' runs.
WINDOWS = 30
REPEAT = int(os.environ.get("WHATIF_REPEAT", "3"))


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def predict_pid(pid, what_if, extra=()):
    """syncprof's report on a running target: a 1 s profile, then the
    experiment."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        run = subprocess.run([SYNCPROF, "--mode", "contended", "--pid",
                              str(pid), "-d", "1", "--format", "json", "-o",
                              out, "--progress", "item_done", what_if,
                              *extra], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True,
                             timeout=HANG_S)
        if run.returncode != 0:
            raise RuntimeError(f"syncprof {what_if}: status "
                               f"{run.returncode}: {run.stderr.strip()}")
        return last_report(out, what_if)


def last_report(path, what_if):
    """The last of the JSON reports in path (one a line), which must
    hold the experiment's entries."""
    with open(path) as f:
        text = f.read()
    report = [json.loads(line) for line in text.splitlines()
              if line.startswith("{")][-1]
    if not report.get("what_if"):
        raise RuntimeError(f"syncprof {what_if}: no what_if in the report")
    return report


def paired(args, what_if, extra=(), header=0, cpu=None):
    """The prediction on a running target between two measurements of
    the real gain by the same process (whatiftruth.py: 25%, 50%, the
    experiment, 50%, 25%): the report, and each fraction's real gains
    before and after.  cpu: the target pinned to that CPU."""
    with Truth(TARGET, args, hang_s=HANG_S, cpu=cpu) as truth:
        if header:
            truth.lines(header)
        truth.settle()
        report, _, middle, _ = truth.around(
            lambda: predict_pid(truth.pid, what_if, extra), WINDOWS)
        reals = {s: (truth.gain(s / 100, until=middle)[0],
                     truth.gain(s / 100, since=middle)[0],
                     truth.gain(s / 100)[0]) for s in (25, 50)}
    return report, reals


def predict(args, what_if, extra=()):
    """syncprof's report on the target as given: a 1 s profile, then the
    experiment.  The launched target runs on after syncprof's report:
    killed then."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        # stderr to a file: the target, left running, holds a pipe open.
        with open(os.path.join(tmp, "stderr"), "w+") as errf:
            proc = subprocess.Popen([SYNCPROF, "--mode", "contended", "-d",
                                     "1", "--format", "json", "-o", out,
                                     "--progress", "item_done", what_if,
                                     *extra, "--", TARGET, *args, "--seconds", "120"],
                                    stdout=subprocess.DEVNULL, stderr=errf,
                                    start_new_session=True)
            try:
                proc.wait(timeout=HANG_S)
            finally:
                # The target is in syncprof's process group.
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
            errf.seek(0)
            err = errf.read()
        if proc.returncode != 0:
            raise RuntimeError(f"syncprof {what_if}: status "
                               f"{proc.returncode}: {err.strip()}")
        return last_report(out, what_if)


def entry(report, obj, shorter):
    found = [w for w in report["what_if"]
             if obj in (None, w["object"]) and w["shorter_pct"] == shorter]
    if len(found) != 1:
        raise RuntimeError(f"{obj} {shorter}%: {len(found)} entries")
    return found[0]


def compare(name, w, reals):
    """One prediction beside the real gains before and after it (and
    their pooled median, third, when measured in the same process)."""
    real = reals[2] if len(reals) > 2 else statistics.mean(reals)
    err = (w["predicted_gain_pct"] - real) / real * 100 if real else None
    inside = (w["low_pct"] <= real <= w["high_pct"] if len(reals) > 2 else
              w["low_pct"] <= max(reals) and w["high_pct"] >= min(reals))
    row = {"case": name, "shorter_pct": w["shorter_pct"],
           "predicted_pct": w["predicted_gain_pct"], "low_pct": w["low_pct"],
           "high_pct": w["high_pct"], "bound": w["bound"],
           "lock_gain_pct": w["lock_gain_pct"],
           "cpu_cap_pct": w.get("cpu_cap_pct"),
           "real_before_pct": reals[0], "real_after_pct": reals[1],
           "error_pct": err, "real_inside_interval": inside,
           "experiment_s": w["experiment_s"],
           "queue_gain_pct": w.get("queue_gain_pct"),
           "methods_agree": w.get("methods_agree"),
           "handoff_ns": w.get("handoff_ns"),
           "handoff_predicted_ns": w.get("handoff_predicted_ns"),
           "handoff_woken_pct": w.get("handoff_woken_pct"),
           "handoff_gain_pct": w.get("handoff_gain_pct"),
           "wake_curve": w.get("wake_curve")}
    # The prediction with the handoffs' move past the line (said, not
    # applied: added to the lock's arithmetic where the lock bounds it),
    # and its error.
    moved = w["predicted_gain_pct"] + (w.get("handoff_gain_pct") or 0)
    if w["bound"] != "lock":
        moved = w["predicted_gain_pct"]
    row["moved_pct"] = moved
    row["moved_error_pct"] = (moved - real) / real * 100 if real else None
    errs = f"{err:+7.1f}%" if err is not None else "      -"
    queue = w.get("queue_gain_pct")
    queue = f"{queue:7.1f}" if queue is not None else "      -"
    print(f"{name:<6} {w['shorter_pct']:>4.0f}%  {w['predicted_gain_pct']:7.1f} "
          f"[{w['low_pct']:6.1f}, {w['high_pct']:7.1f}] {w['bound']:<4} "
          f"{reals[0]:7.1f} {reals[1]:7.1f}  {errs}  "
          f"{'yes' if inside else 'no':<6} {w['experiment_s']:5.1f} {queue}")
    if w.get("handoff_ns"):
        curve = ", ".join(f"{p['idle_ns'] / 1e3:.0f}:{p['latency_ns'] / 1e3:.1f}"
                          for p in w.get("wake_curve") or [])
        merr = row["moved_error_pct"]
        merr = f"{merr:+.1f}%" if merr is not None else "-"
        print(f"       handoffs {w['handoff_ns'] / 1e3:.1f} us -> "
              f"{w['handoff_predicted_ns'] / 1e3:.1f} us "
              f"({w['handoff_woken_pct']:.0f}% woken), "
              f"{w['handoff_gain_pct']:+.1f} points; with them "
              f"{moved:.1f} ({merr}); wake-ups (idle us: latency us) "
              f"{curve or 'none idle'}")
    return row


def lock_case(rows, loads):
    for _ in range(REPEAT):
        loads.append(load_average())
        report, reals = paired(LOCK_BOUND, "--what-if=work_lock")
        for s in (25, 50):
            rows.append(compare("lock", entry(report, "work_lock", s),
                                reals[s]))
            rows[-1]["load"] = loads[-1]
        loads.append(load_average())


def cpu_case(rows, loads):
    cpu = sorted(os.sched_getaffinity(0))[-1]
    for _ in range(REPEAT):
        loads.append(load_average())
        report, reals = paired(CPU_BOUND, "--what-if=work_lock", cpu=cpu)
        for s in (25, 50):
            rows.append(compare("cpu", entry(report, "work_lock", s),
                                reals[s]))
            rows[-1]["load"] = loads[-1]
        loads.append(load_average())


def procs_case(rows, loads):
    for _ in range(REPEAT):
        loads.append(load_average())
        report, reals = paired(PROCS, "--what-if", ["--children"], header=2)
        for s in (25, 50):
            rows.append(compare("procs", entry(report, None, s), reals[s]))
            rows[-1]["load"] = loads[-1]
        loads.append(load_average())


def medians(rows):
    """Each case's and fraction's median error and its load."""
    out = {}
    for r in rows:
        if r["error_pct"] is not None and "load" in r:
            out.setdefault((r["case"], r["shorter_pct"]), []).append(r)
    for (case, short), rs in sorted(out.items()):
        errs = [abs(r["error_pct"]) for r in rs]
        moved = [abs(r["moved_error_pct"]) for r in rs
                 if r.get("moved_error_pct") is not None]
        if moved:
            print(f"{case} {short:.0f}%: with the handoffs' move "
                  f"median |error| {statistics.median(moved):.1f}%")
        within = sum(1 for e in errs if e <= 20)
        inside = sum(1 for r in rs if r["real_inside_interval"])
        print(f"{case} {short:.0f}%: median |error| "
              f"{statistics.median(errs):.1f}% over {len(rs)} runs "
              f"(within 20%: {within}, real inside the interval: "
              f"{inside}), load average {min(r['load'] for r in rs):.1f} "
              f"to {max(r['load'] for r in rs):.1f}")


def decoy_case(results, loads):
    loads.append(load_average())
    report = predict(DECOY, "--what-if")
    wait = {}
    for row in report["rows"]:
        wait[row["object_symbol"]] = (wait.get(row["object_symbol"], 0)
                                      + row["wait_ns"])
    out = {"wait_ms": {k: v / 1e6 for k, v in wait.items()}}
    print(f"decoy: wait in the profile: decoy_lock "
          f"{wait.get('decoy_lock', 0) / 1e6:.1f} ms, work_lock "
          f"{wait.get('work_lock', 0) / 1e6:.1f} ms")
    for s in (25, 50):
        de = entry(report, "decoy_lock", s)
        d = de["predicted_gain_pct"]
        w = entry(report, "work_lock", s)["predicted_gain_pct"]
        out[f"{s}"] = {"decoy_pct": d, "work_lock_pct": w,
                       "decoy_bound": de["bound"],
                       "decoy_slope_pct": de["lock_gain_pct"]}
        print(f"decoy: {s}% shorter: decoy_lock predicted {d:.1f}% "
              f"(bound {de['bound']}, its slope alone "
              f"{de['lock_gain_pct']:.1f}%), work_lock {w:.1f}%")
    loads.append(load_average())
    results["decoy"] = out


def whatif_accuracy(results):
    """make bench's whatif section: results["whatif"]."""
    res = {"load_before": load_average(), "rows": [], "loads": []}
    print("--what-if: predicted gain vs the shorter version run for real "
          "(tests/targets/whatif --control)")
    print(f"{'case':<6} {'short':>5}  {'pred':>7} {'[low,':>8} "
          f"{'high]':>8} {'bnd':<4} {'before':>7} {'after':>7}  "
          f"{'error':>8}  {'inside':<6} {'exp s':>5} {'queue':>7}")
    only = os.environ.get("WHATIF_CASES", "lock,cpu,procs,decoy").split(",")
    if "lock" in only:
        lock_case(res["rows"], res["loads"])
    if "cpu" in only:
        cpu_case(res["rows"], res["loads"])
    if "procs" in only:
        procs_case(res["rows"], res["loads"])
    if "decoy" in only:
        decoy_case(res, res["loads"])
    medians(res["rows"])
    capped = [r for r in res["rows"] if r["case"] == "cpu"]
    for r in capped:
        below = r["predicted_pct"] < r["lock_gain_pct"]
        cap = r["cpu_cap_pct"]
        caps = f"{cap:.1f}%" if cap is not None else "none"
        print(f"cpu: bound {r['bound']}, cap {caps}, lock's "
              f"own arithmetic {r['lock_gain_pct']:.1f}%: "
              f"{'capped below it' if below else 'not capped'}")
    res["load_after"] = load_average()
    print(f"load average (1 min): {res['load_before']:.1f} before, "
          f"{res['load_after']:.1f} after, "
          f"{min(res['loads']):.1f} to {max(res['loads']):.1f} between "
          f"cases, on {os.cpu_count()} CPUs")
    print()
    results["whatif"] = res


def main():
    return benchmain.section_main(__doc__, "whatifbench", "BPF and uprobes",
                                  whatif_accuracy)


if __name__ == "__main__":
    sys.exit(main())
