#!/usr/bin/python3
"""make bench: what syncprof costs and how true its numbers are.

Each workload of lockbench runs without a profiler, under syncprof's full
mode with first-instruction probes (--probe-at entry) and with placed
probes (the default), under contended mode (--mode contended), and under
bpftrace doing full mode's job (uprobe and uretprobe, aggregated by
thread, object and caller).  Speed runs give ns per operation; every
profiled run is paired with an unprofiled run right before it, and the
slowdown is their ratio.  Truth runs time every lock call inside the
workload with clock_gettime and compare the profiler's wait and count with
it.  Medians over BENCH_RUNS runs (default 3).

Contended mode counts only acquisitions that blocked in the kernel.  Its
count is checked exactly on the handoff workloads, where every measured
call is made to block (lockbench waits until the call sleeps in the futex
system call before letting it go); elsewhere the table shows blocked
acquisitions out of all lock calls, as information.  Its wait is the
blocked time; for a condvar wait that includes taking the mutex back (a
mutex row at the wait's call site), which the workload's clock covers too.

Then contended mode alone, with BENCH_PAIRS pairs (default max(5,
BENCH_RUNS); BENCH_OVERHEAD_PAIRS, default max(9, BENCH_PAIRS), for the
first):
  * overhead on the fast path: millions of uncontended lock/unlock pairs
    in 4 threads, next to full mode's slowdown on the small uncontended
    workload of the table, and the zero-event check (no row, no event).
    Each run does 11 rounds and keeps the fastest (other work on the
    machine only ever adds time); the slowdown is the median over pairs;
  * the added cost per blocking wait: a condvar ping-pong and a bare futex
    ping-pong, both threads pinned to one CPU (the steadiest figures on a
    noisy machine), (profiled - unprofiled) time divided by the blocking
    waits syncprof counted; with the workers' voluntary context switches
    (sleeps) per op with and without the profiler, which shows when the
    profiler changes how often the workload blocks;
  * what other processes pay while contended mode is attached elsewhere:
    a futex call (the tracepoint's program runs and filters by process)
    and any other system call.

Then --record (BENCH_PAIRS pairs, BENCH_RUNS runs):
  * the writer: the highest rate of waits (a synthetic producer through
    the real record_wait() and ring, tests/bench/recordbench.c) that the
    writer takes with nothing dropped; and record_wait()'s own cost in
    that producer (its run time per wait, recording on less off);
  * the kernel's cost per recorded wait: with the kernel's BPF stats on,
    the run time of the program that ends waits, with and without
    --record, on the same workload: full mode's return probe (one run per
    wait, nothing else) and contended mode's futex exit (whose runs also
    include every other process's futex returns: the difference of the
    totals over the waits recorded);
  * end to end: a full-mode workload recorded with the default ring, its
    waits per second and what was dropped.

Then stacks (BENCH_PAIRS pairs), on a GLib-style hammer (lockbench
hammer: two threads on one futex-word mutex, waits through syscall(),
every thread 40 frames deep): the BPF time per blocking wait, read from
the programs' run_time_ns / run_cnt (sysctl kernel.bpf_stats_enabled,
set for the run) through syncprof -v, at --stack-depth 0, 8 and 32, the
time per frame beyond the call site ((32 - 8) / 24), and the hammer's
throughput without syncprof and at each depth; then full mode's added
cost per lock call, with 32-frame stacks and without, against
bpftrace's on the uncontended workload.

Then --states, with BENCH_PAIRS rounds:
  * what every context switch on the machine pays while --states runs:
    pipepp (a byte passed through two pipes, 2 threads pinned to one CPU:
    one context switch per op, no futex call), not profiled, while
    syncprof profiles a sleeping process, in full mode (whose uprobes stay
    in the sleeper) and contended mode, each with and without --states;
  * the throughput of pipepp and futexpp, pinned, as the target: no
    profiler, contended mode, contended mode with --states; "missed" is
    the scheduler events of the target's threads the kernel did not
    deliver (sched_missed).
Then what --hold and --blame add (features), each paired against the
same mode without it: full mode's unlock probe per lock/unlock pair (and
the hold it reads for locks held a few nanoseconds: the probes' own
time), contended mode's release records per blocking wait.

Then full mode's probe on each lock kind (kinds): the uncontended
workload on each thread's own mutex, spinlock, rwlock (read, write,
trywrlock) or semaphore, without syncprof and under full mode: the cost
each call pays, and whether every call was counted.  And attach and
detach (attach): how long syncprof takes from its start to "profiling
PID" on a sleeping process, and from SIGTERM to its exit, in full mode
(with and without --hold) and contended mode; BENCH_BASE=/path/to/an/
older/syncprof measures that one too, side by side.

Then what --why adds per blocking wait beyond --blame and --states
(why), paired the same way.

BENCH_ONLY=stacks (or main, overhead, cost, bystander, features, why, lockorder,
kinds, attach, tools; comma separated) runs only those sections.

Then what following many processes costs (processes): 1, 10 and 100
waiting processes of one program (tests/targets/blocking) under one
syncprof --pid LIST in contended mode: the time to attach (start to
"profiling PID"), the kernel memory of all its BPF maps (memlock in
/proc/PID/fdinfo), and the unwind tables: one per library build whatever
the number of processes, one small mapping array per process.

Then what reading the target's files costs (targetfiles): per call,
opening one as syncprof opens a target's (O_PATH lookup, fstat,
O_NOFOLLOW | O_NONBLOCK) against a plain open, and reading libc's ELF
headers with pread against libelf's mapping; then attaching in contended
mode to a process with libc alone, with 100 libraries, with libLLVM and
to qemu-system-x86_64 (time, CPU, RSS; BENCH_BASE alongside).

First of all, real servers (servers, tests/bench/servers.py): PostgreSQL
with pgbench under --children, memcached with memcaslap in both modes,
BENCH_SERVER_PAIRS pairs (default 3) of BENCH_SERVER_SECONDS (default 8)
each (the duty sections' loads: BENCH_DUTY_SECONDS, default the same) (BENCH_BASE=/path/to/an/older/syncprof: that one too, in the same
pairs; BENCH_SERVER_CASES="memcached cont+why,..." only those cases); then
what the findings cost (findings, servers.py): their CPU by syncprof -v's
thread clock against all of syncprof's CPU, PostgreSQL under pgbench -C
with --children and a report every second; then
storm (tests/bench/storm.py): syncprof's CPU per short process that never
waits, under --all and --children, on a storm of distinct programs; then
duty (tests/bench/duty.py): memcached under continuous full mode and
--duty 50, 20 and 5, paired, with the acquisition rates and mean holds set
against continuous full mode's, and the test targets' against their own
truth; then duty_mariadb: the same pairs on a private MariaDB
(Debian's mariadbd in a temp dir, own socket and port) under sysbench
oltp_read_write; then attach, with the CPU it takes and the verifier's
instructions; then attachload: attach wall and CPU time beside 0, 5 and 10
busy loops, medians of 5.

Last, how close --what-if's predictions come (whatif,
tests/bench/whatifbench.py): predicted against real gains of
tests/targets/whatif's shorter version run for real, the decoy lock,
the CPU cap and the case across processes, with the load average they
were measured under; then on PostgreSQL (whatif_pg,
tests/bench/whatifpg.py): WALWriteLock's holds predicted shorter under
pgbench, against commit_delay lowered by as much, run for real.

BENCH_ONLY=servers,findings,storm,duty,duty_mariadb,attach,attachload,main,overhead,cost,bystander,stacks,recording,states,offcpu,tools,processes,serve,targetfiles,whatif,whatif_pg (comma
separated) runs only those sections (BENCH_ONLY=recording alone writes
results-recording.json, BENCH_ONLY=processes alone results-processes.json).
Results go to build/bench/results.json as well as the tables on stdout.
"""
import ctypes
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "integration"))
import pgcluster  # noqa: E402  (a private PostgreSQL, as the tests start it)
import attachload
import duty
import storm
import servers
import whatifbench
import whatifpg

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SYNCPROF_BUILD", os.path.join(ROOT, "build"))
SYNCPROF = os.path.join(ROOT, "syncprof")
LOCKBENCH = os.path.join(BUILD, "tests", "bench", "lockbench")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
PAIRS = int(os.environ.get("BENCH_PAIRS", str(max(5, RUNS))))
# The fast-path check is the cheapest section (~1 s a pair) and the one
# with the tightest limit: more pairs against the machine's noise.
OVERHEAD_PAIRS = int(os.environ.get("BENCH_OVERHEAD_PAIRS", str(max(9, PAIRS))))
# BENCH_ONLY=states,...: only these parts (table, contended, recording,
# states, tools).
ONLY = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))
RECORDBENCH = os.path.join(BUILD, "tests", "bench", "recordbench")
# (mode, the program that ends a wait, workload, arguments).  One worker in
# full mode: uprobe programs are preemptible, and with two busy workers on
# two CPUs the writer's own runs land inside the measured program time.
RECORD_COST = [("full", "lock_return", "uncontended", ["--threads", "1", "--ops", "40000"]),
               ("contended", "futex_exit", "futexpp", ["--ops", "20000"])]
RECORD_E2E = ("uncontended", ["--threads", "2", "--ops", "150000"])



WORKLOADS = {
    "uncontended": ["--threads", "2", "--ops", "20000"],
    "contended": ["--threads", "2", "--ops", "600", "--hold-ns", "200000"],
    "pingpong": ["--ops", "3000"],
    "many": ["--threads", "8", "--locks", "4", "--ops", "400", "--hold-ns", "20000"],
    "handoff": ["--ops", "300", "--hold-ns", "200000"],
    "condhandoff": ["--ops", "300", "--hold-ns", "200000"],
}

# Contended mode's own sections (workload, arguments).
OVERHEAD = ("uncontended", ["--threads", "4", "--ops", "3000000", "--rounds", "11"])
OVERHEAD_LIMIT = 1.03
COST = [("pingpong", ["--ops", "20000"]),        # plus --pin CPU
        ("futexpp", ["--ops", "20000"])]
BYSTANDER = [("futexwake", ["--threads", "1", "--ops", "50000", "--rounds", "5"]),
             ("getppid", ["--threads", "1", "--ops", "50000", "--rounds", "5"])]

# Stacks: the hammer runs long enough for ~100k blocking waits.
HAMMER = ["--threads", "2", "--ops", "60000", "--hold-ns", "1000", "--depth", "40"]
STACK_DEPTHS = [0, 8, 32]
BPF_STATS = "/proc/sys/kernel/bpf_stats_enabled"
SECTIONS = os.environ.get("BENCH_ONLY", "")
# --states: context-switch workloads, both threads on one CPU (plus --pin),
# so every op is one context switch; pipepp makes no futex call at all.
STATES_SWITCH = [("pipepp", ["--ops", "20000", "--rounds", "7"]),
                 ("futexpp", ["--ops", "20000", "--rounds", "7"])]
