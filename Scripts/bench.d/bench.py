"""Scripts/bench: drives todaysim with wrk and prints one table. See Scripts/bench."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BIN_DIR = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
SECONDS = int(os.environ.get("BENCH_SECONDS", "3"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
THREADS, CONNECTIONS = 2, 32
SESSIONS = 64


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, workdir, synchronous="normal"):
        self.port = free_port()
        self.db = os.path.join(workdir, f"bench-{synchronous}-{self.port}.sqlite")
        self.process = subprocess.Popen(
            [os.path.join(BIN_DIR, "todaysim"), "serve", "--host", "127.0.0.1", "--port", str(self.port),
             "--db", self.db, "--synchronous", synchronous],
            stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                self.get("/healthz")
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("bench: the server did not start")

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
    runs = [wrk_once(url, script, connections, env) for _ in range(RUNS)]
    return tuple(statistics.median(run[index] for run in runs) for index in range(3))


def with_waiters(server, count, measure):
    """Runs `measure` while `count` timeline requests wait (waitMs=30000) on a quiet session."""
    post_all(server, [("/v1/sessions", {"uid": "waiter", "id": "waited-on"})])
    status, body = server.get("/v1/sessions/waited-on")
    last = json.loads(body)["counts"]["timeline"]
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(f"GET /v1/sessions/waited-on/timeline?after={last}&waitMs=30000 HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        sockets.append(sock)
    try:
        time.sleep(0.5)
        return measure()
    finally:
        for sock in sockets:
            sock.close()


def storage_ceiling(synchronous):
    runs = []
    for _ in range(RUNS):
        output = subprocess.run([os.path.join(BIN_DIR, "todaysim-bench"), "storage", "--seconds", str(SECONDS),
                                 "--synchronous", synchronous], capture_output=True, text=True, check=True).stdout
        runs.append(float(output.split()[2]))
    return statistics.median(runs)


def create_sessions(server, ids):
    post_all(server, [("/v1/sessions", {"uid": f"u-{i}", "id": i}) for i in ids])


ROWS = []


def row(name, result, ceiling_name="", ratio=None, target=None):
    rps, p50, p99 = result
    verdict = ""
    if ratio is not None:
        verdict = f"{ratio:.2f} of {ceiling_name}" + (f" (target >= {target:.2f}: {'met' if ratio >= target else 'MISSED'})" if target else "")
    ROWS.append((name, f"{rps:,.0f}", f"{p50:.2f}", f"{p99:.2f}", verdict))


def print_table(title):
    print(f"\n{title}")
    widths = [max(len(r[i]) for r in ROWS + [("case", "req/s", "p50 ms", "p99 ms", "vs ceiling")]) for i in range(5)]
    header = ("case", "req/s", "p50 ms", "p99 ms", "vs ceiling")
    for line in [header] + ROWS:
        print("  ".join(cell.ljust(widths[i]) if i in (0, 4) else cell.rjust(widths[i]) for i, cell in enumerate(line)))
    ROWS.clear()


def main():
    workdir = tempfile.mkdtemp(prefix="todaysim-bench-")
    print(f"todaysim bench: nproc {os.cpu_count()}, wrk -t{THREADS} -c{CONNECTIONS} -d{SECONDS}s, "
          f"{RUNS} runs each (median), loopback")
    try:
        env = {"BENCH_SESSIONS": str(SESSIONS)}
        for synchronous in ("normal", "full"):
            server = Server(workdir, synchronous)
            try:
                create_sessions(server, [f"bench-{i}" for i in range(SESSIONS)])
                ceiling = storage_ceiling(synchronous)
                if synchronous == "normal":
                    health = wrk(server.base + "/healthz")
                    row("GET /healthz (HTTP ceiling)", health)
                    view = wrk(server.base, "get-session.lua", env=env)
                    row(f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)", view, "/healthz", view[0] / health[0], 0.60)
                writes = wrk(server.base, "web-events.lua", env=env)
                row("POST …/web-events (pull→render→result)", writes, "storage", writes[0] / ceiling,
                    0.50 if synchronous == "normal" else None)
                lifecycle = wrk(server.base, "lifecycle.lua", env=env)
                row("POST …/lifecycle", lifecycle, "storage", lifecycle[0] / ceiling)
                if synchronous == "normal":
                    page = wrk(server.base + "/v1/sessions/bench-0/timeline?after=10&limit=100")
                    row("GET …/timeline?after=10&limit=100", page)
                    waiting = with_waiters(server, 200, lambda: wrk(server.base, "get-session.lua", env=env))
                    row("GET /v1/sessions/{id} beside 200 parked waitMs requests", waiting, "without",
                        waiting[0] / view[0])
                ROWS.append(("storage ceiling: SQLite alone, 1 row + 3 entries per tx", f"{ceiling:,.0f}", "", "", "tx/s"))
                print_table(f"synchronous={synchronous.upper()} (WAL)" + (" — the shipped setting" if synchronous == "normal" else ""))
            finally:
                server.stop()
        if os.environ.get("BENCH_SKIP_HISTORY") != "1":
            history(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def history(workdir):
    server = Server(workdir)
    try:
        started = time.time()
        create_sessions(server, [f"h-{i}" for i in range(10_000)])
        create_sessions(server, ["fresh", "big"])
        # 100,000 timeline entries on one session: background/foreground pairs, 4 entries each.
        post_all(server, [("/v1/sessions/big/lifecycle", {"type": "background" if i % 2 == 0 else "foreground"})
                          for i in range(25_000)])
        status, body = server.get("/v1/sessions/big")
        entries = json.loads(body)["counts"]["timeline"]
        seeded = time.time() - started
        results = {}
        for name in ("fresh", "big"):
            results[("write", name)] = wrk(server.base, "lifecycle-one.lua", env={"BENCH_SESSION": name})
            results[("read", name)] = wrk(f"{server.base}/v1/sessions/{name}")
        for kind, label in (("write", "POST …/lifecycle on"), ("read", "GET /v1/sessions/")):
            fresh, big = results[(kind, "fresh")], results[(kind, "big")]
            row(f"{label} fresh", fresh)
            ratio = big[0] / fresh[0]
            row(f"{label} big", big, "fresh", ratio, 0.80)
        deep = wrk(f"{server.base}/v1/sessions/big/timeline?after={entries // 2}&limit=100", connections=4)
        row(f"GET big timeline?after={entries // 2}&limit=100 (-c4)", deep)
        print_table(f"history: 10,002 sessions, 'big' has {entries:,} timeline entries (seeded in {seeded:.0f} s)")
        print(f"deep timeline page p50 {deep[1]:.2f} ms (target < 2 ms: {'met' if deep[1] < 2 else 'MISSED'})")
        rss = server.rss_mib()
        print(f"server resident memory: {rss:.1f} MiB (target < 100 MiB: {'met' if rss < 100 else 'MISSED'})")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
