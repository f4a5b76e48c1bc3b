"""Names a target controls reach no terminal raw: a library whose path
holds ESC, an OSC title sequence, a newline and a byte that is not UTF-8
(built by the test) waits on a lock; the CSV, the table and the folded
output print '?' for each of those bytes, and JSON escapes them so the
path's bytes come back (surrogateescape)."""
import csv
import io
import json
import os
import subprocess
import textwrap

from harness import HANG_S, SYNCPROF, SyncprofTestCase

# ESC [ 31 m (colour), OSC 0 ; title BEL (the terminal's title), a newline,
# a C1 CSI (U+009B), a stray byte.
HOSTILE = b"lib\x1b[31mred\x1b]0;pwned\x07\nnl\xc2\x9bJ\xff"

LIBRARY = textwrap.dedent("""
    #include <pthread.h>
    #include <time.h>
    static pthread_mutex_t hostile_lock = PTHREAD_MUTEX_INITIALIZER;
    static void hold(long us)
    {
        struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
        nanosleep(&t, NULL);
    }
    static void *worker(void *arg)
    {
        for (int i = 0; i < 5; i++) {
            pthread_mutex_lock(&hostile_lock);
            hold(20000);
            pthread_mutex_unlock(&hostile_lock);
        }
        return arg;
    }
    void hostile_contend(void)
    {
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    }
""")
MAIN = "void hostile_contend(void); int main(void) { hostile_contend(); return 0; }\n"


class HostileNames(SyncprofTestCase):

    def setUp(self):
        super().setUp()
        directory = os.fsencode(self.path("d")) + b"/" + HOSTILE
        os.makedirs(directory)
        self.library = directory + b"/libhostile.so"
        self.program = os.fsencode(self.path("hostile"))
        for name, text in (("lib.c", LIBRARY), ("main.c", MAIN)):
            with open(self.path(name), "w") as f:
                f.write(text)
        subprocess.run([b"cc", b"-g", b"-O1", b"-shared", b"-fPIC", b"-pthread",
                        os.fsencode(self.path("lib.c")), b"-o", self.library],
                       check=True)
        subprocess.run([b"cc", b"-g", os.fsencode(self.path("main.c")),
                        self.library, b"-Wl,-rpath," + directory, b"-pthread",
                        b"-o", self.program], check=True)

    def syncprof(self, *args):
        proc = subprocess.run([SYNCPROF, "--mode", "contended", "--callsite", "func",
                               *args, "--", self.program], capture_output=True,
                              timeout=HANG_S)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        return proc.stdout

    def assert_clean(self, out, what):
        for byte in (b"\x1b", b"\x07", b"\x9b", b"\xff"):
            self.assertNotIn(byte, out, f"{what} printed {byte!r}")

    def test_csv(self):
        out = self.syncprof("--format", "csv")
        self.assert_clean(out, "CSV")
        rows = list(csv.DictReader(io.StringIO(out.decode())))
        mutex = [r for r in rows if r["type"] == "mutex"]
        self.assertTrue(mutex, out)
        # One '?' per byte of each control and of the stray byte.
        for row in mutex:
            self.assertTrue(row["module"].endswith(
                "/lib?[31mred?]0;pwned??nl??J?/libhostile.so"), row["module"])

    def test_table_and_folded(self):
        out = self.syncprof("--format", "table", "--callsite", "both")
        self.assert_clean(out, "the table")
        out = self.syncprof("--format", "folded")
        self.assert_clean(out, "folded")
        self.assertIn(b"worker;[mutex hostile_lock]", out)

    def test_json_escapes_and_keeps_the_bytes(self):
        out = self.syncprof("--format", "json")
        self.assert_clean(out, "JSON")
        modules = set()
        for line in out.decode().splitlines():
            for row in json.loads(line)["rows"]:
                modules.add(os.fsencode(row["callsite"]["module"]))
        self.assertIn(self.library, modules)
