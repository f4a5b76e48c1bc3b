"""Contended mode against tests/targets/blocking, where every measured
acquisition blocks in the kernel exactly once: exact counts, waits within
2% of the target's own clock, one type per kind of lock, and the same
call sites as full mode."""
import os
import unittest
import re

from harness import BUILD, ROOT, SyncprofTestCase

BLOCKING = os.path.join(BUILD, "tests", "targets", "blocking")
SOURCE = os.path.join(ROOT, "tests", "targets", "blocking.c")
TOLERANCE = 0.02
ITERS = 30


def marker_line(name):
    with open(SOURCE) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"CALLSITE:{name}\b", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {SOURCE}")


class ContendedMode(SyncprofTestCase):

    def blocking_cmd(self, scenario, *args):
        return [BLOCKING, scenario, "--truth", self.path("truth.json"),
                "--iters", str(ITERS), "--hold-us", "3000", *args]

    def run_scenario(self, scenario, *syncprof_args, mode="contended"):
        run = self.launch(["--mode", mode, "--top", "0", "--no-coalesce",
                           *syncprof_args], self.blocking_cmd(scenario))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1)
        report = run.reports[0]
        self.assertEqual(report["mode"], mode)
        self.assertEqual(report["dropped"], 0)
        return report, self.truth()

    def the_row(self, report, obj, kind):
        rows = self.rows_for(report, obj, kind)
        self.assertEqual(len(rows), 1, f"{kind} rows for {obj}: {report['rows']}")
        return rows[0]

    def check_waiter_row(self, scenario, kind, marker):
        report, truth = self.run_scenario(scenario)
        self.assertEqual(report["unwind_stopped"], 0)
        row = self.the_row(report, truth["object"], kind)
        self.assertEqual(row["count"], truth["count"])
        self.assertEqual(row["count"], ITERS)
        self.assertEqual(row["failed"], 0)
        self.assertWithin(row["wait_ns"], truth["wait_ns"], TOLERANCE)
        self.assertLessEqual(row["max_ns"], row["wait_ns"])
        self.assertTrue(row["callsite"]["module"].endswith("/blocking"))
        self.assertEqual(row["callsite"]["line"], marker_line(marker))
        return row

    def full_mode_offset(self, scenario, obj_field, marker):
        report, truth = self.run_scenario(scenario, mode="full")
        rows = [r for r in self.rows_for(report, truth[obj_field])
                if r["callsite"]["line"] == marker_line(marker)]
        self.assertEqual(len(rows), 1, report["rows"])
        return rows[0]["callsite"]["offset"]

    # --- one test per kind of lock ----------------------------------------

    def test_mutex_exact_and_same_call_site_as_full_mode(self):
        row = self.check_waiter_row("mutex", "mutex", "blocking_mutex")
        self.assertEqual(row["object_symbol"], "big_lock")
        self.assertEqual(row["callsite"]["function"], "wait_mutex")
        self.assertEqual(row["callsite"]["offset"],
                         self.full_mode_offset("mutex", "object", "blocking_mutex"))

    def test_recursive_mutex_is_rec_mutex(self):
        row = self.check_waiter_row("recursive", "rec_mutex", "blocking_mutex")
        self.assertEqual(row["object_symbol"], "rec_lock")

    def test_condvar_wait_and_mutex_reacquire_are_two_rows(self):
        report, truth = self.run_scenario("condvar")
        wait = self.the_row(report, truth["object"], "condvar")
        # The signaller's own lock may block once too (at its call site).
        relocks = [r for r in self.rows_for(report, truth["cond_mutex"], "mutex")
                   if r["callsite"]["line"] == marker_line("blocking_cond")]
        self.assertEqual(len(relocks), 1, report["rows"])
        relock = relocks[0]
        self.assertEqual(wait["count"], ITERS)
        self.assertEqual(relock["count"], ITERS)
        self.assertEqual(wait["object_symbol"], "cond")
        self.assertEqual(relock["object_symbol"], "cond_lock")
        # Both blocked inside the same pthread_cond_wait call.
        self.assertEqual(wait["callsite"]["address"], relock["callsite"]["address"])
        self.assertEqual(wait["callsite"]["line"], marker_line("blocking_cond"))
        # The target's clock spans the whole call: both waits.
        self.assertWithin(wait["wait_ns"] + relock["wait_ns"], truth["wait_ns"],
                          TOLERANCE)
        self.assertEqual(wait["callsite"]["offset"],
                         self.full_mode_offset("condvar", "object", "blocking_cond"))

    def test_rwlock_reader(self):
        self.check_waiter_row("rwlock-r", "rwlock-r", "blocking_rdlock")

    def test_rwlock_writer(self):
        self.check_waiter_row("rwlock-w", "rwlock-w", "blocking_wrlock")

    def test_semaphore(self):
        row = self.check_waiter_row("sem", "sem", "blocking_sem")
        self.assertEqual(row["object_symbol"], "sem")

    def test_raw_futex(self):
        row = self.check_waiter_row("futex", "futex", "blocking_futex")
        self.assertEqual(row["object_symbol"], "futex_word")

    @unittest.skipUnless(os.path.exists(
        "/sys/kernel/tracing/events/syscalls/sys_enter_futex_wait"),
        "futex2's futex_wait needs Linux 6.7")
    def test_futex2_wait(self):
        """futex2's futex_wait: its exit shares futex(2)'s program."""
        row = self.check_waiter_row("futex2", "futex", "blocking_futex2")
        self.assertEqual(row["object_symbol"], "futex_word")

    def test_stdio_lock_is_libc_lock(self):
        row = self.check_waiter_row("stdio", "libc-lock", "blocking_stdio")
        self.assertEqual(row["callsite"]["function"], "wait_stdio")

    def test_per_thread_rows_name_the_holder(self):
        report, truth = self.run_scenario("mutex", "--per-thread")
        rows = self.rows_for(report, truth["object"], "mutex")
        self.assertEqual(len(rows), 1, rows)
        self.assertEqual(rows[0]["tid"], truth["waiter_tid"])
        self.assertEqual(rows[0]["owner_tid"], truth["holder_tid"])
        self.assertEqual(rows[0]["count"], ITERS)

    def test_json_keys_are_the_same_in_every_mode(self):
        """One shape whatever the mode and options: every key of the report,
        its rows, their call sites and stacks is there; what an option adds
        is null without it."""
        def keys(report):
            row = report["rows"][0]
            return (tuple(report), tuple(row), tuple(row["callsite"]),
                    tuple(row["stacks"][0]), tuple(row["stacks"][0]["frames"][0]))

        shapes = {}
        for mode, extra in (("contended", ()), ("full", ()),
                            ("contended", ("--per-thread", "--blame")),
                            ("full", ("--hold", "--states"))):
            with self.subTest(mode=mode, extra=extra):
                report, _ = self.run_scenario("mutex", *extra, mode=mode)
                self.assertEqual(report["schema"], 1)
                self.assertTrue(report["rows"])
                shapes[(mode, extra)] = keys(report)
                if not extra:
                    for key in ("threads", "sched_missed", "blame",
                                "blame_total"):
                        self.assertIsNone(report[key], key)
                    for row in report["rows"]:
                        self.assertIsNone(row["owner_tid"])
                        self.assertIsNone(row["hold_ns"])
                        self.assertIsNone(row["tid"])
                elif "--hold" in extra:
                    self.assertIsInstance(report["threads"], list)
                    self.assertIsInstance(report["rows"][0]["hold_ns"], int)
                else:
                    self.assertIsInstance(report["blame"], list)
                    self.assertIsInstance(report["rows"][0]["tid"], int)
        first = next(iter(shapes.values()))
        for what, shape in shapes.items():
            self.assertEqual(shape, first, what)

    def test_uncontended_locks_make_no_event(self):
        run = self.launch(["--mode", "contended", "--top", "0"],
                          [BLOCKING, "uncontended", "--threads", "2",
                           "--iters", "1000000", "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[-1]
        self.assertEqual(self.truth()["ops"], 2000000)
        self.assertEqual(report["rows"], [])
        self.assertEqual(report["dropped"], 0)

    def test_attach_to_running_process(self):
        target = self.start_waiting_target(self.blocking_cmd("mutex", "--wait-signal"))
        run = self.profile_to_the_end(target, "--mode", "contended", "--top", "0")
        truth = self.truth()
        row = self.the_row(run.reports[-1], truth["object"], "mutex")
        self.assertEqual(row["count"], ITERS)
        self.assertWithin(row["wait_ns"], truth["wait_ns"], TOLERANCE)
