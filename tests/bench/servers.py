"""make bench, section servers: real servers from Debian's packages,
started here on loopback, loaded by their own load generators, with and
without syncprof, in paired runs (each profiled run right after an
unprofiled one; the slowdown is the median of their ratios).

  * PostgreSQL 15 and pgbench (-C: a new backend per transaction), under
    syncprof --pid <postmaster> --children in contended mode, 32-frame
    stacks;
  * memcached (4 threads) and memcaslap, under contended and full mode,
    and contended mode with --why against --blame --states (its parts):
    the difference of their all/op is what --why adds per blocking wait.

For each: the load's throughput without and with syncprof, the BPF time
per blocking wait (contended) or lock call (full) by syncprof -v's own
clock, the kernel's run time of all of syncprof's programs
(BPF_ENABLE_STATS) over the same count, frame-cache misses per wait, and
syncprof's peak RSS and CPU time while profiling (attach excluded)."""
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
SECONDS = int(os.environ.get("BENCH_SERVER_SECONDS", "8"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres(*cmd, **kwargs):
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd],
                          capture_output=True, text=True, **kwargs)


class Postgres:
    """A private cluster on 127.0.0.1 and an ephemeral port."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="syncprof-bench-pg-")
        shutil.chown(self.dir, "postgres", "postgres")
        self.data = os.path.join(self.dir, "data")
        self.port = str(free_port())
        init = as_postgres(os.path.join(PG_BIN, "initdb"), "-D", self.data,
                           "-A", "trust", timeout=120)
        if init.returncode:
            raise RuntimeError(f"initdb: {init.stderr}")
        self.server = subprocess.Popen(
            ["runuser", "-u", "postgres", "--", os.path.join(PG_BIN, "postgres"),
             "-D", self.data, "-p", self.port, "-k", self.dir,
             "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=50"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while as_postgres(os.path.join(PG_BIN, "pg_isready"), "-h", "127.0.0.1",
                          "-p", self.port).returncode:
            if time.monotonic() > deadline or self.server.poll() is not None:
                self.stop()
                raise RuntimeError("PostgreSQL did not start")
            time.sleep(0.2)
        fill = self.pgbench("-i", "-s", "2")
        if fill.returncode:
            self.stop()
            raise RuntimeError(f"pgbench -i: {fill.stderr}")

    def pgbench(self, *args):
        return as_postgres(os.path.join(PG_BIN, "pgbench"), "-h", "127.0.0.1",
                           "-p", self.port, *args, "postgres", timeout=300)

    def pid(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def load(self):
        """Transactions per second of pgbench -C (a backend each)."""
        run = self.pgbench("-c", "8", "-j", "2", "-T", str(SECONDS), "-C")
        if run.returncode:
            raise RuntimeError(f"pgbench: {run.stderr}")
        m = re.search(r"tps = ([\d.]+)", run.stdout)
        return float(m.group(1))

    def stop(self):
        if self.server.poll() is None:
            as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data,
                        "-m", "fast", "-w", "stop", timeout=60)
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Memcached:
    """memcached -t 4 on 127.0.0.1 and an ephemeral port, no UDP."""

    def __init__(self):
        self.seconds = SECONDS      # of each load
        self.port = str(free_port())
        self.server = subprocess.Popen(
            ["memcached", "-u", "nobody", "-l", "127.0.0.1", "-p", self.port,
             "-U", "0", "-t", "4", "-m", "256"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", int(self.port)), 1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.server.poll() is not None:
                    self.stop()
                    raise RuntimeError("memcached did not start")
                time.sleep(0.1)

    def pid(self):
        return self.server.pid

    def load(self):
        """Operations per second of memcaslap (90% get, 10% set)."""
        run = subprocess.run(["memcaslap", "-s", f"127.0.0.1:{self.port}",
                              "-T", "2", "-c", "16", "-t", f"{self.seconds}s"],
                             capture_output=True, text=True,
                             timeout=self.seconds + 120)
        m = re.search(r"TPS: (\d+)", run.stdout)
        if not m:
            raise RuntimeError(f"memcaslap: {run.stdout[-300:]} {run.stderr[-300:]}")
        return float(m.group(1))

    def stop(self):
        if self.server.poll() is None:
            self.server.terminate()
            self.server.wait(timeout=30)


class MariaDB:
    """Debian's mariadbd run privately: its own datadir
    (mariadb-install-db) in a temp dir, its own socket, 127.0.0.1 and an
    ephemeral port; never the system instance.  Loaded by Debian's
    sysbench (oltp_read_write: point and range selects, updates, a
    delete and an insert per transaction) over the socket as root
    (unix_socket authentication: the bench runs as root).  The redo log
    is written at each commit but flushed once a second
    (innodb_flush_log_at_trx_commit=2): the load is the server's CPU and
    locks, not the disk's fsyncs, which on a shared host vary far more
    than the profiler's cost."""

    MARIADBD = "/usr/sbin/mariadbd"
    TABLES = ["--tables=4", "--table-size=10000"]

    @classmethod
    def missing(cls):
        """What make deps BENCH=1 would install, or None."""
        if not os.path.exists(cls.MARIADBD):
            return "mariadb-server-core"
        for tool, package in (("mariadb-install-db", "mariadb-server-core"),
                              ("my_print_defaults", "mariadb-client-core"),
                              ("sysbench", "sysbench")):
            if not shutil.which(tool):
                return package
        return None

    def __init__(self, threads=4):
        self.threads = threads
        self.seconds = SECONDS      # of each load
        self.dir = tempfile.mkdtemp(prefix="syncprof-bench-mariadb-")
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "sock")
        self.log = os.path.join(self.dir, "err.log")
        self.server = None
        init = subprocess.run(["mariadb-install-db", "--no-defaults",
                               "--datadir=" + self.data, "--user=root",
                               "--skip-name-resolve"],
                              capture_output=True, text=True, timeout=300)
        if init.returncode:
            self.stop()
            raise RuntimeError(f"mariadb-install-db: {init.stdout[-300:]} "
                               f"{init.stderr[-300:]}")
        self.port = str(free_port())
        self.server = subprocess.Popen(
            [self.MARIADBD, "--no-defaults", "--datadir=" + self.data,
             "--socket=" + self.sock, "--port=" + self.port,
             "--bind-address=127.0.0.1", "--user=root",
             "--pid-file=" + os.path.join(self.dir, "pid"),
             "--log-error=" + self.log, "--innodb-buffer-pool-size=128M",
             "--innodb-flush-log-at-trx-commit=2", "--max-connections=50"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not self.ready():
            if time.monotonic() > deadline or self.server.poll() is not None:
                self.stop()
                raise RuntimeError("mariadbd did not start")
            time.sleep(0.2)
        fill = self.sysbench("prepare")
        if fill.returncode:
            self.stop()
            raise RuntimeError(f"sysbench prepare: {fill.stderr[-300:]}")

    def ready(self):
        try:
            with open(self.log) as f:
                return "ready for connections" in f.read()
        except FileNotFoundError:
            return False

    def sysbench(self, *args):
        return subprocess.run(
            ["sysbench", "oltp_read_write", "--db-driver=mysql",
             "--mysql-socket=" + self.sock, "--mysql-user=root",
             "--mysql-db=test", *self.TABLES, *args],
            capture_output=True, text=True, timeout=self.seconds + 300)

    def pid(self):
        return self.server.pid

    def load(self):
        """Transactions per second of sysbench oltp_read_write."""
        run = self.sysbench(f"--threads={self.threads}", f"--time={self.seconds}",
                            "run")
        m = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", run.stdout)
        if run.returncode or not m:
            raise RuntimeError(f"sysbench: {run.stdout[-300:]} {run.stderr[-300:]}")
        return float(m.group(1))

    def stop(self):
        """A clean shutdown (SIGTERM), then the temp dir goes."""
        if self.server and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def cpu_s(pid):
    """User + system CPU seconds of pid so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def profiled(syncprof, server, args):
    """The load once under syncprof -v: throughput and syncprof's own
    figures."""
    prof = subprocess.Popen([syncprof, "-v", "--pid", str(server.pid()), *args,
                             "-f", "json", "-o", os.devnull],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    seen = ""
    try:
        t0 = time.monotonic()
        for line in prof.stderr:
            seen += line
            if "profiling PID" in line:
                break
        else:
            raise RuntimeError(f"syncprof did not attach: {seen[-500:]}")
        attach_s = time.monotonic() - t0
        cpu0 = cpu_s(prof.pid)
        ops = server.load()
        cpu1 = cpu_s(prof.pid)
        rss = peak_rss_kib(prof.pid)
        prof.send_signal(signal.SIGINT)
        seen += prof.communicate(timeout=120)[1]
    finally:
        if prof.poll() is None:
            prof.kill()
            prof.communicate()
    out = {"ops_per_s": ops, "attach_s": attach_s, "cpu_s": cpu1 - cpu0,
           "rss_kib": rss}
    m = re.search(r"BPF time per (?:blocking wait|lock call): (\d+) ns over (\d+)",
                  seen)
    out["own_ns"], out["waits"] = (int(m.group(1)), int(m.group(2))) if m else (None, 0)
    m = re.search(r"BPF programs: (\d+) runs, (\d+) ns in all", seen)
    out["bpf_ns_all"] = int(m.group(2)) if m else None
    m = re.search(r"frame cache misses (\d+)", seen)
    out["misses"] = int(m.group(1)) if m else None
    m = re.search(r"findings: ([\d.]+) ms of CPU over (\d+) calls", seen)
    out["findings_ms"], out["findings_calls"] = (
        (float(m.group(1)), int(m.group(2))) if m else (None, 0))
    return out


def findings_cost(results, syncprof, runs):
    """make bench, section findings: what judging what to fix first
    costs syncprof's CPU on PostgreSQL under pgbench -C (a backend per
    transaction), --children, contended mode, a report every second
    (--interval 1, --batch): the CPU of the findings (the run-time polls
    and each report's judging, naming and rendering, by syncprof -v's
    own thread clock) against all of syncprof's CPU (user + system)
    over the same load.  The BPF side (the release probes) is the
    servers section's BPF/op."""
    out = results["findings"] = {"seconds": SECONDS, "runs": []}
    print(f"findings: their CPU against syncprof's, PostgreSQL, pgbench -c 8 "
          f"-j 2 -C -T {SECONDS}, --children --interval 1 (median of {runs})")
    if not os.path.exists(os.path.join(PG_BIN, "postgres")):
        print("findings: skipped: make deps installs postgresql-15")
        return
    args = ["--children", "--mode", "contended", "--stack-depth", "32",
            "--interval", "1", "--batch"]
    server = Postgres()
    try:
        for _ in range(runs):
            out["runs"].append(profiled(syncprof, server, args))
    finally:
        server.stop()
    header = (f"{'tps':>8} {'syncprof CPU s':>15} {'findings ms':>12} "
              f"{'calls':>6} {'us/call':>8} {'share':>7}")
    print(header)
    print("-" * len(header))
    shares = []
    for r in out["runs"]:
        if r["findings_ms"] is None or not r["cpu_s"]:
            print(f"{r['ops_per_s']:8.0f} {r['cpu_s']:15.2f} {'n/a':>12}")
            continue
        share = r["findings_ms"] / 1000.0 / r["cpu_s"]
        shares.append(share)
        print(f"{r['ops_per_s']:8.0f} {r['cpu_s']:15.2f} "
              f"{r['findings_ms']:12.1f} {r['findings_calls']:6d} "
              f"{r['findings_ms'] * 1000 / r['findings_calls']:8.0f} "
              f"{100 * share:6.2f}%")
    out["share"] = median(shares)
    if shares:
        print(f"median share of syncprof's CPU: {100 * out['share']:.2f}% "
              "(goal: under 1%)")
    print()


CASES = [
    ("postgresql", Postgres, "contended",
     ["--children", "--mode", "contended", "--stack-depth", "32"]),
    ("memcached", Memcached, "contended",
     ["--mode", "contended", "--stack-depth", "32"]),
    ("memcached", Memcached, "full", ["--mode", "full", "--stack-depth", "32"]),
    # What --why adds on a real server: against its own parts.
    ("memcached", Memcached, "cont+b+s",
     ["--mode", "contended", "--stack-depth", "32", "--blame", "--states"]),
    ("memcached", Memcached, "cont+why",
     ["--mode", "contended", "--stack-depth", "32", "--why"]),
]
# BENCH_SERVER_CASES="memcached cont+why,memcached cont+b+s": only those.
WANTED = {c.strip() for c in os.environ.get("BENCH_SERVER_CASES", "").split(",")
          if c.strip()}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def servers(results, binaries, pairs, stats_enable):
    """The section: prints its table, fills results["servers"].
    binaries: (name, path) of each syncprof to measure, each pair's
    profiled runs one after the other (BENCH_BASE: an older build)."""
    out = results["servers"] = {"seconds": SECONDS, "pairs": pairs}
    print(f"servers: throughput without and with syncprof, paired runs of "
          f"{SECONDS} s (median of {pairs}); BPF/op by syncprof -v's own clock "
          "(entry and exit), all = every program's kernel run time / ops "
          "measured")
    header = (f"{'server':11} {'mode':10} {'syncprof':8} {'ops/s none':>10} {'with':>9} "
              f"{'ratio':>6} {'BPF/op':>8} {'all/op':>8} {'misses/op':>9} "
              f"{'RSS MiB':>8} {'CPU s':>6}")
    print(header)
    print("-" * len(header))
    stats_fd = stats_enable()
    try:
        for name, kind, mode, args in CASES:
            if WANTED and f"{name} {mode}" not in WANTED:
                continue
            if name == "postgresql" and not os.path.exists(
                    os.path.join(PG_BIN, "postgres")):
                print(f"{name:11} {mode:10} skipped: make deps installs "
                      "postgresql-15")
                continue
            if name == "memcached" and not shutil.which("memcaslap"):
                print(f"{name:11} {mode:10} skipped: make deps installs "
                      "memcached and libmemcached-tools")
                continue
            server = kind()
            by_binary = {which: [] for which, _ in binaries}
            try:
                for _ in range(pairs):
                    for which, syncprof in binaries:
                        plain = server.load()
                        prof = profiled(syncprof, server, args)
                        prof["ratio"] = prof["ops_per_s"] / plain
                        prof["plain_ops_per_s"] = plain
                        by_binary[which].append(prof)
            finally:
                server.stop()
            for which, runs in by_binary.items():
                server_row(out, name, mode, which, args, runs)
    finally:
        os.close(stats_fd)
    print("(ops: pgbench transactions, a backend forked for each; memcaslap "
          "operations; BPF/op per blocking wait in contended mode, per lock "
          "call in full mode)")
    print()


def server_row(out, name, mode, which, args, runs):
    waits = [r["waits"] for r in runs]
    row = {
        "args": args,
        "plain_ops_per_s": median([r["plain_ops_per_s"] for r in runs]),
        "ops_per_s": median([r["ops_per_s"] for r in runs]),
        "ratio": median([r["ratio"] for r in runs]),
        "own_ns_per_op": median([r["own_ns"] for r in runs]),
        "all_ns_per_op": median([r["bpf_ns_all"] / r["waits"]
                                 for r in runs
                                 if r["bpf_ns_all"] and r["waits"]]),
        "misses_per_op": median([r["misses"] / r["waits"] for r in runs
                                 if r["misses"] is not None and r["waits"]]),
        "rss_kib": max(r["rss_kib"] for r in runs),
        "cpu_s": median([r["cpu_s"] for r in runs]),
        "waits": waits, "runs": runs,
    }
    out[f"{which} {name} {mode}"] = row

    def fmt(v, scale=1.0, spec="8.2f"):
        return format(v / scale, spec) if v is not None else f"{'n/a':>8}"
    print(f"{name:11} {mode:10} {which:8} {row['plain_ops_per_s']:10.0f} "
          f"{row['ops_per_s']:9.0f} {row['ratio']:5.2f}x "
          f"{fmt(row['own_ns_per_op'], 1000, '6.2f')}us "
          f"{fmt(row['all_ns_per_op'], 1000, '6.2f')}us "
          f"{fmt(row['misses_per_op'], 1, '9.2f')} "
          f"{row['rss_kib'] / 1024:8.1f} {row['cpu_s']:6.2f}")
