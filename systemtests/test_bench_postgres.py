"""`Scripts/bench --db postgres|postgres://…` (formerly `bench.d/postgres_bench.py` of Scripts/bench): the
same endpoint runs as on SQLite against `todaysim serve --db <uri>`, PostgreSQL's own ceiling for
what one input commits (pgbench), the settings' effect, and both stores side by side (the SQLite
figures of test_bench_sqlite.py in the same run, measured here when it did not run first).

`--bench-db postgres` (the default) is a throwaway server (the `postgres` fixture); a URI names a
server of one's own, where the bench makes the database todaysim_bench_<pid> (the role needs
CREATEDB) and drops it at the end, so nothing of the URI's own database is touched. Goals
(docs/PERFORMANCE.md): a GET at least 0.30 of SQLite's, web-events at least 0.50 of pgbench's
ceiling."""
from __future__ import annotations

import collections
import contextlib
import glob
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import urllib.parse
from typing import Any, Callable, Iterator, Optional

import pytest
from todaysim.client import Client
from todaysim.models import LifecycleType
from todaysim.server import Server

from support.bench import (CONNECTIONS, RUNS, SECONDS, SESSION_ENV, SESSIONS, THREADS, Record, Result, Table,
                           create_sessions, header, metric, serve, url, wrk)
from test_bench_sqlite import SQLITE, sqlite_runs

pytestmark = pytest.mark.bench

# What one input commits, as PostgresStorage does it: the session row locked by id (in one
# statement, as a group commit locks its batch), updated at the version read under that lock
# with a ~2 KB state sent as a parameter, then three ~200-byte timeline rows in one INSERT.
# Same schema (todaysim's own, made by the server), same synchronous_commit, prepared statements.
CEILING_SCRIPT = r"""
\set n random(0, 63)
BEGIN;
SELECT ord, version FROM sessions WHERE id = ANY(ARRAY['ceiling-' || :n]) AND closed < 2 ORDER BY id FOR UPDATE \gset
UPDATE sessions SET closed = 0, next_due_ms = 5000, version = :version::bigint + 1, state = :state::bytea, last_active_ms = 1
    WHERE ord = :ord::bigint AND closed < 2 AND version = :version::bigint;
INSERT INTO timeline (session, seq, kind, entry)
    SELECT :ord::bigint, :version::int * 3 + i, 'emit', :entry::bytea FROM generate_series(0, 2) AS i;
COMMIT;
"""
# What a GET asks PostgreSQL: is the cached view's version still the stored one (one indexed
# lookup on a read connection).
LOOKUP_SCRIPT = r"""
\set n random(0, 63)
SELECT id, ord, version FROM sessions WHERE id = ANY(ARRAY['ceiling-' || :n]) AND closed < 2;
"""
CEILING_ROWS = (
    "INSERT INTO sessions (id, uid, clock, wall_origin_ms, version, state, last_active_ms) "
    "SELECT 'ceiling-' || i, 'u', 'virtual', 0, 1, '\\x00', 0 FROM generate_series(0, 63) AS i"
)
SYNCHRONOUS_OFF = {"PGOPTIONS": "-c synchronous_commit=off"}
Ceiling = tuple[float, float]  # transactions/s, mean latency ms


def tool(name: str) -> str:
    """psql or pgbench: on PATH, else the newest of Debian's PostgreSQL (Scripts/postgres installs it)."""
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))[-1:]), None)
    if not found:
        pytest.fail(f"{name} not found (Debian's postgresql)", pytrace=False)
    return found


