"""Debian's Prometheus, started on a temporary configuration and
storage, scraping one syncprof: for test_serve.py and tests/soak/soak.py."""
import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request

from harness import free_port

PROMETHEUS = shutil.which("prometheus")


def start(workdir, target, interval="1s", job="syncprof"):
    """Prometheus scraping target (HOST:PORT) as job every interval
    (its timeout the same), its files under workdir; (process, API's
    base URL).  The caller waits for the first scrape (query_all)."""
    config = os.path.join(workdir, "prometheus.yml")
    with open(config, "w") as f:
        f.write(f"global:\n  scrape_interval: {interval}\n"
                f"  scrape_timeout: {interval}\n"
                f"scrape_configs:\n  - job_name: {job}\n"
                "    static_configs:\n"
                f"      - targets: ['{target}']\n")
    port = free_port()
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}",
         f"--storage.tsdb.path={os.path.join(workdir, 'tsdb')}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, f"http://127.0.0.1:{port}"


def api_get(api, path, **params):
    """The data of a successful API answer; OSError or ValueError."""
    url = f"{api}/api/v1/{path}?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=30) as r:
        data = json.load(r)
    if data.get("status") != "success":
        raise ValueError(f"{path}: {data}")
    return data["data"]


def query_all(api, promql):
    """[(labels, value)] of an instant query."""
    return [(r["metric"], float(r["value"][1]))
            for r in api_get(api, "query", query=promql)["result"]]
