"""A real multi-process server: Debian's PostgreSQL 15, a new backend per
pgbench transaction (-C).  syncprof --pid <postmaster> --children must
follow every backend forked while it runs (pgbench counts them: one per
transaction), drop nothing, and name PostgreSQL's own code where the
backends wait, past its semaphore and LWLock wrappers, unless --no-skip
asks for the wrapper."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from harness import HANG_S, SyncprofTestCase

PG_BIN = "/usr/lib/postgresql/15/bin"
WRAPPERS = {"PGSemaphoreLock", "LWLockAcquire", "LWLockAcquireOrWait",
            "LWLockWaitForVar"}


def as_postgres(*cmd, **kwargs):
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd],
                          capture_output=True, text=True, **kwargs)


class Postgres(SyncprofTestCase):

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(os.path.join(PG_BIN, "postgres")):
            raise AssertionError("make deps installs postgresql-15")
        cls.dir = tempfile.mkdtemp(prefix="syncprof-pg-")
        shutil.chown(cls.dir, "postgres", "postgres")
        cls.data = os.path.join(cls.dir, "data")
        cls.port = str(20000 + os.getpid() % 20000)
        init = as_postgres(os.path.join(PG_BIN, "initdb"), "-D", cls.data,
                           "-A", "trust", timeout=HANG_S)
        if init.returncode:
            raise AssertionError(f"initdb: {init.stderr}")
        cls.server = subprocess.Popen(
            ["runuser", "-u", "postgres", "--", os.path.join(PG_BIN, "postgres"),
             "-D", cls.data, "-p", cls.port, "-k", cls.dir,
             "-c", "listen_addresses=", "-c", "max_connections=50"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + HANG_S
        while as_postgres(os.path.join(PG_BIN, "pg_isready"), "-h", cls.dir,
                          "-p", cls.port).returncode:
            if time.monotonic() > deadline or cls.server.poll() is not None:
                cls.tearDownClass()
                raise AssertionError("PostgreSQL did not start")
            time.sleep(0.2)
        fill = cls.pgbench("-i", "-s", "2")
        if fill.returncode:
            cls.tearDownClass()
            raise AssertionError(f"pgbench -i: {fill.stderr}")

    @classmethod
    def tearDownClass(cls):
        if cls.server.poll() is None:
            as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", cls.data,
                        "-m", "fast", "-w", "stop", timeout=HANG_S)
            try:
                cls.server.wait(timeout=HANG_S)
            except subprocess.TimeoutExpired:
                cls.server.kill()
                cls.server.wait()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def pgbench(cls, *args):
        return as_postgres(os.path.join(PG_BIN, "pgbench"), "-h", cls.dir,
                           "-p", cls.port, *args, "postgres", timeout=HANG_S)

    def postmaster(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def profile_pgbench(self, *args):
        """syncprof over a pgbench run of a new backend per transaction;
        the report and the number of transactions (backends) it made."""
        prof = self.start_syncprof(["--pid", str(self.postmaster()),
                                    "--children", "--mode", "contended",
                                    "--top", "0", *args])
        bench = self.pgbench("-c", "8", "-j", "2", "-T", "4", "-C")
        self.assertEqual(bench.returncode, 0, bench.stderr)
        done = [line for line in bench.stdout.splitlines()
                if line.startswith("number of transactions actually processed")]
        transactions = int(done[0].split(":")[1].split("/")[0])
        prof.send_signal(2)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[-1]
        self.assertEqual(report["dropped"], 0, report["dropped_causes"])
        # Every backend pgbench connected to was followed from its fork.
        self.assertGreaterEqual(len(report["processes"]), transactions)
        self.assertGreater(transactions, 8)
        sems = [r for r in report["rows"] if r["type"] == "sem"]
        self.assertTrue(sems, "no backend waited on a semaphore")
        return sems

    def test_backends_wait_in_postgres_code_past_its_wrappers(self):
        sems = self.profile_pgbench()
        for row in sems:
            self.assertNotIn(row["callsite"]["function"], WRAPPERS, row)
        self.assertTrue(any((r["callsite"]["module"] or "").endswith("/postgres")
                            and r["callsite"]["function"] for r in sems), sems)

    def test_no_skip_gives_the_wrapper_back(self):
        sites = {r["callsite"]["function"] for r in self.profile_pgbench("--no-skip")}
        self.assertIn("PGSemaphoreLock", sites)
        self.assertLessEqual(sites, WRAPPERS | {"PGSemaphoreLock"})


if __name__ == "__main__":
    unittest.main()
