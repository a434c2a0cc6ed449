"""A fleet for the fleet tests (issue 15; a pytest plugin): 3 replicas of the binary under test on
one throwaway PostgreSQL behind nginx with TLS (a self-signed certificate), started by
`Scripts/fleet` (the entry point users run, docs/FLEET.md) once per test module and always
stopped when the module ends, whatever its tests did (and, through `--until-exit-of`, when pytest
itself dies). `Fleet` reaches it: the package's client through nginx (trusting the fleet's
certificate) or straight to one replica, `Scripts/fleet kill|term|restart`, `Scripts/postgres`,
psql for what is stored. `Stream` reads an event stream on a thread with each event's arrival
time. `FleetSizes`: the fast version's sizes, or the long version's under `--long`.

Time (issue 20, item 1): a wait for something that should happen at once may take WAIT_SECONDS
(30 s), a bound no healthy run comes near; it ends as soon as the thing happened. Latencies are
figures beside their goals (the `figure` fixture), held only by `--long`."""
from __future__ import annotations

import contextlib
import glob
import json
import os
import socket
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import httpx
import pytest
from todaysim.client import Client

from support import ROOT, percentile, wait_until

SCRIPTS = os.path.join(ROOT, "Scripts")
WAIT_SECONDS = 30  # for what should be immediate (a stream opened, an event delivered): unreachable when healthy
REPLICAS = 3
Json = dict[str, Any]


@dataclass(frozen=True)
class FleetSizes:
    """How much each fleet test does, and its latency goals (ms)."""
    writer_inputs: int  # item 2: inputs per client, 8 clients
    wall_timers: int  # item 3: wall sessions per round
    live_rounds: int  # item 4: long polls and stream inputs
    load_clients: int  # item 5: clients writing under the faults
    fault_step: int  # item 5: inputs acknowledged between two faults
    live_goal_ms: float  # live reads and timer lateness, p99
    fault_goal_ms: float  # timers' lateness under the faults, p99


FAST = FleetSizes(writer_inputs=12, wall_timers=20, live_rounds=10, load_clients=3, fault_step=30,
                  live_goal_ms=1000, fault_goal_ms=5000)
LONG = FleetSizes(writer_inputs=100, wall_timers=50, live_rounds=100, load_clients=4, fault_step=300,
                  live_goal_ms=100, fault_goal_ms=2000)


def spread(values: list[float]) -> str:
    return (f"p50 {percentile(values, 0.5):.0f} ms, p99 {percentile(values, 0.99):.0f} ms, "
            f"max {max(values, default=float('nan')):.0f} ms (n={len(values)})")


class Fleet:
    """Scripts/fleet's folder: the nginx base URL, the replicas' URLs, the database."""

    def __init__(self, folder: str):
        self.folder = folder
        self.base = self.read("base")
        self.replicas = self.read("replicas").split("\n")
        self.cafile = os.path.join(folder, "tls", "cert.pem")
        self.tls: ssl.SSLContext | bool = ssl.create_default_context(cafile=self.cafile) \
            if os.path.exists(self.cafile) else True  # (plain HTTP without --tls)

    def read(self, name: str) -> str:
        with open(os.path.join(self.folder, name), encoding="utf-8") as file:
            return file.read().strip()

    def url(self, replica: Optional[int] = None) -> str:
        """nginx's base URL (replica None) or replica I's (1-based)."""
        return self.base if replica is None else self.replicas[replica - 1]

    def client(self, replica: Optional[int] = None, timeout: float = 30, retry_refused_for: float = 0) -> Client:
        """The package's client through nginx (replica None) or straight to replica I."""
        return Client(self.url(replica), timeout=timeout, transport=httpx.HTTPTransport(verify=self.tls),
                      retry_refused_for=retry_refused_for)

    def command(self, *words: object) -> str:
        """Scripts/fleet WORD DIR [I]: kill, term, restart a replica; what it printed."""
        done = subprocess.run([os.path.join(SCRIPTS, "fleet"), str(words[0]), self.folder, *map(str, words[1:])],
                              capture_output=True, text=True, timeout=300)  # (term waits up to 120 s)
        if done.returncode != 0:
            raise RuntimeError(f"Scripts/fleet {' '.join(map(str, words))}: {done.stderr.strip()[-400:]}")
        return done.stdout.strip()

    def postgres(self, command: str) -> None:
        done = subprocess.run([os.path.join(SCRIPTS, "postgres"), command, os.path.join(self.folder, "pg")],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"Scripts/postgres {command}: {done.stderr.strip()[-400:]}")

    def sql(self, query: str) -> list[list[str]]:
        """Rows (lists of text fields) of `query` on the fleet's database, read with psql: what
        is stored, without a request that could change it (a read of a wall session fires its
        overdue timers, C1)."""
        found = shutil.which("psql") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1:]), None)
        if not found:
            raise RuntimeError("psql not found (Scripts/postgres installs postgresql)")
        done = subprocess.run([found, "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", self.read("db"),
                               "-c", query], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"psql: {done.stderr.strip()[-400:]}")
        return [line.split("\t") for line in done.stdout.splitlines() if line]

    def replicas_used(self, path: str) -> int:
        """How many replicas answered `path`, by nginx's access log, which nginx writes in buffers
        flushed every second (deploy/nginx.conf): read until every replica shows, or for 30 s."""
        def used() -> int:
            with open(os.path.join(self.folder, "nginx", "access.log"), encoding="utf-8") as log:
                return len({line.split()[-3] for line in log if f" {path} " in line})
        wait_until(lambda: used() >= len(self.replicas), WAIT_SECONDS, step=0.1)
        return used()

    def logged_errors(self) -> list[str]:
        """Each replica's first logged PostgreSQL error or fatal line (a note, not a check)."""
        notes = []
        for number in range(1, len(self.replicas) + 1):
            with open(os.path.join(self.folder, f"replica-{number}.log"), encoding="utf-8", errors="replace") as log:
                line = next((line for line in log if "PostgreSQL error" in line or "fatal" in line), None)
            if line:
                notes.append(f"replica {number} logged errors, e.g.: {line.strip()[:200]}")
        return notes


