#!/usr/bin/python3
"""make bench: what syncprof costs and how true its numbers are.

Each workload of lockbench runs without a profiler, under syncprof's full
mode with first-instruction probes (--probe-at entry) and with placed
probes (the default), and under bpftrace doing full mode's job (uprobe and
uretprobe, aggregated by thread, object and caller).  Speed runs give ns
per operation; every profiled run is paired with an unprofiled run right
before it, and the slowdown is their ratio.  Truth runs time every lock
call inside the workload with clock_gettime and compare the profiler's
wait and count with it.  Medians over BENCH_RUNS runs (default 3).

Results go to build/bench/results.json as well as the table on stdout.
"""
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SYNCPROF_BUILD", os.path.join(ROOT, "build"))
SYNCPROF = os.path.join(ROOT, "syncprof")
LOCKBENCH = os.path.join(BUILD, "tests", "bench", "lockbench")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))

WORKLOADS = {
    "uncontended": ["--threads", "2", "--ops", "20000"],
    "contended": ["--threads", "2", "--ops", "600", "--hold-ns", "200000"],
    "pingpong": ["--ops", "3000"],
    "many": ["--threads", "8", "--locks", "4", "--ops", "400", "--hold-ns", "20000"],
}

BPFTRACE_SCRIPT = r"""
uprobe:LIBC:pthread_mutex_lock, uprobe:LIBC:pthread_cond_wait /pid == cpid/ {
    @t0[tid] = nsecs; @obj[tid] = arg0; @ra[tid] = *(uint64 *)reg("sp");
}
uretprobe:LIBC:pthread_mutex_lock, uretprobe:LIBC:pthread_cond_wait /@t0[tid]/ {
    @wait[tid, @obj[tid], @ra[tid]] = sum(nsecs - @t0[tid]);
    @count[tid, @obj[tid], @ra[tid]] = count();
    delete(@t0[tid]); delete(@obj[tid]); delete(@ra[tid]);
}
END { clear(@t0); clear(@obj); clear(@ra); }
"""


def machine():
    info = {"kernel": platform.release(), "cpu": "?", "cpus": os.cpu_count(),
            "hypervisor": "no", "detect_virt": "?"}
    with open("/proc/cpuinfo") as f:
        text = f.read()
    m = re.search(r"model name\s*:\s*(.*)", text)
    if m:
        info["cpu"] = m.group(1).strip()
    if re.search(r"^flags\s*:.*\bhypervisor\b", text, re.M):
        info["hypervisor"] = "yes (cpu flag)"
    virt = shutil.which("systemd-detect-virt")
    if virt:
        out = subprocess.run([virt], capture_output=True, text=True).stdout.strip()
        info["detect_virt"] = out or "none"
    return info


def libc_path():
    out = subprocess.run(["ldd", LOCKBENCH], capture_output=True, text=True).stdout
    m = re.search(r"libc\.so\.6 => (\S+)", out)
    return os.path.realpath(m.group(1))


def run_plain(workload, truth):
    args = [LOCKBENCH, workload, *WORKLOADS[workload]] + (["--truth"] if truth else [])
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def run_syncprof(workload, truth, probe_at):
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        args = [SYNCPROF, "--format", "json", "--no-coalesce", "--top", "0",
                "--probe-at", probe_at, "-o", report.name, "--",
                LOCKBENCH, workload, *WORKLOADS[workload]]
        if truth:
            args.append("--truth")
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        result = json.loads(out.splitlines()[-1])
        reports = [json.loads(l) for l in open(report.name) if l.startswith("{")]
    rows = [r for r in reports[-1]["rows"] if r["object"] in result["objects"]]
    result["seen_calls"] = sum(r["count"] + r["failed"] for r in rows)
    result["seen_wait_ns"] = sum(r["wait_ns"] for r in rows)
    result["dropped"] = reports[-1]["dropped"]
    result["calibration_ns"] = reports[-1].get("calibration_ns", 0)
    return result


