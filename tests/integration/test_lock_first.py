"""Lock versus event: every row has a class, "lock" (waiting for a lock a
thread holds) or "event" (waiting for something to happen: a condvar's
signal, a join...), and every renderer keeps them apart: the table shows
the lock rows first and a line before the event rows, --top keeps the
locks first and says what it left out, --type takes a class, CSV has a
class column, folded lines start with their class and pprof samples carry
it as a label.  The blocking target's condvar scenario gives one row of
each class with exact counts (a wait for the signal, then the mutex taken
back); the demo's idle workers wait far longer on their queue's condvar
than on any lock."""
import csv
import io
import os
import re
import subprocess

from harness import BUILD, HANG_S, SYNCPROF, SyncprofTestCase

BLOCKING = os.path.join(BUILD, "tests", "targets", "blocking")
DEMO = os.path.join(BUILD, "tests", "targets", "demo")
ITERS = 20
EVENTS = "Waiting for events, not for a lock"
LOCK_TYPES = {"mutex", "rec_mutex", "rwlock-r", "rwlock-w", "sem",
              "libc-lock", "futex", "spinlock", "flock"}
# An object may be a heap type's member path, with spaces in it:
# "(struct bucket *)->lock".
ROW = re.compile(r"^(\S+)\s+(\[\s*\d+\]|\S+(?: \S+)*)  +\S+\s+\d+\.\d{5}\s+\d+\s")


class LockFirst(SyncprofTestCase):

    def blocking(self):
        return [BLOCKING, "condvar", "--truth", self.path("truth.json"),
                "--iters", str(ITERS), "--hold-us", "3000"]

    def run_format(self, fmt, args, command):
        """syncprof --format FMT -o FILE ARGS -- COMMAND; the file's text."""
        out = self.path(f"report.{fmt}")
        proc = subprocess.run([SYNCPROF, "--mode", "contended", "--format",
                               fmt, "-o", out, *args, "--", *command],
                              capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            return f.read()

    @staticmethod
    def table_rows(text):
        """The first section's rows: (type, object), and the events
        line's place among them (None: not there)."""
        rows, events = [], None
        lines = text.splitlines()
        start = next(i for i, l in enumerate(lines) if l.startswith("Type "))
        for line in lines[start + 2:]:
            if line.startswith("---"):
                break
            if line.startswith(EVENTS) and line.endswith(":"):
                events = len(rows)
                continue
            m = ROW.match(line)
            if m:
                rows.append((m.group(1), m.group(2)))
        return rows, events

    def test_json_and_csv_rows_have_their_class_locks_first(self):
        run = self.launch(["--mode", "contended", "--top", "0"], self.blocking())
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        rows = run.reports[-1]["rows"]
        for row in rows:
            self.assertEqual(row["class"],
                             "lock" if row["type"] in LOCK_TYPES else "event",
                             row)
        classes = [r["class"] for r in rows]
        self.assertEqual(classes, sorted(classes, key=["lock", "event"].index))
        wait = self.rows_for(run.reports[-1], truth["object"], "condvar")
        relock = self.rows_for(run.reports[-1], truth["cond_mutex"], "mutex")
        self.assertEqual(sum(r["count"] for r in wait), ITERS)
        self.assertTrue(relock, rows)
        self.assertEqual({r["class"] for r in wait}, {"event"})
        self.assertEqual({r["class"] for r in relock}, {"lock"})
        # CSV: the rows in the same order, class in a column of its own
        # (a run of its own: the main thread's joins come and go).
        text = self.run_format("csv", ["--top", "0"], self.blocking())
        lines = list(csv.DictReader(io.StringIO(text)))
        self.assertIn(("condvar", "event"), [(r["type"], r["class"]) for r in lines])
        self.assertIn(("mutex", "lock"), [(r["type"], r["class"]) for r in lines])
        classes = [r["class"] for r in lines]
        self.assertEqual(classes, sorted(classes, key=["lock", "event"].index))
        for line in lines:
            self.assertEqual(line["class"], "lock" if line["type"] in LOCK_TYPES
                             else "event", line)
            self.assertRegex(line["address"], r"^0x[0-9a-f]+$")
            if line["file"] and line["line"]:
                self.assertEqual(line["callsite"], os.path.basename(
                    line["file"]) + ":" + line["line"], line)

    def test_table_shows_the_locks_first_and_says_what_follows(self):
        text = self.run_format("table", ["--top", "0"], self.blocking())
        rows, events = self.table_rows(text)
        kinds = [t in LOCK_TYPES for t, _ in rows]
        self.assertIn(True, kinds, text)
        self.assertIn(False, kinds, text)
        self.assertEqual(kinds, sorted(kinds, reverse=True), text)
        self.assertEqual(events, kinds.index(False), text)
        self.assertIn(("condvar", "cond"), rows)
        self.assertIn(("mutex", "cond_lock"), rows)

    def test_top_keeps_the_worst_lock_first_and_says_what_it_left_out(self):
        """The demo's workers wait on their queue's condvar for most of
        the run: without classes it would be the first row.  --top 2
        keeps two lock rows and says how many event rows are below."""
        text = self.run_format("table", ["--top", "2"], [DEMO, "4", "2"])
        rows, events = self.table_rows(text)
        self.assertEqual(len(rows), 2, text)
        self.assertTrue(all(t in LOCK_TYPES for t, _ in rows), text)
        self.assertIsNone(events, text)
        self.assertRegex(text, rf"(?m)^{EVENTS}: \d+ more rows? \(\d+\.\d+ s\) "
                         r"below --top; --top 0 or --type event shows them$")
        # --type event: the events alone, the line before them.
        text = self.run_format("table", ["--type", "event"], [DEMO, "4", "2"])
        rows, events = self.table_rows(text)
        self.assertIn("condvar", {t for t, _ in rows}, text)
        self.assertFalse({t for t, _ in rows} & LOCK_TYPES, text)
        self.assertEqual(events, 0, text)
        # The largest wait of all is an event: the queue's condvar.
        report = self.launch(["--mode", "contended", "--top", "0"],
                             [DEMO, "4", "2"]).reports[-1]
        largest = max(report["rows"], key=lambda r: r["wait_ns"])
        self.assertEqual(largest["class"], "event", largest)
        self.assertEqual(report["rows"][0]["class"], "lock")

    def test_folded_lines_start_with_their_class(self):
        text = self.run_format("folded", [], self.blocking())
        roots = {}
        for line in text.splitlines():
            elements = line.rsplit(" ", 1)[0].split(";")
            roots.setdefault(elements[0], set()).add(elements[-1])
        self.assertEqual(set(roots), {"[lock]", "[event]"}, text)
        self.assertIn("[condvar cond]", roots["[event]"])
        self.assertIn("[mutex cond_lock]", roots["[lock]"])
        self.assertTrue(all(e.split()[0][1:] in LOCK_TYPES
                            for e in roots["[lock]"]), roots)
