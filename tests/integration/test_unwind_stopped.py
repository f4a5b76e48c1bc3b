"""unwind_stopped, in JSON and in -v's summary, counts every wait whose
call site stays inside libc: here the waits a process makes at once
after an exec, before syncprof has read its new image (stacks exec with
--settle-ms 0), which used to be named inside libc and counted nowhere
but in -v's 'walks stopped early'."""
import os
import re

from harness import BUILD, SyncprofTestCase

STACKS = os.path.join(BUILD, "tests", "targets", "stacks")


class UnwindStopped(SyncprofTestCase):

    def test_waits_before_the_new_image_is_read(self):
        run = self.launch(["-v", "--mode", "contended", "--top", "0"],
                          [STACKS, "exec", "--iters", "20", "--hold-us", "3000",
                           "--settle-ms", "0", "--truth", self.path("truth.json")])
        self.assertEqual(run.returncode, 0, run.stderr)
        report = run.reports[-1]
        in_libc = sum(r["count"] for r in report["rows"]
                      if (r["callsite"]["module"] or "").endswith("/libc.so.6"))
        self.assertGreater(in_libc, 0, "no wait came before the tables: "
                           f"{report['rows']}")
        self.assertGreaterEqual(report["unwind_stopped"], in_libc)
        said = re.search(r"call sites left inside libc (\d+) \(unwind_stopped\)",
                         run.stderr)
        self.assertIsNotNone(said, run.stderr)
        self.assertEqual(int(said.group(1)), report["unwind_stopped"])
