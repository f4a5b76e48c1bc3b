"""Stripped programs named through debuginfod: elfutils' debuginfod
server (Debian's package) on an ephemeral loopback port with private
directories serves the debug information of tests/targets/workload;
syncprof, given DEBUGINFOD_URLS, names the call sites of
workload-stripped (the same build, no .symtab, no DWARF) by function and
line.  A server that does not answer leaves them offsets, and says so.
A server that answers with garbage, or with more than the size limit
(a loopback HTTP server of the test's own), leaves nothing in the
client's cache, and the reason is said once."""
import os
import shutil
import subprocess
import http.server
import json
import threading
import time
import urllib.request

from harness import BUILD, SYNCPROF, SyncprofTestCase, free_port

WORKLOAD = os.path.join(BUILD, "tests", "targets", "workload")
STRIPPED = os.path.join(BUILD, "tests", "targets", "workload-stripped")


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True,
                         text=True, check=True).stdout
    return next(l.split()[-1] for l in out.splitlines() if "Build ID" in l)


class Debuginfod(SyncprofTestCase):

    def start_server(self):
        """A debuginfod serving the workload; its URL once it serves the
        file.  A port another process took between free_port() and the
        server's bind makes it exit at once: another port is tried."""
        serve = self.path("serve")
        os.mkdir(serve)
        shutil.copy(WORKLOAD, serve)
        for attempt in range(3):
            url = self.try_server(serve, attempt)
            if url:
                return url
        self.fail("debuginfod exited at once on three ports")

    def try_server(self, serve, attempt):
        port = free_port()
        log = open(self.path(f"debuginfod-{attempt}.err"), "w+")
        self.addCleanup(log.close)
        server = subprocess.Popen(
            ["debuginfod", "-F", "-p", str(port),
             "-d", self.path(f"db-{attempt}.sqlite"),
             "-c", "1", "-t", "0", "-g", "0", serve],
            stdout=subprocess.DEVNULL, stderr=log)
        self.children.append(server)
        url = f"http://127.0.0.1:{port}"
        # Ready when it serves the file (its first scan is done).
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(
                        f"{url}/buildid/{build_id(STRIPPED)}/debuginfo",
                        timeout=5) as r:
                    if r.status == 200:
                        return url
            except OSError:
                pass
            if server.poll() is not None:
                log.seek(0)
                if "bind" not in log.read().lower():
                    log.seek(0)
                    self.fail(f"debuginfod exited: {log.read()[-2000:]}")
                return None
            self.assertLess(time.monotonic(), deadline, "debuginfod not ready")
            time.sleep(0.2)

    def run_stripped(self, urls, **extra_env):
        env = dict(os.environ, DEBUGINFOD_URLS=urls,
                   DEBUGINFOD_CACHE_PATH=self.path("cache"), **extra_env)
        out = self.path("report.json")
        proc = subprocess.run(
            [SYNCPROF, "-v", "--format", "json", "-o", out, "--top", "0", "--",
             STRIPPED, "mutex", "--iters", "20", "--truth", self.path("truth.json")],
            capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            report = [l for l in f.read().splitlines() if l.startswith("{")]
        return json.loads(report[-1]), proc.stderr

    def test_stripped_binary_named_by_function_and_line(self):
        url = self.start_server()
        report, stderr = self.run_stripped(url)
        rows = [r for r in report["rows"] if r["type"] == "mutex"]
        self.assertTrue(rows, report["rows"])
        site = rows[0]["callsite"]
        self.assertTrue(site["module"].endswith("/workload-stripped"), site)
        self.assertEqual(site["function"], "timed_lock", site)
        self.assertTrue(site["file"].endswith("workload.c"), site)
        self.assertGreater(site["line"], 0)
        self.assertIn("debuginfod: workload-stripped's debug file", stderr)
        self.assertEqual([n for n in report["notices"] if "offsets" in n], [])
        # The client's cache keeps it: named again with the server gone.
        report, _ = self.run_stripped("http://127.0.0.1:1")
        site = [r for r in report["rows"] if r["type"] == "mutex"][0]["callsite"]
        self.assertEqual(site["function"], "timed_lock", site)

    def test_a_server_that_refuses_is_said(self):
        report, stderr = self.run_stripped(f"http://127.0.0.1:{free_port()}")
        site = [r for r in report["rows"] if r["type"] == "mutex"][0]["callsite"]
        self.assertIsNone(site["function"])
        said = [n for n in report["notices"]
                if n.startswith("debuginfod: no debug file for workload-stripped")]
        self.assertEqual(len(said), 1, report["notices"])
        self.assertIn(said[0], stderr)
        self.assertTrue(any("are offsets" in n for n in report["notices"]),
                        report["notices"])

    def start_bad_server(self, body, size):
        """A loopback HTTP server answering every request with size bytes
        of body repeated, with no Content-Length (the client cannot check
        the size before it has it); the number of requests it had."""
        asked = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                asked.append(self.path)
                self.send_response(200)
                self.end_headers()
                sent = 0
                try:
                    while sent < size:
                        chunk = body[:size - sent]
                        self.wfile.write(chunk)
                        sent += len(chunk)
                except OSError:
                    pass	# the client gave up: what the test wants

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return f"http://127.0.0.1:{server.server_address[1]}", asked

    def cached_files(self):
        """Files in the client's cache with something in them (the client
        marks a failed query with an empty file, its negative cache)."""
        found = []
        for top, _, files in os.walk(self.path("cache")):
            found += [os.path.join(top, f) for f in files
                      if not f.startswith("cache_") and f != "max_unused_age_s"
                      and os.path.getsize(os.path.join(top, f)) > 0]
        return found

    def assert_said_once(self, report, stderr, start):
        said = [n for n in report["notices"] if n.startswith(start)]
        self.assertEqual(len(said), 1, report["notices"])
        self.assertEqual(stderr.count(said[0]), 1, stderr)
        # Nothing says the fetch worked.
        self.assertNotIn("later runs read it", stderr)
        site = [r for r in report["rows"]
                if r["type"] == "mutex"][0]["callsite"]
        self.assertIsNone(site["function"])

    def test_a_reply_that_is_not_the_debug_file_is_not_kept(self):
        url, asked = self.start_bad_server(b"not an ELF file\n" * 64, 4096)
        report, stderr = self.run_stripped(url)
        self.assertTrue(asked, "the server was never asked")
        self.assert_said_once(
            report, stderr, "debuginfod: the server's reply for "
            "workload-stripped's debug file is not it")
        self.assertEqual(self.cached_files(), [])

    def test_a_reply_past_the_size_limit_is_cut(self):
        limit = 1 << 20
        url, asked = self.start_bad_server(b"\0" * 65536, 64 * limit)
        report, stderr = self.run_stripped(
            url, DEBUGINFOD_MAXSIZE=str(limit))
        self.assertTrue(asked, "the server was never asked")
        self.assert_said_once(
            report, stderr, "debuginfod: workload-stripped's debug file is "
            "larger than its limit of 1 MiB")
        self.assertEqual(self.cached_files(), [])

    def test_the_default_size_limit(self):
        """No DEBUGINFOD_MAXSIZE: the module is small, so its limit is the
        floor, 64 MiB; the server would send 128 MiB."""
        url, asked = self.start_bad_server(b"\0" * 65536, 128 << 20)
        report, stderr = self.run_stripped(url)
        self.assertTrue(asked, "the server was never asked")
        self.assert_said_once(
            report, stderr, "debuginfod: workload-stripped's debug file is "
            "larger than its limit of 64 MiB")
        self.assertEqual(self.cached_files(), [])
