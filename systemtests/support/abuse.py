"""What the abuse tests share (issue 7, item 5; issue 12; a pytest plugin: a test module loads it
with `pytest_plugins = ["support.checks", "support.abuse"]`): the fast and long sizes, and the
abused server: started the tree's one way with its request deadline and heartbeat set
(`--connection-timeout-seconds`, `--heartbeat-seconds 1`) and a database file, reference
sessions made with the package's client, and the checkpoint after every phase: the server up,
nothing in the store changed (the reference sessions, their timelines, their label's list and
every session id compared with before), its memory recorded; at the end peak RSS bounded and
SIGTERM's exit 0."""
from __future__ import annotations

import os
import resource
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import httpx
import pytest
from todaysim.client import Client, TodaysimError
from todaysim.server import Server

from support.checks import Checks
from support.rawhttp import ANSWER_SECONDS, Reply, call, short

REFERENCE = ["abuse-ref-1", "abuse-ref-2", "abuse-ref-3"]
SINK, LIVE = "abuse-sink", "abuse-live"  # take the accepted big bodies / the ordinary inputs
PEAK_RSS_BOUND_MIB = 300
GROWTH_BOUND_MIB = 40  # what RSS may grow by over a phase that must not keep memory
HEARTBEAT_SECONDS = 1


