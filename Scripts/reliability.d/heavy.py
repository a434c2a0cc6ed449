"""Heavy clients beside an ordinary one (issue 12, item 10): one client's heavy request once
stalled everyone (two exports of a 200k-entry session: /healthz p50 1.2 s; two clients posting
1 MiB /steps batches: another client's writes p50 2.8 s; forks and resets of large sessions
blocked every writer for 0.5-0.9 s).

An ordinary client (keep-alive; alternately a write and a read of its own session) runs alone,
then beside each heavy load in turn, for SECONDS each. Goal per phase: its p99 <= 2 x its idle
p99 + 10 ms (a phase that misses it is measured once more, both figures reported: one window
on a shared machine can catch another process's burst). Loopback only, bounded in time.

    python3 heavy.py TODAYSIM_BINARY [ENTRIES=200000] [SECONDS=10]
"""
import collections
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BINARY = sys.argv[1]
ENTRIES = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 10
WORK = tempfile.mkdtemp(prefix="todaysim-heavy-")
results = {"passed": 0, "failed": 0}


def check(ok, name, detail=""):
    results["passed" if ok else "failed"] += 1
    print(f"{'PASS' if ok else 'FAIL'}\t{name}\t{detail}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT = free_port()


class Connection:
    def __init__(self):
        self.connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)

    def request(self, method, path, body=None):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        self.connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = self.connection.getresponse()
        return response.status, response.read()


def step_batch(count):
    return json.dumps([{"clock": {"advanceMs": 1}}] * count).encode()


def prepare(id, label):
    client = Connection()
    client.request("POST", "/v1/sessions", {"uid": "big", "id": id, "label": label})
    batch = step_batch(1000)
    made = 1
    while made < ENTRIES:
        status, raw = client.request("POST", f"/v1/sessions/{id}/steps", batch)
        if status != 200:
            raise SystemExit(f"heavy: preparing answered {status}: {raw[:200]!r}")
        made += 1000
    return made


def ordinary(stop, latencies):
    client = Connection()
    turn = 0
    while not stop.is_set():
        started = time.perf_counter()
        if turn % 2 == 0:
            status, _ = client.request("POST", "/v1/sessions/ordinary/clock", {"advanceMs": 1})
        else:
            status, _ = client.request("GET", "/v1/sessions/ordinary")
        latencies.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise SystemExit(f"heavy: the ordinary client got {status}")
        turn += 1


def exporter(stop, counts):
    client = Connection()
    while not stop.is_set():
        after = 0
        while not stop.is_set():
            status, raw = client.request("GET", f"/v1/sessions/big/export?after={after}")
            counts.append(status)
            page = json.loads(raw)
            if not page["more"]:
                break
            after = page["next"]


def batcher(number):
    def run(stop, counts):
        client = Connection()
        client.request("POST", "/v1/sessions", {"uid": "batcher", "id": f"batcher-{number}"})
        batch = step_batch(1000)
        while not stop.is_set():
            status, _ = client.request("POST", f"/v1/sessions/batcher-{number}/steps", batch)
            counts.append(status)
    return run


def remover(stop, counts):
    """Purges the label of a second large session (hidden at once, its rows deleted in small
    transactions), then forks the large session again and again (copied in chunks)."""
    client = Connection()
    status, raw = client.request("DELETE", "/v1/sessions?label=doomed")
    counts.append(status)
    number = 0
    while not stop.is_set():
        status, _ = client.request("POST", "/v1/sessions/big/fork", {"id": f"copy-{number}"})
        counts.append(status)
        number += 1


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def phase(name, heavy_loads):
    stop = threading.Event()
    latencies, counts = [], []
    threads = [threading.Thread(target=ordinary, args=(stop, latencies))]
    threads += [threading.Thread(target=load, args=(stop, counts)) for load in heavy_loads]
    for thread in threads:
        thread.start()
    time.sleep(SECONDS)  # a measuring window
    stop.set()
    for thread in threads:
        thread.join(timeout=180)
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    statuses = dict(collections.Counter(c for c in counts if isinstance(c, int) and c >= 200))
    print(f"{name:<28} ordinary: {len(latencies):>6} requests  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
          f"max {max(latencies):8.2f} ms  heavy: {len(counts)} operations {statuses or ''}", flush=True)
    return p99, counts


def main():
    server = subprocess.Popen([BINARY, "serve", "--port", str(PORT), "--db", os.path.join(WORK, "heavy.sqlite"), "--quiet"])
    try:
        deadline = time.time() + 30
        while True:
            try:
                if Connection().request("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                if time.time() > deadline:
                    raise SystemExit("heavy: the server did not start")
                time.sleep(0.05)
        started = time.time()
        made = prepare("big", "big")
        prepare("doomed-session", "doomed")
        Connection().request("POST", "/v1/sessions", {"uid": "ordinary", "id": "ordinary"})
        print(f"heavy: two sessions of {made} entries made in {time.time() - started:.1f} s", flush=True)
        print(f"heavy: a session of {made} entries; {SECONDS:.0f} s per phase", flush=True)
        idle, _ = phase("idle", [])
        goal = 2 * idle + 10
        for name, loads in [("2 exporting clients", [exporter, exporter]),
                            ("2 clients posting batches", [batcher(1), batcher(2)]),
                            ("a large purge, then forks", [remover])]:
            p99, counts = phase(name, loads)
            first = ""
            if p99 > goal:
                # Once more before failing: on a shared 2-core machine one window can catch
                # another process's burst. Both figures are reported.
                first = f"first window {p99:.2f} ms, then "
                p99, counts = phase(name + " (again)", loads)
            check(p99 <= goal, f"beside {name}: ordinary p99 <= 2 x idle p99 + 10 ms",
                  f"{first}{p99:.2f} ms, goal {goal:.2f} ms, {len(counts)} heavy operations")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
