"""Disk full, without a special mount (issue 12, items 6 and 8): the server runs under a file
size limit (RLIMIT_FSIZE, set with prlimit), which is lowered under it until writes fail.

Checks: every failed write is 507 insufficient_storage with Retry-After (never 500) and changes
nothing; /readyz says degraded/full while /healthz stays 200; wall-clock timers falling due
meanwhile cost almost no CPU and a line or two of log (backoff), not a spinning core; once the
limit is raised again writes resume on their own and readiness comes back; SIGTERM exits 0; a
new server on the same file holds every acknowledged session and none of the refused ones.
Time (issue 20, item 1): the waits are deadlines no healthy run comes near (30 s to start, for
writes and readiness to come back, 45 s for the timers, 120 s to exit at SIGTERM: the server
drains 5 s at most); the CPU check is the server's own CPU time, which another process's load
does not add to. The wall timers are armed just before the disk fills, 8 s ahead of their due
time, so the few requests in between have all of it.

    python3 disk_full.py TODAYSIM_BINARY
"""
import http.client
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testkit import Checks, free_port  # noqa: E402

BINARY = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="todaysim-disk-full-")
DB = os.path.join(WORK, "full.sqlite")
HARD = 64 << 20
TICKS = os.sysconf("SC_CLK_TCK")
checks = Checks()
check = checks.check


class Server:
    def __init__(self, limited):
        self.port = free_port()
        command = [BINARY, "serve", "--port", str(self.port), "--db", DB]
        if limited:
            command = ["prlimit", f"--fsize={HARD}:{HARD}"] + command
        # stderr through a pipe: a log file would itself hit the file size limit.
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        self.lines = []
        threading.Thread(target=self._read, daemon=True).start()
        self.connection = None
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("disk-full: the server did not start")

    def _read(self):
        for line in self.process.stderr:
            self.lines.append((time.time(), line.rstrip("\n")))

    def request(self, method, path, body=None):
        for attempt in range(2):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.connection.request(method, path, body=json.dumps(body) if body is not None else None,
                                        headers={"Content-Type": "application/json"})
                response = self.connection.getresponse()
                raw = response.read()
                return response.status, raw, dict(response.getheaders())
            except (OSError, http.client.HTTPException):
                self.connection = None
                if attempt == 1:
                    raise

    def cpu_seconds(self):
        # prlimit execs the server, so the child's pid is the server's.
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def set_soft_limit(self, soft):
        subprocess.run(["prlimit", f"--pid={self.process.pid}", f"--fsize={soft}:{HARD}"], check=True)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:  # it drains 5 s at most: 120 s is a hang, not a slow machine
            return self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return "hung"


