"""Crash consistency (issue 7; on PostgreSQL issue 14, item 5). Clients drive sessions, an
Idempotency-Key on every input, while the server is SIGKILLed at random moments and restarted on
the same port; each input is retried until answered (a 503 too: the database may be out of
reach). Afterwards every session applied each answered input exactly once and stores its entries
exactly as answered, its timeline has no gap, its version is one per input and it continues; the
database is consistent — SQLite: PRAGMA integrity_check, and a second server on the file is
refused while one runs (issue 12, item 3); PostgreSQL: restarted under load after the kills while
the server runs, then no row no todaysim could have written.

Fast versions (Scripts/test): 5 kills and 3 clients on SQLite; 3 kills, 3 clients and 2 database
restarts on PostgreSQL. Long (`--long`): 25 kills, 4 clients (3 database restarts)."""
from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

import pytest
from todaysim.client import Client, TodaysimError
from todaysim.server import Server

from support import Figure, free_port, stored_as_answered, wait_until
from support.postgres import Postgres
from support.wire import Wire

T = TypeVar("T")
INPUTS_PER_CLIENT = 10_000
LOAD_TIMEOUT = 3  # seconds a client of the load waits for an answer before it tries again
REFUSED_SECONDS = 30  # the client sends a refused input again this long (a killed server is back well within it)
CHECK_SECONDS = 30  # the checks after the kills wait this long for an answer

# Rows PostgreSQL holds that no todaysim could have written: a session whose timeline is not
# 1..n without gaps, whose version is not one per stored input (the creation included), and
# timeline, violation, request or key rows of no session. Each row names one problem.
CONSISTENCY_SQL = """
SELECT 'session ' || s.id || ': seqs ' || coalesce(min(t.seq), 0) || '..' || coalesce(max(t.seq), 0)
       || ' in ' || count(t.seq) || ' rows, version ' || s.version || ', '
       || count(t.seq) FILTER (WHERE t.kind = 'input') || ' inputs'
  FROM sessions s LEFT JOIN timeline t ON t.session = s.ord
 WHERE s.closed < 2
 GROUP BY s.ord, s.id, s.version
HAVING coalesce(min(t.seq), 1) <> 1 OR coalesce(max(t.seq), 0) <> count(t.seq)
    OR s.version <> count(t.seq) FILTER (WHERE t.kind = 'input')
UNION ALL SELECT 'timeline rows of no session: ' || count(*) FROM timeline t
 WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.ord = t.session) HAVING count(*) > 0
UNION ALL SELECT 'violations of no timeline entry: ' || count(*) FROM violations v
 WHERE NOT EXISTS (SELECT 1 FROM timeline t WHERE t.session = v.session AND t.seq = v.seq) HAVING count(*) > 0
UNION ALL SELECT 'request records of no session: ' || count(*) FROM requests r
 WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.ord = r.session) HAVING count(*) > 0
UNION ALL SELECT 'idempotency keys of no session: ' || count(*) FROM idempotency i
 WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.ord = i.session) HAVING count(*) > 0
"""


