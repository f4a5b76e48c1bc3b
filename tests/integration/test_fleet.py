"""What --serve serves a fleet, and the ready-made parts in docs/fleet/,
each read by the real tool: promtool checks and unit-tests the alerting
rules; Debian's Prometheus scrapes a real syncprof --serve of real
targets, loads the rules (each must evaluate) and answers every panel
query of the Grafana dashboard with data; go tool pprof reads the
profiles.  The series: a class label on each, --max-series bounding
every series ("other" ones included), one series for a program's
per-process instances of one lock (--no-coalesce: one per object), call
sites without directories; the counts against the targets' own."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.parse
import urllib.request

import yaml

from harness import (BUILD, HANG_S, ROOT, SYNCPROF, SyncprofTestCase, free_port,
                     source_marker)
from test_profiles import GO, Profile
import test_serve
from test_serve import PROMETHEUS, PROMTOOL

FLEET = os.path.join(ROOT, "docs", "fleet")
RULES = os.path.join(FLEET, "syncprof-rules.yml")
RULES_TEST = os.path.join(FLEET, "syncprof-rules.test.yml")
DASHBOARD = os.path.join(FLEET, "syncprof-dashboard.json")
WORKLOAD_SOURCE = os.path.join(ROOT, "tests", "targets", "workload.c")
QEMULOCKS = os.path.join(BUILD, "tests", "targets", "qemulocks")
QEMU_SOURCE = os.path.join(ROOT, "tests", "targets", "qemulocks.c")
# Grafana's own variables, as a dashboard over a few minutes sets them
# with a 1 s scrape interval.
GRAFANA = {"$__rate_interval": "15s", "$__range": "2m"}


def timed_lock_site():
    return f"timed_lock workload.c:{source_marker(WORKLOAD_SOURCE, 'CALLSITE', 'timed_lock')}"


def dashboard_targets():
    """(panel title, expression) of every query of the dashboard."""
    with open(DASHBOARD) as f:
        board = json.load(f)
    return [(p["title"], t["expr"]) for p in board["panels"]
            for t in p.get("targets", [])]


def fleet_doc_queries():
    """The queries docs/fleet.md offers under "Useful queries"."""
    with open(os.path.join(ROOT, "docs", "fleet.md")) as f:
        text = f.read()
    block = re.search(r"Useful queries.*?```\n(.*?)```", text, re.S).group(1)
    return [l for l in block.splitlines() if l.strip() and not l.startswith("#")]


def dashboard_default(name):
    with open(DASHBOARD) as f:
        board = json.load(f)
    for var in board["templating"]["list"]:
        if var["name"] == name:
            return var["current"]["value"]
    raise AssertionError(f"no variable {name}")


def grafana(expr, **variables):
    """expr with Grafana's variables and the dashboard's set."""
    values = dict(GRAFANA, **{f"${k}": v for k, v in variables.items()})
    for key in sorted(values, key=len, reverse=True):
        expr = expr.replace(key, values[key])
    return expr


def waits_of(metrics, name="syncprof_lock_waits_total", **want):
    """{labels dict as a tuple: value} of one metric's samples."""
    out = {}
    for (n, labels), value in metrics.items():
        d = dict(labels)
        if n == name and all(d.get(k) == v for k, v in want.items()):
            out[tuple(sorted(d.items()))] = value
    return out


