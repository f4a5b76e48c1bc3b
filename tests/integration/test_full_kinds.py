"""Full mode on every pthread lock kind beyond the mutex and the condvar,
against tests/targets/kinds: spinlocks, rwlocks (readers and writers;
plain, try, timed and clock calls), semaphores and barriers.  The target
times each call site's calls itself; each row must have the site's exact
count and failed count, its type, its line, and a wait within 5% of the
target's own clock.  Contended mode on the same target must still type
its rwlock and semaphore waits."""
import os

from harness import BUILD, SyncprofTestCase

KINDS = os.path.join(BUILD, "tests", "targets", "kinds")

# The probes' own time lands in the target's clock: full mode reads a
# little low (see test_full_mode.py).  Sites whose calls wait for the
# holder (~hold_us each) are checked within this; sites whose calls
# return at once are checked to lie inside the target's clock.
TOLERANCE = 0.05
LONG_WAIT_NS = 500_000


class FullModeKinds(SyncprofTestCase):

    def run_kinds(self, scenario, *syncprof_args, mode="full", iters=12,
                  hold_us=3000, threads=3):
        run = self.launch(["--mode", mode, "--top", "0", *syncprof_args],
                          [KINDS, scenario, "--truth", self.path("truth.json"),
                           "--iters", str(iters), "--hold-us", str(hold_us),
                           "--threads", str(threads)])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1)
        report = run.reports[0]
        self.assertEqual(report["mode"], mode)
        self.assertEqual(report["dropped"], 0)
        return report, self.truth()

    def site_row(self, report, site):
        rows = [r for r in report["rows"]
                if r["object"] == site["object"]
                and r["callsite"]["line"] == site["line"]
                and (r["callsite"]["module"] or "").endswith("/kinds")]
        self.assertEqual(len(rows), 1,
                         f"{site['name']} (line {site['line']}): {rows}")
        return rows[0]

    def check_site(self, report, site):
        row = self.site_row(report, site)
        name = site["name"]
        self.assertEqual(row["type"], site["type"], name)
        self.assertEqual(row["count"], site["count"], name)
        self.assertEqual(row["failed"], site["failed"], name)
        self.assertEqual(row["callsite"]["function"], site["function"], name)
        self.assertTrue(row["callsite"]["file"].endswith("kinds.c"), name)
        calls = site["count"] + site["failed"]
        if site["wait_ns"] >= LONG_WAIT_NS * calls:
            self.assertWithin(row["wait_ns"], site["wait_ns"], TOLERANCE, name)
        else:
            self.assertLessEqual(row["wait_ns"], site["wait_ns"], name)
        # A failed call's time is its own: never more than the target's
        # clock.  A trylock that fails at once costs less than the probes'
        # subtracted cost and may read 0; a timeout cannot.
        self.assertLessEqual(row["failed_ns"], site["wait_ns"], name)
        if site["failed"] and site["wait_ns"] >= LONG_WAIT_NS * calls:
            self.assertGreater(row["failed_ns"], 0, name)
        return row

    def check_kind(self, report, truth, kind, names):
        """Every site of the kind, and no other row on its object."""
        sites = {s["name"]: s for s in truth["sites"]}
        self.assertEqual(set(names), {n for n, s in sites.items()
                                      if s["object"] == truth["objects"][kind]})
        rows = [self.check_site(report, sites[n]) for n in names]
        on_object = [r for r in report["rows"]
                     if r["object"] == truth["objects"][kind]]
        self.assertEqual(len(on_object), len(names), on_object)
        return {n: r for n, r in zip(names, rows)}

    def test_spinlock(self):
        report, truth = self.run_kinds("spin")
        rows = self.check_kind(report, truth, "spin", [
            "spin_hold", "spin_try_busy", "spin_wait", "spin_try_free"])
        iters = truth["iters"]
        # The waiter spins through the holder's whole hold.
        self.assertEqual(rows["spin_wait"]["count"], iters)
        self.assertGreater(rows["spin_wait"]["wait_ns"],
                           iters * truth["hold_us"] * 1000 * 0.9)
        # A trylock of a held spinlock returns EBUSY: Failed, no count.
        self.assertEqual(rows["spin_try_busy"]["failed"], iters)
        self.assertEqual(rows["spin_try_busy"]["count"], 0)
        self.assertEqual(rows["spin_try_free"]["count"], iters)
        self.assertEqual(rows["spin_wait"]["object_symbol"], "spin")

    def test_rwlock_readers_and_writers(self):
        report, truth = self.run_kinds("rwlock")
        rows = self.check_kind(report, truth, "rwlock", [
            "rw_hold_w", "rw_hold_r", "rw_tryrd_busy", "rw_rdlock",
            "rw_trywr_busy", "rw_tryrd_shared", "rw_wrlock",
            "rw_timedrd_timeout", "rw_timedwr", "rw_clockrd",
            "rw_clockwr_timeout"])
        iters = truth["iters"]
        # Timeouts: Failed, with their time (~1 ms each), no count.
        for name in ("rw_timedrd_timeout", "rw_clockwr_timeout"):
            self.assertEqual(rows[name]["failed"], iters, name)
            self.assertEqual(rows[name]["count"], 0, name)
            self.assertGreater(rows[name]["failed_ns"], iters * 1_000_000 * 0.9)
        # A reader gets in beside a reader; a writer's trylock does not.
        self.assertEqual(rows["rw_tryrd_shared"]["count"], iters)
        self.assertEqual(rows["rw_trywr_busy"]["failed"], iters)
        self.assertEqual(rows["rw_hold_w"]["count"], 3 * iters)
        self.assertEqual(rows["rw_hold_r"]["count"], 3 * iters)

    def test_semaphore(self):
        report, truth = self.run_kinds("sem")
        rows = self.check_kind(report, truth, "sem", [
            "sem_timed_timeout", "sem_try_posted", "sem_clockwait",
            "sem_try_empty", "sem_wait"])
        iters = truth["iters"]
        # sem_* fail with -1 and errno (EAGAIN, ETIMEDOUT): Failed.
        self.assertEqual(rows["sem_try_empty"]["failed"], iters)
        self.assertEqual(rows["sem_timed_timeout"]["failed"], iters)
        self.assertEqual(rows["sem_try_posted"]["count"], iters)
        self.assertEqual(rows["sem_wait"]["count"], iters)
        self.assertEqual(rows["sem_clockwait"]["count"], iters)

    def test_barrier_counts_every_thread_through_serial_one_too(self):
        report, truth = self.run_kinds("barrier", threads=4)
        rows = self.check_kind(report, truth, "barrier", ["barrier_wait"])
        row = rows["barrier_wait"]
        # One thread per round gets PTHREAD_BARRIER_SERIAL_THREAD (-1):
        # through the barrier like the others, not a failure.
        self.assertEqual(row["count"], 4 * truth["iters"])
        self.assertEqual(row["failed"], 0)
        self.assertEqual(row["type"], "barrier")

    def test_all_kinds_in_one_run_with_stacks_off(self):
        # The call site from the return address alone (no unwinding).
        report, truth = self.run_kinds("all", "--stack-depth", "0", iters=6)
        for site in truth["sites"]:
            self.check_site(report, site)

    def test_all_kinds_probed_at_entry(self):
        # Single-stepped first instructions, but pthread_spin_lock's,
        # which no uprobe can take: it stays inside its loop.
        report, truth = self.run_kinds("all", "--probe-at", "entry", iters=6)
        for site in truth["sites"]:
            self.check_site(report, site)

    def test_hold_times_of_readers_writers_and_spinlocks(self):
        report, truth = self.run_kinds("all", "--hold", iters=8)
        for site in truth["sites"]:
            if not site["holds"]:
                continue
            row = self.site_row(report, site)
            # Reader holds overlap (the waiter reads beside the holder):
            # each ends at its own reader's unlock.
            self.assertEqual(row["holds"], site["holds"], site["name"])
            # From the lock call's return to the unlock's entry: it
            # brackets the target's own reads, so it may read a little
            # more (see test_hold.py).
            error = abs(row["hold_ns"] - site["hold_ns"]) / site["hold_ns"]
            self.assertLessEqual(error, TOLERANCE,
                                 f"{site['name']}: syncprof {row['hold_ns']} "
                                 f"vs target {site['hold_ns']}")
        # A semaphore and a barrier hold nothing.
        for row in report["rows"]:
            if row["type"] in ("sem", "barrier"):
                self.assertEqual(row["holds"], 0, row)

    def test_blame_names_the_unlock_and_the_post(self):
        report, truth = self.run_kinds("all", "--blame", iters=8)
        sites = {s["name"]: s for s in truth["sites"]}
        waited = {
            "spin": ["spin_wait"],
            "rwlock": ["rw_rdlock", "rw_wrlock", "rw_timedwr", "rw_clockrd"],
            "sem": ["sem_clockwait", "sem_wait"],
        }
        for kind, names in waited.items():
            obj = truth["objects"][kind]
            entries = [b for b in report["blame"] if b["object"] == obj]
            self.assertTrue(entries, kind)
            # Only the holder's release made anyone wait.
            self.assertEqual({b["release"]["line"] for b in entries},
                             {truth["releases"][kind]}, entries)
            self.assertEqual({b["release"]["function"] for b in entries},
                             {"holder_release"})
            self.assertEqual(self.total(entries, "count"),
                             sum(sites[n]["count"] for n in names), kind)
            self.assertWithin(self.total(entries, "wait_ns"),
                              sum(sites[n]["wait_ns"] for n in names),
                              TOLERANCE, kind + " blame")
        barrier = [b for b in report["blame"]
                   if b["object"] == truth["objects"]["barrier"]]
        self.assertEqual(barrier, [], "a barrier has no release")