def run_bpftrace(workload, truth, libc):
    cmd = " ".join([LOCKBENCH, workload, *WORKLOADS[workload]] +
                   (["--truth"] if truth else []))
    proc = subprocess.run(["bpftrace", "-e", BPFTRACE_SCRIPT.replace("LIBC", libc),
                           "-c", cmd], capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1])
    result = next(json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{"))
    objects = {int(o, 16) for o in result["objects"]}
    calls = wait = 0
    for kind, tid, obj, ra, value in re.findall(
            r"@(count|wait)\[(\d+), (\d+), (\d+)\]: (\d+)", proc.stdout):
        if int(obj) in objects:
            if kind == "count":
                calls += int(value)
            else:
                wait += int(value)
    result["seen_calls"] = calls
    result["seen_wait_ns"] = wait
    result["dropped"] = 0
    return result


def median(values):
    return statistics.median(values) if values else None


def main():
    if os.geteuid() != 0:
        print("make bench needs root (BPF and uprobes)", file=sys.stderr)
        return 1
    libc = libc_path()
    have_bpftrace = shutil.which("bpftrace") is not None
    variants = [("full (entry)", lambda w, t: run_syncprof(w, t, "entry")),
                ("full", lambda w, t: run_syncprof(w, t, "auto"))]
    if have_bpftrace:
        variants.append(("bpftrace", lambda w, t: run_bpftrace(w, t, libc)))
    results = {"machine": machine(), "runs": RUNS, "workloads": {}}
    m = results["machine"]
    print(f"machine: {m['cpu']}, {m['cpus']} CPUs, kernel {m['kernel']}, "
          f"hypervisor: {m['hypervisor']}, systemd-detect-virt: {m['detect_virt']}")
    print(f"medians of {RUNS} runs; slowdown = profiled / unprofiled ns per op, "
          "paired run by run")
    print()
    header = (f"{'workload':12} {'profiler':13} {'ns/op':>10} {'slowdown':>9} "
              f"{'wait err':>9} {'count err':>9} {'mean wait':>11} {'dropped':>8}")
    print(header)
    print("-" * len(header))
    for workload in WORKLOADS:
        rows = results["workloads"][workload] = {}
        base = [run_plain(workload, False)["ns_per_op"] for _ in range(RUNS)]
        rows["none"] = {"ns_per_op": median(base)}
        print(f"{workload:12} {'none':13} {median(base):10.1f} {'1.00x':>9}")
        for name, run in variants:
            speed, ratios, werr, cerr, mean_wait, dropped = [], [], [], [], [], 0
            try:
                for _ in range(RUNS):
                    plain = run_plain(workload, False)["ns_per_op"]
                    profiled = run(workload, False)
                    speed.append(profiled["ns_per_op"])
                    ratios.append(profiled["ns_per_op"] / plain)
                    truth = run(workload, True)
                    werr.append(100.0 * (truth["seen_wait_ns"] - truth["wait_ns"]) /
                                truth["wait_ns"])
                    cerr.append(truth["seen_calls"] - truth["calls"])
                    mean_wait.append(truth["seen_wait_ns"] / max(truth["seen_calls"], 1))
                    dropped += truth["dropped"]
            except (RuntimeError, subprocess.CalledProcessError) as e:
                print(f"{workload:12} {name:13} failed: {e}")
                continue
            rows[name] = {"ns_per_op": median(speed), "slowdown": median(ratios),
                          "wait_error_pct": median(werr), "count_error": median(cerr),
                          "count_errors": cerr, "mean_wait_ns": median(mean_wait),
                          "dropped": dropped}
            print(f"{workload:12} {name:13} {median(speed):10.1f} "
                  f"{median(ratios):8.1f}x {median(werr):+8.2f}% {median(cerr):+9.0f} "
                  f"{median(mean_wait) / 1000:9.2f}us {dropped:8d}")
        print()
    for bench in ("probecost", "bench_symbolizer"):
        binary = os.path.join(BUILD, "tests", "bench", bench)
        text = subprocess.run([binary], capture_output=True, text=True).stdout
        print(text)
        line = subprocess.run([binary, "--json"], capture_output=True, text=True).stdout
        results[bench] = json.loads(line)
    out_dir = os.path.join(BUILD, "bench")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"results: {os.path.join(out_dir, 'results.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
