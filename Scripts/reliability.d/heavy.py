"""Heavy clients beside an ordinary one (issue 12, item 10): one client's heavy request once
stalled everyone (two exports of a 200k-entry session: /healthz p50 1.2 s; two clients posting
1 MiB /steps batches: another client's writes p50 2.8 s; forks and resets of large sessions
blocked every writer for 0.5-0.9 s).

An ordinary client (keep-alive; alternately a write and a read of its own session) runs alone,
then beside each heavy load in turn, for SECONDS each. Loopback only, bounded in time.

What fails the run (outcomes, in every version): every ordinary request answered 200; every
heavy operation answered 200 (201 for a fork), none still unanswered when its phase ends (up to
180 s later), at least one done per phase; no ordinary request waited more than
ORDINARY_WAIT_BOUND_S (30 s): a bound no healthy run comes near (a request beside a heavy one
takes milliseconds, the stalls this test was written for took one or two seconds), there to
catch a writer held for good, not a slow machine.

The latency goal per phase: the ordinary client's p99 <= 2 x its idle p99 + 10 ms. It is a
figure, printed with its goal beside it ("GOAL met ... p99 9.40 ms (goal <= 11.10 ms)"). In the fast
version (ENTRIES < 100000, what Scripts/test runs, on whatever build it is given) it never fails
the run: on a shared or loaded machine one window can catch another process's burst (issue 20,
item 1). In the long version (ENTRIES >= 100000, run by hand, on a release build: a debug
build's 1,000-step batch holds the writer five times as long) a missed goal is measured once
more and fails the run when the second window misses it too.

    python3 heavy.py TODAYSIM_BINARY [ENTRIES=200000] [SECONDS=10]
"""
import collections
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testkit import Checks, free_port, percentile  # noqa: E402

BINARY = sys.argv[1]
ENTRIES = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 10
FAST = ENTRIES < 100_000  # the fast version (Scripts/test): the latency goal is reported, not a failure
ORDINARY_WAIT_BOUND_S = 30  # no ordinary request may wait longer: unreachable for a healthy run
PHASE_JOIN_S = 180          # a heavy operation still unanswered this long after its phase ended fails
WORK = tempfile.mkdtemp(prefix="todaysim-heavy-")
checks = Checks(fast=FAST)
check, goal = checks.check, checks.goal


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


def ordinary(stop, latencies, problems):
    """Until `stop`: a write, a read, ... of its own session; every answer must be 200 (a thread
    cannot fail the run by raising: what went wrong goes to `problems`)."""
    client = Connection()
    turn = 0
    while not stop.is_set():
        started = time.perf_counter()
        try:
            if turn % 2 == 0:
                status, raw = client.request("POST", "/v1/sessions/ordinary/clock", {"advanceMs": 1})
            else:
                status, raw = client.request("GET", "/v1/sessions/ordinary")
        except (OSError, http.client.HTTPException) as error:
            problems.append(f"request {turn}: {error!r}")
            return
        latencies.append((time.perf_counter() - started) * 1000)
        if status != 200:
            problems.append(f"request {turn}: {status} {raw[:200]!r}")
            return
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


def guarded(load):
    """Runs a heavy load; a request that fails (no answer, a broken page) is recorded in
    `counts` as a string, which the phase's outcome check reports."""
    def run(stop, counts):
        try:
            load(stop, counts)
        except (OSError, http.client.HTTPException, ValueError, KeyError) as error:
            counts.append(f"{load.__name__}: {error!r}")
    run.__name__ = getattr(load, "__name__", "load")
    return run


def phase(name, heavy_loads):
    """One measuring window: the outcome checks of the phase, then (p99, heavy operations)."""
    stop = threading.Event()
    latencies, counts, problems = [], [], []
    threads = [threading.Thread(target=ordinary, args=(stop, latencies, problems))]
    threads += [threading.Thread(target=guarded(load), args=(stop, counts)) for load in heavy_loads]
    for thread in threads:
        thread.start()
    time.sleep(SECONDS)  # a measuring window, not a wait for something
    stop.set()
    ended = time.monotonic()
    for thread in threads:
        thread.join(timeout=max(0.0, ended + PHASE_JOIN_S - time.monotonic()))
    hanging = sum(1 for thread in threads if thread.is_alive())
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    slowest = max(latencies, default=float("nan"))
    statuses = dict(collections.Counter(c for c in counts if isinstance(c, int)))
    print(f"{name:<28} ordinary: {len(latencies):>6} requests  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
          f"max {slowest:8.2f} ms  heavy: {len(counts)} operations {statuses or ''}", flush=True)
    check(not problems and latencies and not hanging, f"{name}: every ordinary request answered 200",
          f"{len(latencies)} answered; {'; '.join(problems[:3]) or 'no errors'}"
          f"{f'; {hanging} clients still waiting {PHASE_JOIN_S} s after the window' if hanging else ''}")
    check(slowest <= ORDINARY_WAIT_BOUND_S * 1000,
          f"{name}: no ordinary request waited more than {ORDINARY_WAIT_BOUND_S} s (a bound no healthy run comes "
          f"near: a stuck writer, not a slow machine)", f"the longest waited {slowest:.0f} ms")
    if heavy_loads:
        wrong = [c for c in counts if c not in (200, 201)]
        check(counts and not wrong and not hanging, f"{name}: every heavy operation answered (200, 201 for a fork)",
              f"{len(counts)} operations {statuses}; {wrong[:3] or 'none otherwise'}")
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
        bound = 2 * idle + 10
        for name, loads in [("2 exporting clients", [exporter, exporter]),
                            ("2 clients posting batches", [batcher(1), batcher(2)]),
                            ("a large purge, then forks", [remover])]:
            p99, counts = phase(name, loads)
            first = ""
            if p99 > bound and not FAST:
                # Once more before failing: on a shared 2-core machine one window can catch
                # another process's burst. Both figures are reported.
                first = f"first window {p99:.2f} ms, then "
                p99, counts = phase(name + " (again)", loads)
            goal(p99 <= bound, f"beside {name}: ordinary p99 <= 2 x idle p99 + 10 ms",
                 f"{first}p99 {p99:.2f} ms (goal <= {bound:.2f} ms), {len(counts)} heavy operations")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    met, missed = checks.goals_met, checks.goals_missed
    goals = f"; latency goals met {met} of {met + missed} (reported)" if FAST else ""
    return checks.summary(goals)


if __name__ == "__main__":
    sys.exit(main())