class Fleet(SyncprofTestCase):

    start_serve = test_serve.Serve.start_serve
    stop_serve = test_serve.Serve.stop_serve
    get = test_serve.Serve.get
    scrape = test_serve.Serve.scrape
    own_workload = test_serve.Serve.own_workload
    free_port = staticmethod(free_port)

    # --- the alerting rules -------------------------------------------------

    def test_rules_pass_promtool(self):
        self.assertTrue(PROMTOOL, "no promtool: 'make deps' installs prometheus")
        for args in (["check", "rules", RULES], ["test", "rules", RULES_TEST]):
            run = subprocess.run([PROMTOOL, *args], capture_output=True,
                                 text=True, timeout=HANG_S, cwd=FLEET)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn("SUCCESS", run.stdout)
        # The test file exercises every alert, firing and not.
        with open(RULES) as f:
            alerts = {r["alert"] for g in yaml.safe_load(f)["groups"]
                      for r in g["rules"] if "alert" in r}
        with open(RULES_TEST) as f:
            tested = [t for test in yaml.safe_load(f)["tests"]
                      for t in test.get("alert_rule_test", [])]
        for alert in alerts:
            cases = [t for t in tested if t["alertname"] == alert]
            self.assertTrue([t for t in cases if t["exp_alerts"]], alert)
            self.assertTrue([t for t in cases if not t["exp_alerts"]], alert)

    # --- Prometheus, the rules and the dashboard on real targets ------------

    def start_prometheus(self, target):
        """Debian's Prometheus scraping target every second, with the
        rules loaded; its API's base URL once it has scraped."""
        config = self.path("prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "  evaluation_interval: 1s\n"
                    f"rule_files: ['{RULES}']\n"
                    "scrape_configs:\n  - job_name: syncprof\n"
                    "    static_configs:\n"
                    f"      - targets: ['{target}']\n")
        port = self.free_port()
        proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}",
             f"--storage.tsdb.path={self.path('tsdb')}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.children.append(proc)
        api = f"http://127.0.0.1:{port}"
        self.until(lambda: self.query(api, 'up{job="syncprof"}') == [1.0],
                   "Prometheus did not scrape syncprof")
        return api

    def api(self, api, path, **params):
        url = f"{api}/api/v1/{path}?" + urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(url, timeout=30) as r:
            data = json.load(r)
        self.assertEqual(data["status"], "success", data)
        return data["data"]

    def query_all(self, api, promql):
        """[(labels, value)] of an instant query."""
        return [(r["metric"], float(r["value"][1]))
                for r in self.api(api, "query", query=promql)["result"]]

    def query(self, api, promql):
        try:
            return [v for _, v in self.query_all(api, promql)]
        except OSError:
            return None

    def until(self, ready, what, timeout=HANG_S):
        """Polls ready() (each call a query) until it holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.5)
        self.fail(what)

    def test_dashboard_queries_and_rules_on_real_prometheus(self):
        self.assertTrue(PROMETHEUS, "no prometheus: 'make deps' installs it")
        tag = os.getpid() % 10000
        locker, idler = (self.own_workload(f"{n}{tag}") for n in ("fllock", "flidle"))
        lock_name, idle_name = (os.path.basename(p) for p in (locker, idler))
        lock = self.start_waiting_target(
            [locker, "mutex", "--threads", "4", "--iters", "1000000",
             "--hold-us", "300", "--wait-signal", "--until-signal",
             "--truth", self.path("lock.json")])
        idle = self.start_waiting_target(
            [idler, "condvar", "--threads", "3", "--iters", "1000000",
             "--hold-us", "3000", "--wait-signal",
             "--truth", self.path("idle.json")])
        proc, base = self.start_serve("--pid", str(lock.pid), "--pid", str(idle.pid))
        self.go(lock)
        self.go(idle)
        api = self.start_prometheus(urllib.parse.urlsplit(base).netloc)
        programs = f"{lock_name}|{idle_name}"
        # Both programs' waits in a rate window of the dashboard's.
        for name in (lock_name, idle_name):
            self.until(lambda: (self.query(api, grafana(
                f'sum(rate(syncprof_lock_wait_seconds_total{{process="{name}"}}'
                '[$__rate_interval]))')) or [0])[0] > 0,
                f"no waits of {name} in Prometheus")
        # The dashboard's variables find the programs and both classes.
        processes = self.api(api, "label/process/values",
                             **{"match[]": "syncprof_lock_waits_total"})
        self.assertIn(lock_name, processes)
        self.assertIn(idle_name, processes)
        self.assertEqual(set(self.api(api, "label/class/values",
                                      **{"match[]": "syncprof_lock_waits_total"})),
                         {"lock", "event"})
        self.assertEqual(dashboard_default("class"), "lock")
        # Every panel's every query, as the dashboard sends it by default
        # (idle waits left out), answers with data from these programs.
        targets = dashboard_targets()
        self.assertGreaterEqual(len(targets), 10)
        for title, expr in targets:
            promql = grafana(expr, instance=".*", process=programs, **{"class": "lock"})
            result = self.query_all(api, promql)
            self.assertTrue(result, f"{title}: no data for {promql}")
            for labels, _ in result:
                if "process" in labels:
                    self.assertIn(labels["process"], (lock_name, idle_name), title)
                self.assertNotIn("condvar", labels.get("type", ""), (title, labels))
        # The first panel names the lock where the locker's threads wait,
        # at its call site, without directories.
        title, expr = targets[0]
        top = self.query_all(api, grafana(expr, instance=".*", process=programs,
                                          **{"class": "lock"}))
        ours = [(l, v) for l, v in top if l["process"] == lock_name
                and l["object"] == "big_lock"]
        self.assertTrue(ours, top)
        self.assertEqual(ours[0][0]["callsite"], timed_lock_site())
        self.assertGreater(ours[0][1], 0)
        # class=event brings the idle waits back: the idler's condvar.
        idle_top = self.query_all(api, grafana(expr, instance=".*", process=programs,
                                               **{"class": "event"}))
        self.assertTrue([l for l, v in idle_top if l["process"] == idle_name
                         and l["type"] == "condvar" and v > 0
                         and l["callsite"].startswith("condvar_worker workload.c:")],
                        idle_top)
        for labels, _ in top + idle_top:
            self.assertNotIn("/", labels["callsite"], labels)
        # docs/fleet.md's queries: data, the lock ones without idle waits.
        queries = fleet_doc_queries()
        condvars = {l["object"] for l, _ in idle_top if l["type"] == "condvar"}
        self.assertGreaterEqual(len(queries), 3)
        for promql in queries:
            result = self.query_all(api, promql)
            self.assertTrue(result, promql)
            if 'class="lock"' in promql:
                # (The mutex a condvar wait takes back is a lock wait.)
                self.assertFalse(condvars & {l.get("object") for l, _ in result},
                                 promql)
        # The rules load and evaluate against the real series.
        self.until(lambda: all(r.get("lastEvaluation", "").startswith("2")
                               and not r["lastEvaluation"].startswith("0001")
                               for g in self.api(api, "rules")["groups"]
                               for r in g["rules"]),
                   "the rules were not evaluated")
        rules = [r for g in self.api(api, "rules")["groups"] for r in g["rules"]]
        self.assertEqual(len(rules), 4)
        for r in rules:
            self.assertEqual(r["health"], "ok", r)
        self.until(lambda: [v for l, v in self.query_all(
            api, f'syncprof:lock_wait_share:rate5m{{process="{lock_name}"}}')
            if l["object"] == "big_lock" and v > 0],
            "the recording rule has no share for big_lock")
        os.kill(lock.pid, signal.SIGUSR2)
        self.assertEqual(lock.wait(timeout=HANG_S), 0)
        self.stop_serve(proc)

    # --- the series --------------------------------------------------------

    def test_max_series_bounds_every_series(self):
        """--max-series 4 on a program with 16 locks at one call site,
        --no-coalesce (a series each) in full mode (every call counted):
        no scrape shows more than 4 series, "other" ones included, and
        the lock class's series still add up to every call the target
        made (--type mutex: the dynamic loader's own recursive mutexes
        left out)."""
        target = self.start_waiting_target(self.workload_cmd(
            "heap", "--threads", "4", "--iters", "400", "--hold-us", "50",
            "--objects", "16", "--wait-signal"))
        proc, base = self.start_serve("--mode", "full", "--type", "mutex",
                                      "--no-coalesce", "--max-series", "4",
                                      "--pid", str(target.pid))

        def check(m):
            lines = waits_of(m)
            self.assertLessEqual(len(lines), 4, lines)
            self.assertEqual(m[("syncprof_series", frozenset())], len(lines))
            self.assertEqual(m[("syncprof_series_max", frozenset())], 4)
            self.assertEqual(len(waits_of(m, "syncprof_lock_wait_seconds_count")),
                             len(lines))
            for labels in lines:
                self.assertIn(dict(labels)["class"], ("lock", "event"))

        self.go(target)
        while target.poll() is None:
            check(self.scrape(base))
        self.assertEqual(target.returncode, 0)
        truth = self.truth()
        # A scrape answers from the loop's last read (docs/fleet.md,
        # "Bounds"): the target's last waits come with a later one.
        deadline = time.monotonic() + 30
        while True:
            m = self.scrape(base)
            check(m)
            seen = sum(waits_of(m, **{"class": "lock"}).values())
            if seen >= truth["count"] or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        other = waits_of(m, process="other", callsite="other", type="other",
                         object="other", **{"class": "lock"})
        self.assertEqual(len(other), 1, waits_of(m))
        self.assertEqual(sum(waits_of(m, **{"class": "lock"}).values()),
                         truth["count"])
        self.assertGreater(m[("syncprof_series_dropped_waits_total", frozenset())], 0)
        self.stop_serve(proc)

    def serve_instances(self, name, *args):
        """Three processes of one program, each locking its own 4 heap
        mutexes at one call site, under --serve --mode full --type mutex
        ARGS: the metrics once all exited, and their truths."""
        targets = [self.start_waiting_target(
            [name, "heap", "--threads", "3", "--iters", "150", "--hold-us", "50",
             "--objects", "4", "--wait-signal", "--truth",
             self.path(f"{os.path.basename(name)}-{i}.json")]) for i in range(3)]
        pids = [a for t in targets for a in ("--pid", str(t.pid))]
        proc, base = self.start_serve("--mode", "full", "--type", "mutex",
                                      *args, *pids)
        for t in targets:
            self.go(t)
        for t in targets:
            self.assertEqual(t.wait(timeout=HANG_S), 0)
        truths = [self.truth(f"{os.path.basename(name)}-{i}.json") for i in range(3)]
        m = self.scrape_counted(base, os.path.basename(name),
                                sum(t["count"] for t in truths))
        self.stop_serve(proc)
        return m, truths

    def scrape_counted(self, base, process, count):
        """/metrics once process's lock waits number count (the targets'
        own), or the last scrape at the deadline: a target's last events
        reach syncprof's loop after it has exited, later on a busy host."""
        deadline = time.monotonic() + HANG_S
        while True:
            m = self.scrape(base)
            seen = sum(waits_of(m, process=process, **{"class": "lock"}).values())
            if seen >= count or time.monotonic() > deadline:
                return m
            time.sleep(0.2)

    def test_instances_of_one_lock_share_a_series(self):
        tag = os.getpid() % 10000
        name = self.own_workload(f"flco{tag}")
        m, truths = self.serve_instances(name)
        ours = waits_of(m, process=os.path.basename(name), **{"class": "lock"})
        # One series for the 12 mutexes of 3 processes: every call.
        self.assertEqual(len(ours), 1, ours)
        labels, count = next(iter(ours.items()))
        labels = dict(labels)
        self.assertEqual(labels["type"], "mutex")
        self.assertEqual(labels["object"], "(unnamed)")
        self.assertEqual(labels["callsite"], timed_lock_site())
        self.assertEqual(count, sum(t["count"] for t in truths))
        # --no-coalesce: one series per mutex, named by its address.
        name = self.own_workload(f"flnc{tag}")
        m, truths = self.serve_instances(name, "--no-coalesce")
        ours = waits_of(m, process=os.path.basename(name), **{"class": "lock"})
        objects = {o for t in truths for o in t["objects"]}
        self.assertEqual({dict(l)["object"] for l in ours}, objects)
        self.assertEqual(sum(ours.values()), sum(t["count"] for t in truths))

    # --- pprof ----------------------------------------------------------

    def test_pprof_starts_at_the_call_site(self):
        """QEMU's big lock through two wrappers: the written profile's
        samples start at the vCPU's call (the table's call site), and
        hold the truth's waits."""
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        out = self.path("qemu.pb.gz")
        run = subprocess.run([SYNCPROF, "-f", "pprof", "-o", out, "--",
                              QEMULOCKS, "--iters", "30", "--truth",
                              self.path("truth.json")],
                             capture_output=True, text=True, timeout=HANG_S)
        self.assertEqual(run.returncode, 0, run.stderr)
        truth = self.truth()
        profile = Profile(out)
        bql = profile.of("qemu_global_mutex")
        self.assertTrue(bql, profile.samples)
        line = source_marker(QEMU_SOURCE, "CALLSITE", "bql")
        for s in bql:
            self.assertEqual(profile.functions(s)[0], "vcpu_loop", s)
            self.assertEqual(profile.lines[s["locations"][0]][0][2], line)
            for wrapper in ("qemu_mutex_lock_impl", "qemu_mutex_lock_iothread_impl"):
                self.assertNotIn(wrapper, profile.functions(s))
        self.assertEqual(sum(s["count"] for s in bql), truth["paths"]["bql"]["count"])
        self.assertWithin(sum(s["delay"] for s in bql), truth["paths"]["bql"]["wait_ns"],
                          0.05)
        top = profile.pprof("-top")
        self.assertNotRegex(top, r"(?m)\sqemu_mutex_lock_impl$")
        self.assertIn("-tagfocus=class=lock", top)

    def test_served_profile_names_its_scope(self):
        """--serve --pid A --pid B: the profile's header says both, not
        the first process."""
        self.assertTrue(GO, "no go tool pprof: 'make deps' installs golang-go")
        targets = [self.start_waiting_target(self.workload_cmd(
            "mutex", "--threads", "2", "--iters", "100", "--hold-us", "200",
            "--wait-signal", truth=f"t{i}.json")) for i in range(2)]
        proc, base = self.start_serve("--pid", str(targets[0].pid),
                                      "--pid", str(targets[1].pid))
        for t in targets:
            self.go(t)
        for t in targets:
            self.assertEqual(t.wait(timeout=HANG_S), 0)
        env = dict(os.environ, PPROF_TMPDIR=self.tmp.name, HOME=self.tmp.name)
        top = subprocess.run([GO, "tool", "pprof", "-top", base + "/debug/pprof/block"],
                             capture_output=True, text=True, timeout=HANG_S, env=env)
        self.assertEqual(top.returncode, 0, top.stderr)
        self.assertIn(f"syncprof: pids {targets[0].pid} {targets[1].pid}, mode "
                      "contended", top.stdout)
        self.stop_serve(proc)
