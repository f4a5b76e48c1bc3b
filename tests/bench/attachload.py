"""make bench, section attachload: attach wall and CPU time beside 0, 5
and 10 busy loops (shell loops that never sleep), medians of 5, in
contended and full mode, on a sleeping process.  The load average read
as each level begins is quoted: other work on the machine adds to the
loops.  Queued: how long syncprof's main thread waited for a CPU while
runnable, of the wall time (its nice raises it above the loops, not
above work in other sessions: with sched_autogroup on, each session is
a group of its own, and nice weighs only within one).  "own session":
syncprof started in a session of its own (setsid, as a service is),
where it raises its session's group too (user/target/attachprio.c)."""
import statistics
import subprocess
import time


def attach_under_load(results, syncprof, pairs, attach_once):
    """Attach wall and CPU time with LOAD busy loops beside (0, 5, 10: shell
    loops that never sleep), medians of max(5, BENCH_PAIRS), contended and
    full mode, on a sleeping process; the load average read before each
    level is quoted (other work on the machine adds to the loops)."""
    out = results["attach_load"] = {}
    runs = max(5, pairs)
    print(f"attach under load: LOAD busy loops beside, median of {runs}, "
          f"on a sleeping process; wall: start to 'profiling PID'; CPU: "
          f"syncprof's user + system time to attach; queued: its main "
          f"thread runnable, waiting for a CPU")
    print(f"{'loops':>5} {'loadavg':>8} {'mode':21} {'wall (s)':>9} {'CPU (s)':>8} "
          f"{'queued (s)':>10}")
    for loops in (0, 5, 10):
        hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                for _ in range(loops)]
        try:
            if loops:
                time.sleep(5)	# the loops' share reaches the load average
            with open("/proc/loadavg") as f:
                load = float(f.read().split()[0])
            for name, args, own in (
                    ("contended", ["--mode", "contended"], False),
                    ("full", ["--mode", "full"], False),
                    ("contended own session", ["--mode", "contended"], True),
                    ("full own session", ["--mode", "full"], True)):
                wall, cpu, queued = [], [], []
                for _ in range(runs):
                    sched = {}
                    a, _, c = attach_once(syncprof, args, sched=sched,
                                          new_session=own)
                    wall.append(a)
                    cpu.append(c)
                    queued.append(sched["queued_s"])
                out[f"{loops} {name}"] = {"loops": loops, "loadavg": load,
                                          "wall_s": statistics.median(wall),
                                          "cpu_s": statistics.median(cpu),
                                          "queued_s": statistics.median(queued),
                                          "wall_runs": wall, "cpu_runs": cpu,
                                          "queued_runs": queued}
                print(f"{loops:5} {load:8.1f} {name:21} {statistics.median(wall):9.2f} "
                      f"{statistics.median(cpu):8.2f} {statistics.median(queued):10.2f}")
                print(f"{'':36} runs (wall s): "
                      + " ".join(f"{w:.2f}" for w in wall))
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    print()
