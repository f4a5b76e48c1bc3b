"""--serve read by the real tools a fleet runs: Debian's Prometheus
scraping syncprof (its HTTP API queried afterwards), promtool checking
every scrape, go tool pprof reading /debug/pprof/block and /mutex over
HTTP; each compared with the targets' own clocks.  Ports are ephemeral,
Prometheus's data lives in the test's own directory, and with --all only
the test's own target's series are judged: other tests run meanwhile."""
import gzip
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import promserver
from harness import BUILD, SYNCPROF, SyncprofTestCase, WORKLOAD
from promserver import PROMETHEUS
from test_profiles import GO, Profile
from test_waits import RELEASER, marker_line
from test_why import CONVOY, c_unlock_root, root_share

PROMTOOL = shutil.which("promtool")
TOLERANCE = 0.05
SERVING = re.compile(r"serving on http://([0-9.]+):(\d+)/")
SERIES = re.compile(r'^(\w+)(?:\{([^}]*)\})? (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """{(name, frozenset(labels)): value} of every sample."""
    out = {}
    for line in text.splitlines():
        m = SERIES.match(line)
        if m:
            labels = frozenset(LABEL.findall(m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def of_process(metrics, name, process, **want):
    """The samples of one metric of one process (and labels), summed."""
    total = 0.0
    for (n, labels), value in metrics.items():
        d = dict(labels)
        if n == name and d.get("process") == process and all(
                d.get(k) == v for k, v in want.items()):
            total += value
    return total


class StderrLog:
    """syncprof's stderr read on a thread as it comes.  With --all and -v
    it says a line for every process the host forks and ends: a pipe
    nobody reads fills, and syncprof's loop, blocked writing to it, would
    make no more profiles."""

    def __init__(self, proc, text):
        self.proc = proc
        self.text = text
        self.seen = 0		# the end of what wait_for has matched
        self.ended = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        fd = self.proc.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            with self.cond:
                if not chunk:
                    self.ended = True
                    self.cond.notify_all()
                    return
                self.text += chunk.decode(errors="replace")
                self.cond.notify_all()

    def wait_for(self, needle, timeout):
        """Whether a line holding needle came after the last one matched."""
        with self.cond:
            self.cond.wait_for(lambda: needle in self.text[self.seen:]
                               or self.ended, timeout)
            at = self.text.find(needle, self.seen)
            if at < 0:
                return False
            end = self.text.find("\n", at)
            self.seen = len(self.text) if end < 0 else end + 1
            return True

    def finish(self, timeout):
        """The whole of stderr once syncprof has exited."""
        self.thread.join(timeout)
        with self.cond:
            return self.text


class Serve(SyncprofTestCase):

    def start_serve(self, *args):
        """syncprof --serve 127.0.0.1:0 ARGS; (proc, base URL) once it
        serves and has attached."""
        proc = subprocess.Popen(
            [SYNCPROF, "-v", "--serve", "127.0.0.1:0", "-o", os.devnull, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(proc)
        text = self.read_stderr_until(proc, "serving on", "syncprof did not serve",
                                      timeout=120)
        m = SERVING.search(text)
        self.assertTrue(m, text)
        self.read_stderr_until(proc, "profiling PID", "syncprof did not attach",
                               timeout=120)
        proc.report_path = os.devnull
        proc.stderr_log = StderrLog(proc, getattr(proc, "unread_stderr", ""))
        proc.unread_stderr = ""
        return proc, f"http://{m.group(1)}:{m.group(2)}"

    def wait_stderr(self, proc, needle, what, timeout):
        """Until syncprof says needle (read by its StderrLog)."""
        if not proc.stderr_log.wait_for(needle, timeout):
            self.fail(f"{what}: {proc.stderr_log.text[-4000:]}")

    def stop_serve(self, proc):
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        stderr = proc.stderr_log.finish(60)
        self.assertEqual(proc.returncode, 0, stderr)
        return stderr

    def get(self, url, timeout=60):
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers, r.read()

    def scrape(self, base):
        """GET /metrics, checked by promtool; the parsed samples."""
        status, headers, body = self.get(base + "/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/plain; version=0.0.4"))
        if PROMTOOL:
            check = subprocess.run([PROMTOOL, "check", "metrics"], input=body,
                                   capture_output=True, timeout=60)
            self.assertEqual(check.returncode, 0,
                             check.stdout.decode() + check.stderr.decode())
        return parse_metrics(body.decode())

    def profile(self, url):
        """A profile fetched by go tool pprof itself, over HTTP."""
        path = self.path(f"profile{len(os.listdir(self.tmp.name))}.pb.gz")
        env = dict(os.environ, PPROF_TMPDIR=self.tmp.name, HOME=self.tmp.name)
        proc = subprocess.run([GO, "tool", "pprof", "-proto", "-output", path, url],
                              capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return Profile(path)

    def run_workload(self, *args, truth="truth.json"):
        proc = subprocess.run(self.workload_cmd("mutex", *args, truth=truth),
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return self.truth(truth)

    # --- /metrics ---------------------------------------------------------

    def test_metrics_hold_the_targets_waits_and_survive_its_exit(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "4", "--iters", "500", "--hold-us", "500",
            "--wait-signal"))
        proc, base = self.start_serve("--pid", str(target.pid))
        before = self.scrape(base)
        self.go(target)
        self.assertEqual(target.wait(timeout=120), 0)
        truth = self.truth()
        # The process exited: syncprof serves on, its counters stay.
        time.sleep(1.5)
        m = self.scrape(base)
        wait = of_process(m, "syncprof_lock_wait_seconds_total", "workload",
                          object="big_lock", type="mutex")
        count = of_process(m, "syncprof_lock_waits_total", "workload",
                           object="big_lock", type="mutex")
        hist = of_process(m, "syncprof_lock_wait_seconds_count", "workload",
                          object="big_lock", type="mutex")
        self.assertWithin(wait * 1e9, truth["wait_ns"], TOLERANCE)
        self.assertGreater(count, 0)
        self.assertEqual(hist, count)
        for key, value in before.items():
            if key[0].endswith(("_total", "_count", "_bucket", "_sum")):
                self.assertGreaterEqual(m.get(key, 0), value, key)
        self.assertEqual(m[("syncprof_processes_followed", frozenset())], 0)
        self.stop_serve(proc)

    def test_bad_requests_get_4xx_and_the_server_goes_on(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "200", "--hold-us", "200",
            "--wait-signal"))
        proc, base = self.start_serve("--pid", str(target.pid))
        host, port = urllib.parse.urlsplit(base).netloc.split(":")
        port = int(port)

        def status_of(method, path, headers=None):
            c = http.client.HTTPConnection(host, port, timeout=30)
            c.request(method, path, headers=headers or {})
            r = c.getresponse()
            r.read()
            c.close()
            return r.status

        self.assertEqual(status_of("GET", "/nope"), 404)
        self.assertEqual(status_of("GET", "/debug/pprof/"), 404)
        self.assertEqual(status_of("GET", "/"), 200)
        for query in ("seconds=abc", "seconds=", "seconds=-1", "seconds=0",
                      "seconds=1e3", "seconds=99999999999999999999",
                      "seconds=5x", "seconds=%zz"):
            self.assertEqual(status_of("GET", "/debug/pprof/block?" + query),
                             400, query)
        self.assertEqual(status_of("GET", "/metrics?%zz&&=&x"), 200)
        for method in ("POST", "PUT", "DELETE", "OPTIONS"):
            self.assertEqual(status_of(method, "/metrics"), 405, method)
        self.assertEqual(status_of("GET", "/metrics",
                                   {"X-Big": "a" * 40000}), 431)
        # A malformed header line: 400.  Bytes that are no HTTP request
        # at all (a TLS hello, a bare word): the connection is closed.
        with socket.create_connection((host, port), timeout=30) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
            reply = s.recv(100)
            self.assertTrue(reply.startswith(b"HTTP/1.1 400"), reply)
        for garbage in (b"\x16\x03\x01\x00\xa5garbage\r\n\r\n", b"GARBAGE\r\n\r\n"):
            with socket.create_connection((host, port), timeout=30) as s:
                s.sendall(garbage)
                self.assertEqual(s.recv(100), b"")
        # A slow client holds a connection; others are served meanwhile,
        # and it is closed after the idle limit.
        slow = socket.create_connection((host, port), timeout=30)
        slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        self.go(target)
        counters = []
        for _ in range(3):
            m = self.scrape(base)
            counters.append(of_process(m, "syncprof_lock_waits_total", "workload"))
        self.assertEqual(counters, sorted(counters))
        started = time.monotonic()
        self.assertEqual(slow.recv(100), b"")
        self.assertLess(time.monotonic() - started, 30)
        slow.close()
        self.assertEqual(target.wait(timeout=120), 0)
        self.assertEqual(status_of("GET", "/metrics"), 200)
        self.stop_serve(proc)

    def test_thousand_scrapes_rss_stable(self):
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "4", "--iters", "3000", "--hold-us", "100",
            "--wait-signal"))
        proc, base = self.start_serve("--pid", str(target.pid))
        self.go(target)

        def rss():
            with open(f"/proc/{proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
            return 0

        last = {}
        for i in range(1000):
            status, _, body = self.get(base + "/metrics")
            self.assertEqual(status, 200)
            m = parse_metrics(body.decode())
            for key, value in m.items():
                if key[0].endswith(("_total", "_count", "_bucket", "_sum")):
                    self.assertGreaterEqual(value, last.get(key, 0), key)
            last = m
            if i == 200:
                warm = rss()
        self.assertEqual(target.wait(timeout=120), 0)
        # 800 scrapes later: within 4 MiB of the warm size.
        self.assertLess(rss() - warm, 4096, (warm, rss()))
        self.stop_serve(proc)

    # --- Prometheus, against --all ----------------------------------------

    def own_workload(self, name):
        """The workload under a name of the test's own: with --all, its
        series are told from other tests' workloads by process name."""
        path = self.path(name)
        shutil.copy(WORKLOAD, path)
        return path

    def run_own(self, binary, truth, iters):
        """binary (an own_workload copy) through the mutex scenario under
        --all, alive after its work (--wait-end: go() ends it)."""
        target = subprocess.Popen(
            [binary, "mutex", "--threads", "4", "--iters", str(iters),
             "--hold-us", "500", "--truth", self.path(truth), "--wait-end"],
            stdout=subprocess.PIPE, text=True)
        self.children.append(target)
        self.wait_done(target)
        return target

    def wait_named(self, base, binary, target):
        """Until syncprof's /metrics names binary's big_lock: --all reads
        a process at its first wait, when its loop gets to it, and a
        program that exits before then keeps its rows unnamed (its maps
        are gone), which syncprof cannot help on a busy host."""
        name = os.path.basename(binary)[:15]
        deadline = time.monotonic() + 120
        while not of_process(parse_metrics(self.get(base + "/metrics")[2]
                                           .decode()),
                             "syncprof_lock_waits_total", name,
                             object="big_lock", type="mutex"):
            self.assertLess(time.monotonic(), deadline,
                            f"syncprof never read {name} (PID {target.pid})")
            time.sleep(0.2)

    def end_own(self, target):
        self.go(target)
        self.assertEqual(target.wait(timeout=120), 0)

    def start_prometheus(self, target):
        proc, api = promserver.start(self.tmp.name, target)
        self.children.append(proc)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self.query(api, 'up{job="syncprof"}') == 1:
                    return proc, api
            except OSError:
                pass
            time.sleep(0.5)
        self.fail("Prometheus did not scrape syncprof")

    def query(self, api, promql):
        result = promserver.query_all(api, promql)
        return result[0][1] if result else None

    def settled(self, api, promql, timeout=60):
        """The value once two scrapes a few seconds apart agree."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            value = self.query(api, promql)
            if value is not None and value == last:
                return value
            last = value
            time.sleep(2.5)
        self.fail(f"{promql} did not settle: {last}")

    def test_prometheus_scrapes_all_and_agrees_with_the_target(self):
        self.assertTrue(PROMETHEUS, "no prometheus: 'make deps' installs it")
        name = f"svprom{os.getpid() % 100000}"
        binary = self.own_workload(name)
        proc, base = self.start_serve("--all")
        netloc = urllib.parse.urlsplit(base).netloc
        _, api = self.start_prometheus(netloc)
        # Started after syncprof: --all follows it from its first lock,
        # and it lives until syncprof has read it.
        target = self.run_own(binary, "truth.json", 400)
        self.wait_named(base, binary, target)
        self.end_own(target)
        truth = self.truth()
        # Its mutex waits: big_lock's, and those in the first moments
        # after its exec, before its program's names were read (then its
        # call sites and objects are addresses).
        sel = f'process="{name}",type="mutex"'
        wait = self.settled(api, f"sum(syncprof_lock_wait_seconds_total{{{sel}}})")
        self.assertWithin(wait * 1e9, truth["wait_ns"], TOLERANCE)
        named = self.query(api, f'sum(syncprof_lock_wait_seconds_total{{{sel},'
                                f'object="big_lock"}})')
        self.assertGreater(named, wait / 2)
        count = self.query(api, f"sum(syncprof_lock_waits_total{{{sel}}})")
        hist = self.query(api, f"sum(syncprof_lock_wait_seconds_count{{{sel}}})")
        self.assertEqual(count, hist)
        self.assertGreater(count, 0)
        # The histogram's +Inf bucket holds every wait, and 1 s none
        # (0.5 ms holds, 4 threads).
        self.assertEqual(self.query(
            api, f'sum(syncprof_lock_wait_seconds_bucket{{{sel},le="+Inf"}})'), count)
        # Counters never went down: the target exited, syncprof went on.
        self.assertEqual(self.query(
            api, f"sum(resets(syncprof_lock_wait_seconds_total{{process=\"{name}\"}}[5m]))"), 0)
        self.assertEqual(self.query(
            api, "sum(resets(syncprof_lock_waits_total[5m]))"), 0)
        self.assertIsNotNone(self.query(api, "syncprof_processes_followed"))
        self.assertIsNotNone(self.query(api, 'syncprof_dropped_total{cause="map_full"}'))
        self.assertGreater(self.query(api, "syncprof_cpu_seconds_total"), 0)
        self.scrape(base)
        self.stop_serve(proc)

    # --- go tool pprof over HTTP -----------------------------------------

    def test_block_profile_by_go_tool_pprof(self):
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "4", "--iters", "400", "--hold-us", "500",
            "--wait-signal"))
        proc, base = self.start_serve("--pid", str(target.pid))
        self.go(target)
        self.assertEqual(target.wait(timeout=120), 0)
        truth = self.truth()
        profile = self.profile(base + "/debug/pprof/block")
        ours = [s for s in profile.samples
                if s["labels"].get("object") == "big_lock"
                and s["labels"].get("pid") == str(target.pid)]
        self.assertTrue(ours, profile.samples)
        for s in ours:
            self.assertEqual(s["labels"].get("process"), "workload")
            self.assertEqual(s["labels"].get("type"), "mutex")
            self.assertIn("timed_lock", profile.functions(s))
        self.assertWithin(sum(s["delay"] for s in ours), truth["wait_ns"], TOLERANCE)
        self.stop_serve(proc)

    def test_mutex_profile_charges_the_releasers(self):
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        target = self.start_waiting_target(
            [RELEASER, "two", "--truth", self.path("truth.json"), "--iters", "20",
             "--hold-us", "3000", "--hold2-us", "1000", "--wait-signal"])
        proc, base = self.start_serve("--pid", str(target.pid))
        self.go(target)
        self.assertEqual(target.wait(timeout=120), 0)
        truth = self.truth()
        profile = self.profile(base + "/debug/pprof/mutex")
        for release in ("unlock_a", "unlock_b"):
            samples = [s for s in profile.samples
                       if s["labels"].get("object") == "big_lock"
                       and release in profile.functions(s)]
            self.assertTrue(samples, (release, profile.samples))
            expected = truth["releases"][release]
            self.assertEqual(sum(s["count"] for s in samples), expected["count"])
            self.assertWithin(sum(s["delay"] for s in samples), expected["ns"],
                              TOLERANCE, release)
        self.stop_serve(proc)

    def thread_cpu_ns(self, pid, name):
        """The run time of pid's threads called name, in ns."""
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/comm") as f:
                    if f.read().strip() != name:
                        continue
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
        return total

    def test_profiles_are_encoded_off_the_loop(self):
        """A profile's rows are named on the loop that reads the probes,
        and encoded and gzipped on the server's own thread
        (syncprof-pprof).  With a row for each of 2 x 250 objects (full
        mode, --no-coalesce): that thread works for every profile, the
        loop's share is said in syncprof_serve_loop_seconds_total, another
        client's /metrics answers meanwhile as fast as alone (a median
        within 5 times its median alone, or 0.2 s), and go tool pprof
        reads every lock call the targets counted."""
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        targets = [self.start_waiting_target(self.workload_cmd(
            "many", "--objects", "250", "--wait-signal", "--wait-end",
            truth=f"truth{i}.json")) for i in range(2)]
        args = ["--mode", "full", "--no-coalesce", "--max-series", "1000"]
        for t in targets:
            args += ["--pid", str(t.pid)]
        proc, base = self.start_serve(*args)
        for t in targets:
            self.go(t)
        for t in targets:
            self.assertTrue(t.stdout.readline().startswith("done "))
        alone = []
        for _ in range(10):
            started = time.monotonic()
            self.get(base + "/metrics")
            alone.append(time.monotonic() - started)
        before = self.scrape(base)
        cpu = self.thread_cpu_ns(proc.pid, "syncprof-pprof")
        sizes, errors = [], []

        def fetch():
            try:
                for _ in range(4):
                    sizes.append(len(self.get(base + "/debug/pprof/block")[2]))
            except Exception as e:	# said by the test's thread below
                errors.append(e)

        fetcher = threading.Thread(target=fetch)
        fetcher.start()
        meanwhile = []
        while fetcher.is_alive() or not meanwhile:
            started = time.monotonic()
            self.get(base + "/metrics")
            meanwhile.append(time.monotonic() - started)
        fetcher.join()
        self.assertEqual(errors, [])
        self.assertTrue(all(sizes), sizes)
        self.assertGreater(self.thread_cpu_ns(proc.pid, "syncprof-pprof"), cpu,
                           "the profiles' thread did not encode them")
        median = sorted(alone)[len(alone) // 2]
        during = sorted(meanwhile)[len(meanwhile) // 2]
        self.assertLessEqual(during, max(0.2, 5 * median),
                             f"/metrics took {meanwhile} while the profiles "
                             f"were made, {alone} alone")
        time.sleep(0.3)		# a read newer than 100 ms would serve
        after = self.scrape(base)
        loop = ("syncprof_serve_loop_seconds_total",
                frozenset({("work", "profiles")}))
        self.assertGreater(after[loop], before[loop])
        profile = self.profile(base + "/debug/pprof/block")
        for i, t in enumerate(targets):
            truth = self.truth(f"truth{i}.json")
            ours = [s for s in profile.samples
                    if s["labels"].get("pid") == str(t.pid)]
            objects = {s["labels"].get("object") for s in ours}
            self.assertTrue(set(truth["objects"]) <= objects,
                            set(truth["objects"]) - objects)
            self.assertEqual(sum(s["count"] for s in ours if s["labels"].get(
                "object") in truth["objects"]), truth["count"])
            self.go(t)
            self.assertEqual(t.wait(timeout=120), 0)
        self.stop_serve(proc)

    def fetch_window(self, proc, base, seconds):
        """go tool pprof fetching /debug/pprof/block?seconds=N into a file,
        started; (its process, the file) once syncprof has opened the
        window."""
        env = dict(os.environ, PPROF_TMPDIR=self.tmp.name, HOME=self.tmp.name)
        out = self.path(f"window{seconds}.pb.gz")
        fetch = subprocess.Popen(
            # pprof waits 1.5 x seconds for the answer by default; a
            # host busy with other tests' processes delays syncprof's loop.
            [GO, "tool", "pprof", "-timeout", "120", "-proto", "-output", out,
             f"{base}/debug/pprof/block?seconds={seconds}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.children.append(fetch)
        # The window opens when syncprof has read the totals it starts
        # from (it says so).
        self.wait_stderr(proc, f"/debug/pprof/block: the next {seconds} s",
                         "syncprof did not take the request", timeout=120)
        return fetch, out

    def pprof_over_http(self, url, *args):
        """go tool pprof ARGS URL: what its user reads of a served profile."""
        env = dict(os.environ, PPROF_TMPDIR=self.tmp.name, HOME=self.tmp.name)
        proc = subprocess.run([GO, "tool", "pprof", "-timeout", "120", *args,
                               url], capture_output=True, text=True,
                              timeout=300, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def test_why_splits_the_block_profile_by_root(self):
        """--serve --pid P --why: /debug/pprof/block carries the root and
        root_state labels that --format pprof --why writes, in a ?seconds
        window and in the totals.  A waited on l1 behind B, which waited
        on l2 behind C: go tool pprof -tags over HTTP puts A's wait at C's
        unlock, and the window's samples of each lock add up to its
        waiter's own clock."""
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        target = self.start_waiting_target(
            [CONVOY, "convoy", "--wait-signal", "--truth",
             self.path("truth.json"), "--iters", "6"])
        proc, base = self.start_serve("--pid", str(target.pid), "--why")
        fetch, out = self.fetch_window(proc, base, 10)
        started = time.monotonic()
        self.go(target)
        self.assertEqual(target.wait(timeout=120), 0)
        self.assertLess(time.monotonic() - started, 10,
                        "the convoy outran the window")
        _, err = fetch.communicate(timeout=120)
        self.assertEqual(fetch.returncode, 0, err)
        truth = self.truth()
        c_unlock = c_unlock_root()
        window = Profile(out)
        for obj, wait in (("l1", truth["wait_a_ns"]), ("l2", truth["wait_b_ns"])):
            samples = window.of(obj)
            self.assertTrue(samples, window.samples)
            for s in samples:
                self.assertIn("root", s["labels"], s)
                self.assertEqual("root_state" in s["labels"],
                                 s["labels"]["root"] != "none", s)
            total = sum(s["delay"] for s in samples)
            self.assertWithin(total, wait, 0.15, obj)
            at_c = sum(s["delay"] for s in samples
                       if c_unlock.match(s["labels"]["root"]))
            self.assertGreaterEqual(at_c, 0.9 * total, samples)
        # The totals since attach, as a user of go tool pprof reads them.
        for obj in ("l1", "l2"):
            tags = self.pprof_over_http(base + "/debug/pprof/block", "-tags",
                                        "-unit=ns", f"-tagfocus=object=^{obj}$")
            self.assertGreaterEqual(root_share(tags, c_unlock), 90.0, tags)
            self.assertRegex(tags, r"(?m)^ root_state: Total")
        # The releasers' profile is not split (its rows are releases).
        mutex = self.profile(base + "/debug/pprof/mutex")
        self.assertTrue(mutex.of("l1"), mutex.samples)
        for s in mutex.samples:
            self.assertNotIn("root", s["labels"], s)
        self.stop_serve(proc)

    def test_seconds_is_the_next_n_seconds(self):
        """A delta profile holds what happened in its window: the waits of
        a phase that ran inside it, none of the phase before."""
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        first, second = (self.own_workload(f"svph{i}{os.getpid() % 10000}")
                         for i in (1, 2))
        proc, base = self.start_serve("--all")
        # Each phase's program lives to the end: its rows are told by its
        # PID, which a program that exits before syncprof reads it (a busy
        # host) keeps, not by its names.  Phase one is read before the
        # window opens: its rows keep their names across the window.
        one = self.run_own(first, "first.json", 300)
        self.wait_named(base, first, one)
        fetch, out = self.fetch_window(proc, base, 8)
        started = time.monotonic()
        two = self.run_own(second, "second.json", 300)
        self.assertLess(time.monotonic() - started, 8, "phase two outran the window")
        truth = self.truth("second.json")
        _, err = fetch.communicate(timeout=120)
        self.assertEqual(fetch.returncode, 0, err)

        def of(profile, target):
            return [s for s in profile.samples
                    if s["labels"].get("pid") == str(target.pid)
                    and s["labels"].get("class") == "lock"]

        window = Profile(out)
        self.assertEqual(of(window, one), [])
        self.assertWithin(sum(s["delay"] for s in of(window, two)),
                          truth["wait_ns"], TOLERANCE)
        # Without ?seconds: everything since start, both phases.
        total = self.profile(base + "/debug/pprof/block")
        self.assertTrue(of(total, one), total.samples)
        self.end_own(one)
        self.end_own(two)
        self.stop_serve(proc)
