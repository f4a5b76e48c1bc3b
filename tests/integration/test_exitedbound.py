"""Memory bounded by what is alive under --all --serve: bursts of short
processes that take a lock (tests/targets/forkburst, a copy under a name
of its own), one after another, with /metrics and both profiles scraped
meanwhile.  Once more processes have exited than syncprof names (1,024
newest exited, and a quarter more before the oldest go), the rows of the
older ones are folded by program: --blame's under their own keys too
(user/probes/blamekeep.c).  After that warm-up, BURSTS more bursts grow
syncprof's VmRSS by RSS_BOUND_KB at most, the rows kept stay within
their bounds as /metrics states them, and every wait the children
counted is in the counters."""
import json
import os
import shutil
import subprocess
import time
import urllib.request

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase
import test_serve
from test_serve import PROMTOOL, parse_metrics, of_process
from test_dlchurn import sanitized, vm_rss_kb

FORKBURST = os.path.join(BUILD, "tests", "targets", "forkburst")
PROCS = 40
ITERS = 3
# More children than syncprof names exited processes (1,280 at most):
# by the end of the warm-up the oldest have been folded.
WARM_BURSTS = 36
BURSTS = 36
SCRAPE_EVERY = 3        # bursts between two scrapes of /metrics
PROFILE_EVERY = 6       # and of both profiles
# Exited processes syncprof names (procset.c: 1,024, and a quarter more
# before the oldest go).
NAMED_MAX = 1024 + 1024 // 4
# How long the counters may take to hold the last burst's waits.
SETTLE_S = 10
# The rows of process 0 (fold.c, blamekeep.c): 4,096 by program, and an
# "other" row for each lock type beyond them.
FORGOTTEN_MAX = 4096
TYPES = 20
# VmRSS growth allowed over the BURSTS after the warm-up (1,440 more
# processes): NOISE_KB, plus ROW_KB for each row added to process 0's
# (bounded at FORGOTTEN_MAX each, waits and --blame's: a child that
# ended before syncprof read its maps keeps its own addresses, so its
# rows merge with no other run's).  A row there costs its table's slot
# and a copy in each snapshot held (512 bytes each): about 3 kB; 4 kB is
# allowed.  Measured alone (load 21-33) over 144 bursts, 5,760 children:
# before --blame's own rows were bounded by the named processes, VmRSS
# went from 94 to 124 MB (the own rows grew by about one a child, kept up
# to 16,384, each copied at every mutex profile); since, 92 to 96 MB.
# The host's other programs, followed too (their modules named), move it
# by a few MB either way: NOISE_KB.
NOISE_KB = 8 * 1024
ROW_KB = 4