class Load:
    """`clients` threads, each driving its own session (`crash-N`) with keyed inputs, retried
    through kills and outages until answered, until `finish()`."""

    def __init__(self, url: str, clients: int) -> None:
        self.url, self.clients = url, clients
        self.wires = [Wire() for _ in range(clients)]
        self.answers: dict[int, list[tuple[int, dict[str, Any]]]] = {n: [] for n in range(clients)}
        self.errors: list[str] = []
        self.retried = self.unavailable = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(n,), daemon=True) for n in range(clients)]

    def __enter__(self) -> "Load":
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()

    def finish(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join()

    def until_answered(self, call: Callable[[], T]) -> T:
        """`call()` again after a kill took its answer (its connection broke after it was sent; a
        refused one the client sends again itself, `retry_refused_for`) or a 503 (the database out
        of reach, or a COMMIT that lost its answer: nothing acknowledged)."""
        attempts = 0
        while True:
            attempts += 1
            try:
                answer = call()
            except TodaysimError as error:
                if error.status == 0:
                    time.sleep(0.02)
                    continue
                if error.status != 503:
                    raise
                with self.lock:
                    self.unavailable += 1
                time.sleep(0.1)  # a real client waits Retry-After; this one comes back sooner
                continue
            if attempts > 1:
                with self.lock:
                    self.retried += 1
            return answer

    def client(self, number: int) -> None:
        session = f"crash-{number}"
        with Client(self.url, timeout=LOAD_TIMEOUT, transport=self.wires[number], retry_refused_for=REFUSED_SECONDS) as client:
            try:
                self.until_answered(lambda: client.create_session(f"u{number}", id=session))
            except TodaysimError as error:
                if error.status != 409:  # created by a try whose answer a kill took
                    self.errors.append(f"creating {session}: {error}")
                    return
            index = 0
            while not self.stopping.is_set() and index < INPUTS_PER_CLIENT:
                key = f"c{number}-{index}"
                send = [
                    lambda: client.lifecycle(session, "tabActivated", requestId=key, idempotency_key=key),
                    lambda: client.web_event(session, {"type": "todayPage.refreshResult", "schemaVersion": 1,
                                                       "requestId": f"c{number}-{index - 1}", "mode": "soft",
                                                       "status": "succeeded"}, idempotency_key=key),
                    lambda: client.clock(session, advanceMs=700, idempotency_key=key),
                ][index % 3]
                try:
                    answer = self.until_answered(send)
                except TodaysimError as error:
                    self.errors.append(f"input {index} of client {number} answered {error}")
                    return
                with self.lock:
                    self.answers[number].append((index, dict(answer)))
                index += 1

    def answered(self) -> int:
        with self.lock:
            return sum(len(sent) for sent in self.answers.values())

    def each_answered_since(self, counts: list[int]) -> bool:
        with self.lock:
            return all(len(self.answers[n]) > counts[n] for n in range(self.clients))


def session_problems(client: Client, session: str, sent: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """What is wrong with `session` after the crashes, given the inputs answered to its client."""
    applied, problems = stored_as_answered(session, client.entries(session), sent)
    if applied != len(sent):
        problems.append(f"{session}: {len(sent)} inputs answered, {applied} applied")
    version = client.read_session(session)["version"]
    if version != 1 + len(sent):
        problems.append(f"{session}: version {version} after {len(sent)} inputs")
    try:
        client.lifecycle(session, "background")
    except TodaysimError as error:
        problems.append(f"{session}: does not continue ({error})")
    return problems


def crash(start_server: Callable[..., Server], binary: str, rng: random.Random, kills: int, clients: int,
          db: str, postgres: Optional[Postgres] = None, db_restarts: int = 0) -> tuple[Load, list[str], float]:
    """The SIGKILL rounds (then the database restarts) under load; the load, what is wrong, seconds."""
    port = free_port()
    server = start_server(db=db, args=["--quiet"], port=port)
    assert server.url
    problems: list[str] = []
    began = time.monotonic()
    with Load(server.url, clients) as load:
        for _ in range(kills):
            time.sleep(rng.uniform(0.05, 0.4))  # a random moment of the load: the test's input, not a wait
            server.kill()
            server = start_server(db=db, args=["--quiet"], port=port)
        if postgres:  # PostgreSQL itself stopped and started again under load, the server running throughout
            for _ in range(db_restarts):
                time.sleep(rng.uniform(0.05, 0.4))
                postgres.stop()
                time.sleep(rng.uniform(0.05, 0.3))
                postgres.start()
            with server.client(timeout=CHECK_SECONDS) as client:
                ready = wait_until(lambda: client.readiness()["status"] == "ok", CHECK_SECONDS, step=0.05)
            assert ready, f"/readyz not ok {CHECK_SECONDS} s after PostgreSQL came back"
        else:  # servers share a PostgreSQL database by design, never a SQLite file
            second = Server(binary=binary, db=db)
            try:
                with pytest.raises(RuntimeError, match="in use by another todaysim"):
                    second.start()
            finally:
                second.stop()
            assert second.process and second.process.returncode == 2, "a second server on the file exits 2"
        # The last server answers every client before the load stops.
        counts = [len(load.answers[n]) for n in range(clients)]
        if not wait_until(lambda: load.each_answered_since(counts), CHECK_SECONDS):
            problems.append(f"not every client was answered by the last server within {CHECK_SECONDS} s")
    seconds = time.monotonic() - began
    assert not load.errors, load.errors
    with server.client(timeout=CHECK_SECONDS) as client:
        for number in range(clients):
            problems += session_problems(client, f"crash-{number}", load.answers[number])
    server.stop()
    return load, problems, seconds


def report(figure: Callable[..., Figure], load: Load, seconds: float) -> None:
    figure("inputs answered", load.answered(), "inputs")
    figure("retried after a kill took the answer or a 503", load.retried, "inputs")
    figure("connections refused (sent again by the client)", sum(wire.refused for wire in load.wires), "connections")
    figure("answered from their stored key", sum(wire.replayed for wire in load.wires), "answers")
    figure("answered 503", load.unavailable, "answers")
    figure("load with kills", seconds, "s")


@pytest.mark.parametrize("kills, clients", [pytest.param(5, 3, id="fast"),
                                            pytest.param(25, 4, id="long", marks=pytest.mark.long)])
def test_crash_on_sqlite(start_server: Callable[..., Server], binary: str, seed: int, figure: Callable[..., Figure],
                         tmp_path: Path, kills: int, clients: int) -> None:
    db = os.path.join(tmp_path, "crash.sqlite")
    load, problems, seconds = crash(start_server, binary, random.Random(seed), kills, clients, db)
    report(figure, load, seconds)
    with sqlite3.connect(db) as connection:
        integrity = connection.execute("PRAGMA integrity_check").fetchone()[0]
    assert not problems and integrity == "ok", f"seed {seed}: {problems}, integrity_check {integrity}"


@pytest.mark.parametrize("kills, clients, db_restarts", [pytest.param(3, 3, 2, id="fast"),
                                                         pytest.param(25, 4, 3, id="long", marks=pytest.mark.long)])
def test_crash_on_postgres(start_server: Callable[..., Server], binary: str, postgres: Postgres, seed: int,
                           figure: Callable[..., Figure], kills: int, clients: int, db_restarts: int) -> None:
    load, problems, seconds = crash(start_server, binary, random.Random(seed), kills, clients, postgres.uri,
                                    postgres, db_restarts)
    report(figure, load, seconds)
    inconsistent = postgres.query(CONSISTENCY_SQL)
    assert not problems and not inconsistent, f"seed {seed}: {problems}, consistency: {inconsistent[:5]}"
