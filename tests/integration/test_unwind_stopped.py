"""unwind_stopped, in JSON and in -v's summary, counts every wait whose
call site stays inside libc: here the waits a process makes at once
after an exec, before syncprof has read its new image (stacks exec with
--settle-ms 0), which used to be named inside libc and counted nowhere
but in -v's 'walks stopped early'.  Since a wait in an image not read
yet is walked by its file's table, such waits mostly land at their line;
any that stays in libc must be counted, and JSON and -v must agree."""
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
        self.assertGreaterEqual(report["unwind_stopped"], in_libc,
                                report["rows"])
        said = re.search(r"call sites left inside libc (\d+) \(unwind_stopped\)",
                         run.stderr)
        self.assertIsNotNone(said, run.stderr)
        self.assertEqual(int(said.group(1)), report["unwind_stopped"])
