"""Several processes: --children follows a parent and the two children it
forks after syncprof attached (tests/targets/procs: a process-shared
mutex in shared memory, each child's waits measured by the child
itself), in attach and launch mode, in both modes; a child that execs
another program; children read at their first wait, not at fork;
several --pid; merged rows against per-process rows;
the notice when the work is in children syncprof does not follow."""
import json
import os
import re
import signal
import subprocess
import time

import test_serve
from harness import BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase
from test_serve import of_process

PROCS = os.path.join(BUILD, "tests", "targets", "procs")
BLOCKING = os.path.join(BUILD, "tests", "targets", "blocking")
TOLERANCE = 0.03
ITERS = 15
HOLD_US = "3000"


def marker_line(source, name):
    with open(os.path.join(ROOT, "tests", "targets", source)) as f:
        for number, text in enumerate(f, 1):
            if re.search(rf"CALLSITE:{name}\b", text):
                return number
    raise AssertionError(f"no CALLSITE:{name} in {source}")



def runs_done(test, prof, done, truth, runs):
    """Waits for the runs' script to touch done (syncprof still serving),
    then their truth: one JSON line per run, runs of them."""
    deadline = time.monotonic() + 20 * HANG_S
    while not os.path.exists(done):
        test.assertIsNone(prof.poll(), prof.stderr_log.text[-2000:])
        test.assertLess(time.monotonic(), deadline, "the runs did not end")
        time.sleep(0.2)
    with open(truth) as f:
        bursts = [json.loads(line) for line in f if line.strip()]
    test.assertEqual(len(bursts), runs)
    return bursts

