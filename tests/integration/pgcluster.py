"""A private PostgreSQL 15 cluster for syncprof's tests and its soak:
initdb as the postgres user on a temporary directory, the server on a
Unix socket in it (no TCP listener) and a port of its own, pgbench
filled at scale 2.  One place for test_postgres.py and
tests/soak/soak.py."""
import os
import shutil
import subprocess
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"


def as_postgres(*cmd, **kwargs):
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd],
                          capture_output=True, text=True, **kwargs)


class PgCluster:
    """dir (socket, data and log), data, port, log, server (the
    runuser process over the postmaster) once start() returns."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.server = None
        self.dir = None

    def start(self, max_connections=50):
        """Creates, starts and fills the cluster; AssertionError (the
        cluster stopped and removed) when it cannot."""
        if not os.path.exists(os.path.join(PG_BIN, "postgres")):
            raise AssertionError("make deps installs postgresql-15")
        self.dir = tempfile.mkdtemp(prefix="syncprof-pg-")
        shutil.chown(self.dir, "postgres", "postgres")
        self.data = os.path.join(self.dir, "data")
        self.port = str(20000 + os.getpid() % 20000)
        self.log = os.path.join(self.dir, "server.log")
        init = as_postgres(os.path.join(PG_BIN, "initdb"), "-D", self.data,
                           "-A", "trust", timeout=self.timeout)
        if init.returncode:
            self.stop()
            raise AssertionError(f"initdb: {init.stderr}")
        with open(self.log, "wb") as log:
            self.server = subprocess.Popen(
                ["runuser", "-u", "postgres", "--",
                 os.path.join(PG_BIN, "postgres"), "-D", self.data,
                 "-p", self.port, "-k", self.dir, "-c", "listen_addresses=",
                 "-c", f"max_connections={max_connections}"],
                stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + self.timeout
        while as_postgres(os.path.join(PG_BIN, "pg_isready"), "-h", self.dir,
                          "-p", self.port).returncode:
            if time.monotonic() > deadline or self.server.poll() is not None:
                self.stop()
                raise AssertionError("PostgreSQL did not start")
            time.sleep(0.2)
        fill = self.pgbench("-i", "-s", "2")
        if fill.returncode:
            self.stop()
            raise AssertionError(f"pgbench -i: {fill.stderr}")

    def pgbench_argv(self, *args):
        """pgbench ARGS against the cluster, as the postgres user."""
        return ["runuser", "-u", "postgres", "--",
                os.path.join(PG_BIN, "pgbench"), "-h", self.dir,
                "-p", self.port, *args, "postgres"]

    def pgbench(self, *args):
        return as_postgres(*self.pgbench_argv(*args)[4:],
                           timeout=self.timeout)

    def postmaster(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def main_lwlock(self, index):
        """The address of MainLWLockArray[index] (lwlocknames.txt: 8 is
        WALWriteLock), read from the postmaster's memory: the segment is
        mapped before the fork, one address in every backend."""
        pid = self.postmaster()
        exe = os.path.realpath(f"/proc/{pid}/exe")
        nm = subprocess.run(["nm", "-D", exe], capture_output=True,
                            text=True, check=True).stdout
        sym = [int(w[0], 16) for w in (line.split() for line in
                                       nm.splitlines())
               if len(w) == 3 and w[2] == "MainLWLockArray"]
        base = None
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                w = line.split()
                if len(w) >= 6 and w[5] == exe and int(w[2], 16) == 0:
                    base = int(w[0].split("-")[0], 16)
                    break
        if not sym or base is None:
            raise AssertionError(f"no MainLWLockArray in {exe}")
        with open(f"/proc/{pid}/mem", "rb") as mem:
            mem.seek(base + sym[0])
            array = int.from_bytes(mem.read(8), "little")
        if not array:
            raise AssertionError("MainLWLockArray is not set yet")
        # A main lock is padded to PG_CACHE_LINE_SIZE.
        return array + index * 128

    def stop(self):
        """Stops the server (fast shutdown) and removes the directory."""
        if self.server and self.server.poll() is None:
            as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data,
                        "-m", "fast", "-w", "stop", timeout=self.timeout)
            try:
                self.server.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
