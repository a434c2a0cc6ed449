"""`Scripts/bench --fleet`: the same workloads through nginx to 1 and to 3 replicas, beside one
replica direct, each fleet on a throwaway PostgreSQL of its own (Scripts/fleet, plain HTTP
through nginx so the figures show the proxy, not TLS). On one machine the fleet shares the
cores with PostgreSQL, nginx and wrk: it cannot be faster; this shows what nginx costs and
what the replicas' commits add up to, for the estimate in docs/FLEET.md.
"""
import os
import shutil
import subprocess
import tempfile
import urllib.parse

import harness
from harness import SESSIONS, SESSION_ENV, create_sessions, print_table, row, wrk

ROOT = os.path.dirname(os.path.dirname(harness.HERE))


class Endpoint:
    """A URL to send the setup requests to (harness.post_all wants `port` and `connection`)."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.base, self.port = url.rstrip("/"), parts.port

    def connection(self):
        import http.client
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)


class Fleet:
    def __init__(self, replicas):
        self.folder = tempfile.mkdtemp(prefix="todaysim-bench-fleet-", dir="/tmp")
        self.script = os.path.join(ROOT, "Scripts", "fleet")
        subprocess.run([self.script, "start", self.folder, "--replicas", str(replicas), "--until-exit-of", str(os.getpid())],
                       env={**os.environ, "TODAYSIM_BIN": os.path.join(harness.BIN_DIR, "todaysim")},
                       check=True, stdout=subprocess.DEVNULL)
        self.nginx = Endpoint(self.read("http"))
        self.replicas = [Endpoint(url) for url in self.read("replicas").split()]

    def read(self, name):
        with open(os.path.join(self.folder, name)) as file:
            return file.read().strip()

    def commits(self):
        """(inputs, commits) summed over the replicas' /metrics."""
        inputs = commits = 0.0
        for replica in self.replicas:
            server = harness.Server.__new__(harness.Server)
            server.port = replica.port
            inputs += server.metric("todaysim_store_commit_inputs_sum")
            commits += server.metric("todaysim_store_commit_inputs_count")
        return inputs, commits

    def stop(self):
        subprocess.run([self.script, "stop", self.folder], check=False, stdout=subprocess.DEVNULL)
        shutil.rmtree(self.folder, ignore_errors=True)


def measure(target, fleet):
    """GET view, web-events and a timeline page against `target`; with the mean batch size."""
    view = wrk(target.base, "get-session.lua", env=SESSION_ENV)
    before = fleet.commits()
    writes = wrk(target.base, "web-events.lua", env=SESSION_ENV)
    after = fleet.commits()
    batch = (after[0] - before[0]) / max(1.0, after[1] - before[1])
    page = wrk(target.base + "/v1/sessions/bench-0/timeline?after=10&limit=100")
    return {"view": view, "web-events": writes, "timeline": page, "batch": batch, "commits/s": writes[0] / max(1.0, batch)}


def run():
    results = {}
    one = Fleet(1)
    try:
        create_sessions(one.nginx, [f"bench-{i}" for i in range(SESSIONS)])
        results["direct"] = measure(one.replicas[0], one)
        results["nginx → 1"] = measure(one.nginx, one)
    finally:
        one.stop()
    three = Fleet(3)
    try:
        create_sessions(three.nginx, [f"bench-{i}" for i in range(SESSIONS)])
        results["nginx → 3"] = measure(three.nginx, three)
    finally:
        three.stop()
    direct = results["direct"]
    for name, label in (("view", f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)"), ("web-events", "POST …/web-events"),
                        ("timeline", "GET …/timeline?after=10&limit=100")):
        for target in ("direct", "nginx → 1", "nginx → 3"):
            result = results[target][name]
            if target == "direct":
                row(f"{label}, one replica direct", result)
            else:
                row(f"{label}, {target}", result, "direct", result[0] / direct[name][0],
                    0.80 if name == "view" and target == "nginx → 1" else None)
    print_table("fleet on one PostgreSQL (plain HTTP through nginx; every process on this machine's cores)")
    for target, result in results.items():
        print(f"  {target}: web-events {result['batch']:.1f} inputs per commit, {result['commits/s']:,.0f} commits/s over all replicas")