def wait_for(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def main():
    server = Server(limited=True)
    acknowledged, refused, others = [], [], []
    for number in range(50):
        status, _, _ = server.request("POST", "/v1/sessions", {"uid": "u" * 200, "id": f"early-{number}"})
        if status == 201:
            acknowledged.append(f"early-{number}")
    # Wall sessions whose timers fall due while the disk is full (after the fill below), armed
    # last, so only the fill's few requests come between them and the full disk.
    due_in_ms = 8000
    for number in range(5):
        server.request("POST", "/v1/sessions", {"uid": "wall", "id": f"wall-{number}", "clock": "wall",
                                                "timing": {"softRefreshDeadlineMs": due_in_ms, "pullWatchdogMs": due_in_ms + 500}})
        server.request("POST", f"/v1/sessions/wall-{number}/gestures", {"type": "pull", "requestId": f"p{number}"})
    due_at = time.time() + due_in_ms / 1000
    # No file may grow any more: writes go on while the WAL has room, then fail.
    largest = max(os.path.getsize(path) for path in (DB, DB + "-wal") if os.path.exists(path))
    server.set_soft_limit(largest)
    full_at = None
    for number in range(20000):
        status, raw, headers = server.request("POST", "/v1/sessions", {"uid": "u" * 200, "id": f"fill-{number}"})
        if status == 201:
            acknowledged.append(f"fill-{number}")
            continue
        if status == 507:
            refused.append(f"fill-{number}")
            problem = json.loads(raw)
            check(problem.get("code") == "insufficient_storage" and headers.get("Retry-After") == "10",
                  "a write on a full disk is 507 insufficient_storage with Retry-After", raw[:120])
        else:
            others.append((status, raw[:120]))
        full_at = time.time()
        break
    check(full_at is not None, "the disk filled up", f"{len(acknowledged)} sessions acknowledged before"
          + (f", {due_at - full_at:.1f} s before the wall timers fall due" if full_at else ""))
    if full_at is None:
        return finish(server)
    # A checkpoint can make room in the WAL again (as deleting a file would on a real disk);
    # from here on there is none at all, so what follows is decided by the server alone.
    server.set_soft_limit(1)
    for number in range(20):
        status, raw, _ = server.request("POST", "/v1/sessions", {"uid": "u" * 200, "id": f"more-{number}"})
        (refused if status == 507 else acknowledged if status == 201 else others).append(
            f"more-{number}" if status in (201, 507) else (status, raw[:120]))
    check(not others, "no write was answered anything but 201 or 507", f"{others[:3]}")
    status, raw, _ = server.request("GET", "/readyz")
    check(status == 503 and json.loads(raw) == {"status": "degraded", "storage": "full"}, "/readyz is 503 degraded/full", raw)
    check(server.request("GET", "/healthz")[0] == 200, "/healthz stays 200 (liveness)")

    # The wall timers fall due now; the scheduler must back off, not spin.
    window_start = max(time.time(), due_at + 0.5)
    time.sleep(max(0.0, window_start - time.time()))
    cpu_before, lines_before = server.cpu_seconds(), len(server.lines)
    window = 3.0
    time.sleep(window)  # a measuring window, not a wait for something to happen
    cpu = server.cpu_seconds() - cpu_before
    logged = [line for _, line in server.lines[lines_before:]]
    check(cpu < 0.3 * window, "failing wall-clock writes cost little CPU", f"{cpu:.2f} s CPU in {window:.0f} s")
    wall_lines = [line for _, line in server.lines if "todaysim-wall-clock:" in line]
    check(1 <= len(wall_lines) <= 2, "the failing wall-clock write is logged once, not per try",
          f"{len(wall_lines)} line(s), {len(logged)} lines in the window; first: {wall_lines[:1]}")
    status, raw, _ = server.request("POST", "/v1/sessions/wall-0/gestures", {"type": "pull", "requestId": "late"})
    check(status == 507, "the store is still full before the limit is raised", f"{status}")

    # Room again: writes resume by themselves.
    server.set_soft_limit(HARD)
    resumed = wait_for(lambda: server.request("POST", "/v1/sessions", {"uid": "u", "id": "after-room"})[0] in (201, 409), 30)
    check(resumed, "writes resume on their own once there is room")
    acknowledged.append("after-room")
    check(wait_for(lambda: server.request("GET", "/readyz")[0] == 200, 30), "/readyz is 200 again")
    fired = wait_for(lambda: all(
        sum(1 for entry in json.loads(server.request("GET", f"/v1/sessions/wall-{n}/timeline?kind=watchdog")[1])["entries"]) >= 2
        for n in range(5)), 45)
    check(fired, "the wall timers that fell due while full fire once writes succeed")
    check(server.stop() == 0, "SIGTERM exits 0")
    return finish(Server(limited=False), acknowledged, refused)


def finish(server, acknowledged=(), refused=()):
    missing = [id for id in acknowledged if server.request("GET", f"/v1/sessions/{id}")[0] != 200]
    check(acknowledged and not missing, "a new server on the file holds every acknowledged session",
          f"{len(acknowledged)} acknowledged, missing {missing[:5]}")
    present = [id for id in refused if server.request("GET", f"/v1/sessions/{id}")[0] != 404]
    check(refused and not present, "no refused write was stored", f"{len(refused)} refused, present {present[:5]}")
    server.stop()
    integrity = sqlite3.connect(DB).execute("PRAGMA integrity_check").fetchone()[0]
    check(integrity == "ok", "integrity_check", integrity)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
