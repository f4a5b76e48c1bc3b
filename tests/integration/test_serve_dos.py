"""--serve against clients that would deny it to others: windows
(?seconds=3600) whose clients closed, partial requests, slowloris,
pipelined scrapes and malformed queries, each while a scraper (repeated
GETs of /metrics from 127.0.0.1, the documented scrapers' address) checks
that every scrape is answered 200 within syncprof's own header bound, with
the target's counters in it and never going back.  All traffic goes to
127.0.0.0/8; every loop ends by itself."""
import concurrent.futures
import os
import re
import socket
import subprocess
import threading
import time

from harness import HANG_S, SYNCPROF, SyncprofTestCase
from test_serve import of_process, parse_metrics

SERVING = re.compile(r"serving on http://([0-9.]+):(\d+)/")
# serve.c's bounds: a request must arrive whole within HEADER_S; at most
# WINDOWS_PER_CLIENT ?seconds=N windows at once from one address.
HEADER_S = 3
WINDOWS_PER_CLIENT = 4


class Scraper(threading.Thread):
    """GET /metrics from 127.0.0.1 over and over, until stopped; each
    answer's status, time and the target's waits counter."""

    def __init__(self, port, process):
        super().__init__(daemon=True)
        self.port, self.process = port, process
        self.stop = threading.Event()
        self.results = []       # (status, seconds, waits)

    def scrape(self):
        started = time.monotonic()
        status, waits = None, None
        try:
            with socket.create_connection(("127.0.0.1", self.port),
                                          timeout=30,
                                          source_address=("127.0.0.1", 0)) as s:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Connection: close\r\n\r\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            m = re.match(rb"HTTP/1\.1 (\d+)", head)
            status = int(m.group(1)) if m else 0
            if status == 200:
                waits = of_process(parse_metrics(body.decode()),
                                   "syncprof_lock_waits_total", self.process)
        except OSError as e:
            status = repr(e)
        self.results.append((status, time.monotonic() - started, waits))

    def run(self):
        while not self.stop.is_set():
            self.scrape()
            self.stop.wait(0.2)


