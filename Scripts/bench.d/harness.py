"""What Scripts/bench's runs share: a todaysim server to measure, wrk, and the result tables."""
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testkit import free_port, start_server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SECONDS = int(os.environ.get("BENCH_SECONDS", "3"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
THREADS, CONNECTIONS = 2, 32
SESSIONS = 64
SESSION_ENV = {"BENCH_SESSIONS": str(SESSIONS)}
BIN_DIR = None  # set by bench.py: where the release todaysim and todaysim-bench are


class Server:
    """`todaysim serve` on a SQLite file in `workdir` (with `synchronous`), or on `db` (a
    PostgreSQL URI); `env` adds to its environment (PGOPTIONS, for instance)."""

    def __init__(self, workdir, synchronous="normal", db=None, env=None):
        self.port = free_port()
        arguments = ["--db", db] if db else [
            "--db", os.path.join(workdir, f"bench-{synchronous}-{self.port}.sqlite"), "--synchronous", synchronous]
        self.process = start_server(os.path.join(BIN_DIR, "todaysim"), self.port, "--host", "127.0.0.1", *arguments,
                                    env=env)

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def get(self, path):
        connection = self.connection()
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()

    def metric(self, name):
        """A sample's value from /metrics (0 when absent)."""
        status, body = self.get("/metrics")
        match = re.search(rf"^{re.escape(name)} ([\d.e+-]+)$", body.decode(), re.M)
        return float(match.group(1)) if match else 0.0

    def rss_mib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def post_all(server, requests):
    """Sends (path, body) pairs over one keep-alive connection; every answer must be 2xx."""
    connection = server.connection()
    for path, body in requests:
        connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        payload = response.read()
        if response.status >= 300:
            raise SystemExit(f"bench: {path} answered {response.status}: {payload[:200]!r}")


def create_sessions(server, ids):
    post_all(server, [("/v1/sessions", {"uid": f"u-{i}", "id": i}) for i in ids])


def wrk_once(url, script=None, connections=CONNECTIONS, env=None):
    command = ["wrk", f"-t{THREADS}", f"-c{connections}", f"-d{SECONDS}s", "--latency"]
    if script:
        command += ["-s", os.path.join(HERE, script)]
    token = f"r{time.time_ns()}"
    output = subprocess.run(command + [url], capture_output=True, text=True,
                            env={**os.environ, "BENCH_TOKEN": token, "BENCH_DIR": HERE, **(env or {})},
                            timeout=SECONDS + 30).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    def percentile(label):
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise SystemExit(f"bench: {url} had {errors.group(1)} error answers")
    return rps, percentile("50"), percentile("99")


def wrk(url, script=None, connections=CONNECTIONS, env=None):
    """(req/s, p50 ms, p99 ms), each the median of RUNS runs."""
    runs = [wrk_once(url, script, connections, env) for _ in range(RUNS)]
    return tuple(statistics.median(run[index] for run in runs) for index in range(3))


ROWS = []


def row(name, result, ceiling_name="", ratio=None, target=None):
    rps, p50, p99 = result
    verdict = ""
    if ratio is not None:
        verdict = f"{ratio:.2f} of {ceiling_name}" + (f" (target >= {target:.2f}: {'met' if ratio >= target else 'MISSED'})" if target else "")
    ROWS.append((name, f"{rps:,.0f}", f"{p50:.2f}", f"{p99:.2f}", verdict))


def print_table(title, header=("case", "req/s", "p50 ms", "p99 ms", "vs ceiling")):
    """Prints ROWS under `title` (first and last columns left-aligned) and empties it."""
    print(f"\n{title}")
    last = len(header) - 1
    widths = [max(len(r[i]) for r in ROWS + [header]) for i in range(len(header))]
    for line in [header] + ROWS:
        print("  ".join(cell.ljust(widths[i]) if i in (0, last) else cell.rjust(widths[i])
                        for i, cell in enumerate(line)).rstrip())
    ROWS.clear()
