"""`Scripts/bench --db postgres|postgres://…`: the same endpoint runs as on SQLite against
`todaysim serve --db <uri>`, PostgreSQL's own ceiling for what one input commits (pgbench), the
settings' effect, and both stores side by side.

`postgres` starts a throwaway server (Scripts/postgres, stopped at the end); a URI names a
server of one's own, where the bench makes the database todaysim_bench_<pid> (the role needs
CREATEDB) and drops it at the end, so nothing of the URI's own database is touched.
"""
import collections
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import urllib.parse

import harness
from harness import CONNECTIONS, RUNS, SECONDS, SESSIONS, SESSION_ENV, Server, create_sessions, print_table, row, wrk

ROOT = os.path.dirname(os.path.dirname(harness.HERE))
PG_BIN = os.environ.get("PG_BIN", "")

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


def psql(uri, sql):
    return subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql],
                          capture_output=True, text=True, check=True).stdout.strip()


@contextlib.contextmanager
def database(argument):
    """(URI of an empty database, the server's log file or None) for the bench's duration."""
    if argument == "postgres":
        # Under /tmp itself: as root the server runs as another user, who must enter the parent.
        folder = tempfile.mkdtemp(prefix="todaysim-bench-pg-", dir="/tmp")
        script = os.path.join(ROOT, "Scripts", "postgres")
        try:
            # --until-exit-of: should this process die, a watcher stops the server all the same.
            uri = subprocess.run([script, "start", folder, "--until-exit-of", str(os.getpid())],
                                 capture_output=True, text=True, check=True).stdout.split()[-1]
            yield uri, os.path.join(folder, "postgres.log")
        finally:
            subprocess.run([script, "stop", folder], check=False)
            shutil.rmtree(folder, ignore_errors=True)
        return
    name = f"todaysim_bench_{os.getpid()}"
    psql(argument, f"CREATE DATABASE {name}")
    try:
        yield urllib.parse.urlsplit(argument)._replace(path=f"/{name}").geturl(), None
    finally:
        psql(argument, f"DROP DATABASE {name} WITH (FORCE)")


def pgbench(uri, clients, env=None, text=CEILING_SCRIPT):
    """(transactions/s, mean latency ms) of the script `text`, the median of RUNS runs."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
        script.write(text)
        script.flush()
        command = [os.path.join(PG_BIN, "pgbench"), "-n", "-M", "prepared", "-f", script.name, "-T", str(SECONDS),
                   "-c", str(clients), "-j", str(min(clients, harness.THREADS)),
                   "-D", "state=\\x" + "73" * 2048, "-D", "entry=\\x" + "65" * 200, uri]
        runs = []
        for _ in range(RUNS):
            output = subprocess.run(command, capture_output=True, text=True, check=True, env={**os.environ, **(env or {})}).stdout
            tps = float(re.search(r"^tps = ([\d.]+)", output, re.M).group(1))
            latency = float(re.search(r"^latency average = ([\d.]+) ms", output, re.M).group(1))
            runs.append((tps, latency))
    return statistics.median(run[0] for run in runs), statistics.median(run[1] for run in runs)


def statements(log, server, requests):
    """What PostgreSQL executed for `requests` (sent one at a time, so no batching), per request:
    {statement: count}. The server's connections log every statement (log_statement=all)."""
    offset = os.path.getsize(log)
    for send in requests:
        send(server)
    with open(log, encoding="utf-8", errors="replace") as file:
        file.seek(offset)
        names = re.findall(r"LOG:  (?:statement: (\w+)|execute (\w+):)", file.read())
    counts = collections.Counter(statement or prepared for statement, prepared in names)
    return {name: count / len(requests) for name, count in counts.most_common()}


def web_events_cycle(request_id, session="bench-2"):
    """The five inputs of web-events.lua's cycle, as (path, body)."""
    events = f"/v1/sessions/{session}/web-events"
    return [(f"/v1/sessions/{session}/gestures", {"type": "pull", "requestId": request_id}),
            (events, {"type": "webView.loadingPresentation", "owner": "web", "reason": "content_visible"}),
            (events, {"type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": "b1", "elapsedMs": 42,
                      "requestId": request_id}),
            (events, {"type": "todayPage.allBatchesRendered", "schemaVersion": 1, "status": "succeeded", "empty": False,
                      "elapsedMs": 80, "requestId": request_id}),
            (events, {"type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": request_id, "mode": "soft",
                      "status": "succeeded"})]


def round_trips(uri, log):
    """Round trips to PostgreSQL per GET of a cached view and per input alone, by name."""
    server = Server(None, db=uri, env={"PGOPTIONS": "-c log_statement=all"})
    try:
        server.get("/v1/sessions/bench-0")
        get = statements(log, server, [lambda s: s.get("/v1/sessions/bench-0")] * 20)
        lifecycle = statements(log, server, [
            lambda s, kind=kind: harness.post_all(s, [("/v1/sessions/bench-1/lifecycle", {"type": kind})])
            for kind in ["background", "foreground"] * 10])
        web_events = statements(log, server, [
            lambda s, step=step: harness.post_all(s, [step]) for cycle in range(4) for step in web_events_cycle(f"probe-{cycle}")])
    finally:
        server.stop()
    for label, counts in (("GET /v1/sessions/{id}", get), ("POST …/lifecycle alone", lifecycle),
                          ("POST …/web-events cycle, per input alone", web_events)):
        print(f"  {label}: {sum(counts.values()):.1f} statements: "
              + ", ".join(f"{name} ×{count:g}" for name, count in counts.items()))