class ExitedRowsBounded(SyncprofTestCase):

    start_serve = test_serve.Serve.start_serve
    stop_serve = test_serve.Serve.stop_serve

    def get(self, url):
        with urllib.request.urlopen(url, timeout=HANG_S) as r:
            self.assertEqual(r.status, 200)
            return r.read()

    @staticmethod
    def rows_of_process_0(m):
        """The rows of forgotten processes, waits' and --blame's."""
        return (m[("syncprof_exited_rows",
                   frozenset({("processes", "forgotten")}))] +
                m[("syncprof_charge_rows_kept", frozenset({("table", "blame")}))] -
                m[("syncprof_charge_rows_own", frozenset({("table", "blame")}))])

    @staticmethod
    def waits_of(m, process):
        return of_process(m, "syncprof_lock_waits_total", process,
                          type="mutex")

    def test_rows_of_exited_processes_stay_bounded(self):
        # A name of its own: the host's other programs (and other
        # forkbursts) are followed too.
        name = f"xb{os.getpid() % 100000}"
        binary = self.path(name)
        shutil.copy(FORKBURST, binary)
        # Series enough for every label set: none summed under "other".
        prof, base = self.start_serve("--all", "--max-series", "100000")
        truth, warm_kb, warm_rows = 0, None, None
        started = time.monotonic()
        for burst in range(WARM_BURSTS + BURSTS):
            run = subprocess.run([binary, "--procs", str(PROCS), "--iters",
                                  str(ITERS)], capture_output=True,
                                 text=True, timeout=HANG_S)
            self.assertEqual(run.returncode, 0, run.stderr)
            counted = json.loads(run.stdout.splitlines()[-1])
            self.assertEqual(counted["procs"], PROCS)
            truth += counted["waits"]
            if burst % SCRAPE_EVERY == 0:
                self.get(base + "/metrics")
            if burst % PROFILE_EVERY == 0:
                self.get(base + "/debug/pprof/mutex")
                self.get(base + "/debug/pprof/block")
            if burst + 1 == WARM_BURSTS:
                warm_rows = self.rows_of_process_0(
                    parse_metrics(self.get(base + "/metrics").decode()))
                warm_kb = vm_rss_kb(prof.pid)
        # A scrape answers from a read up to a second old on a busy loop:
        # until the last burst's waits are in (SETTLE_S at most).
        deadline = time.monotonic() + SETTLE_S
        while True:
            body = self.get(base + "/metrics")
            m = parse_metrics(body.decode())
            if (self.waits_of(m, name) + self.waits_of(m, "?") >= truth
                    or time.monotonic() > deadline):
                break
            time.sleep(0.2)
        end_kb = vm_rss_kb(prof.pid)
        took = time.monotonic() - started
        if PROMTOOL:
            check = subprocess.run([PROMTOOL, "check", "metrics"], input=body,
                                   capture_output=True, timeout=60)
            self.assertEqual(check.returncode, 0, check.stdout + check.stderr)

        def one(metric, **labels):
            return m[(metric, frozenset(labels.items()))]

        by_type = {}
        for (n, labels), v in m.items():
            d = dict(labels)
            if n == "syncprof_lock_waits_total" and d.get("process") in (name, "?"):
                key = (d["process"], d["type"], d.get("object"))
                by_type[key] = by_type.get(key, 0) + v
        said = (f"{(WARM_BURSTS + BURSTS) * PROCS} children in {took:.0f} s;"
                f" VmRSS {warm_kb} -> {end_kb} kB; " + ", ".join(
                    f"{n}{dict(l)}={v:g}" for (n, l), v in sorted(m.items())
                    if "rows" in n))
        # --blame's rows under their own keys: those of the processes
        # still named, within their bound, the older ones folded.
        own = one("syncprof_charge_rows_own", table="blame")
        self.assertLessEqual(own, one("syncprof_charge_rows_own_max",
                                      table="blame"), said)
        # A child leaves about one (its holder's releases): those of the
        # named exited processes (NAMED_MAX) at most twice that.  Before,
        # they stayed until 16,384: 3,403 after these 2,880 children.
        self.assertLessEqual(own, 2 * NAMED_MAX, said)
        self.assertGreater(one("syncprof_charge_rows_folded_total",
                               table="blame"), 0, said)
        self.assertLessEqual(one("syncprof_charge_rows_kept", table="blame")
                             - own, FORGOTTEN_MAX + TYPES, said)
        self.assertLessEqual(one("syncprof_exited_rows",
                                 processes="forgotten"),
                             FORGOTTEN_MAX + TYPES, said)
        # Nothing lost: every acquisition blocked at least once, as the
        # children count them (a woken waiter that finds the word changed
        # waits again: counted twice, a few percent).  A child whose rows
        # were read before syncprof knew its name (it ended first, under
        # load) counts under process "?" (1-2% of the waits here), with
        # the host's forgotten processes.  Folding a child's rows twice
        # would count its waits twice (near 2x).
        waits, unnamed = self.waits_of(m, name), self.waits_of(m, "?")
        self.assertGreaterEqual(waits + unnamed, truth, (said, by_type))
        self.assertLess(waits, truth * 1.5, (said, by_type))
        if not sanitized(SYNCPROF):
            rows = self.rows_of_process_0(m) - warm_rows
            self.assertLessEqual(end_kb - warm_kb, NOISE_KB + ROW_KB * rows,
                                 (said, f"{rows:g} rows of process 0 more"))
        self.stop_serve(prof)