@dataclass(frozen=True)
class Sizes:
    """The fast version (Scripts/test: 100 slow connections, 300 creations, a 3 s request
    deadline, a 5,000-entry heavy session, 3 s windows) or the long one (`--long`, by hand: 500,
    3,000, 30 s, 200,000 entries, 10 s windows)."""
    slow: int
    creations: int
    timeout: int
    heavy_entries: int
    heavy_seconds: float
    long: bool

    @property
    def tricklers(self) -> int:
        return max(10, self.slow // 5)

    @property
    def streams(self) -> int:  # event streams opened and closed at once (stream memory)
        return max(1000, self.slow * 4)

    @property
    def connection_limit(self) -> Optional[int]:  # --max-connections of the limit phase (None: the default)
        return None if self.long else 20

    @property
    def unbounded_creations(self) -> int:  # creations with a 1 MiB uid
        return max(10, min(100, self.creations // 30))


FAST = Sizes(slow=100, creations=300, timeout=3, heavy_entries=5000, heavy_seconds=3, long=False)
LONG = Sizes(slow=500, creations=3000, timeout=30, heavy_entries=200_000, heavy_seconds=10, long=True)


def raise_file_limit() -> None:
    """The soft descriptor limit up to the hard one, for this process and the servers it starts
    (thousands of connections and streams at once)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def status_of(request: Callable[[], Any]) -> int:
    """The status a client call got: 200 (or what it expected) when it returned, else the error's."""
    try:
        request()
        return 200
    except TodaysimError as error:
        return error.status


def difference(was: str, now: str) -> str:
    """Where two texts part: the character and a little of each from just before it."""
    at = next((i for i, (a, b) in enumerate(zip(was, now)) if a != b), min(len(was), len(now)))
    return f"differs at character {at}: was …{was[max(0, at - 40):at + 80]!r}, now …{now[max(0, at - 40):at + 80]!r}"


class Target:
    """The abused server, its client, its checks and the store as it was before the abuse."""

    def __init__(self, server: Server, checks: Checks, db: str):
        assert server.url and server.process
        self.server, self.checks, self.db = server, checks, db
        self.port = int(urllib.parse.urlsplit(server.url).port or 0)
        self.pid = server.process.pid
        # A kept-alive connection idle past the server's --connection-timeout-seconds (3 s fast) is
        # closed by the server; reused at that moment, the request got "Server disconnected
        # without sending a response" (a fresh-clone run: a purge after 1,000 event streams). The
        # pool drops its connections after 1 s idle instead.
        self.client = server.client(transport=httpx.HTTPTransport(limits=httpx.Limits(keepalive_expiry=1.0)))
        self.rss: list[tuple[str, int]] = []  # (phase, KiB)
        self.slowest_bad = 0.0
        self.reference: dict[str, Any] = {}

    # MARK: requests
    def call(self, method: str, path: str, body: Any = None, content_type: Optional[str] = "application/json",
             timeout: float = ANSWER_SECONDS) -> Reply:
        return call(self.port, method, path, body, content_type, timeout=timeout)

    def expect(self, what: str, method: str, path: str, body: bytes, statuses: tuple[int, ...],
               code: Optional[str] = None, content_type: Optional[str] = "application/json") -> Optional[int]:
        """Sends a bad (or borderline) body; requires one of `statuses` (a problem document with
        `code` when given) within ANSWER_SECONDS."""
        try:
            reply = self.call(method, path, body, content_type=content_type)
        except (OSError, ConnectionError) as error:
            self.checks(False, f"{what}: {len(body)} bytes to {method} {path} got no answer: {error!r}")
            return None
        except Exception as error:  # http.client.HTTPException: no answer a client could read
            self.checks(False, f"{what}: {len(body)} bytes to {method} {path}: {error!r}")
            return None
        self.slowest_bad = max(self.slowest_bad, reply.seconds)
        ok = self.checks(reply.status in statuses, f"{what}: {method} {path} ({len(body)} bytes, Content-Type "
                                                    f"{content_type}) answered {reply.status}, expected {statuses}: "
                                                    f"{short(reply.data)}")
        if ok and code is not None:
            self.checks(reply.is_problem(code), f"{what}: answered {reply.status} {reply.content_type} "
                                                f"{short(reply.data)}, expected a problem document with code {code}")
        return reply.status

    def rss_kib(self, field: str = "VmRSS") -> int:
        return rss_kib(self.pid, field)

    def database_bytes(self) -> int:
        return sum(os.path.getsize(self.db + suffix) for suffix in ("", "-wal") if os.path.exists(self.db + suffix))

    # MARK: the store
    def setup(self) -> None:
        """The reference sessions (each with a gesture, a Web event and a lifecycle input) and the
        sessions that take accepted bodies and the ordinary inputs; then the store as it is."""
        for number, session in enumerate(REFERENCE):
            self.client.create_session(f"ref{number}", id=session, label="abuse-ref")
            self.client.gesture(session, "pull")
            self.client.web_event(session, {"type": "todayPage.track", "name": "ref"})
            self.client.lifecycle(session, "background")
        for session in (SINK, LIVE):
            self.client.create_session("u", id=session, label=session)
        self.reference = self.snapshot()
        self.rss.append(("reference", self.rss_kib()))

    def snapshot(self) -> dict[str, Any]:
        """The reference sessions' views and timelines, their label's list, every session id."""
        parts: dict[str, Any] = {}
        for session in REFERENCE:
            parts[f"view {session}"] = self.client.read_session(session)
            parts[f"timeline {session}"] = self.client.entries(session)
        parts["list label=abuse-ref"] = list(self.client.iter_sessions(label="abuse-ref"))
        parts["all session ids"] = sorted(view["id"] for view in self.client.iter_sessions())
        return parts

    def checkpoint(self, phase: str) -> None:
        """After a phase: the server still runs and answers /healthz, nothing in the store changed
        (checked part by part), its RSS recorded. A dead server ends the test."""
        self.checks.phase = phase
        code = self.server.process.poll() if self.server.process else None
        if code is not None:
            self.checks(False, f"the server died (exit {code}); log tail: {list(self.server.log_lines)[-10:]}")
            self.checks.assert_all()
        self.checks(status_of(self.client.health) == 200, "/healthz did not answer 200")
        now = self.snapshot()
        for name, was in self.reference.items():
            self.checks(now[name] == was, f"the store changed: {name} {difference(repr(was), repr(now[name]))}")
        self.rss.append((phase, self.rss_kib()))

    def finish(self, figure: Callable[..., Any]) -> None:
        """The last checkpoint, peak RSS (VmHWM) under PEAK_RSS_BOUND_MIB, SIGTERM's exit 0 (the
        server drains 5 s at most: `stop` waits 60 s), then every check asserted."""
        self.checkpoint("end")
        peak = self.rss_kib("VmHWM") / 1024
        figure("peak RSS (VmHWM)", peak, "MiB")
        self.checks(peak < PEAK_RSS_BOUND_MIB, f"peak RSS (VmHWM) {peak:.1f} MiB is over {PEAK_RSS_BOUND_MIB} MiB")
        if self.slowest_bad:
            figure("slowest answer to a bad request", self.slowest_bad, "s")
        self.client.close()
        code = self.server.stop()
        self.checks(code == 0, f"SIGTERM: exit {code}; log tail: {list(self.server.log_lines)[-10:]}")
        self.checks.assert_all()


@pytest.fixture
def sizes(long_version: bool) -> Sizes:
    return LONG if long_version else FAST


@pytest.fixture
def abused(start_server: Callable[..., Server], checks: Checks, sizes: Sizes, tmp_path: Any) -> Iterator[Target]:
    """The abused server (a database file; the request deadline and heartbeat set), set up."""
    raise_file_limit()
    db = str(tmp_path / "db.sqlite")
    server = start_server(db=db, args=["--quiet", "--connection-timeout-seconds", str(sizes.timeout),
                                       "--heartbeat-seconds", str(HEARTBEAT_SECONDS)])
    target = Target(server, checks, db)
    target.setup()
    yield target
    target.client.close()
