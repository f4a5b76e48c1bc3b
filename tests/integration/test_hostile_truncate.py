"""A library the target mapped, truncated while syncprof holds it open
(tests/targets/shrinklib.c, on a copy of test_symbols' shared library in
a private directory): syncprof used to map the files it read and died of
SIGBUS at the first read past the new end.  Now it ends normally in both
modes, says once that the file was truncated, counts every wait, and
names the lock from what is left of the file (.dynsym is in the part
the target itself maps)."""
import os
import shutil
import struct

from harness import BUILD, HANG_S, SyncprofTestCase

SHRINKLIB = os.path.join(BUILD, "tests", "targets", "shrinklib")
SHAREDLIB = os.path.join(BUILD, "tests", "targets", "libsharedlock.so")
ITERS = 20


def loaded_end(path):
    """Where the file's last PT_LOAD segment ends, rounded up to a page:
    cut there, the target's own mappings keep every byte they map (and the
    target lives), while the symbol table, the DWARF and the section
    headers past it are gone."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2, "an ELF64 file"
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    end = 0
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            end = max(end, p_offset + p_filesz)
    return (end + 4095) // 4096 * 4096, len(data)


class TruncatedLibrary(SyncprofTestCase):

    def run_truncated(self, mode):
        lib = self.path("libsharedcopy.so")
        shutil.copy(SHAREDLIB, lib)
        cut, size = loaded_end(lib)
        self.assertLess(cut, size, "nothing past the loaded part to cut")
        target = self.start_waiting_target(
            [SHRINKLIB, "--lib", lib, "--iters", str(ITERS),
             "--truth", self.path("truth.json"), "--wait-signal"])
        prof = self.start_syncprof(["--mode", mode, "--top", "0",
                                    "--pid", str(target.pid)])
        # syncprof has the library open now (its names are read at the end).
        os.truncate(lib, cut)
        self.go(target)
        self.assertEqual(target.wait(timeout=HANG_S), 0)
        run = self.finish_syncprof(prof)
        self.assertEqual(run.returncode, 0, f"syncprof ended with "
                         f"{run.returncode}: {run.stderr}")
        notice = f"{lib} was truncated while syncprof read it"
        self.assertEqual(run.stderr.count(notice), 1, run.stderr)
        self.assertNotIn("error:", run.stderr)
        truth = self.truth()
        rows = self.rows_for(run.reports[-1], truth["object"])
        self.assertTrue(rows, run.reports[-1]["rows"])
        for row in rows:
            self.assertEqual(row["object_symbol"], "shared_lock")
        return rows, truth

    def test_contended(self):
        rows, truth = self.run_truncated("contended")
        self.assertEqual(self.total(rows, "count"), truth["count"])

    def test_full(self):
        rows, truth = self.run_truncated("full")
        # The main thread's acquisitions and the helper's.
        self.assertEqual(self.total(rows, "count"), 2 * truth["count"])
