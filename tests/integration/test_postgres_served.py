"""PostgreSQL 15 as a fleet runs it: pgbench -c 32, syncprof --serve
--pid <postmaster> --children --blame, and Debian's Prometheus scraping
it every second (its scrape timeout 1 s).  Prometheus must never fail a
scrape (its own `up` series, read back through its query API, stays 1)
and hold at most 100 series; the backends' LWLock waits syncprof counts
must agree with PostgreSQL's own view of them, pg_stat_activity sampled
at a fixed rate inside the server while pgbench runs; and --blame must
charge them to release sites named by function (that those are other
backends' is test_postgres.py's check, which needs --no-coalesce: a
series per semaphore, which this run must not have).

pgbench runs PG_SECONDS: 25 s by default, SYNCPROF_PG_SECONDS=60 for a
minute (make bench's serve section also runs pgbench -c 32 for 60 s,
under --all --serve)."""
import os
import subprocess
import sys
import time
import urllib.parse

import promserver
from harness import HANG_S, SyncprofTestCase, parse_reports
from pgcluster import PG_BIN, PgCluster, as_postgres
from promserver import PROMETHEUS
import test_serve

PG_SECONDS = int(os.environ.get("SYNCPROF_PG_SECONDS", "25"))
CLIENTS = 32
MAX_SERIES = 100
# syncprof's LWLock waits against pg_stat_activity's: see LWLOCK_SAMPLER.
AGREE = 0.15
BLAMED = 0.80
LWLOCK_WRAPPERS = {"LWLockAcquire", "LWLockAcquireOrWait", "LWLockWaitForVar"}
RELEASE_WRAPPERS = {"LWLockRelease", "LWLockReleaseAll", "LWLockWakeup",
                    "PGSemaphoreUnlock", "LWLockUpdateVar"}

# PostgreSQL's own view: every PERIOD seconds, inside the server, how
# many client backends are in an LWLock wait (pg_stat_activity's
# wait_event_type, which a backend sets around its semaphore sleep in
# LWLockAcquire); each count held until the next sample, by the
# server's clock, summed to seconds of waiting.  A snapshot of
# pg_stat_activity lasts a transaction: cleared before each sample.
LWLOCK_SAMPLER = """
CREATE OR REPLACE FUNCTION syncprof_lwlock_seconds(seconds float8,
                                                   period float8)
RETURNS TABLE (lwlock_s float8, samples int, sampled_s float8)
LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz := clock_timestamp();
  prev timestamptz := t0;
  now_ timestamptz;
  waiting int := 0;
BEGIN
  lwlock_s := 0;
  samples := 0;
  LOOP
    PERFORM pg_stat_clear_snapshot();
    now_ := clock_timestamp();
    lwlock_s := lwlock_s + waiting *
                extract(epoch FROM now_ - prev)::float8;
    prev := now_;
    EXIT WHEN now_ - t0 > make_interval(secs => seconds);
    SELECT count(*) INTO waiting FROM pg_stat_activity
     WHERE wait_event_type = 'LWLock' AND backend_type = 'client backend';
    samples := samples + 1;
    PERFORM pg_sleep(period);
  END LOOP;
  sampled_s := extract(epoch FROM prev - t0)::float8;
  RETURN NEXT;
END $$;
"""
PERIOD = 0.005