class Processes(SyncprofTestCase):

    def procs_cmd(self, *args):
        return [PROCS, "--iters", str(ITERS), "--hold-us", HOLD_US,
                "--truth", self.tmp.name, *args]

    def read(self, name):
        with open(self.path(name)) as f:
            return json.load(f)

    def children_truth(self):
        return [self.read(f"child-{c}.json") for c in range(2)]

    def the_report(self, run):
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        self.assertEqual(report["dropped"], 0)
        return report

    def attach_children(self, mode, *args):
        target = self.start_waiting_target(self.procs_cmd("--wait-signal"))
        run = self.profile_to_the_end(target, "--children", "--mode", mode,
                                      "--top", "0", *args)
        return self.the_report(run), target.pid

    def launch_children(self, mode, *args, command=None):
        run = self.launch(["--children", "--mode", mode, "--top", "0", *args],
                          command or self.procs_cmd())
        return self.the_report(run)

    def check_per_child(self, report, mode):
        parent = self.read("parent.json")
        line = marker_line("procs.c", "procs_child")
        pids = {p["pid"] for p in report["processes"]}
        self.assertLessEqual({parent["pid"], *parent["children"]}, pids)
        rows = [r for r in report["rows"] if r["object"] == parent["object"]
                and r["callsite"]["line"] == line]
        symbols = {r["object_symbol"] for r in rows}
        # One name for the shared lock, from every process: its mapping.
        self.assertEqual(len(symbols), 1, rows)
        self.assertRegex(symbols.pop(), r"\+0x0$")
        for truth in self.children_truth():
            mine = [r for r in rows if r["pid"] == truth["pid"]]
            self.assertEqual(len(mine), 1, f"{truth}: {report['rows']}")
            row = mine[0]
            self.assertEqual(row["type"], "mutex")
            self.assertEqual(row["count"], truth["count"])
            self.assertEqual(row["count"], ITERS)
            self.assertWithin(row["wait_ns"], truth["wait_ns"], TOLERANCE)
            self.assertEqual(row["callsite"]["function"], "child_wait")
            self.assertTrue(row["callsite"]["module"].endswith("/procs"))
        # Full mode's probes reach every process: it says so.
        self.assertEqual(any("every process of this machine" in n
                             for n in report["notices"]), mode == "full")
        if mode == "full":
            # Every acquisition: the parent took the lock 2 x ITERS times.
            held = [r for r in report["rows"]
                    if r["callsite"]["line"] == marker_line("procs.c",
                                                            "procs_parent")]
            self.assertEqual([r["pid"] for r in held], [parent["pid"]])
            self.assertEqual(held[0]["count"], 2 * ITERS)
        else:
            # The parent holds; it never blocks.
            self.assertFalse([r for r in report["rows"]
                              if r["pid"] == parent["pid"]], report["rows"])

    # --- children forked after attach -------------------------------------

    def test_attach_children_contended(self):
        report, _ = self.attach_children("contended", "--per-process")
        self.check_per_child(report, "contended")

    def test_attach_children_full(self):
        report, _ = self.attach_children("full", "--per-process")
        self.check_per_child(report, "full")

    def test_launch_children_contended(self):
        report = self.launch_children("contended", "--per-process")
        self.check_per_child(report, "contended")

    def test_launch_children_full(self):
        report = self.launch_children("full", "--per-process")
        self.check_per_child(report, "full")

    def test_merged_row_is_the_sum_of_the_children(self):
        report = self.launch_children("contended")
        parent = self.read("parent.json")
        truths = self.children_truth()
        rows = [r for r in report["rows"] if r["object"] == parent["object"]]
        self.assertEqual(len(rows), 1, report["rows"])
        row = rows[0]
        self.assertIsNone(row["pid"])
        self.assertEqual(row["count"], sum(t["count"] for t in truths))
        self.assertWithin(row["wait_ns"], sum(t["wait_ns"] for t in truths),
                          TOLERANCE)

    # --- read at the first wait ---------------------------------------

    def test_children_read_at_first_wait(self):
        """A forked process is read (its maps, unwind tables, names) at
        its first wait, not at its fork: the shell's sleep children never
        wait and are never read; the procs children wait and are read,
        their rows named and counted as the children measured them."""
        script = (f"for i in 1 2 3 4; do sleep 0.05; done; "
                  f"exec {' '.join(self.procs_cmd())}")
        run = self.launch(["-v", "--children", "--mode", "contended",
                           "--top", "0", "--per-process"],
                          ["sh", "-c", script])
        report = self.the_report(run)
        forked = {int(m) for m in re.findall(r"following PID (\d+) \(forked\)",
                                             run.stderr)}
        read = {int(m) for m in re.findall(r"PID (\d+): first wait, read now",
                                           run.stderr)}
        children = {t["pid"] for t in self.children_truth()}
        # 4 sleeps and the 2 procs children were forked and followed.
        self.assertGreaterEqual(len(forked), 6, run.stderr)
        self.assertLessEqual(children, forked)
        # Only the children that waited were read.
        self.assertEqual(read, children, run.stderr)
        self.check_per_child(report, "contended")

    # --- exec ----------------------------------------------------------

    def test_child_that_execs_is_followed(self):
        self.check_exec_child()

    def test_child_made_by_posix_spawn_is_followed(self):
        # clone(CLONE_VM | CLONE_VFORK) and exec: a vfork.
        self.check_exec_child("--spawn")

    def check_exec_child(self, *how):
        truth_file = self.path("blocking.json")
        report = self.launch_children(
            "contended", "--per-process",
            command=self.procs_cmd(*how, "--exec", BLOCKING, "mutex",
                                   "--iters", "40", "--hold-us", HOLD_US,
                                   "--truth", truth_file))
        truth = self.read("blocking.json")
        parent = self.read("parent.json")
        self.assertEqual(parent["exec_child"], truth["pid"])
        named = [p["comm"] for p in report["processes"]
                 if p["pid"] == truth["pid"]]
        self.assertEqual(named, ["blocking"])
        rows = [r for r in report["rows"] if r["pid"] == truth["pid"]
                and r["object"] == truth["object"]]
        # Every wait counted; those after its tables were read are named
        # at the new program's own line.
        self.assertEqual(sum(r["count"] for r in rows), truth["count"])
        self.assertWithin(sum(r["wait_ns"] for r in rows), truth["wait_ns"],
                          TOLERANCE)
        line = marker_line("blocking.c", "blocking_mutex")
        at_line = [r for r in rows if r["callsite"]["line"] == line]
        self.assertEqual(len(at_line), 1, rows)
        self.assertTrue(at_line[0]["callsite"]["module"].endswith("/blocking"))
        self.assertEqual(at_line[0]["object_symbol"], "big_lock")
        self.assertGreater(at_line[0]["count"], truth["count"] // 2, rows)

    # --- several --pid ---------------------------------------------------

    def start_blocking(self, n):
        truth = self.path(f"blocking-{n}.json")
        target = self.start_waiting_target(
            [BLOCKING, "mutex", "--iters", str(ITERS), "--hold-us", HOLD_US,
             "--truth", truth, "--wait-signal"])
        return target, truth

    def several_pids(self, pid_args, per_process=True):
        (a, truth_a), (b, truth_b) = self.start_blocking(0), self.start_blocking(1)
        prof = self.start_syncprof([*pid_args(a.pid, b.pid), "--mode", "contended",
                                    "--top", "0",
                                    *(["--per-process"] if per_process else [])])
        self.go(a)
        self.go(b)
        self.assertEqual(a.wait(timeout=HANG_S), 0)
        self.assertEqual(b.wait(timeout=HANG_S), 0)
        run = self.finish_syncprof(prof)
        truths = []
        for path in (truth_a, truth_b):
            with open(path) as f:
                truths.append(json.load(f))
        return self.the_report(run), truths

    def test_several_pids_a_list(self):
        report, truths = self.several_pids(
            lambda a, b: ["--pid", f"{a},{b}"])
        line = marker_line("blocking.c", "blocking_mutex")
        for truth in truths:
            rows = [r for r in report["rows"] if r["pid"] == truth["pid"]
                    and r["callsite"]["line"] == line]
            self.assertEqual(len(rows), 1, report["rows"])
            self.assertEqual(rows[0]["count"], truth["count"])
            self.assertEqual(rows[0]["object_symbol"], "big_lock")
            self.assertWithin(rows[0]["wait_ns"], truth["wait_ns"], TOLERANCE)

    def test_several_pids_merge_by_module_and_offset(self):
        # Two runs of one program: other addresses (ASLR), one call site.
        report, truths = self.several_pids(
            lambda a, b: ["--pid", str(a), "-p", str(b)], per_process=False)
        self.assertNotEqual(truths[0]["object"], truths[1]["object"])
        line = marker_line("blocking.c", "blocking_mutex")
        rows = [r for r in report["rows"] if r["callsite"]["line"] == line]
        self.assertEqual(len(rows), 1, report["rows"])
        self.assertIsNone(rows[0]["pid"])
        self.assertEqual(rows[0]["object_symbol"], "big_lock")
        self.assertEqual(rows[0]["objects"], 1)
        self.assertEqual(rows[0]["count"], sum(t["count"] for t in truths))
        self.assertWithin(rows[0]["wait_ns"],
                          sum(t["wait_ns"] for t in truths), TOLERANCE)

    # --- the notice ------------------------------------------------------

    def test_notice_when_the_work_is_in_children(self):
        # Long enough (~2 s) for a look at the target while it runs.
        target = self.start_waiting_target(
            [PROCS, "--iters", "300", "--hold-us", HOLD_US, "--truth",
             self.tmp.name, "--wait-signal"])
        prof = self.start_syncprof(["--pid", str(target.pid), "--mode",
                                    "contended"])
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        run = self.finish_syncprof(prof)
        report = self.the_report(run)
        self.assertEqual(report["rows"], [])
        self.assertEqual(len(report["notices"]), 1)
        self.assertIn("--children", report["notices"][0])
        self.assertEqual(run.stderr.count("--children follows them"), 1,
                         run.stderr)


FORKBURST = os.path.join(BUILD, "tests", "targets", "forkburst")


class ExitedProcessesLeaveTheMap(SyncprofTestCase):
    """The kernel's tables hold what is alive, not every process that
    ever waited: a shell runs tests/targets/forkburst RUNS times in turn
    (each forks PROCS children, whose waiter thread blocks on a mutex
    --iters times, 32 distinct functions deep, counted by the children
    themselves), under --children with tables of MAP_ROWS, fewer than
    the children's rows.  Each exited child's rows leave the row table
    at the read after the kernel tells its exit (folded, still counted),
    so every wait the children made is counted.  Before, the rows of an
    exited process stayed in the table for the whole run: it filled, and
    the later waits were lost (700 of 2,400 counted).  The charges of
    its waits to the holds they waited through (the findings' caused
    table) leave as its rows do; a full charge table loses no wait, and
    is no drop (before, thousands of "drops" with every wait counted).

    With stacks, each run of the program is a new layout (ASLR), so new
    stacks: the kernel's stacks table is drained at each read, so it
    holds the stacks made since the last, and the last children's waits
    keep their stacks as the first ones' do (before, 216 of 240
    children's rows had no frames: the table was full of the first
    runs' stacks)."""

    RUNS = 60
    PROCS = 4
    ITERS = 10
    MAP_ROWS = 64
    DEPTH = 32  # frames kept (--stack-depth): forkburst's waiter is deeper

    def storm(self, args, runs=RUNS, procs=PROCS, map_rows=MAP_ROWS):
        """The storm under syncprof: (the run, its one report, the
        bursts' truth, the children's mutex rows)."""
        truth = self.path("truth.jsonl")
        # Paced: a stalled syncprof only slows the runs down.
        script = (f"i=0; while [ $i -lt {runs} ]; do "
                  f"{FORKBURST} --procs {procs} --iters {self.ITERS} "
                  f">> {truth} || exit 1; sleep 0.1; i=$((i + 1)); done")
        run = self.launch(["--children", "--mode", "contended", "--top", "0",
                           "--map-size", str(map_rows),
                           "--per-process", *args],
                          ["sh", "-c", script])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.reports), 1, run.stderr)
        report = run.reports[0]
        with open(truth) as f:
            bursts = [json.loads(line) for line in f if line.strip()]
        self.assertEqual(len(bursts), runs)
        children = sum(b["procs"] for b in bursts)
        # The premise: more children (a row each at least) than rows.
        self.assertGreater(children, map_rows)
        rows = [r for r in report["rows"] if r["type"] == "mutex"]
        self.assertCounted(run, report, rows,
                           sum(b["waits"] for b in bursts))
        return run, report, bursts, rows

    def assertCounted(self, run, report, rows, waits):
        counted = sum(r["count"] for r in rows)
        # Nothing lost: each acquisition blocked at least once, as the
        # children count them.  A woken waiter that finds the futex word
        # changed waits again (counted twice: 2-7% over beside busy
        # loops), so the upper bound is what folding each exited child's
        # rows twice would break: nearly all waits are theirs, and
        # counted twice they would be near 2x.
        self.assertGreaterEqual(counted, waits, run.stderr[-2000:])
        self.assertLess(counted, waits * 1.5, run.stderr[-2000:])
        # No wait lost, so no drop: a full charge table is said apart.
        self.assertEqual(report["dropped"], 0, report["dropped_causes"])
        self.assertEqual(report["dropped_causes"]["map_full"], 0)
        self.assertEqual(set(report["charges_lost"]), {"blame", "caused"})

    def test_rows_of_exited_children_fold(self):
        self.storm(["--stack-depth", "0"])

    def test_charges_of_exited_children_leave_the_charge_tables(self):
        # A table that a second of the storm does not fill (at 64 it
        # does: some charges are lost between two reads), but that the
        # charges of the whole run overflow: the rows of --blame's table
        # and of the findings' caused table leave with their process's
        # (kept in syncprof for every later read), and none is lost.
        run, report, bursts, rows = self.storm(
            ["--stack-depth", "0", "--blame"], runs=150, map_rows=512)
        lost = report["charges_lost"]
        self.assertEqual(lost["blame"], 0, run.stderr[-2000:])
        self.assertEqual(lost["caused"], 0)
        # The premise: more distinct charge rows over the run (each
        # child's releases: --per-process keeps the releaser's process)
        # than the table holds.
        blame = [b for b in report["blame"] if b["type"] == "mutex"]
        children = {b["pid"] for b in blame}
        self.assertEqual(report["blame_total"], len(report["blame"]))
        self.assertGreater(len(blame), 512)
        self.assertGreater(len(children), 512)
        # Every wait the children counted is charged to a release, once:
        # the charges are the waits' own (each ended wait charged to the
        # release that ended it), so they sum to the rows' counts and
        # waits, kept or not.
        charged = sum(b["count"] for b in blame)
        self.assertGreaterEqual(charged, sum(b["waits"] for b in bursts))
        self.assertEqual(charged, sum(r["count"] for r in rows))
        self.assertEqual(sum(b["wait_ns"] for b in blame),
                         sum(r["wait_ns"] for r in rows))

    def test_stacks_of_exited_children_leave_the_stacks_table(self):
        # One child a run: the rows a second of the storm makes stay
        # below MAP_ROWS (the row table is the other half of the test),
        # the stacks made over the whole run do not.
        run, report, bursts, rows = self.storm(
            ["--stacks", "--stack-depth", str(self.DEPTH), "-v"],
            runs=2 * self.RUNS, procs=1)
        # Every child's waits have their stack, the last runs' as the
        # first's.  A walk that began before the tables of a child's new
        # image were read stays cut (1 frame, said at -v as "just after
        # an exec"); the others have DEPTH frames (the waiter is deeper).
        children = sum(b["procs"] for b in bursts)
        self.assertEqual(len({r["pid"] for r in rows}), children)
        whole = 0
        for r in rows:
            framed = [st for st in r["stacks"] if st["frames"]]
            self.assertTrue(framed, f"pid {r['pid']}: no frames\n"
                            + run.stderr[-2000:])
            whole += any(len(st["frames"]) == self.DEPTH for st in framed)
        # A table that stayed full would have left most none.
        self.assertGreater(whole, len(rows) // 2)
        # The premise: the kernel made more distinct stacks over the run
        # (each exec'd run has its own addresses, so its own stack IDs)
        # than its table holds; -v says how many the loader resolved.
        kept = re.search(r"stacks: (\d+) kept", run.stderr)
        self.assertIsNotNone(kept, run.stderr[-2000:])
        self.assertGreater(int(kept.group(1)), 1.5 * self.MAP_ROWS)


class ExitedChargesServed(SyncprofTestCase):
    """--blame under --serve (the releasers' profile, /debug/pprof/mutex),
    beside a storm of short programs: tests/targets/forkburst run RUNS
    times under --children, each child's waits charged to its own
    releases (a row of --blame's table per child at least), with a table
    of MAP_ROWS rows.  The rows of exited children leave the table and
    are kept by syncprof (syncprof_charge_rows_kept{table="blame"}), so
    no charge is lost, and the profile go tool pprof fetches charges
    every wait the children made, as /metrics counts them.  Before, the
    rows stayed in the table for the whole run: it filled, and the later
    charges were lost (syncprof_charges_lost_total{table="blame"})."""

    RUNS = 60
    PROCS = 4
    ITERS = 10
    MAP_ROWS = 128

    start_serve = test_serve.Serve.start_serve
    stop_serve = test_serve.Serve.stop_serve
    scrape = test_serve.Serve.scrape
    get = test_serve.Serve.get
    profile = test_serve.Serve.profile

    def test_mutex_profile_keeps_the_charges_of_exited_children(self):
        self.assertTrue(test_serve.GO,
                        "no go tool pprof: 'make deps' installs golang-go")
        truth, done, go_on = (self.path("truth.jsonl"), self.path("done"),
                              self.path("go_on"))
        os.mkfifo(go_on)
        script = (f"i=0; while [ $i -lt {self.RUNS} ]; do "
                  f"{FORKBURST} --procs {self.PROCS} --iters {self.ITERS} "
                  f">> {truth} || exit 1; sleep 0.1; i=$((i + 1)); done; "
                  f": > {done}; read x < {go_on}")
        proc, base = self.start_serve(
            "--children", "--mode", "contended", "--blame", "--per-process",
            "--stack-depth", "0", "--map-size", str(self.MAP_ROWS),
            "--", "sh", "-c", script)
        bursts = runs_done(self, proc, done, truth, self.RUNS)
        waits = sum(b["waits"] for b in bursts)
        children = sum(b["procs"] for b in bursts)
        # Until every exit is read and folded (a read a second).
        deadline = time.monotonic() + HANG_S
        while True:
            samples = self.scrape(base)
            counted = of_process(samples, "syncprof_lock_waits_total",
                                 "forkburst", type="mutex")
            if counted >= waits or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        profile = self.profile(base + "/debug/pprof/mutex")
        after = self.scrape(base)
        with open(go_on, "w") as f:
            f.write("go\n")
        self.stop_serve(proc)
        table = frozenset({("table", "blame")})
        self.assertEqual(samples[("syncprof_charges_lost_total", table)], 0)
        self.assertEqual(after[("syncprof_charges_lost_total", table)], 0)
        # The premise: more rows of exited children than the table holds
        # (a child's rows at least), kept out of it; none merged by the
        # bound on them (blamekeep.c: 16,384), this far under it.
        kept = samples[("syncprof_charge_rows_kept", table)]
        self.assertGreater(children, self.MAP_ROWS)
        self.assertGreaterEqual(kept, children)
        self.assertEqual(samples[("syncprof_charge_rows_merged_total",
                                  table)], 0)
        # Every wait counted (a woken waiter that finds the lock taken
        # again waits again: a little over), and charged once.
        self.assertGreaterEqual(counted, waits)
        self.assertLess(counted, waits * 1.5)
        ours = [s for s in profile.samples
                if s["labels"].get("process") == "forkburst"
                and s["labels"].get("type") == "mutex"]
        self.assertEqual(sum(s["count"] for s in ours),
                         of_process(after, "syncprof_lock_waits_total",
                                    "forkburst", type="mutex"))


# procset.c names the newest EXITED_KEEP exited processes (dropping the
# oldest once a quarter more have exited); the rows of the others go to
# process 0.
NAMED_EXITED = 1024 + 1024 // 4


class ExitedRunsFoldByProgram(SyncprofTestCase):
    """The rows of forgotten processes are bounded by what their programs
    do, not by how many ran: a shell runs tests/targets/forkburst RUNS
    times (a new exec each: its own addresses, ASLR, so its own stack ids
    in the kernel), each forking PROCS children whose waiter blocks on a
    static mutex --iters times (counted by the children themselves),
    under --children --serve.  More processes end than syncprof names, so
    the rows of the oldest go to process 0, merged by program, call site
    and canonical stack: the final report's process-0 rows of forkburst
    hold the waits of several runs under a few stacks, where each run
    kept a stack id of its own before; /metrics says how many rows
    process 0 holds (syncprof_exited_rows{processes="forgotten"}).
    Every wait is still counted.  The
    children hold the lock long enough to be seen alive: a process that
    ends before syncprof reads its maps cannot be named."""

    RUNS = 24
    PROCS = 64
    ITERS = 2
    HOLD_US = 700000
    # Stacks of one program's exited waiters: the lock's, cut and
    # finished late, and a join at most.
    SITES = 8

    scrape = test_serve.Serve.scrape
    get = test_serve.Serve.get

    def test_runs_of_one_program_leave_few_rows(self):
        truth, done, go_on = (self.path("truth.jsonl"), self.path("done"),
                              self.path("go_on"))
        os.mkfifo(go_on)
        report_path = self.path("report.json")
        # No process after the runs: the rows then stay as scraped.
        script = (f"i=0; while [ $i -lt {self.RUNS} ]; do "
                  f"{FORKBURST} --procs {self.PROCS} --iters {self.ITERS} "
                  f"--hold-us {self.HOLD_US} >> {truth} || exit 1; "
                  f"i=$((i + 1)); done; : > {done}; read x < {go_on}")
        prof = subprocess.Popen(
            [SYNCPROF, "-v", "--serve", "127.0.0.1:0", "-o", report_path,
             "--format", "json", "--per-process", "--top", "0",
             "--children", "--mode", "contended", "--", "sh", "-c", script],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(prof)
        text = self.read_stderr_until(prof, "serving on",
                                      "syncprof did not serve", timeout=120)
        m = test_serve.SERVING.search(text)
        self.assertTrue(m, text)
        text = self.read_stderr_until(prof, "profiling PID",
                                      "syncprof did not attach", timeout=120)
        shell = re.search(r"profiling PID (\d+)", text).group(1)
        prof.stderr_log = test_serve.StderrLog(
            prof, getattr(prof, "unread_stderr", ""))
        base = f"http://{m.group(1)}:{m.group(2)}"
        bursts = runs_done(self, prof, done, truth, self.RUNS)
        waits = sum(b["waits"] for b in bursts)
        # The premise: more processes ended than syncprof names.
        self.assertGreater(self.RUNS * (self.PROCS + 1), NAMED_EXITED + 100)
        # Until every exit is read and folded (a read a second).
        deadline = time.monotonic() + HANG_S
        while True:
            samples = self.scrape(base)
            counted = of_process(samples, "syncprof_lock_waits_total",
                                 "forkburst")
            if counted >= waits or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        forgotten = samples[("syncprof_exited_rows",
                             frozenset({("processes", "forgotten")}))]
        merged = samples[("syncprof_exited_rows_merged_total", frozenset())]
        with open(go_on, "w") as f:
            f.write("go\n")
        # --serve serves on after its command: stopped as a unit is,
        # once the shell is gone (else the signal is the shell's too).
        self.assertTrue(prof.stderr_log.wait_for(f"PID {shell} exited\n",
                                                 HANG_S),
                        prof.stderr_log.text[-2000:])
        prof.send_signal(signal.SIGTERM)
        status = prof.wait(timeout=HANG_S)
        self.assertEqual(status, 0, prof.stderr_log.finish(60)[-2000:])
        rows = self._read_reports(report_path)[-1]["rows"]
        counted = sum(r["count"] for r in rows if r["type"] == "mutex")
        # Nothing lost (a waiter woken to a taken lock waits again: a
        # little over; counted twice it would be near 2x).
        self.assertGreaterEqual(counted, waits)
        self.assertLess(counted, waits * 1.5)
        gone = [r for r in rows if r["pid"] is None]
        named = [r for r in gone if r["callsite"]["module"] and
                 r["type"] == "mutex"]
        named_stacks = sum(len(r["stacks"]) for r in named)
        # Several runs' waits in the named rows of process 0, under a
        # few stacks: the runs merged.
        self.assertGreater(sum(r["count"] for r in named),
                           2 * self.PROCS * self.ITERS, gone)
        self.assertLessEqual(named_stacks, self.SITES, named)
        # The rows /metrics says process 0 holds, none merged by the
        # bound on them (fold.c: 4,096), this far under it.
        self.assertGreater(forgotten, 0)
        self.assertEqual(merged, 0)