def run(argument, sqlite):
    """The PostgreSQL runs, then both stores side by side (`sqlite`: {(synchronous, case): result})."""
    with database(argument) as (uri, log):
        results = {}
        server = Server(None, db=uri)
        try:
            create_sessions(server, [f"bench-{i}" for i in range(SESSIONS)])
            psql(uri, CEILING_ROWS)
            one, many = pgbench(uri, 1), pgbench(uri, CONNECTIONS)
            ceiling = max(one, many)
            ceiling_name = f"pgbench -c{1 if ceiling is one else CONNECTIONS}"
            view = results["view"] = wrk(server.base, "get-session.lua", env=SESSION_ENV)
            row(f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)", view, "SQLite's", view[0] / sqlite[("normal", "view")][0], 0.30)
            inputs, commits = server.metric("todaysim_store_commit_inputs_sum"), server.metric("todaysim_store_commit_inputs_count")
            writes = results["web-events"] = wrk(server.base, "web-events.lua", env=SESSION_ENV)
            batch = (server.metric("todaysim_store_commit_inputs_sum") - inputs) / max(1, server.metric("todaysim_store_commit_inputs_count") - commits)
            row("POST …/web-events (pull→render→result)", writes, ceiling_name, writes[0] / ceiling[0], 0.50)
            lifecycle = results["lifecycle"] = wrk(server.base, "lifecycle.lua", env=SESSION_ENV)
            row("POST …/lifecycle", lifecycle, ceiling_name, lifecycle[0] / ceiling[0])
            page = results["timeline"] = wrk(server.base + "/v1/sessions/bench-0/timeline?after=10&limit=100")
            row("GET …/timeline?after=10&limit=100", page, "SQLite's", page[0] / sqlite[("normal", "timeline")][0])
        finally:
            server.stop()
        unsafe = Server(None, db=uri, env=SYNCHRONOUS_OFF)
        try:
            off = wrk(unsafe.base, "web-events.lua", env=SESSION_ENV)
            row("POST …/web-events, synchronous_commit=off", off, "=on", off[0] / writes[0])
        finally:
            unsafe.stop()
        off_ceiling = pgbench(uri, CONNECTIONS, SYNCHRONOUS_OFF)
        for name, (tps, latency) in (("pgbench -c1", one), (f"pgbench -c{CONNECTIONS}", many),
                                     (f"pgbench -c{CONNECTIONS}, synchronous_commit=off", off_ceiling)):
            harness.ROWS.append((f"ceiling: {name}, 1 row + 3 entries per tx", f"{tps:,.0f}", "", "",
                                 f"tx/s, latency mean {latency:.2f} ms"))
        # The read side: as many connections as the reader pool (2), and twice that.
        for clients in (2, 4):
            tps, latency = pgbench(uri, clients, text=LOOKUP_SCRIPT)
            harness.ROWS.append((f"ceiling: pgbench -c{clients}, one version lookup per tx", f"{tps:,.0f}", "", "",
                                 f"tx/s, latency mean {latency:.2f} ms"))
        print_table(f"PostgreSQL {psql(uri, 'SHOW server_version')} (synchronous_commit={psql(uri, 'SHOW synchronous_commit')}, "
                    f"fsync={psql(uri, 'SHOW fsync')}): one write connection (group commit), 2 read connections")
        print(f"group commit under -c{CONNECTIONS} web-events: {batch:.1f} inputs per transaction (mean)")
        if log:
            print("statements per request, one request at a time:")
            round_trips(uri, log)
    both(sqlite, results)


def both(sqlite, postgres):
    cases = [("view", "normal", f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)"),
             ("web-events", "normal", "POST …/web-events"), ("lifecycle", "normal", "POST …/lifecycle"),
             ("timeline", "normal", "GET …/timeline?after=10&limit=100"),
             ("web-events", "full", "POST …/web-events vs SQLite synchronous=FULL"),
             ("lifecycle", "full", "POST …/lifecycle vs SQLite synchronous=FULL")]
    for case, synchronous, name in cases:
        mine, theirs = sqlite[(synchronous, case)], postgres[case]
        harness.ROWS.append((name, f"{mine[0]:,.0f}", f"{mine[2]:.2f}", f"{theirs[0]:,.0f}", f"{theirs[2]:.2f}",
                             f"{theirs[0] / mine[0]:.2f}"))
    print_table("both stores (SQLite synchronous=NORMAL unless said)",
                ("case", "SQLite req/s", "p99 ms", "PostgreSQL req/s", "p99 ms", "PostgreSQL/SQLite"))