class ServeDos(SyncprofTestCase):

    def setUp(self):
        super().setUp()
        self.target = self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "400000", "--hold-us", "50",
            "--wait-signal"))
        self.log = open(self.path("syncprof.err"), "w+")
        self.addCleanup(self.log.close)
        self.proc = self.popen_ready(
            [SYNCPROF, "-v", "--serve", "127.0.0.1:0", "-o", os.devnull,
             "--pid", str(self.target.pid)], stdout=subprocess.DEVNULL,
            stderr=self.log)
        deadline = time.monotonic() + HANG_S
        m = None
        while not m and time.monotonic() < deadline:
            self.log.seek(0)
            m = SERVING.search(self.log.read())
            if not m:
                time.sleep(0.1)
        self.assertTrue(m, "syncprof did not say where it serves")
        self.port = int(m.group(2))
        self.go(self.target)

    def tearDown(self):
        self.proc.terminate()
        self.assertEqual(self.proc.wait(timeout=HANG_S), 0, self.stderr())
        super().tearDown()

    def stderr(self):
        self.log.seek(0)
        return self.log.read()[-3000:]

    def sockets(self):
        """syncprof's open sockets."""
        n = 0
        fds = f"/proc/{self.proc.pid}/fd"
        for fd in os.listdir(fds):
            try:
                n += os.readlink(os.path.join(fds, fd)).startswith("socket:")
            except OSError:
                pass
        return n

    def sockets_back_to(self, baseline, within):
        """Waits until syncprof holds no more sockets than baseline; how
        long that took, or fails after within seconds."""
        started = time.monotonic()
        while self.sockets() > baseline:
            if time.monotonic() - started > within:
                self.fail(f"syncprof still holds {self.sockets()} sockets, "
                          f"{baseline} before, {within} s later")
            time.sleep(0.05)
        return time.monotonic() - started

    def connect(self, source="127.0.0.1"):
        return socket.create_connection(("127.0.0.1", self.port), timeout=30,
                                        source_address=(source, 0))

    def start_scraper(self):
        scraper = Scraper(self.port, "workload")
        scraper.start()
        self.addCleanup(scraper.stop.set)
        # A first answer before the attack: the scraper works.
        deadline = time.monotonic() + HANG_S
        while not scraper.results and time.monotonic() < deadline:
            time.sleep(0.05)
        return scraper

    def check_scraper(self, scraper, during):
        """Every scrape 200 within the header bound, counters only
        growing; at least during more after the first (taken while the
        attack ran, or while what it left would still hold a slot)."""
        deadline = time.monotonic() + HANG_S
        while len(scraper.results) <= during and time.monotonic() < deadline:
            time.sleep(0.05)
        scraper.stop.set()
        scraper.join(timeout=HANG_S)
        results = scraper.results
        self.assertGreaterEqual(len(results), during, results)
        for status, took, _ in results:
            self.assertEqual(status, 200, results)
            self.assertLess(took, HEADER_S, results)
        waits = [w for _, _, w in results]
        self.assertEqual(waits, sorted(waits))
        self.assertGreater(waits[-1], 0, "no waits of the target scraped")

    def windows_then_close(self, sources):
        for source in sources:
            with self.connect(source) as s:
                s.sendall(b"GET /debug/pprof/block?seconds=3600 HTTP/1.1\r\n"
                          b"Host: x\r\n\r\n")

    def window_open(self, source="127.0.0.1"):
        """A window from source, left open; its socket."""
        s = self.connect(source)
        s.sendall(b"GET /debug/pprof/block?seconds=3600 HTTP/1.1\r\n"
                  b"Host: x\r\n\r\n")
        return s

    def test_windows_whose_clients_closed_are_freed(self):
        """8 windows of an hour from 127.0.0.1 and 32 from 127.0.0.2-33,
        each closed at once: their slots come back at once (syncprof's
        sockets fall back, 127.0.0.1 can open windows again) and the
        scraper on 127.0.0.1 is served throughout."""
        baseline = self.sockets()
        scraper = self.start_scraper()
        self.windows_then_close(["127.0.0.1"] * 8)
        self.sockets_back_to(baseline, HEADER_S)
        self.windows_then_close([f"127.0.0.{i}" for i in range(2, 34)])
        self.sockets_back_to(baseline, HEADER_S)
        # Held ones still count: WINDOWS_PER_CLIENT are taken, one more
        # is refused at once with 503; the closed ones took none.
        held = [self.window_open() for _ in range(WINDOWS_PER_CLIENT)]
        with self.connect() as s:
            s.sendall(b"GET /debug/pprof/block?seconds=3600 HTTP/1.1\r\n"
                      b"Host: x\r\n\r\n")
            self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 503"))
        for s in held:
            s.close()
        self.sockets_back_to(baseline, HEADER_S)
        self.check_scraper(scraper, during=2)

    def test_partial_requests_hold_no_slot(self):
        """320 partial requests, each closed at once, then 40 left open:
        the open ones are closed by the header bound, and the scraper is
        answered meanwhile."""
        baseline = self.sockets()
        scraper = self.start_scraper()
        for _ in range(320):
            with self.connect() as s:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost")
        held = []
        for i in range(40):
            s = self.connect(f"127.0.0.{2 + i}")
            s.sendall(b"GET /metrics HTTP/1.1\r\nHo")
            held.append(s)
        for s in held:
            s.settimeout(3 * HEADER_S)
            self.assertEqual(s.recv(100), b"", "a partial request was answered")
            s.close()
        self.sockets_back_to(baseline, HEADER_S)
        self.check_scraper(scraper, during=2)

    def resident_bytes(self):
        """syncprof's own resident memory, as /metrics says it."""
        with self.connect() as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
                      b"Connection: close\r\n\r\n")
            data = b""
            while chunk := s.recv(1 << 20):
                data += chunk
        body = data.partition(b"\r\n\r\n")[2].decode()
        return parse_metrics(body)[("syncprof_resident_memory_bytes",
                                    frozenset())]

    def test_requests_refused_before_their_headers_are_freed(self):
        """2,000 requests whose 3,000 query arguments overflow a
        connection's memory: libmicrohttpd drops each before syncprof's
        handler sees it, unannounced, and syncprof frees what it began for
        it when the connection closes (kept, they took 14 MiB).  The
        scraper is answered meanwhile."""
        scraper = self.start_scraper()
        request = (b"GET /metrics?" + b"a&" * 3000 +
                   b" HTTP/1.1\r\nHost: x\r\n\r\n")

        def one(i):
            with self.connect(f"127.0.0.{2 + i % 200}") as s:
                s.sendall(request)
                s.shutdown(socket.SHUT_WR)
                while s.recv(65536):
                    pass

        before = self.resident_bytes()
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            list(pool.map(one, range(2000)))
        grown = self.resident_bytes() - before
        self.assertLess(grown, 4 << 20, f"syncprof grew {grown} bytes")
        self.check_scraper(scraper, during=1)

    def test_slowloris(self):
        """200 connections from 50 addresses, each trickling a header line
        every half second, for 10 s: none lives past the header bound, and
        the scraper is answered throughout."""
        baseline = self.sockets()
        scraper = self.start_scraper()
        socks, lifetimes = [], []
        end = time.monotonic() + 10
        while time.monotonic() < end:
            while len(socks) < 200:
                try:
                    s = self.connect(f"127.0.0.{2 + len(socks) % 50}")
                    s.sendall(b"GET /metrics HTTP/1.1\r\n")
                    socks.append((s, time.monotonic()))
                except OSError:
                    break
            alive = []
            for s, born in socks:
                try:
                    s.sendall(b"X-Slow: 1\r\n")
                    alive.append((s, born))
                except OSError:
                    lifetimes.append(time.monotonic() - born)
                    s.close()
            socks = alive
            time.sleep(0.5)
        for s, _ in socks:
            s.close()
        self.sockets_back_to(baseline, HEADER_S)
        # Connections were cut (a send fails only after syncprof's
        # shutdown): none lived twice the bound (without it, each would
        # have lived the whole 10 s, its trickle keeping it busy).
        self.assertTrue(lifetimes, "no slow connection was ever closed")
        self.assertLess(max(lifetimes), 2 * HEADER_S, lifetimes)
        self.check_scraper(scraper, during=10)

    def test_pipelined_scrapes(self):
        """100 scrapes pipelined on one connection: 100 answers, 200 each,
        counters never going back; the scraper is answered meanwhile."""
        scraper = self.start_scraper()
        with self.connect() as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 100)
            data = b""
            while data.count(b"HTTP/1.1 ") < 100 or not data.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
        answers = re.split(rb"(?=HTTP/1\.1 \d{3} )", data)[1:]
        self.assertEqual(len(answers), 100)
        waits = []
        for a in answers:
            self.assertTrue(a.startswith(b"HTTP/1.1 200"), a[:200])
            body = a.partition(b"\r\n\r\n")[2].decode()
            waits.append(of_process(parse_metrics(body),
                                    "syncprof_lock_waits_total", "workload"))
        self.assertEqual(waits, sorted(waits))
        self.check_scraper(scraper, during=1)

    def test_strict_query_and_bad_requests(self):
        """seconds is plain digits, given once: 400 at once, with the
        reason; a request of only CRLFs is closed within the header bound;
        the scraper is answered meanwhile."""
        scraper = self.start_scraper()
        for query in (b"seconds=%201", b"seconds=+1", b"seconds=1%00",
                      b"seconds=%31", b"seconds=1&seconds=1", b"seconds=1+"):
            with self.connect() as s:
                started = time.monotonic()
                s.sendall(b"GET /debug/pprof/block?" + query +
                          b" HTTP/1.1\r\nHost: x\r\n\r\n")
                reply = s.recv(1000)
                self.assertTrue(reply.startswith(b"HTTP/1.1 400"), (query, reply))
                self.assertIn(b"seconds", reply)
                self.assertLess(time.monotonic() - started, HEADER_S, query)
        with self.connect() as s:
            started = time.monotonic()
            s.sendall(b"\r\n" * 64)
            s.settimeout(3 * HEADER_S)
            self.assertIn(s.recv(100), (b"",), "CRLFs were answered")
            self.assertLess(time.monotonic() - started, HEADER_S + 1.5)
        self.check_scraper(scraper, during=2)

