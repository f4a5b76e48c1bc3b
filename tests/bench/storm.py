"""make bench, section storm: what a short process that never waits costs
syncprof under --all and under --children.

The bench builds STORM_PROGRAMS (default 200) distinct programs (each its
own source, so its own file and build ID: no unwind table is shared),
each dynamically linked, sleeping 20 ms (nanosleep: no futex) and exiting.
One run: syncprof attaches (--ready-fd), settles a second, then syncprof's
run time (/proc/PID/task/*/schedstat) is read over the storm (the
programs run one after the other from a driver process) and the same
settling time, then over an idle spell as long.  --children: the cost per
process is (storm CPU - idle CPU scaled to the storm's length) /
programs.  --all follows the host's other processes too, which other work
makes at its own pace: there the figure is the storm spell's CPU per
process the host made in it (/proc/stat's processes), the others'
included.  Medians over
BENCH_RUNS runs (at least 3).  --children follows the driver (--pid of a
shell that waits on its stdin); --all, the host.  BENCH_BASE: an older
syncprof measured in the same runs.
"""
import os
import statistics
import subprocess
import tempfile
import time

PROGRAMS = int(os.environ.get("STORM_PROGRAMS", "150"))
LIFE_MS = 50
SETTLE_S = 1.5
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """syncprof's run time, all its threads (schedstat: nanoseconds, not
    the clock ticks of /proc/PID/stat)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1e9


def forks():
    """Processes made on the host since boot."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("processes "):
                return int(line.split()[1])
    raise RuntimeError("no processes line in /proc/stat")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def build_programs(d, n):
    """n distinct programs: their paths."""
    exes = []
    jobs = []
    for i in range(n):
        src = os.path.join(d, f"short{i}.c")
        exe = os.path.join(d, f"short{i}")
        with open(src, "w") as f:
            f.write("#include <time.h>\n"
                    f"static volatile int which = {i};\n"
                    "int main(void)\n{\n"
                    f"\tstruct timespec t = {{ 0, {LIFE_MS} * 1000 * 1000 }};\n\n"
                    "\tnanosleep(&t, 0);\n"
                    "\treturn which * 0;\n}\n")
        jobs.append(subprocess.Popen(["cc", "-O1", "-o", exe, src]))
        exes.append(exe)
        if len(jobs) >= 4:
            if jobs.pop(0).wait():
                raise RuntimeError("cannot build the storm's programs")
    for j in jobs:
        if j.wait():
            raise RuntimeError("cannot build the storm's programs")
    return exes


def one_run(syncprof, how, script):
    """syncprof's CPU per short process, in ms, for one run."""
    driver = subprocess.Popen(["sh", "-c", f"read go; . {script}"],
                              stdin=subprocess.PIPE, text=True)
    r, w = os.pipe()
    target = ["--all"] if how == "all" else ["--children", "--pid",
                                              str(driver.pid)]
    prof = subprocess.Popen([syncprof, *target, "--ready-fd", str(w),
                             "-o", "/dev/null"], pass_fds=(w,),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        if not os.read(r, 64):
            raise RuntimeError(f"syncprof {how} did not attach")
        os.close(r)
        time.sleep(SETTLE_S)
        c0, f0 = cpu_s(prof.pid), forks()
        t0 = time.monotonic()
        driver.stdin.write("go\n")
        driver.stdin.close()
        driver.wait()
        storm_s = time.monotonic() - t0
        time.sleep(SETTLE_S)
        c1, f1 = cpu_s(prof.pid), forks()
        t1 = time.monotonic()
        time.sleep(storm_s + SETTLE_S)
        c2, f2 = cpu_s(prof.pid), forks()
        span = time.monotonic() - t1
        if how == "children":
            # Only the storm's processes are followed.
            idle = (c2 - c1) / span
            return (c1 - c0 - idle * (t1 - t0)) / PROGRAMS * 1e3, storm_s, idle
        # The host's other processes are followed too, and other work on
        # the machine makes and ends them at its own pace: syncprof's CPU
        # over the storm's spell per process the host made in it (theirs
        # included; most are short too).
        idle = (c2 - c1) / span
        return (c1 - c0) / max(f1 - f0, 1) * 1e3, storm_s, idle
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        prof.terminate()
        prof.wait()


def storm(results, binaries, runs):
    out = results["storm"] = {"programs": PROGRAMS, "runs": max(3, runs),
                              "load_before": loadavg()}
    print(f"storm: {PROGRAMS} distinct short programs ({LIFE_MS} ms each, no "
          f"wait), one after another; syncprof's CPU per process (storm "
          f"minus idle), medians of {out['runs']}; load average "
          f"{out['load_before']:.1f} at the start")
    print(f"{'syncprof':10} {'follows':10} {'ms/process':>11} "
          f"{'idle CPU %':>11} {'storm (s)':>10}")
    with tempfile.TemporaryDirectory() as d:
        exes = build_programs(d, PROGRAMS)
        script = os.path.join(d, "storm.sh")
        with open(script, "w") as f:
            f.write("".join(f"{e}\n" for e in exes))
        per = {(w, h): [] for w, _ in binaries for h in ("all", "children")}
        for _ in range(out["runs"]):
            for which, binary in binaries:
                for how in ("all", "children"):
                    per[(which, how)].append(one_run(binary, how, script))
    for (which, how), r in per.items():
        row = {"ms_per_process": statistics.median(x[0] for x in r),
               "idle_cpu_share": statistics.median(x[2] for x in r),
               "storm_s": statistics.median(x[1] for x in r),
               "runs_ms": [x[0] for x in r]}
        out.setdefault(which, {})[how] = row
        print(f"{which:10} {how:10} {row['ms_per_process']:11.3f} "
              f"{row['idle_cpu_share'] * 100:11.2f} {row['storm_s']:10.1f}")
    out["load_after"] = loadavg()
    print(f"(load average {out['load_after']:.1f} at the end)")
    print()
