"""What the cluster test's checks share: the fleet (Scripts/fleet's folder), HTTP through nginx
(TLS with the fleet's self-signed certificate) or to one replica directly, an event-stream
reader, waiting for a condition, percentiles and the PASS/FAIL/GOAL report.

Time (issue 20, item 1): no check fails on a duration or a latency in the fast version. A
latency goal is Report.goal: printed with its figure and goal, a failure in the long version
only. A wait for something that should happen at once may take WAIT_SECONDS (30 s), a bound no
healthy run comes near; it ends as soon as the thing happened."""
import glob
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SCRIPTS, "lib"))
from testkit import Checks, percentile, wait_until  # noqa: E402
WAIT_SECONDS = 30  # for what should be immediate (a stream opened, an event delivered): unreachable when healthy


class Fleet:
    """Scripts/fleet's folder: the nginx base URL, the replicas' URLs, the database."""

    def __init__(self, folder):
        self.folder = folder
        read = lambda name: open(os.path.join(folder, name), encoding="utf-8").read().strip()
        self.base = read("base")
        self.replicas = read("replicas").split("\n")
        self.tls = ssl.create_default_context(cafile=os.path.join(folder, "tls", "cert.pem"))

    def command(self, *words):
        """Scripts/fleet WORD DIR [I]: kill, term, restart a replica; prints what it printed."""
        done = subprocess.run([os.path.join(SCRIPTS, "fleet"), words[0], self.folder, *map(str, words[1:])],
                              capture_output=True, text=True, timeout=300)  # (term waits up to 120 s)
        if done.returncode != 0:
            raise RuntimeError(f"Scripts/fleet {' '.join(map(str, words))}: {done.stderr.strip()[-400:]}")
        return done.stdout.strip()

    def postgres(self, command):
        done = subprocess.run([os.path.join(SCRIPTS, "postgres"), command, os.path.join(self.folder, "pg")],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"Scripts/postgres {command}: {done.stderr.strip()[-400:]}")

    def sql(self, query):
        """Rows (lists of text fields) of `query` on the fleet's database, read with psql: what
        is stored, without a request that could change it (a read of a wall session fires its
        overdue timers)."""
        found = shutil.which("psql") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1:]), None)
        if not found:
            raise RuntimeError("psql not found (Scripts/postgres installs postgresql)")
        uri = open(os.path.join(self.folder, "db"), encoding="utf-8").read().strip()
        done = subprocess.run([found, "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", uri,
                               "-c", query], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"psql: {done.stderr.strip()[-400:]}")
        return [line.split("\t") for line in done.stdout.splitlines() if line]

    def connect(self, replica=None, timeout=30):
        """A connection to nginx (replica None) or straight to replica I (1-based)."""
        url = urllib.parse.urlsplit(self.base if replica is None else self.replicas[replica - 1])
        if url.scheme == "https":
            return http.client.HTTPSConnection(url.hostname, url.port, timeout=timeout, context=self.tls)
        return http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


def call(connection, method, path, body=None, headers=None):
    """One request on `connection` (kept alive); the answer read whole."""
    sent = {"Content-Type": "application/json", **(headers or {})}
    data = json.dumps(body) if body is not None and not isinstance(body, (bytes, str)) else body
    connection.request(method, path, body=data, headers=sent)
    response = connection.getresponse()
    return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())


def once(fleet, method, path, body=None, headers=None, replica=None, timeout=30):
    connection = fleet.connect(replica, timeout)
    try:
        return call(connection, method, path, body, headers)
    finally:
        connection.close()


def timeline(fleet, session, replica=None):
    """Every entry of a session's timeline, page by page."""
    entries, after = [], 0
    while True:
        page = once(fleet, "GET", f"/v1/sessions/{session}/timeline?after={after}&limit=1000", replica=replica)
        if page.status != 200:
            raise RuntimeError(f"timeline of {session}: {page.status} {page.body[:200]!r}")
        page = page.json()
        entries += page["entries"]
        after = page["next"]
        if not page["more"]:
            return entries