@pytest.fixture(scope="session")
def fleet_sizes(long_version: bool) -> FleetSizes:
    return LONG if long_version else FAST


@contextlib.contextmanager
def started_fleet(binary: str, replicas: int = REPLICAS, tls: bool = True) -> Iterator[Fleet]:
    """`Scripts/fleet start DIR --replicas N [--tls]` of `binary` for the block; stopped
    (`Scripts/fleet stop`) and its folder removed when the block ends, however."""
    folder = tempfile.mkdtemp(prefix="todaysim-fleet.")
    try:
        started = subprocess.run([os.path.join(SCRIPTS, "fleet"), "start", folder, "--replicas", str(replicas),
                                  *(["--tls"] if tls else []), "--until-exit-of", str(os.getpid())],
                                 capture_output=True, text=True, timeout=600, env={**os.environ, "TODAYSIM_BIN": binary})
        if started.returncode != 0:
            pytest.fail(f"the fleet did not start: {started.stderr.strip()[-1500:]}", pytrace=False)
        made = Fleet(folder)
        yield made
        for note in made.logged_errors():
            print(f"NOTE {note}", file=sys.stderr)
    finally:
        subprocess.run([os.path.join(SCRIPTS, "fleet"), "stop", folder], capture_output=True, timeout=600)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def fleet(binary: str) -> Iterator[Fleet]:
    """A fleet of 3 with TLS (`Scripts/fleet start DIR --replicas 3 --tls`), for one test module;
    stopped (`Scripts/fleet stop`) and its folder removed when the module ends, however."""
    with started_fleet(binary) as made:
        yield made


class Stream:
    """An event stream (SSE) read on a thread: `events` holds (arrival time, id, data), `opened`
    is set once the server's first comment arrived (it is subscribed)."""

    def __init__(self, fleet: Fleet, path: str, replica: Optional[int] = None, last_event_id: Optional[int] = None):
        self.events: list[tuple[float, str, Json]] = []
        self.opened, self.ended = threading.Event(), threading.Event()
        self.socket: Optional[socket.socket] = None
        self.changed = threading.Condition()
        self.http = httpx.Client(base_url=fleet.url(replica), verify=fleet.tls, timeout=httpx.Timeout(30, read=None))
        self.headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            self.headers["Last-Event-ID"] = str(last_event_id)
        self.thread = threading.Thread(target=self._read, args=(path,), daemon=True)
        self.thread.start()

    def _read(self, path: str) -> None:
        try:
            with self.http.stream("GET", path, headers=self.headers) as response:
                self.socket = response.extensions["network_stream"].get_extra_info("socket")
                if response.status_code != 200:
                    return
                fields: dict[str, str] = {}
                for line in response.iter_lines():
                    if line.startswith(":"):
                        self.opened.set()
                    elif line == "":
                        if "data" in fields:
                            with self.changed:
                                self.events.append((time.monotonic(), fields.get("id", ""), json.loads(fields["data"])))
                                self.changed.notify_all()
                        fields = {}
                    else:
                        name, _, value = line.partition(":")
                        fields[name] = value[1:] if value.startswith(" ") else value
        except (httpx.HTTPError, OSError, RuntimeError):  # closed under the reader, cut by a killed replica: it ended
            return
        finally:
            self.ended.set()
            with self.changed:
                self.changed.notify_all()

    def ids(self) -> list[str]:
        with self.changed:
            return [event_id for _, event_id, _ in self.events]

    def arrival(self, event_id: str) -> Optional[float]:
        with self.changed:
            return next((at for at, seen, _ in self.events if seen == event_id), None)

    def wait_for(self, condition: Callable[[list[str]], bool], seconds: float = WAIT_SECONDS) -> bool:
        """Waits until condition(the event ids so far) holds or the stream ended or `seconds` passed."""
        deadline = time.monotonic() + seconds
        with self.changed:
            while not condition([event_id for _, event_id, _ in self.events]):
                left = deadline - time.monotonic()
                if left <= 0 or self.ended.is_set():
                    return condition([event_id for _, event_id, _ in self.events])
                self.changed.wait(left)
            return True

    def close(self) -> None:
        """Ends the stream: its socket shut down under the reader (a blocked read returns)."""
        try:
            if self.socket is not None:
                self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.thread.join(WAIT_SECONDS)
        self.http.close()


WALL_TIMER: list[Json] = [  # on a wall session: the header shows `updated` for 1 s, then a headerHide timer fires
    {"gesture": {"type": "liveWidget.created", "requestId": "w"}},
    {"webEvent": {"type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "w", "presentation": "header"}},
    {"webEvent": {"type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "w", "mode": "soft",
                  "status": "succeeded"}},
]


def timer_entries(entries: list[Any]) -> list[Json]:
    """The headerHide timer's entries among a timeline's."""
    return [dict(entry) for entry in entries if entry["kind"] == "watchdog" and entry["type"] == "headerHide"]