class ContendedModeKinds(SyncprofTestCase):
    """Contended mode types the same rwlock and semaphore waits by the
    libc function they block in, and never sees a spinlock."""

    run_kinds = FullModeKinds.run_kinds
    site_row = FullModeKinds.site_row

    def test_rwlock_and_sem_waits_typed_as_before(self):
        report, truth = self.run_kinds("all", mode="contended", iters=8)
        sites = {s["name"]: s for s in truth["sites"]}
        # Each of these calls blocks once, for the holder's hold.
        for name in ("rw_rdlock", "rw_wrlock", "rw_timedwr", "rw_clockrd",
                     "sem_clockwait", "sem_wait"):
            row = self.site_row(report, sites[name])
            self.assertEqual(row["type"], sites[name]["type"], name)
            self.assertEqual(row["count"], sites[name]["count"], name)
            self.assertWithin(row["wait_ns"], sites[name]["wait_ns"],
                              TOLERANCE, name)
        # Timed out in the kernel: Failed, every call (the target lets
        # go only after the call returned, so no wake races the deadline
        # and no late call finds the lock free, however loaded the
        # machine): each field against its own truth.
        for name in ("rw_timedrd_timeout", "rw_clockwr_timeout",
                     "sem_timed_timeout"):
            row = self.site_row(report, sites[name])
            self.assertEqual(row["type"], sites[name]["type"], name)
            self.assertEqual(sites[name]["count"], 0, name)
            self.assertEqual(row["failed"], sites[name]["failed"], name)
            self.assertEqual(row["count"], 0, name)
        # Trylocks and spinlocks never sleep: nothing to see.
        spin = [r for r in report["rows"]
                if r["object"] == truth["objects"]["spin"]]
        self.assertEqual(spin, [])
        self.assertNotIn("spinlock", {r["type"] for r in report["rows"]})