class Stream:
    """An event stream (SSE) read on a thread: `events` holds (arrival time, id, event, data),
    `opened` is set once the server's first comment arrived (it is subscribed)."""

    def __init__(self, fleet, path, replica=None, last_event_id=None):
        self.events, self.opened, self.ended = [], threading.Event(), threading.Event()
        self.changed = threading.Condition()
        self.connection = fleet.connect(replica, timeout=60)
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.connection.request("GET", path, headers=headers)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            response = self.connection.getresponse()
            if response.status != 200:
                return
            fields = {}
            while True:
                line = response.readline()
                if not line:
                    return
                line = line.decode().rstrip("\r\n")
                if line.startswith(":"):
                    self.opened.set()
                elif line == "":
                    if "data" in fields:
                        with self.changed:
                            self.events.append((time.monotonic(), fields.get("id"), fields.get("event"),
                                                json.loads(fields["data"])))
                            self.changed.notify_all()
                    fields = {}
                else:
                    name, _, value = line.partition(":")
                    fields[name] = value[1:] if value.startswith(" ") else value
        except Exception:  # noqa: BLE001 (closed under the reader, cut by a killed replica: the stream ended)
            return
        finally:
            self.ended.set()
            with self.changed:
                self.changed.notify_all()

    def wait_for(self, condition, seconds):
        """Waits until condition(events) holds or the stream ended or `seconds` passed."""
        deadline = time.monotonic() + seconds
        with self.changed:
            while not condition(self.events):
                left = deadline - time.monotonic()
                if left <= 0 or self.ended.is_set():
                    return condition(self.events)
                self.changed.wait(left)
            return True

    def close(self):
        try:
            self.connection.sock and self.connection.sock.shutdown(2)
        except OSError:
            pass
        self.connection.close()


def eventually(condition, seconds, step=0.05):
    return bool(wait_until(condition, seconds, step))


def spread(values):
    return f"p50 {percentile(values, 0.5):.0f} ms, p99 {percentile(values, 0.99):.0f} ms, max {max(values, default=float('nan')):.0f} ms (n={len(values)})"


class Report(Checks):
    """testkit's checks and latency goals, per item of the issue: `PASS item 2: what: detail`."""

    def line(self, verdict, name, detail):
        return f"{verdict} {name}{': ' + detail if detail else ''}"

    def check(self, item, what, ok, detail=""):
        return super().check(ok, f"item {item}: {what}", detail)

    def goal(self, item, what, met, detail=""):
        return super().goal(met, f"item {item}: {what}", detail)


WALL_TIMER = [  # on a wall session: the header shows `updated` for 1 s, then a headerHide timer fires
    {"gesture": {"type": "liveWidget.created", "requestId": "w"}},
    {"webEvent": {"type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "w", "presentation": "header"}},
    {"webEvent": {"type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "w", "mode": "soft",
                  "status": "succeeded"}},
]


def arm_wall_timer(fleet, session, uid, replica=None, connection=None):
    """Creates a wall session and arms its 1 s headerHide timer; returns the timer's due time
    on the session clock."""
    own = connection or fleet.connect(replica)
    created = call(own, "POST", "/v1/sessions", {"uid": uid, "id": session, "clock": "wall"})
    if created.status != 201:
        raise RuntimeError(f"creating wall session {session}: {created.status} {created.body[:200]!r}")
    armed = call(own, "POST", f"/v1/sessions/{session}/steps", WALL_TIMER)
    if connection is None:
        own.close()
    timers = armed.json()["session"]["watchdogs"] if armed.status == 200 else None
    if not timers or [t["kind"] for t in timers] != ["headerHide"]:
        raise RuntimeError(f"arming {session}: {armed.status} {armed.body[:300]!r}")
    return timers[0]["dueAtMs"]


def timer_entries(entries):
    return [entry for entry in entries if entry["kind"] == "watchdog" and entry["type"] == "headerHide"]