STATES_LIMIT_NS = 300       # added per context switch, machine-wide

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


def lockbench_args(workload, truth, args=None):
    return ([LOCKBENCH, workload, *(WORKLOADS[workload] if args is None else args)] +
            (["--truth"] if truth else []))


def run_plain(workload, truth, args=None):
    out = subprocess.run(lockbench_args(workload, truth, args), capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def workload_rows(rows, objects, mode):
    """The rows of the workload's own objects, and (contended mode) the
    mutex rows of taking a condvar's mutex back: contended mode reports
    that part of pthread_cond_wait as a mutex row at the wait's call
    site, and the workload's clock around the call covers it."""
    own = [r for r in rows if r["object"] in objects]
    extra = []
    if mode == "contended":
        sites = {r["callsite"]["address"] for r in own if r["type"] == "condvar"}
        extra = [r for r in rows if r["object"] not in objects and
                 r["type"] in ("mutex", "rec_mutex") and
                 r["callsite"]["address"] in sites]
    return own, extra


def run_syncprof(workload, truth, probe_at, mode="full", args=None, extra=()):
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        cmd = [SYNCPROF, "--format", "json", "--no-coalesce", "--top", "0",
               "-o", report.name, *extra]
        cmd += ["--mode", mode]        # always: the default mode has changed before
        if mode == "full":
            cmd += ["--probe-at", probe_at or "auto"]
        cmd += ["--", *lockbench_args(workload, truth, args)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        result = json.loads(out.splitlines()[-1])
        reports = [json.loads(l) for l in open(report.name) if l.startswith("{")]
    last = reports[-1]
    if last.get("mode", "full") != mode:
        raise RuntimeError(f"report says mode {last.get('mode')!r}, not {mode!r}")
    own, extra = workload_rows(last["rows"], result["objects"], mode)
    result["seen_calls"] = sum(r["count"] + r["failed"] for r in own)
    result["seen_wait_ns"] = sum(r["wait_ns"] for r in own + extra)
    result["dropped"] = last["dropped"]
    result["calibration_ns"] = last.get("calibration_ns", 0)
    result["unwind_stopped"] = last.get("unwind_stopped", 0)
    # Everything the report holds, the harness's and libc's rows included.
    result["rows_total"] = last.get("rows_total", len(last["rows"]))
    result["events"] = sum(r["count"] + r["failed"] for r in last["rows"])
    result["event_types"] = sorted({r["type"] for r in last["rows"]})
    result["threads"] = last.get("threads")
    result["sched_missed"] = last.get("sched_missed")
    # null (not asked for) counts as none.
    result["holds"] = sum(r.get("holds") or 0 for r in own)
    result["hold_ns"] = sum(r.get("hold_ns") or 0 for r in own)
    result["blamed"] = sum(b["count"] for b in last.get("blame") or [])
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


def table_header(first="workload", width=12, extra=""):
    header = (f"{first:{width}} {'profiler':13} {'ns/op':>10} {'slowdown':>9} " + extra)
    print(header.rstrip())
    print("-" * len(header.rstrip()))


def main_table(results, variants):
    print(f"medians of {RUNS} runs; slowdown = profiled / unprofiled ns per op, "
          "paired run by run")
    print("contended: count err only where every measured call blocks (handoff, "
          "condhandoff);")
    print("  blocked = acquisitions that blocked / lock calls the workload made")
    print()
    table_header(extra=f"{'wait err':>9} {'count err':>9} {'mean wait':>11} "
                 f"{'dropped':>8} {'blocked':>13}")
    for workload in WORKLOADS:
        rows = results["workloads"][workload] = {}
        base = [run_plain(workload, False)["ns_per_op"] for _ in range(RUNS)]
        rows["none"] = {"ns_per_op": median(base)}
        print(f"{workload:12} {'none':13} {median(base):10.1f} {'1.00x':>9}")
        for name, mode, run in variants:
            speed, ratios, werr, cerr, mean_wait, dropped = [], [], [], [], [], 0
            blocked, calls, events, rows_total, types, unwind_stopped = [], [], 0, 0, set(), 0
            try:
                for _ in range(RUNS):
                    plain = run_plain(workload, False)["ns_per_op"]
                    profiled = run(workload, False)
                    speed.append(profiled["ns_per_op"])
                    ratios.append(profiled["ns_per_op"] / plain)
                    truth = run(workload, True)
                    werr.append(100.0 * (truth["seen_wait_ns"] - truth["wait_ns"]) /
                                truth["wait_ns"])
                    if mode == "contended":
                        # Only blocked acquisitions count: exact where the
                        # workload knows which calls blocked.
                        if truth.get("blocking_calls") is not None:
                            cerr.append(truth["seen_calls"] - truth["blocking_calls"])
                        blocked.append(truth["seen_calls"])
                        calls.append(truth["calls"])
                        for r in (profiled, truth):
                            events += r["events"]
                            rows_total += r["rows_total"]
                            types |= set(r["event_types"])
                            unwind_stopped += r.get("unwind_stopped", 0)
                    else:
                        cerr.append(truth["seen_calls"] - truth["calls"])
                    mean_wait.append(truth["seen_wait_ns"] / max(truth["seen_calls"], 1))
                    dropped += truth["dropped"]
            except (RuntimeError, subprocess.CalledProcessError, ValueError,
                    KeyError, IndexError) as e:
                print(f"{workload:12} {name:13} failed: {e}")
                continue
            row = rows[name] = {
                "mode": mode, "ns_per_op": median(speed), "slowdown": median(ratios),
                "wait_error_pct": median(werr), "count_error": median(cerr),
                "count_errors": cerr, "mean_wait_ns": median(mean_wait),
                "dropped": dropped}
            cerr_text = f"{median(cerr):+9.0f}" if cerr else f"{'n/a':>9}"
            blocked_text = ""
            if mode == "contended":
                row.update({"blocked": blocked, "lock_calls": calls,
                            "count_basis": ("blocking_calls" if cerr else None),
                            "events_all_rows": events, "rows_all": rows_total,
                            "event_types": sorted(types),
                            "unwind_stopped": unwind_stopped})
                blocked_text = f"{median(blocked):.0f}/{median(calls):.0f}"
            print(f"{workload:12} {name:13} {median(speed):10.1f} "
                  f"{median(ratios):8.1f}x {median(werr):+8.2f}% {cerr_text} "
                  f"{median(mean_wait) / 1000:9.2f}us {dropped:8d} {blocked_text:>13}"
                  .rstrip())
            if cerr and min(cerr) != max(cerr):
                print(f"{'':12} {'':13} count errors by run: "
                      f"{', '.join(f'{e:+d}' for e in cerr)}")
        print()


def contended_overhead(results):
    """Millions of uncontended pairs: none vs contended, paired; full mode's
    figures on the small uncontended workload come from the table above."""
    workload, args = OVERHEAD
    plain_ns, prof_ns, ratios, runs = [], [], [], []
    for _ in range(OVERHEAD_PAIRS):
        plain = run_plain(workload, False, args)
        prof = run_syncprof(workload, False, None, "contended", args)
        plain_ns.append(plain["ns_per_op"])
        prof_ns.append(prof["ns_per_op"])
        ratios.append(prof["ns_per_op"] / plain["ns_per_op"])
        runs.append({k: prof[k] for k in ("events", "rows_total", "event_types",
                                          "dropped", "unwind_stopped")})
        runs[-1]["none_round_ns_per_op"] = plain["round_ns_per_op"]
        runs[-1]["contended_round_ns_per_op"] = prof["round_ns_per_op"]
    threads = args[args.index("--threads") + 1]
    ops = args[args.index("--ops") + 1]
    rounds = args[args.index("--rounds") + 1]
    big = f"{workload} {threads}x{ops}"
    small = WORKLOADS[workload]
    small_label = (f"{workload} {small[small.index('--threads') + 1]}x"
                   f"{small[small.index('--ops') + 1]}")
    width = max(len(big), len(small_label), 12)
    print(f"contended mode on the fast path: {threads} threads x {ops} lock/unlock "
          f"pairs, each thread its own mutex;")
    print(f"  ns/op of a run = its fastest of {rounds} rounds; median of {OVERHEAD_PAIRS} "
          "pairs")
    print(f"(the {small_label} rows: the table above, medians of {RUNS})")
    print()
    table_header(width=width, extra=f"{'events':>8} {'rows':>6}")
    events = sum(r["events"] for r in runs)
    rows_total = sum(r["rows_total"] for r in runs)
    ok = median(ratios) <= OVERHEAD_LIMIT
    print(f"{big:{width}} {'none':13} {median(plain_ns):10.2f} {'1.00x':>9}")
    print(f"{big:{width}} {'contended':13} {median(prof_ns):10.2f} "
          f"{median(ratios):8.3f}x {events:8d} {rows_total:6d}   "
          f"limit {OVERHEAD_LIMIT:.2f}x: {'ok' if ok else 'EXCEEDED'} "
          f"(pairs {min(ratios):.3f}-{max(ratios):.3f}x)")
    table = results["workloads"].get(workload, {})
    # The small workload's contended row stays in the table above: a run of
    # 40000 pairs lasts a fraction of a millisecond, too short to time 3%.
    for name in ["none"] + [n for n in table if n not in ("none", "contended")]:
        r = table[name]
        slow = f"{r['slowdown']:8.1f}x" if "slowdown" in r else f"{'1.00x':>9}"
        print(f"{small_label:{width}} {name:13} {r['ns_per_op']:10.2f} {slow}")
    print()
    small_events = table.get("contended", {}).get("events_all_rows")
    small_rows = table.get("contended", {}).get("rows_all")
    zero = (events == 0 and rows_total == 0 and small_events == 0 and small_rows == 0)
    types = sorted({t for r in runs for t in r["event_types"]} |
                   set(table.get("contended", {}).get("event_types", [])))
    print(f"zero-event check (uncontended, contended mode): {events} events, "
          f"{rows_total} rows in {OVERHEAD_PAIRS} runs of {big} x {rounds} rounds; "
          f"{small_events} events, {small_rows} rows in {2 * RUNS} runs of "
          f"{small_label}: {'ok' if zero else 'FAILED, types ' + ', '.join(types)}")
    print()
    results["contended"]["overhead"] = {
        "workload": workload, "args": args, "pairs": OVERHEAD_PAIRS,
        "none_ns_per_op": median(plain_ns), "contended_ns_per_op": median(prof_ns),
        "slowdown": median(ratios), "slowdowns": ratios, "limit": OVERHEAD_LIMIT,
        "ok": ok, "runs": runs,
        "small_workload": {n: table[n] for n in table},
        "full_mode_workload": small_label}
    results["contended"]["zero_events"] = {
        "ok": zero, "events": events, "rows": rows_total,
        "small_events": small_events, "small_rows": small_rows, "types": types}


def contended_cost(results):
    """Added time per blocking wait: ping-pongs on one CPU."""
    cpu = max(os.sched_getaffinity(0))
    out = results["contended"]["per_wait_cost"] = {}
    print(f"cost per blocking wait (contended mode): 2 threads on CPU {cpu}; "
          f"median of {PAIRS} pairs")
    print("per wait = (profiled - unprofiled ns/op) x ops / blocking waits counted; "
          "sleeps = the")
    print("  workers' voluntary context switches per op; count err: futexpp's "
          "FUTEX_WAIT calls (exact)")
    print()
    table_header(extra=f"{'waits/op':>9} {'sleeps/op':>9} {'count err':>9} "
                 f"{'per wait':>9}")
    for workload, args in COST:
        args = args + ["--pin", str(cpu)]
        plain_ns, prof_ns, ratios, per_wait, waits_per_op = [], [], [], [], []
        sleeps_plain, sleeps_prof, cerr, runs = [], [], [], []
        try:
            for _ in range(PAIRS):
                plain = run_plain(workload, False, args)
                prof = run_syncprof(workload, False, None, "contended", args)
                plain_ns.append(plain["ns_per_op"])
                prof_ns.append(prof["ns_per_op"])
                ratios.append(prof["ns_per_op"] / plain["ns_per_op"])
                waits_per_op.append(prof["events"] / prof["ops"])
                per_wait.append((prof["ns_per_op"] - plain["ns_per_op"]) * prof["ops"] /
                                max(prof["events"], 1))
                sleeps_plain.append(plain["sleeps"] / plain["ops"])
                sleeps_prof.append(prof["sleeps"] / prof["ops"])
                if workload == "futexpp":
                    cerr.append(prof["seen_calls"] - prof["calls"])
                runs.append({k: prof[k] for k in ("ops", "events", "event_types", "calls",
                                                  "seen_calls", "sleeps", "dropped")})
        except (RuntimeError, subprocess.CalledProcessError, ValueError,
                KeyError, IndexError) as e:
            print(f"{workload:12} {'contended':13} failed: {e}")
            continue
        cerr_text = f"{median(cerr):+9.0f}" if cerr else f"{'n/a':>9}"
        print(f"{workload:12} {'none':13} {median(plain_ns):10.1f} {'1.00x':>9} "
              f"{'':9} {median(sleeps_plain):9.2f}")
        print(f"{workload:12} {'contended':13} {median(prof_ns):10.1f} "
              f"{median(ratios):8.2f}x {median(waits_per_op):9.2f} "
              f"{median(sleeps_prof):9.2f} {cerr_text} {median(per_wait) / 1000:7.2f}us")
        out[workload] = {
            "args": args, "pairs": PAIRS, "ops": runs[0]["ops"],
            "none_ns_per_op": median(plain_ns), "contended_ns_per_op": median(prof_ns),
            "slowdown": median(ratios), "waits_per_op": median(waits_per_op),
            "sleeps_per_op_none": median(sleeps_plain),
            "sleeps_per_op_contended": median(sleeps_prof),
            "count_error": median(cerr), "count_errors": cerr,
            "added_ns_per_wait": median(per_wait), "added_ns_per_wait_runs": per_wait,
            "runs": runs}
    print()


def attached_elsewhere(args=("--mode", "contended")):
    """syncprof (contended mode unless args say) attached to a sleeping
    process of ours: returns (syncprof, sleeper) once syncprof says it is
    profiling."""
    sleeper = subprocess.Popen(["sleep", "600"])
    prof = subprocess.Popen([SYNCPROF, "-v", *args, "--pid",
                             str(sleeper.pid), "-o", os.devnull],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said = []
    for line in prof.stderr:
        if "profiling PID" in line:
            return prof, sleeper
        said.append(line.strip())
    prof.wait()
    sleeper.kill()
    sleeper.wait()
    raise RuntimeError(f"syncprof {' '.join(args)} --pid exited {prof.returncode} "
                       f"before attaching: {' / '.join(said[-3:])}")


def detach(prof, sleeper):
    prof.terminate()
    try:
        prof.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        prof.kill()
        prof.communicate()
    sleeper.kill()
    sleeper.wait()


def contended_bystander(results):
    """What a process that is not the target pays per system call while
    contended mode's futex tracepoints are attached."""
    print(f"cost to other processes while contended mode profiles another one "
          f"(a sleeping process);")
    print(f"  ns/op of a run = its fastest round; median of {PAIRS} pairs")
    print("contended*: the workload itself is not profiled; added = per call")
    print()
    table_header(extra=f"{'added':>9}")
    out = results["contended"]["bystander"] = {}
    for workload, args in BYSTANDER:
        plain_ns, prof_ns, ratios = [], [], []
        for _ in range(PAIRS):
            plain_ns.append(run_plain(workload, False, args)["ns_per_op"])
            prof, sleeper = attached_elsewhere()
            try:
                prof_ns.append(run_plain(workload, False, args)["ns_per_op"])
            finally:
                detach(prof, sleeper)
            ratios.append(prof_ns[-1] / plain_ns[-1])
        added = median([b - a for a, b in zip(plain_ns, prof_ns)])
        print(f"{workload:12} {'none':13} {median(plain_ns):10.1f} {'1.00x':>9}")
        print(f"{workload:12} {'contended*':13} {median(prof_ns):10.1f} "
              f"{median(ratios):8.2f}x {added:+7.0f}ns")
        out[workload] = {"args": args, "pairs": PAIRS,
                         "none_ns_per_op": median(plain_ns),
                         "attached_elsewhere_ns_per_op": median(prof_ns),
                         "slowdown": median(ratios), "added_ns_per_call": added}
    print()


def bpf_stats_enable():
    """BPF_ENABLE_STATS: the kernel times every BPF program while the
    returned fd is open (unlike the sysctl, another user's write of 0
    does not turn it off)."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(16)           # enable_stats.type = 0
    fd = libc.syscall(321, 32, attr, 16)             # SYS_bpf, BPF_ENABLE_STATS
    if fd < 0:
        raise RuntimeError(f"BPF_ENABLE_STATS: {os.strerror(ctypes.get_errno())}")
    return fd


def run_recorded(mode, workload, args, record_dir=None):
    """syncprof -v on lockbench: each BPF program's (runs, ns in all), the
    waits recorded and lost, and lockbench's own JSON."""
    cmd = [SYNCPROF, "-v", "--mode", mode, "-f", "json", "-o", os.devnull]
    if mode == "full":
        cmd.append("--no-calibrate")      # the calibration's own runs stay out
    if record_dir:
        shutil.rmtree(record_dir, ignore_errors=True)
        cmd += ["--record", record_dir]
    cmd += ["--", LOCKBENCH, workload, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr.strip()}")
    progs = {name: (int(runs), int(ns)) for name, runs, ns in re.findall(
        r"BPF program (\S+): (\d+) runs, (\d+) ns in all", proc.stderr)}
    m = re.search(r"recorded (\d+) waits, (\d+) lost", proc.stderr)
    result = json.loads(proc.stdout.splitlines()[-1])
    result["programs"] = progs
    result["recorded"] = int(m.group(1)) if m else 0
    result["lost"] = int(m.group(2)) if m else 0
    return result


def recording(results):
    """--record: the writer's rate, the kernel's cost per wait, end to end."""
    out = results["recording"] = {}
    print(f"--record: the writer's rate (median of {RUNS} sweeps; a synthetic "
          "producer through the real ring)")
    rates = []
    for _ in range(RUNS):
        line = subprocess.run([RECORDBENCH, "--json", "--dir", BUILD], check=True,
                              capture_output=True, text=True).stdout
        rates.append(json.loads(line)["max_rate_no_drops"])
    print(f"  sustained with no drops: {median(rates):,.0f} waits/s "
          f"(runs: {', '.join(f'{r:,.0f}' for r in rates)}; default 8 MiB ring)")
    out["writer_waits_per_s"] = median(rates)
    out["writer_runs"] = rates
    costs = []
    for _ in range(RUNS):
        line = subprocess.run([RECORDBENCH, "--cost", "--json", "--dir", BUILD],
                              check=True, capture_output=True, text=True).stdout
        costs.append(json.loads(line))
    added = median([c["added_ns"] for c in costs])
    print(f"  record_wait() alone: +{added:.1f} ns per wait (the producer's run "
          f"time per wait, {median([c['on_ns'] for c in costs]):.1f} ns on, "
          f"{median([c['off_ns'] for c in costs]):.1f} ns off; median of {RUNS})")
    out["record_wait_added_ns"] = added
    out["record_wait_runs"] = costs
    print()

    stats_fd = bpf_stats_enable()
    record_dir = os.path.join(BUILD, "bench", "record")
    os.makedirs(os.path.dirname(record_dir), exist_ok=True)
    print(f"--record: the kernel's cost per recorded wait (BPF_ENABLE_STATS; "
          f"median of {PAIRS} pairs)")
    print(f"{'mode':10} {'program':12} {'workload':12} {'ns/run off':>10} "
          f"{'ns/run on':>10} {'waits':>8} {'added/wait':>11}")
    try:
        for mode, prog, workload, args in RECORD_COST:
            off_avg, on_avg, added, waits = [], [], [], []
            for _ in range(PAIRS):
                off = run_recorded(mode, workload, args)
                on = run_recorded(mode, workload, args, record_dir)
                (r0, n0), (r1, n1) = off["programs"][prog], on["programs"][prog]
                off_avg.append(n0 / r0)
                on_avg.append(n1 / r1)
                waits.append(on["recorded"])
                if mode == "full":
                    added.append(n1 / r1 - n0 / r0)     # one run, one wait
                else:
                    added.append((n1 - n0) / max(on["recorded"], 1))
            print(f"{mode:10} {prog:12} {workload:12} {median(off_avg):10.0f} "
                  f"{median(on_avg):10.0f} {median(waits):8.0f} {median(added):9.0f}ns")
            out[f"{mode}_added_ns_per_wait"] = median(added)
            out[f"{mode}_runs"] = {"program": prog, "workload": workload, "args": args,
                                   "ns_per_run_off": off_avg, "ns_per_run_on": on_avg,
                                   "added_ns_per_wait": added, "waits": waits}
    finally:
        os.close(stats_fd)
    print()

    workload, args = RECORD_E2E
    runs = [run_recorded("full", workload, args, record_dir) for _ in range(RUNS)]
    per_s = [r["recorded"] / (r["ns_per_op"] * r["ops"] * 1e-9) for r in runs]
    lost = [r["lost"] for r in runs]
    print(f"--record end to end: full mode, lockbench {workload} {' '.join(args)}: "
          f"{median([r['recorded'] for r in runs]):.0f} waits recorded at "
          f"{median(per_s):,.0f}/s, lost {max(lost)} (median of {RUNS})")
    out["end_to_end"] = {"workload": workload, "args": args, "waits_per_s": per_s,
                         "lost": lost}
    shutil.rmtree(record_dir, ignore_errors=True)
def run_hammer_profiled(depth):
    """The hammer under contended mode at --stack-depth depth: its JSON
    line, plus syncprof's BPF time and the report's stacks."""
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        cmd = [SYNCPROF, "-v", "--mode", "contended", "--stack-depth", str(depth),
               "--format", "json", "--top", "0", "-o", report.name, "--",
               *lockbench_args("hammer", False, HAMMER)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        reports = [json.loads(l) for l in open(report.name) if l.startswith("{")]
    result = json.loads(proc.stdout.splitlines()[-1])
    m = re.search(r"BPF programs: (\d+) runs, (\d+) ns in all", proc.stderr)
    if not m:
        raise RuntimeError("syncprof -v gave no BPF run time "
                           "(kernel.bpf_stats_enabled?)")
    result["bpf_runs"], result["bpf_ns"] = int(m.group(1)), int(m.group(2))
    m = re.search(r"BPF time per blocking wait: (\d+) ns over (\d+)", proc.stderr)
    result["own_ns_per_wait"] = int(m.group(1)) if m else None
    frames = [len(s["frames"]) for r in reports[-1]["rows"]
              if r["object"] in result["objects"] for s in r["stacks"]]
    result["frames"] = max(frames) if frames else 0
    result["dropped"] = reports[-1]["dropped"]
    return result


def stacks_cost(results):
    """BPF time per blocking wait by stack depth, and the hammer's speed."""
    out = results["stacks"] = {"hammer_args": HAMMER, "pairs": PAIRS}
    with open(BPF_STATS) as f:
        saved = f.read().strip()
    with open(BPF_STATS, "w") as f:
        f.write("1")
    try:
        plain_ops, plain_waits = [], []
        per_depth = {d: {"ops_s": [], "waits_s": [], "bpf_ns_per_wait": [],
                         "own_ns_per_wait": [], "frames": [], "dropped": 0}
                     for d in STACK_DEPTHS}
        for _ in range(PAIRS):
            plain = run_plain("hammer", False, HAMMER)
            seconds = plain["elapsed_ns"] / 1e9
            plain_ops.append(plain["ops"] / seconds)
            plain_waits.append(plain["calls"] / seconds)
            for d in STACK_DEPTHS:
                prof = run_hammer_profiled(d)
                seconds = prof["elapsed_ns"] / 1e9
                row = per_depth[d]
                row["ops_s"].append(prof["ops"] / seconds)
                row["waits_s"].append(prof["calls"] / seconds)
                row["bpf_ns_per_wait"].append(prof["bpf_ns"] / max(prof["calls"], 1))
                if prof["own_ns_per_wait"] is not None:
                    row["own_ns_per_wait"].append(prof["own_ns_per_wait"])
                row["frames"].append(prof["frames"])
                row["dropped"] += prof["dropped"]
    finally:
        with open(BPF_STATS, "w") as f:
            f.write(saved)
    print(f"stacks: GLib-style hammer ({' '.join(HAMMER)}), contended mode; "
          f"median of {PAIRS} pairs")
    print("BPF/wait = run_time_ns of syncprof's programs (wakes and other "
          "processes' futex calls")
    print("  included) / the hammer's FUTEX_WAIT calls; own = the programs' own "
          "clock around each")
    print("  wait's entry and exit work (syncprof -v)")
    print()
    header = (f"{'stack depth':12} {'frames':>6} {'ops/s':>10} {'waits/s':>9} "
              f"{'throughput':>10} {'BPF/wait':>9} {'own':>8}")
    print(header)
    print("-" * len(header))
    base = median(plain_ops)
    print(f"{'no syncprof':12} {'':>6} {base:10.0f} {median(plain_waits):9.0f} "
          f"{'1.00x':>10}")
    out["none"] = {"ops_per_s": base, "waits_per_s": median(plain_waits)}
    for d in STACK_DEPTHS:
        row = per_depth[d]
        own = median(row["own_ns_per_wait"])
        own_text = f"{own / 1000:6.2f}us" if own is not None else f"{'n/a':>8}"
        print(f"{d:<12} {max(row['frames']):6d} {median(row['ops_s']):10.0f} "
              f"{median(row['waits_s']):9.0f} {median(row['ops_s']) / base:9.2f}x "
              f"{median(row['bpf_ns_per_wait']) / 1000:7.2f}us {own_text}")
        out[f"depth_{d}"] = {
            "ops_per_s": median(row["ops_s"]), "waits_per_s": median(row["waits_s"]),
            "bpf_ns_per_wait": median(row["bpf_ns_per_wait"]),
            "bpf_ns_per_wait_runs": row["bpf_ns_per_wait"],
            "own_ns_per_wait": own, "own_ns_per_wait_runs": row["own_ns_per_wait"],
            "frames": max(row["frames"]), "dropped": row["dropped"]}
    per_frame = (out["depth_32"]["bpf_ns_per_wait"] -
                 out["depth_8"]["bpf_ns_per_wait"]) / 24
    out["bpf_ns_per_frame"] = per_frame
    own_frame = None
    if out["depth_32"]["own_ns_per_wait"] and out["depth_8"]["own_ns_per_wait"]:
        own_frame = (out["depth_32"]["own_ns_per_wait"] -
                     out["depth_8"]["own_ns_per_wait"]) / 24
    out["own_ns_per_frame"] = own_frame
    print(f"per frame beyond the call site ((32 - 8) / 24): {per_frame:.0f} ns"
          + (f" (own clock: {own_frame:.0f} ns)" if own_frame is not None else "")
          + "; limits: 2.0us at 32, 1.0us at 8, 60 ns a frame")
    print()


def run_bpftrace_plain(workload):
    return run_bpftrace(workload, False, libc_path())


def full_versus_bpftrace(results):
    """Full mode's added cost per lock call, with and without stacks,
    against bpftrace doing the same job; paired with unprofiled runs."""
    workload = "uncontended"
    variants = [("full", ["--stack-depth", "32"]), ("full depth 0", ["--stack-depth", "0"])]
    added = {name: [] for name, _ in variants}
    added["bpftrace"] = []
    for _ in range(RUNS):
        for name, extra in variants:
            plain = run_plain(workload, False)["ns_per_op"]
            with tempfile.NamedTemporaryFile(suffix=".json") as report:
                cmd = [SYNCPROF, "--mode", "full", *extra, "--format", "json",
                       "-o", report.name, "--", *lockbench_args(workload, False)]
                out = subprocess.run(cmd, capture_output=True, text=True,
                                     check=True).stdout
            added[name].append(json.loads(out.splitlines()[-1])["ns_per_op"] - plain)
        plain = run_plain(workload, False)["ns_per_op"]
        added["bpftrace"].append(run_bpftrace_plain(workload)["ns_per_op"] - plain)
    threads = int(WORKLOADS[workload][1])
    bt = median(added["bpftrace"]) * threads
    print(f"full mode per lock call ({workload}, {threads} threads; "
          f"added ns/op x threads, median of {RUNS})")
    out = results.setdefault("stacks", {})["full_per_call"] = {}
    for name in [n for n, _ in variants] + ["bpftrace"]:
        per_call = median(added[name]) * threads
        print(f"{name:13} {per_call / 1000:7.2f}us  {per_call / bt:5.2f}x bpftrace")
        out[name] = {"added_ns_per_call": per_call, "vs_bpftrace": per_call / bt}
    print("limit: full mode with stacks <= 0.4x bpftrace")


def states_header(extra):
    header = f"{'workload':12} {'profiler':19} {'ns/op':>8} {'slowdown':>9} {extra}"
    print(header.rstrip())
    print("-" * len(header.rstrip()))


def per_switch(run):
    """Context switches per op of a lockbench run (over all its rounds)."""
    return run["switches"] / (run["ops"] * run["rounds"])


def states_bystander(results):
    """What a context switch anywhere on the machine costs while --states
    runs: pipepp, pinned and not profiled, while syncprof profiles a
    sleeping process.  Full mode's uprobes stay in the sleeper, so with
    --mode full --states only the scheduler tracepoints reach pipepp;
    contended mode's futex tracepoints send every system call through the
    slow path too, so its --states figure is taken against contended mode
    alone."""
    cpu = max(os.sched_getaffinity(0))
    workload, args = STATES_SWITCH[0]
    args = args + ["--pin", str(cpu)]
    configs = [("none", None),
               ("full*", ("--mode", "full", "--no-calibrate")),
               ("full --states*", ("--mode", "full", "--no-calibrate", "--states")),
               ("contended*", ("--mode", "contended")),
               ("contended --states*", ("--mode", "contended", "--states"))]
    ns = {name: [] for name, _ in configs}
    switches = []
    for _ in range(PAIRS):
        for name, sargs in configs:
            if sargs is None:
                run = run_plain(workload, False, args)
                switches.append(per_switch(run))
            else:
                prof, sleeper = attached_elsewhere(sargs)
                try:
                    run = run_plain(workload, False, args)
                finally:
                    detach(prof, sleeper)
            ns[name].append(run["ns_per_op"])

    def added(with_states, without):
        return [(a - b) / sw for a, b, sw in zip(ns[with_states], ns[without], switches)]

    full = added("full --states*", "full*")
    contended = added("contended --states*", "contended*")
    whole = added("contended --states*", "none")
    ok = median(full) <= STATES_LIMIT_NS and median(contended) <= STATES_LIMIT_NS
    print(f"--states: cost per context switch to other processes: {workload} "
          f"(2 threads on CPU {cpu}, {median(switches):.2f} switches/op), not "
          "profiled,")
    print(f"  while syncprof profiles a sleeping process (*); ns/op = fastest of "
          f"the run's rounds; medians of {PAIRS} rounds of the {len(configs)} "
          "configurations")
    print()
    states_header(f"{'per switch':>11}")
    for name, _ in configs:
        base = {"full --states*": "full*", "contended --states*": "contended*"}.get(name)
        extra = ""
        if base:
            extra = f"{median(added(name, base)):+9.0f}ns"
        print(f"{workload:12} {name:19} {median(ns[name]):8.1f} "
              f"{median([a / b for a, b in zip(ns[name], ns['none'])]):8.2f}x "
              f"{extra}".rstrip())
    print(f"added per context switch by --states: {median(full):+.0f} ns "
          f"(full mode), {median(contended):+.0f} ns (contended mode); the whole "
          f"of contended --states: {median(whole):+.0f} ns; limit {STATES_LIMIT_NS} ns: "
          f"{'ok' if ok else 'EXCEEDED'}")
    print()
    results["states"]["bystander"] = {
        "workload": workload, "args": args, "pairs": PAIRS,
        "switches_per_op": median(switches),
        "ns_per_op": {name: median(ns[name]) for name, _ in configs},
        "ns_per_op_runs": ns,
        "added_ns_per_switch_full": median(full),
        "added_ns_per_switch_contended": median(contended),
        "added_ns_per_switch_contended_whole": median(whole),
        "limit_ns": STATES_LIMIT_NS, "ok": ok}


def states_target(results):
    """The throughput of a context-switch-heavy target with and without
    --states (contended mode both times), paired run by run."""
    cpu = max(os.sched_getaffinity(0))
    out = results["states"]["target"] = {}
    print(f"--states on a context-switch-heavy target: 2 threads on CPU {cpu}; "
          f"median of {PAIRS} triples;")
    print("  ns/op = fastest of the run's rounds; per switch = (--states - "
          "contended) / switches")
    print()
    states_header(f"{'ops/s':>10} {'per switch':>11} {'missed':>7}")
    for workload, args in STATES_SWITCH:
        args = args + ["--pin", str(cpu)]
        ns = {"none": [], "contended": [], "contended --states": []}
        switches, missed = [], 0
        try:
            for _ in range(PAIRS):
                ns["none"].append(run_plain(workload, False, args)["ns_per_op"])
                ns["contended"].append(run_syncprof(
                    workload, False, None, "contended", args)["ns_per_op"])
                run = run_syncprof(workload, False, None, "contended", args,
                                   extra=("--states",))
                ns["contended --states"].append(run["ns_per_op"])
                switches.append(per_switch(run))
                missed += run.get("sched_missed") or 0
        except (RuntimeError, subprocess.CalledProcessError, ValueError,
                KeyError, IndexError) as e:
            print(f"{workload:12} failed: {e}")
            continue
        added = [(a - b) / sw for a, b, sw in
                 zip(ns["contended --states"], ns["contended"], switches)]
        for name in ns:
            slow = median([a / b for a, b in zip(ns[name], ns["none"])])
            extra = f"{median(added):+9.0f}ns {missed:7d}" if name.endswith("states") else ""
            print(f"{workload:12} {name:19} {median(ns[name]):8.1f} {slow:8.2f}x "
                  f"{1e9 / median(ns[name]):10.0f} {extra}".rstrip())
        out[workload] = {
            "args": args, "pairs": PAIRS, "switches_per_op": median(switches),
            "ns_per_op": {k: median(v) for k, v in ns.items()},
            "ns_per_op_runs": ns,
            "ops_per_s": {k: 1e9 / median(v) for k, v in ns.items()},
            "added_ns_per_switch": median(added), "sched_missed": missed}
    print()


def offcpu_cost(results):
    """--off-cpu's price, paired run by run: on a target whose threads
    sleep in read on a pipe at every op (pipepp: each switch is an
    off-CPU wait, walked and counted), and per context switch of another
    process (pipepp not profiled, while syncprof profiles a sleeper)."""
    cpu = max(os.sched_getaffinity(0))
    workload, args = STATES_SWITCH[0]
    args = args + ["--pin", str(cpu)]
    ns = {"none": [], "contended": [], "contended --off-cpu": [],
          "elsewhere": [], "elsewhere --off-cpu": []}
    switches = []
    for _ in range(PAIRS):
        run = run_plain(workload, False, args)
        ns["none"].append(run["ns_per_op"])
        switches.append(per_switch(run))
        ns["contended"].append(run_syncprof(
            workload, False, None, "contended", args)["ns_per_op"])
        ns["contended --off-cpu"].append(run_syncprof(
            workload, False, None, "contended", args,
            extra=("--off-cpu",))["ns_per_op"])
        for name, sargs in (("elsewhere", ("--mode", "contended")),
                            ("elsewhere --off-cpu",
                             ("--mode", "contended", "--off-cpu"))):
            prof, sleeper = attached_elsewhere(sargs)
            try:
                ns[name].append(run_plain(workload, False, args)["ns_per_op"])
            finally:
                detach(prof, sleeper)

    def added(a, b):
        return median([(x - y) / sw for x, y, sw in zip(ns[a], ns[b], switches)])

    target = added("contended --off-cpu", "contended")
    other = added("elsewhere --off-cpu", "elsewhere")
    print(f"--off-cpu: {workload} (2 threads on CPU {cpu}, {median(switches):.2f} "
          f"switches/op); medians of {PAIRS} rounds; ns/op = fastest round")
    print()
    states_header("")
    for name in ns:
        slow = median([a / b for a, b in zip(ns[name], ns["none"])])
        print(f"{workload:12} {name:19} {median(ns[name]):8.1f} {slow:8.2f}x")
    print(f"added per context switch by --off-cpu: {target:+.0f} ns in the "
          f"profiled target (a wait walked and counted each), {other:+.0f} ns "
          "in another process")
    print()
    results["offcpu"] = {
        "workload": workload, "args": args, "pairs": PAIRS,
        "switches_per_op": median(switches),
        "ns_per_op": {k: median(v) for k, v in ns.items()},
        "ns_per_op_runs": ns, "added_ns_per_switch_target": target,
        "added_ns_per_switch_other": other}


def feature_cost(results):
    """--hold and --blame, paired against the same mode without them: in
    full mode what the unlock probe adds to each lock/unlock pair, and
    the hold it reads for holds of a few nanoseconds (the probes' own
    time inside a hold); in contended mode what --blame adds to each
    blocking wait (the release's unwind, sched_waking)."""
    out = results["features"] = {}
    workload, args = "uncontended", WORKLOADS["uncontended"]
    cpu = max(os.sched_getaffinity(0))
    pp_workload, pp_args = COST[0][0], COST[0][1] + ["--pin", str(cpu)]
    print(f"--hold and --blame: added cost, median of {PAIRS} pairs against the "
          "same mode without them")
    print(f"  full: {workload} (each op one lock/unlock pair, each thread its own "
          "mutex), added per pair;")
    print(f"  contended: {pp_workload} on CPU {cpu}, added per blocking wait; "
          "hold read = mean hold of")
    print("  locks held a few ns: the probes' own time inside a hold")
    print()
    table_header(extra=f"{'added':>10} {'hold read':>10} {'blamed':>8}")
    feature_pairs(out, [
        ("full", workload, args, [], ["--hold"], "full --hold"),
        ("full", workload, args, [], ["--blame"], "full --blame"),
        ("contended", pp_workload, pp_args, [], ["--blame"], "cont. --blame")])
    print()


def why_cost(results):
    """--why, paired against the same mode with --blame and --states (the
    probes it runs): what the holder's clocks and the chains add to each
    blocking wait; in full mode also to each lock call that never blocks
    (the owner read at its entry, the unknown share at its return) and to
    each unlock (the releaser's clocks)."""
    out = results["why"] = {}
    cpu = max(os.sched_getaffinity(0))
    pp_workload, pp_args = COST[0][0], COST[0][1] + ["--pin", str(cpu)]
    base = ["--blame", "--states"]
    print(f"--why: added cost, median of {PAIRS} pairs against the same mode "
          f"with --blame --states; {pp_workload} on CPU {cpu}: per blocking "
          "wait (contended), per lock/unlock pair (full); uncontended: per "
          "pair, none blocking")
    print()
    table_header(extra=f"{'added':>10} {'hold read':>10} {'blamed':>8}")
    feature_pairs(out, [
        ("contended", pp_workload, pp_args, base, ["--why"], "cont. --why"),
        ("full", pp_workload, pp_args, base, ["--why"], "full --why"),
        ("full", "uncontended", WORKLOADS["uncontended"], base, ["--why"],
         "full --why u")])
    print()


def feature_pairs(out, cases):
    """Each case (mode, workload, args, base extra, feature extra, name):
    PAIRS runs without and with the feature, printed and kept in out."""
    for mode, wl, wl_args, base_extra, extra, name in cases:
        base_ns, feat_ns, added, hold_read, blamed, runs = [], [], [], [], [], []
        try:
            for _ in range(PAIRS):
                base = run_syncprof(wl, False, "auto", mode, wl_args, base_extra)
                feat = run_syncprof(wl, False, "auto", mode, wl_args, extra)
                base_ns.append(base["ns_per_op"])
                feat_ns.append(feat["ns_per_op"])
                # ns_per_op is wall time over all threads' ops: a thread's
                # own lock/unlock pair costs threads times as much.
                threads = int(wl_args[wl_args.index("--threads") + 1]) \
                    if "--threads" in wl_args else 1
                per = feat["ops"] / threads if mode == "full" else max(feat["events"], 1)
                added.append((feat["ns_per_op"] - base["ns_per_op"]) * feat["ops"] / per)
                if feat["holds"]:
                    hold_read.append(feat["hold_ns"] / feat["holds"])
                blamed.append(feat["blamed"])
                runs.append({"base_ns_per_op": base["ns_per_op"],
                             "ns_per_op": feat["ns_per_op"], "ops": feat["ops"],
                             "events": feat["events"], "holds": feat["holds"],
                             "hold_ns": feat["hold_ns"], "blamed": feat["blamed"]})
        except (RuntimeError, subprocess.CalledProcessError, ValueError,
                KeyError, IndexError) as e:
            print(f"{wl:12} {name:13} failed: {e}")
            continue
        hold_text = f"{median(hold_read):8.0f}ns" if hold_read else f"{'':10}"
        print(f"{wl:12} {mode:13} {median(base_ns):10.1f} {'1.00x':>9}")
        print(f"{wl:12} {name:13} {median(feat_ns):10.1f} "
              f"{median(feat_ns) / median(base_ns):8.2f}x {median(added):+8.0f}ns "
              f"{hold_text} {median(blamed):8.0f}")
        out[name] = {"workload": wl, "args": wl_args, "pairs": PAIRS,
                     "base_ns_per_op": median(base_ns),
                     "ns_per_op": median(feat_ns),
                     "added_ns": median(added),
                     "added_per": ("lock/unlock pair" if mode == "full"
                                   else "blocking wait"),
                     "hold_read_ns": median(hold_read), "runs": runs}


LOCK_ORDER_ARGS = ["--threads", "2", "--ops", "20000"]


def run_programs(extra, args):
    """syncprof -v --mode full [extra] on lockbench: lockbench's JSON line,
    with the BPF time of syncprof's programs in all (kernel stats)."""
    cmd = [SYNCPROF, "-v", "--mode", "full", "--no-calibrate", "-f", "json",
           "-o", os.devnull, *extra, "--", LOCKBENCH, "uncontended", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr.strip()}")
    progs = re.findall(r"BPF program (\S+): (\d+) runs, (\d+) ns in all",
                       proc.stderr)
    result = json.loads(proc.stdout.splitlines()[-1])
    result["bpf_ns"] = sum(int(ns) for _, _, ns in progs)
    return result


def lock_order_cost(results):
    """--lock-order, paired against the same probes without it: with
    --hold (the same lock and unlock probes) the difference is its own BPF
    work, the held set and the order pairs; against plain full mode it
    also pays for the unlock probe it needs.  Per lock call, medians."""
    out = results["lock_order"] = {"args": LOCK_ORDER_ARGS, "pairs": PAIRS}
    with open(BPF_STATS) as f:
        saved = f.read().strip()
    with open(BPF_STATS, "w") as f:
        f.write("1")
    print(f"--lock-order: added cost per lock call, median of {PAIRS} pairs "
          f"(lockbench uncontended {' '.join(LOCK_ORDER_ARGS)})")
    print("  mutex: each op one lock; nested: each op a lock inside a lock "
          "(one order pair an op)")
    print()
    header = (f"{'kind':8} {'against':14} {'ns/op':>8} {'with':>8} "
              f"{'BPF/call':>9} {'added BPF':>10} {'added wall':>11}")
    print(header)
    print("-" * len(header))
    try:
        for kind in ("mutex", "nested"):
            args = LOCK_ORDER_ARGS + ["--kind", kind]
            for base_extra, name in ((["--hold"], "full --hold"), ([], "full")):
                base_op, feat_op, added_bpf, added_wall, bpf_call = [], [], [], [], []
                for _ in range(PAIRS):
                    base = run_programs(base_extra, args)
                    feat = run_programs(base_extra + ["--lock-order"], args)
                    calls = max(feat["calls"], 1)
                    base_op.append(base["ns_per_op"])
                    feat_op.append(feat["ns_per_op"])
                    bpf_call.append(feat["bpf_ns"] / calls)
                    added_bpf.append((feat["bpf_ns"] - base["bpf_ns"]) / calls)
                    # ns_per_op is wall over all threads' ops.
                    added_wall.append((feat["ns_per_op"] - base["ns_per_op"]) *
                                      feat["ops"] / calls)
                print(f"{kind:8} {name:14} {median(base_op):8.1f} "
                      f"{median(feat_op):8.1f} {median(bpf_call):7.0f}ns "
                      f"{median(added_bpf):+8.0f}ns {median(added_wall):+9.0f}ns")
                out[f"{kind} vs {name}"] = {
                    "base_ns_per_op": median(base_op),
                    "ns_per_op": median(feat_op),
                    "bpf_ns_per_call": median(bpf_call),
                    "added_bpf_ns_per_call": median(added_bpf),
                    "added_wall_ns_per_call": median(added_wall),
                    "added_bpf_runs": added_bpf}
    finally:
        with open(BPF_STATS, "w") as f:
            f.write(saved)
    print()


LOCK_KINDS = ["mutex", "spin", "rdlock", "wrlock", "trywrlock", "sem"]


def kind_cost(results):
    """Full mode's probe on each kind's lock function, paired against
    no profiler: added ns per call (each thread calls on its own object,
    so a thread's call costs threads x the added wall time per op)."""
    out = results["kinds"] = {}
    threads, ops = 2, 20000
    print(f"full mode per lock call by kind: uncontended, {threads} threads x "
          f"{ops} lock/unlock pairs on their own object;")
    print(f"  median of {PAIRS} pairs; added = per call; seen = calls counted / made")
    print()
    table_header(extra=f"{'added':>10} {'seen':>13}")
    for kind in LOCK_KINDS:
        args = ["--threads", str(threads), "--ops", str(ops), "--kind", kind]
        plain_ns, prof_ns, added, seen = [], [], [], []
        for _ in range(PAIRS):
            plain = run_plain("uncontended", False, args)
            prof = run_syncprof("uncontended", False, "auto", "full", args)
            plain_ns.append(plain["ns_per_op"])
            prof_ns.append(prof["ns_per_op"])
            added.append((prof["ns_per_op"] - plain["ns_per_op"]) * threads)
            seen.append(f"{prof['seen_calls']}/{prof['ops']}")
        print(f"{kind:12} {'none':13} {median(plain_ns):10.1f} {'1.00x':>9}")
        print(f"{kind:12} {'full':13} {median(prof_ns):10.1f} "
              f"{median(prof_ns) / median(plain_ns):8.2f}x {median(added):+8.0f}ns "
              f"{seen[-1]:>13}")
        out[kind] = {"args": args, "pairs": PAIRS,
                     "none_ns_per_op": median(plain_ns),
                     "full_ns_per_op": median(prof_ns),
                     "added_ns_per_call": median(added), "seen": seen}
    print()


def wait_attached(prof, what, verified=None):
    """Reads syncprof -v's stderr up to 'profiling PID'; verified: a dict
    that gets the instructions the verifier went through per program,
    summed over the loads."""
    for line in prof.stderr:
        m = re.search(r"BPF program (\S+): (\d+) instructions verified", line)
        if m and verified is not None:
            verified[m.group(1)] = verified.get(m.group(1), 0) + int(m.group(2))
        if "profiling PID" in line:
            return
    raise RuntimeError(f"{what} did not attach")


def attach_detach_once(binary, args, verified=None, sched=None,
                       new_session=False):
    """Seconds from syncprof's start to 'profiling PID' on a sleeping
    process, and from SIGTERM to its exit; the CPU seconds syncprof used
    to attach.  verified: a dict that gets the instructions the verifier
    went through per program (-v), summed over the loads (full mode loads
    its calibration's programs too).  sched: a dict that gets the seconds
    syncprof's main thread ran and waited for a CPU while runnable
    (/proc/PID/schedstat) by then.  new_session: syncprof leads a session
    of its own (setsid), as a service does."""
    sleeper = subprocess.Popen(["sleep", "600"])
    t0 = time.monotonic()
    prof = subprocess.Popen([binary, "-v", *args, "--pid", str(sleeper.pid),
                             "-o", os.devnull],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=new_session)
    try:
        wait_attached(prof, f"{binary} {' '.join(args)}", verified)
        attach = time.monotonic() - t0
        cpu = servers.cpu_s(prof.pid)
        if sched is not None:
            with open(f"/proc/{prof.pid}/schedstat") as f:
                ran, queued = f.read().split()[:2]
            sched["ran_s"] = int(ran) / 1e9
            sched["queued_s"] = int(queued) / 1e9
        t1 = time.monotonic()
        prof.terminate()
        prof.communicate(timeout=60)
        return attach, time.monotonic() - t1, cpu
    finally:
        if prof.poll() is None:
            prof.kill()
            prof.communicate()
        sleeper.kill()
        sleeper.wait()


def attach_detach(results):
    """How long attaching and detaching take, per mode; with BENCH_BASE,
    an older syncprof's beside this one's."""
    out = results["attach"] = {}
    binaries = [("this", SYNCPROF)]
    if os.environ.get("BENCH_BASE"):
        binaries.append(("base", os.environ["BENCH_BASE"]))
    cases = [("full", ["--mode", "full"]),
             ("full --hold", ["--mode", "full", "--hold"]),
             ("contended", ["--mode", "contended"])]
    print(f"attach (start to 'profiling PID') and detach (SIGTERM to exit) on a "
          f"sleeping process, median of {PAIRS}; CPU: syncprof's user + system "
          "time to attach; verified: instructions the verifier went through, "
          "all programs (-v)")
    print()
    print(f"{'syncprof':10} {'mode':13} {'attach (s)':>11} {'CPU (s)':>8} "
          f"{'detach (s)':>11} {'verified':>9}")
    for name, args in cases:
        for which, binary in binaries:
            attach, detach_s, cpu = [], [], []
            verified = {}
            for i in range(PAIRS):
                a, d, c = attach_detach_once(binary, args,
                                             verified if i == 0 else None)
                attach.append(a)
                detach_s.append(d)
                cpu.append(c)
            total = sum(verified.values()) if verified else None
            print(f"{which:10} {name:13} {median(attach):11.3f} {median(cpu):8.2f} "
                  f"{median(detach_s):11.3f} "
                  f"{total if total is not None else 'n/a':>9}")
            if verified:
                print("           " + ", ".join(
                    f"{k} {v}" for k, v in sorted(verified.items(),
                                                  key=lambda kv: -kv[1])[:4]))
            out[f"{which} {name}"] = {"binary": binary, "args": args,
                                      "attach_s": median(attach),
                                      "attach_cpu_s": median(cpu),
                                      "detach_s": median(detach_s),
                                      "verified_insns": verified,
                                      "attach_runs": attach, "detach_runs": detach_s,
                                      "cpu_runs": cpu}


MANYLIBS = os.path.join(BUILD, "tests", "targets", "manylibs")
SHAREDLIB = os.path.join(BUILD, "tests", "targets", "libsharedlock.so")
TARGETFILE_LIBS = 100


def settled_target(argv):
    """A target started and done loading its libraries: its 'ready PID'
    line (manylibs), or its maps unchanged over 5 reads 0.2 s apart."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    if os.path.basename(argv[0]) == "manylibs":
        if not proc.stdout.readline().startswith("ready "):
            proc.kill()
            raise RuntimeError(f"{argv[0]} did not start")
        return proc
    last, same = None, 0
    while same < 5:
        time.sleep(0.2)
        with open(f"/proc/{proc.pid}/maps") as f:
            now = f.read()
        same = same + 1 if now == last else 0
        last = now
    return proc


def attach_to_target(binary, argv):
    """Seconds from syncprof's start to 'profiling PID' on a target that
    maps argv's files; the CPU seconds it took, and its VmRSS then (KiB)."""
    target = settled_target(argv)
    t0 = time.monotonic()
    prof = subprocess.Popen([binary, "-v", "--mode", "contended", "--pid",
                             str(target.pid), "-o", os.devnull],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_attached(prof, f"{binary} on {argv[0]}")
        attach = time.monotonic() - t0
        cpu = servers.cpu_s(prof.pid)
        with open(f"/proc/{prof.pid}/status") as f:
            rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
        prof.terminate()
        prof.communicate(timeout=60)
        return attach, cpu, rss
    finally:
        if prof.poll() is None:
            prof.kill()
            prof.communicate()
        target.kill()
        target.wait()
        target.stdout.close()


def targetfile_cost(results):
    """What reading the target's files costs: opening one (targetfile.c:
    O_PATH lookup, fstat, O_NOFOLLOW | O_NONBLOCK) and reading an ELF's
    headers with pread rather than a mapping (bench_targetfile), then
    attaching in contended mode to targets with 1, 100 and 50 (qemu)
    mapped files and to one that maps libLLVM (117 MB); with BENCH_BASE,
    an older syncprof's beside this one's, paired run by run."""
    out = results["targetfiles"] = {}
    binary = os.path.join(BUILD, "tests", "bench", "bench_targetfile")
    text = subprocess.run([binary], capture_output=True, text=True).stdout
    print(text)
    out["per_call"] = json.loads(subprocess.run(
        [binary, "--json"], capture_output=True, text=True).stdout)
    binaries = [("this", SYNCPROF)]
    if os.environ.get("BENCH_BASE"):
        binaries.append(("base", os.environ["BENCH_BASE"]))
    with tempfile.TemporaryDirectory(prefix="syncprof-bench-") as tmp:
        copies = []
        for i in range(TARGETFILE_LIBS):
            copies.append(os.path.join(tmp, f"libcopy{i}.so"))
            shutil.copy(SHAREDLIB, copies[-1])
        cases = [("libc only", [MANYLIBS]),
                 (f"{TARGETFILE_LIBS} libraries", [MANYLIBS, *copies])]
        llvm = sorted(glob.glob("/usr/lib/x86_64-linux-gnu/libLLVM-*.so.1"))
        if llvm:
            cases.append((os.path.basename(llvm[-1]), [MANYLIBS, llvm[-1]]))
        qemu = shutil.which("qemu-system-x86_64")
        if qemu:
            cases.append(("qemu-system-x86_64",
                          [qemu, "-M", "none", "-nodefaults", "-display", "none",
                           "-monitor", "none", "-serial", "none", "-S"]))
        print(f"attach in contended mode (start to 'profiling PID') to a "
              f"waiting target, median of {PAIRS}; CPU: syncprof's user + "
              "system time to attach; RSS: its VmRSS then")
        print()
        print(f"{'target':24} {'syncprof':9} {'attach (s)':>11} {'CPU (s)':>8} "
              f"{'RSS (MiB)':>10}")
        for name, argv in cases:
            runs = {which: ([], [], []) for which, _ in binaries}
            for _ in range(PAIRS):
                for which, binary in binaries:
                    a, c, r = attach_to_target(binary, argv)
                    runs[which][0].append(a)
                    runs[which][1].append(c)
                    runs[which][2].append(r)
            for which, binary in binaries:
                a, c, r = runs[which]
                print(f"{name:24} {which:9} {median(a):11.3f} {median(c):8.2f} "
                      f"{median(r) / 1024:10.1f}")
                out[f"{which} {name}"] = {"binary": binary, "attach_s": median(a),
                                          "attach_cpu_s": median(c),
                                          "rss_kib": median(r), "attach_runs": a,
                                          "cpu_runs": c, "rss_runs": r}
    print()


BLOCKING = os.path.join(BUILD, "tests", "targets", "blocking")
PROCESS_COUNTS = [1, 10, 100]


def bpf_map_memlock(pid):
    """Bytes of kernel memory of the BPF maps process pid holds open."""
    total = 0
    fd_dir = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fd_dir):
        try:
            with open(os.path.join(fd_dir, fd)) as f:
                text = f.read()
        except OSError:
            continue
        if "map_type:" in text:
            m = re.search(r"memlock:\s+(\d+)", text)
            total += int(m.group(1)) if m else 0
    return total


def follow_processes(n):
    """syncprof --pid of n waiting processes: (attach s, map bytes, the
    unwind-table line of -v)."""
    waiting = []
    try:
        for _ in range(n):
            proc = subprocess.Popen([BLOCKING, "mutex", "--iters", "1",
                                     "--wait-signal"], stdout=subprocess.PIPE,
                                    text=True)
            waiting.append(proc)
            if not proc.stdout.readline().startswith("ready"):
                raise RuntimeError("blocking did not start")
        pids = ",".join(str(p.pid) for p in waiting)
        t0 = time.monotonic()
        prof = subprocess.Popen([SYNCPROF, "-v", "--mode", "contended", "--pid",
                                 pids, "-o", os.devnull],
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        tables = ""
        for line in prof.stderr:
            if "unwind tables:" in line:
                tables = line.strip()
            if "profiling PID" in line:
                break
        attach_s = time.monotonic() - t0
        memlock = bpf_map_memlock(prof.pid)
        prof.terminate()
        prof.communicate(timeout=60)
        return attach_s, memlock, tables
    finally:
        for proc in waiting:
            proc.kill()
            proc.wait()
            proc.stdout.close()


def processes_cost(results):
    """Attach time and kernel memory with 1, 10, 100 followed processes."""
    print("Following many processes (contended mode, --pid LIST of waiting "
          "processes of one program; medians of", RUNS, "runs)")
    print(f"{'processes':>10} {'attach (s)':>11} {'maps held (KiB)':>16} "
          f"{'unwind tables (KiB)':>20} {'builds':>7} {'mappings':>9}")
    out = results.setdefault("processes", {})
    for n in PROCESS_COUNTS:
        runs = [follow_processes(n) for _ in range(RUNS)]
        attach = median([r[0] for r in runs])
        memlock = median([r[1] for r in runs])
        tables = runs[-1][2]
        m = re.search(r"(\d+) module builds.*?(\d+) mappings, ([\d.]+) KiB",
                      tables)
        builds, mappings, kib = (m.group(1), m.group(2), float(m.group(3))) \
            if m else ("?", "?", 0.0)
        print(f"{n:>10} {attach:>11.3f} {memlock / 1024:>16.0f} {kib:>20.1f} "
              f"{builds:>7} {mappings:>9}")
        out[str(n)] = {"attach_s": attach, "bpf_maps_held_bytes": memlock,
                       "unwind_kib": kib, "builds": builds,
                       "mappings": mappings}
    print("(maps held: every map syncprof keeps a descriptor of, memlock in "
          "fdinfo, mostly preallocated; unwind tables: the per-build rows "
          "and per-process mapping arrays, which the outer maps hold)")
    print()


# --- --serve --all: what an always-on syncprof costs -----------------------
SERVE_IDLE_S = 10
SERVE_SCRAPES = 50
# Blocking waits as fast as two threads hand a futex turn back and forth
# (~90k/s here unprofiled; lockbench's hammer, whose waits have deep
# stacks, blocks only ~100 times a second on these machines).  The rate
# is read back from syncprof's own counters; the cost is also given per
# 10k waits/s, the issue's budget.
SERVE_LOAD = ["futexpp", "--ops", "300000"]
SERVE_SLEEPERS = 500
# pgbench -c 32 under --all --serve: its length, the quiet stretch that
# gives syncprof's background rate, and the scrapes (one a second).
SERVE_PG_SECONDS = int(os.environ.get("BENCH_SERVE_PG_SECONDS", "60"))
SERVE_PG_QUIET_S = 8
SERVE_PG_SCRAPES = 24
PG_BIN = "/usr/lib/postgresql/15/bin"


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def serve_start():
    prof = subprocess.Popen([SYNCPROF, "-v", "--all", "--serve", "127.0.0.1:0",
                             "-o", os.devnull], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    base = None
    for line in prof.stderr:
        m = re.search(r"serving on (http://[0-9.:]+)/", line)
        if m:
            base = m.group(1)
        if "profiling PID" in line:
            break
    if not base:
        prof.kill()
        raise RuntimeError("syncprof --serve did not start")
    # Its stderr (every process it follows) must not fill the pipe.
    drain = subprocess.Popen(["cat"], stdin=prof.stderr, stdout=subprocess.DEVNULL)
    return prof, base, drain


def serve_stop(prof, drain):
    prof.terminate()
    prof.wait(timeout=60)
    drain.wait(timeout=60)


def serve_waits_of(base, process):
    import urllib.request
    with urllib.request.urlopen(base + "/metrics", timeout=60) as r:
        text = r.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("syncprof_lock_waits_total{")
               and f'process="{process}"' in line)


def serve_window(prof, seconds):
    c0, t0 = proc_cpu_s(prof.pid), time.monotonic()
    time.sleep(seconds)
    return (proc_cpu_s(prof.pid) - c0) / (time.monotonic() - t0)


def serve_scrape_cost(prof, url, n):
    import urllib.request
    c0, t0 = proc_cpu_s(prof.pid), time.monotonic()
    size = 0
    for _ in range(n):
        with urllib.request.urlopen(url, timeout=120) as r:
            size = len(r.read())
    return ((proc_cpu_s(prof.pid) - c0) / n, (time.monotonic() - t0) / n, size)


def schedstat_cpu_s(pid):
    """The run time of every thread of pid (ns precision), in s."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total * 1e-9


def serve_scrapes_under_load(prof, url, n, background):
    """n GETs of url, one a second as Prometheus would make them, while
    the load runs: syncprof's CPU per scrape (the run time of all its
    threads over the scrapes' wall time, less its background rate over
    the same time), the wall time and bytes per scrape, and the slowest."""
    import urllib.request
    cpu = wall = 0.0
    slowest = size = 0
    for _ in range(n):
        c0, t0 = schedstat_cpu_s(prof.pid), time.monotonic()
        with urllib.request.urlopen(url, timeout=120) as r:
            size = len(r.read())
        took = time.monotonic() - t0
        cpu += schedstat_cpu_s(prof.pid) - c0 - background * took
        wall += took
        slowest = max(slowest, took)
        time.sleep(max(0.0, 1.0 - took))
    return {"cpu_s": cpu / n, "wall_s": wall / n, "max_wall_s": slowest,
            "bytes": size, "scrapes": n}


def serve_pgbench(prof, base):
    """PostgreSQL under pgbench, 32 backends, while syncprof serves:
    syncprof's CPU per second and RSS, then what a scrape of /metrics and
    of /debug/pprof/block costs while pgbench goes on (the first of each
    apart: it names the new program's stacks), the series and the bytes;
    None without PostgreSQL."""
    if not os.path.exists(os.path.join(PG_BIN, "postgres")):
        return None
    pg = pgcluster.PgCluster(120)
    try:
        pg.start(max_connections=64)
    except AssertionError as e:
        print(f"  PostgreSQL: {e}")
        return None
    bench = None
    try:
        bench = subprocess.Popen(pg.pgbench_argv("-c", "32", "-j", "2", "-T",
                                                 str(SERVE_PG_SECONDS)),
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        time.sleep(3)
        load = os.getloadavg()[0]
        c0, t0 = schedstat_cpu_s(prof.pid), time.monotonic()
        time.sleep(SERVE_PG_QUIET_S)
        background = (schedstat_cpu_s(prof.pid) - c0) / (time.monotonic() - t0)
        out = {"cpu_per_s": background, "clients": 32, "load": load,
               "seconds": SERVE_PG_SECONDS}
        for path, n in (("/metrics", SERVE_PG_SCRAPES),
                        ("/debug/pprof/block", SERVE_PG_SCRAPES // 2)):
            first = serve_scrapes_under_load(prof, base + path, 1, background)
            out["scrape " + path] = dict(
                serve_scrapes_under_load(prof, base + path, n, background),
                first_cpu_s=first["cpu_s"], first_wall_s=first["wall_s"])
        import urllib.request
        with urllib.request.urlopen(base + "/metrics", timeout=120) as r:
            text = r.read().decode()
        m = re.search(r"(?m)^syncprof_series (\d+)$", text)
        out["series"] = int(m.group(1)) if m else None
        out["load_end"] = os.getloadavg()[0]
        stdout, _ = bench.communicate(timeout=SERVE_PG_SECONDS + 300)
        bench = None
        tps = re.search(r"tps = ([\d.]+)", stdout)
        out["tps"] = float(tps.group(1)) if tps else None
        out["rss_kib"] = proc_rss_kib(prof.pid)
        return out
    finally:
        if bench:
            bench.kill()
            bench.wait()
        pg.stop()


def serve_cost(results):
    """syncprof --all --serve: idle, 10k waits/s with 32-frame stacks,
    PostgreSQL under pgbench, 500 processes; per scrape."""
    out = results["serve"] = {}
    print("--all --serve (syncprof's own CPU from /proc/PID/stat, RSS from "
          "/proc/PID/status; other work on the machine counts in 'followed')")
    prof, base, drain = serve_start()
    try:
        time.sleep(3)
        idle = serve_window(prof, SERVE_IDLE_S)
        out["idle"] = {"cpu_per_s": idle, "rss_kib": proc_rss_kib(prof.pid)}
        print(f"  idle host:      {idle * 100:6.2f} % of a CPU, RSS "
              f"{out['idle']['rss_kib'] / 1024:.0f} MiB")
        for path, n in (("/metrics", SERVE_SCRAPES), ("/debug/pprof/block", 10),
                        ("/debug/pprof/mutex", 10)):
            cpu, wall, size = serve_scrape_cost(prof, base + path, n)
            out["scrape " + path] = {"cpu_s": cpu, "wall_s": wall, "bytes": size}
            print(f"  scrape {path:<20} {cpu * 1e3:7.2f} ms CPU, {wall * 1e3:7.2f} ms "
                  f"wall, {size} bytes")
        before = serve_waits_of(base, "lockbench")
        c0, t0 = proc_cpu_s(prof.pid), time.monotonic()
        subprocess.run([LOCKBENCH, *SERVE_LOAD], capture_output=True,
                       check=True, timeout=600)
        elapsed = time.monotonic() - t0
        cpu = (proc_cpu_s(prof.pid) - c0) / elapsed
        time.sleep(1.5)
        rate = (serve_waits_of(base, "lockbench") - before) / elapsed
        per_10k = (cpu - idle) * 10000 / rate if rate else None
        out["busy"] = {"cpu_per_s": cpu, "waits_per_s": rate, "args": SERVE_LOAD,
                       "cpu_per_s_per_10k_waits": per_10k,
                       "rss_kib": proc_rss_kib(prof.pid)}
        print(f"  {rate:,.0f} blocking waits/s ({' '.join(SERVE_LOAD)}): "
              f"{cpu * 100:6.2f} % of a CPU, {(cpu - idle) * 100:.2f} above idle"
              + (f", {per_10k * 100:.2f} % per 10k waits/s" if per_10k else "")
              + f", RSS {out['busy']['rss_kib'] / 1024:.0f} MiB")
        pg = serve_pgbench(prof, base)
        if pg:
            out["pgbench"] = pg
            print(f"  pgbench -c 32:  {pg['cpu_per_s'] * 100:6.2f} % of a CPU, RSS "
                  f"{pg['rss_kib'] / 1024:.0f} MiB, {pg['tps']} tps, "
                  f"{pg['series']} series, load average {pg['load']:.1f}-"
                  f"{pg['load_end']:.1f} ({os.cpu_count()} CPUs)")
            for path in ("/metrics", "/debug/pprof/block"):
                s = pg["scrape " + path]
                print(f"    scrape {path:<20} {s['cpu_s'] * 1e3:7.2f} ms CPU, "
                      f"{s['wall_s'] * 1e3:7.2f} ms wall (slowest "
                      f"{s['max_wall_s'] * 1e3:.0f} ms), {s['bytes']} bytes, "
                      f"{s['scrapes']} scrapes; the first "
                      f"{s['first_cpu_s'] * 1e3:.1f} ms CPU, "
                      f"{s['first_wall_s'] * 1e3:.0f} ms wall")
    finally:
        serve_stop(prof, drain)
    # 500 processes of one program waiting, then syncprof --all.
    sleepers = []
    try:
        for _ in range(SERVE_SLEEPERS):
            p = subprocess.Popen([BLOCKING, "mutex", "--iters", "1", "--wait-signal"],
                                 stdout=subprocess.PIPE, text=True)
            sleepers.append(p)
            p.stdout.readline()
        prof, base, drain = serve_start()
        try:
            time.sleep(3)
            cpu = serve_window(prof, SERVE_IDLE_S)
            out["500"] = {"cpu_per_s": cpu, "rss_kib": proc_rss_kib(prof.pid)}
            print(f"  +{SERVE_SLEEPERS} processes: {cpu * 100:6.2f} % of a CPU, RSS "
                  f"{out['500']['rss_kib'] / 1024:.0f} MiB")
        finally:
            serve_stop(prof, drain)
    finally:
        for p in sleepers:
            p.kill()
            p.wait()
            p.stdout.close()
    print()


def main():
    if os.geteuid() != 0:
        print("make bench needs root (BPF and uprobes)", file=sys.stderr)
        return 1
    if ONLY == {"recording"}:
        results = {"machine": machine(), "runs": RUNS, "pairs": PAIRS}
        recording(results)
        os.makedirs(os.path.join(BUILD, "bench"), exist_ok=True)
        with open(os.path.join(BUILD, "bench", "results-recording.json"), "w") as f:
            json.dump(results, f, indent=1)
        return 0
    if ONLY == {"processes"}:
        # Needs only syncprof and the test targets.
        results = {"machine": machine(), "runs": RUNS}
        processes_cost(results)
        os.makedirs(os.path.join(BUILD, "bench"), exist_ok=True)
        with open(os.path.join(BUILD, "bench", "results-processes.json"), "w") as f:
            json.dump(results, f, indent=1)
        return 0
    libc = libc_path()
    have_bpftrace = shutil.which("bpftrace") is not None
    variants = [("full (entry)", "full", lambda w, t: run_syncprof(w, t, "entry")),
                ("full", "full", lambda w, t: run_syncprof(w, t, "auto")),
                ("contended", "contended",
                 lambda w, t: run_syncprof(w, t, None, "contended"))]
    if have_bpftrace:
        variants.append(("bpftrace", "full", lambda w, t: run_bpftrace(w, t, libc)))
    results = {"machine": machine(), "runs": RUNS, "pairs": PAIRS,
               "overhead_pairs": OVERHEAD_PAIRS, "workloads": {},
               "contended": {}, "states": {}}
    m = results["machine"]
    print(f"machine: {m['cpu']}, {m['cpus']} CPUs, kernel {m['kernel']}, "
          f"hypervisor: {m['hypervisor']}, systemd-detect-virt: {m['detect_virt']}")
    wanted = {w.strip() for w in SECTIONS.split(",") if w.strip()}

    def real_servers(res):
        binaries = [("this", SYNCPROF)]
        if os.environ.get("BENCH_BASE"):
            binaries.append(("base", os.environ["BENCH_BASE"]))
        servers.servers(res, binaries,
                        int(os.environ.get("BENCH_SERVER_PAIRS", "3")),
                        bpf_stats_enable)

    def findings_cost(res):
        servers.findings_cost(res, SYNCPROF,
                              int(os.environ.get("BENCH_SERVER_PAIRS", "3")))

    def microbenchmarks(res):
        main_table(res, variants)

    def short_processes(res):
        binaries = [("this", SYNCPROF)]
        if os.environ.get("BENCH_BASE"):
            binaries.append(("base", os.environ["BENCH_BASE"]))
        storm.storm(res, binaries, RUNS)

    def duty_cycle(res):
        duty.duty(res, SYNCPROF, int(os.environ.get("BENCH_SERVER_PAIRS", "3")))
        duty.targets(res, SYNCPROF, int(os.environ.get("BENCH_SERVER_PAIRS", "3")))

    def duty_mariadb(res):
        duty.mariadb(res, SYNCPROF, int(os.environ.get("BENCH_SERVER_PAIRS", "3")))

    # Real servers first, then the microbenchmarks.
    sections = [("servers", real_servers), ("findings", findings_cost),
                ("storm", short_processes),
                ("duty", duty_cycle), ("duty_mariadb", duty_mariadb),
                ("attach", attach_detach),
                ("attachload", lambda res: attachload.attach_under_load(
                    res, SYNCPROF, PAIRS, attach_detach_once)),
                ("main", microbenchmarks),
                ("overhead", contended_overhead), ("cost", contended_cost),
                ("bystander", contended_bystander), ("stacks", stacks_cost),
                ("recording", recording), ("states", states_bystander),
                ("states", states_target), ("features", feature_cost),
                ("why", why_cost),
                ("lockorder", lock_order_cost),
                ("kinds", kind_cost), ("processes", processes_cost),
                ("offcpu", offcpu_cost), ("serve", serve_cost),
                ("targetfiles", targetfile_cost),
                ("whatif", whatifbench.whatif_accuracy),
                ("whatif_pg", whatifpg.whatif_postgres)]
    if have_bpftrace:
        sections.append(("stacks", full_versus_bpftrace))
    for name, section in sections:
        if wanted and name not in wanted:
            continue
        try:
            section(results)
        except (RuntimeError, subprocess.CalledProcessError, ValueError,
                KeyError, IndexError, OSError) as e:
            print(f"{section.__name__}: failed: {e}")
            print()
    for bench in ("probecost", "bench_symbolizer"):
        if wanted and "tools" not in wanted:
            continue
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
