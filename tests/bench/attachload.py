"""make bench, section attachload: attach wall and CPU time beside 0, 5
and 10 busy loops (shell loops that never sleep), medians of 5, in
contended and full mode, on a sleeping process.  The load average read
as each level begins is quoted: other work on the machine adds to the
loops."""
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
          f"syncprof's user + system time to attach")
    print(f"{'loops':>5} {'loadavg':>8} {'mode':10} {'wall (s)':>9} {'CPU (s)':>8}")
    for loops in (0, 5, 10):
        hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                for _ in range(loops)]
        try:
            if loops:
                time.sleep(5)	# the loops' share reaches the load average
            with open("/proc/loadavg") as f:
                load = float(f.read().split()[0])
            for name, args in (("contended", ["--mode", "contended"]),
                               ("full", ["--mode", "full"])):
                wall, cpu = [], []
                for _ in range(runs):
                    a, _, c = attach_once(syncprof, args)
                    wall.append(a)
                    cpu.append(c)
                out[f"{loops} {name}"] = {"loops": loops, "loadavg": load,
                                          "wall_s": statistics.median(wall),
                                          "cpu_s": statistics.median(cpu),
                                          "wall_runs": wall, "cpu_runs": cpu}
                print(f"{loops:5} {load:8.1f} {name:10} {statistics.median(wall):9.2f} "
                      f"{statistics.median(cpu):8.2f}")
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    print()