def psql(uri: str, sql: str) -> str:
    return subprocess.run([tool("psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql],
                          capture_output=True, text=True, check=True, timeout=120).stdout.strip()


@contextlib.contextmanager
def database(request: pytest.FixtureRequest) -> Iterator[tuple[str, Optional[str]]]:
    """(URI of an empty database, the server's log file or None) for the bench's duration."""
    argument = str(request.config.getoption("--bench-db"))
    if argument == "postgres":
        throwaway = request.getfixturevalue("postgres")  # stopped and removed when the test ends
        yield throwaway.uri, os.path.join(throwaway.dir, "postgres.log")
        return
    name = f"todaysim_bench_{os.getpid()}"
    psql(argument, f"CREATE DATABASE {name}")
    try:
        yield urllib.parse.urlsplit(argument)._replace(path=f"/{name}").geturl(), None
    finally:
        psql(argument, f"DROP DATABASE {name} WITH (FORCE)")


def pgbench(uri: str, clients: int, env: Optional[dict[str, str]] = None, text: str = CEILING_SCRIPT) -> Ceiling:
    """(transactions/s, mean latency ms) of the script `text`, the median of RUNS runs."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
        script.write(text)
        script.flush()
        command = [tool("pgbench"), "-n", "-M", "prepared", "-f", script.name, "-T", str(SECONDS),
                   "-c", str(clients), "-j", str(min(clients, THREADS)),
                   "-D", "state=\\x" + "73" * 2048, "-D", "entry=\\x" + "65" * 200, uri]
        runs = []
        for _ in range(RUNS):
            output = subprocess.run(command, capture_output=True, text=True, check=True, timeout=SECONDS + 120,
                                    env={**os.environ, **(env or {})}).stdout
            tps = re.search(r"^tps = ([\d.]+)", output, re.M)
            latency = re.search(r"^latency average = ([\d.]+) ms", output, re.M)
            assert tps and latency, f"pgbench printed no rate: {output[-400:]!r}"
            runs.append((float(tps.group(1)), float(latency.group(1))))
    return statistics.median(run[0] for run in runs), statistics.median(run[1] for run in runs)


def statements(log: str, client: Client, requests: list[Callable[[Client], Any]]) -> dict[str, float]:
    """What PostgreSQL executed for `requests` (sent one at a time, so no batching), per request:
    {statement: count}. The server's connections log every statement (log_statement=all)."""
    offset = os.path.getsize(log)
    for send in requests:
        send(client)
    with open(log, encoding="utf-8", errors="replace") as file:
        file.seek(offset)
        names = re.findall(r"LOG:  (?:statement: (\w+)|execute (\w+):)", file.read())
    counts = collections.Counter(statement or prepared for statement, prepared in names)
    return {name: count / len(requests) for name, count in counts.most_common()}


def web_events_cycle(request_id: str, session: str = "bench-2") -> list[Callable[[Client], Any]]:
    """The five inputs of web-events.lua's cycle."""
    return [lambda c: c.gesture(session, "pull", requestId=request_id),
            lambda c: c.web_event(session, {"type": "webView.loadingPresentation", "owner": "web",
                                            "reason": "content_visible"}),
            lambda c: c.web_event(session, {"type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": "b1",
                                            "elapsedMs": 42, "requestId": request_id}),
            lambda c: c.web_event(session, {"type": "todayPage.allBatchesRendered", "schemaVersion": 1,
                                            "status": "succeeded", "empty": False, "elapsedMs": 80,
                                            "requestId": request_id}),
            lambda c: c.web_event(session, {"type": "todayPage.refreshResult", "schemaVersion": 1,
                                            "requestId": request_id, "mode": "soft", "status": "succeeded"})]


def lifecycle_input(kind: LifecycleType) -> Callable[[Client], Any]:
    return lambda client: client.lifecycle("bench-1", kind)


def round_trips(server: Server, log: str, figure: Record) -> None:
    """Round trips to PostgreSQL per GET of a cached view and per input alone, by name."""
    with server.client() as client:
        client.read_session("bench-0")
        get = statements(log, client, [lambda c: c.read_session("bench-0")] * 20)
        lifecycle = statements(log, client, [lifecycle_input(kind) for kind in ("background", "foreground") * 10])
        web_events = statements(log, client, [step for cycle in range(4) for step in web_events_cycle(f"probe-{cycle}")])
    for label, counts in (("GET /v1/sessions/{id}", get), ("POST …/lifecycle alone", lifecycle),
                          ("POST …/web-events cycle, per input alone", web_events)):
        figure(f"statements per request: {label}", sum(counts.values()))
        print(f"  {label}: {sum(counts.values()):.1f} statements: "
              + ", ".join(f"{name} ×{count:g}" for name, count in counts.items()))


def sqlite_figures(request: pytest.FixtureRequest, start_server: Callable[..., Server], binary: str,
                   figure: Record) -> dict[tuple[str, str], Result]:
    """SQLite's figures of this run (test_bench_sqlite.py), measured now when it did not run."""
    for synchronous in ("normal", "full"):
        if (synchronous, "web-events") not in SQLITE:
            folder = tempfile.mkdtemp(prefix="todaysim-bench-")
            request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
            server = serve(start_server, os.path.join(folder, f"bench-{synchronous}.sqlite"), "--synchronous", synchronous)
            sqlite_runs(server, binary, synchronous, Table(figure), figure)
            server.stop()
    return SQLITE


def test_postgres_store(request: pytest.FixtureRequest, start_server: Callable[..., Server], binary: str,
                        table: Table, figure: Record) -> None:
    header()
    sqlite = sqlite_figures(request, start_server, binary, figure)
    with database(request) as (uri, log):
        results: dict[str, Result] = {}
        server = serve(start_server, uri)
        base = url(server)
        with server.client() as client:
            create_sessions(client, [f"bench-{i}" for i in range(SESSIONS)])
            psql(uri, CEILING_ROWS)
            one, many = pgbench(uri, 1), pgbench(uri, CONNECTIONS)
            ceiling = max(one, many)
            ceiling_name = f"pgbench -c{1 if ceiling is one else CONNECTIONS}"
            view = results["view"] = wrk(base, "get-session.lua", env=SESSION_ENV)
            table.row(f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)", view, "SQLite's",
                      view[0] / sqlite[("normal", "view")][0], 0.30)
            inputs, commits = (metric(client, "todaysim_store_commit_inputs_sum"),
                               metric(client, "todaysim_store_commit_inputs_count"))
            writes = results["web-events"] = wrk(base, "web-events.lua", env=SESSION_ENV)
            batch = ((metric(client, "todaysim_store_commit_inputs_sum") - inputs)
                     / max(1, metric(client, "todaysim_store_commit_inputs_count") - commits))
            table.row("POST …/web-events (pull→render→result)", writes, ceiling_name, writes[0] / ceiling[0], 0.50)
            lifecycle = results["lifecycle"] = wrk(base, "lifecycle.lua", env=SESSION_ENV)
            table.row("POST …/lifecycle", lifecycle, ceiling_name, lifecycle[0] / ceiling[0])
            page = results["timeline"] = wrk(base + "/v1/sessions/bench-0/timeline?after=10&limit=100")
            table.row("GET …/timeline?after=10&limit=100", page, "SQLite's", page[0] / sqlite[("normal", "timeline")][0])
        server.stop()
        unsafe = serve(start_server, uri, env=SYNCHRONOUS_OFF)
        off = wrk(url(unsafe), "web-events.lua", env=SESSION_ENV)
        table.row("POST …/web-events, synchronous_commit=off", off, "=on", off[0] / writes[0])
        unsafe.stop()
        off_ceiling = pgbench(uri, CONNECTIONS, SYNCHRONOUS_OFF)
        for name, (tps, latency) in (("pgbench -c1", one), (f"pgbench -c{CONNECTIONS}", many),
                                     (f"pgbench -c{CONNECTIONS}, synchronous_commit=off", off_ceiling)):
            figure(f"ceiling: {name}", tps, "tx/s")
            table.note(f"ceiling: {name}, 1 row + 3 entries per tx", f"{tps:,.0f}", "", "", f"tx/s, latency mean {latency:.2f} ms")
        # The read side: as many connections as the reader pool (2), and twice that.
        for clients in (2, 4):
            tps, latency = pgbench(uri, clients, text=LOOKUP_SCRIPT)
            figure(f"ceiling: pgbench -c{clients}, one version lookup per tx", tps, "tx/s")
            table.note(f"ceiling: pgbench -c{clients}, one version lookup per tx", f"{tps:,.0f}", "", "",
                       f"tx/s, latency mean {latency:.2f} ms")
        table.print(f"PostgreSQL {psql(uri, 'SHOW server_version')} (synchronous_commit={psql(uri, 'SHOW synchronous_commit')}, "
                    f"fsync={psql(uri, 'SHOW fsync')}): one write connection (group commit), 2 read connections")
        figure(f"group commit under -c{CONNECTIONS} web-events", batch, "inputs per transaction")
        print(f"group commit under -c{CONNECTIONS} web-events: {batch:.1f} inputs per transaction (mean)")
        if log:
            print("statements per request, one request at a time:")
            probe = serve(start_server, uri, env={"PGOPTIONS": "-c log_statement=all"})
            round_trips(probe, log, figure)
            probe.stop()  # before the throwaway database stops
    both(sqlite, results, table)


def both(sqlite: dict[tuple[str, str], Result], postgres: dict[str, Result], table: Table) -> None:
    cases = [("view", "normal", f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)"),
             ("web-events", "normal", "POST …/web-events"), ("lifecycle", "normal", "POST …/lifecycle"),
             ("timeline", "normal", "GET …/timeline?after=10&limit=100"),
             ("web-events", "full", "POST …/web-events vs SQLite synchronous=FULL"),
             ("lifecycle", "full", "POST …/lifecycle vs SQLite synchronous=FULL")]
    for case, synchronous, name in cases:
        mine, theirs = sqlite[(synchronous, case)], postgres[case]
        table.figure(f"{name}: PostgreSQL/SQLite", theirs[0] / mine[0], "x")
        table.note(name, f"{mine[0]:,.0f}", f"{mine[2]:.2f}", f"{theirs[0]:,.0f}", f"{theirs[2]:.2f}",
                   f"{theirs[0] / mine[0]:.2f}")
    table.print("both stores (SQLite synchronous=NORMAL unless said)",
                ("case", "SQLite req/s", "p99 ms", "PostgreSQL req/s", "p99 ms", "PostgreSQL/SQLite"))