class PostgresServed(SyncprofTestCase):
    start_serve = test_serve.Serve.start_serve
    stop_serve = test_serve.Serve.stop_serve
    wait_stderr = test_serve.Serve.wait_stderr
    query = test_serve.Serve.query
    start_prometheus = test_serve.Serve.start_prometheus

    @classmethod
    def setUpClass(cls):
        cls.pg = PgCluster(HANG_S)
        cls.pg.start(max_connections=CLIENTS + 10)

    @classmethod
    def tearDownClass(cls):
        cls.pg.stop()

    def psql(self, sql, *args):
        run = as_postgres(os.path.join(PG_BIN, "psql"), "-h", self.pg.dir,
                          "-p", self.pg.port, "-X", "-q", "-A", "-t",
                          "-v", "ON_ERROR_STOP=1", *args, "-c", sql,
                          "postgres", timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def start_sampler(self, seconds):
        self.psql(LWLOCK_SAMPLER)
        proc = subprocess.Popen(
            ["runuser", "-u", "postgres", "--", os.path.join(PG_BIN, "psql"),
             "-h", self.pg.dir, "-p", self.pg.port, "-X", "-q", "-A", "-t",
             "-F", " ", "-c",
             f"SELECT * FROM syncprof_lwlock_seconds({seconds}, {PERIOD})",
             "postgres"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(proc)
        return proc

    def test_prometheus_lwlock_waits_and_blame_under_pgbench(self):
        self.assertTrue(PROMETHEUS, "no prometheus: 'make deps' installs it")
        report_path = self.path("report.json")
        proc, base = self.start_serve("--pid", str(self.pg.postmaster()),
                                      "--children", "--blame",
                                      "--format", "json", "-o", report_path)
        netloc = urllib.parse.urlsplit(base).netloc
        _, api = self.start_prometheus(netloc)
        sampler = self.start_sampler(PG_SECONDS + 2)
        t0 = time.monotonic()
        bench = self.pg.pgbench("-c", str(CLIENTS), "-j", "2", "-T",
                                str(PG_SECONDS))
        self.assertEqual(bench.returncode, 0, bench.stderr)
        out, err = sampler.communicate(timeout=HANG_S)
        self.assertEqual(sampler.returncode, 0, err)
        pg_lwlock_s, samples, sampled_s = (float(x) for x in out.split())
        # Two more scrapes after the load: the last counts are in.
        time.sleep(2.5)
        served = self.query(api, 'sum(syncprof_lock_wait_seconds_total'
                                 '{type="sem"})')
        scrapes = self.query(api, 'count_over_time(up{job="syncprof"}[5m])')
        ups = self.query(api, 'sum_over_time(up{job="syncprof"}[5m])')
        longest = self.query(api, 'max_over_time(scrape_duration_seconds'
                                  '{job="syncprof"}[5m])')
        series = self.query(api, 'max_over_time(scrape_samples_scraped'
                                 '{job="syncprof"}[5m])')
        syncprof_series = self.query(api, 'max_over_time(syncprof_series[5m])')
        elapsed = time.monotonic() - t0
        self.stop_serve(proc)
        with open(report_path) as f:
            report = parse_reports(f.read())[-1]
        self.assertEqual(report["dropped"], 0, report["dropped_causes"])
        # Every scrape made, none failed; series kept few.
        self.assertGreaterEqual(scrapes, 0.5 * elapsed)
        self.assertEqual(ups, scrapes, f"{scrapes - ups} failed scrapes")
        self.assertLessEqual(syncprof_series, MAX_SERIES)
        # The LWLock waits: sem rows whose stacks go through LWLockAcquire
        # and its kin (the others are the group updates of the proc
        # array and of the commit log, IPC waits on the same semaphore).
        lwlock = other = 0
        for row in report["rows"]:
            if row["type"] != "sem":
                continue
            for stack in row["stacks"]:
                names = {f["function"] for f in stack["frames"]}
                if names & LWLOCK_WRAPPERS:
                    lwlock += stack["wait_ns"]
                else:
                    other += stack["wait_ns"]
        sem_total = sum(r["wait_ns"] for r in report["rows"]
                        if r["type"] == "sem")
        print(f"\npgbench -c {CLIENTS} {PG_SECONDS} s: {scrapes:.0f} scrapes,"
              f" {ups:.0f} up, longest {longest * 1e3:.0f} ms, "
              f"{series:.0f} samples, {syncprof_series:.0f} series; "
              f"sem waits {sem_total / 1e9:.2f} s (served {served:.2f} s), "
              f"LWLock {lwlock / 1e9:.2f} s, other {other / 1e9:.2f} s; "
              f"pg_stat_activity {pg_lwlock_s:.2f} s over {samples:.0f} "
              f"samples in {sampled_s:.1f} s: "
              f"{lwlock / 1e9 / pg_lwlock_s:.3f}; load average "
              f"{os.getloadavg()[0]:.1f}", file=sys.stderr)
        # What Prometheus stored is what syncprof counted (the report
        # also holds the last moments after the last scrape: none here).
        self.assertLessEqual(abs(served * 1e9 - sem_total), 0.05 * sem_total)
        self.assertGreater(pg_lwlock_s, 0)
        self.assertLessEqual(abs(lwlock / 1e9 - pg_lwlock_s),
                             AGREE * pg_lwlock_s)
        # Blame: released in another backend, at a function past the
        # wrappers.
        waiters = {}
        for row in report["rows"]:
            if row["type"] == "sem":
                waiters.setdefault(row["object"], set())
        named = 0
        sites = {}
        for b in report["blame"]:
            if b["type"] != "sem" or not b["release"]:
                continue
            fn = b["release"]["function"]
            if fn and fn not in RELEASE_WRAPPERS:
                named += b["wait_ns"]
                sites[fn] = sites.get(fn, 0) + b["wait_ns"]
        top = sorted(sites.items(), key=lambda kv: -kv[1])[:5]
        print(f"blame: named {named / sem_total:.1%} "
              f"{[(f, round(ns / 1e9, 3)) for f, ns in top]}",
              file=sys.stderr)
        self.assertGreaterEqual(named, BLAMED * sem_total)
