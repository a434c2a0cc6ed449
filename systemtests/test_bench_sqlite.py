"""`Scripts/bench` (formerly `bench.d/bench.py` of Scripts/bench): every endpoint in its own wrk run
against the ceilings of its own stack, on SQLite, with `synchronous` NORMAL (the shipped setting)
and FULL — `GET /healthz` (the HTTP ceiling) and `todaysim-bench storage` (SQLite alone
committing what one input commits) — then the history run: 10,000 sessions and one with 100,000
timeline entries (BENCH_SKIP_HISTORY=1 leaves it out). Goals (docs/PERFORMANCE.md): a GET at
least 0.60 of /healthz, web-events at least 0.50 of the storage ceiling, the big session's
writes and reads at least 0.80 of a fresh one's, a deep timeline page's p50 under 2 ms, the
server's memory under 100 MiB after it all."""
from __future__ import annotations

import os
import socket
import statistics
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest
from todaysim.server import Server

from support import wait_until
from support.bench import (RUNS, SECONDS, SESSION_ENV, SESSIONS, Record, Result, Table, create_sessions, header,
                           rss_mib, serve, server_pid, url, wrk)

pytestmark = pytest.mark.bench
SQLITE: dict[tuple[str, str], Result] = {}  # (synchronous, case): what test_bench_postgres.py compares with


def accepted(pid: int, port: int, client_ports: set[int]) -> int:
    """How many of the connections from `client_ports` to `port` process `pid` holds a
    descriptor of (accepted, not only waiting in the listen queue): /proc/net/tcp's server-side
    entries, by socket inode."""
    held: set[str] = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            held.add(target[len("socket:["):-1])
    count = 0
    with open("/proc/net/tcp", encoding="ascii") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(local.rsplit(":", 1)[1], 16) == port and int(remote.rsplit(":", 1)[1], 16) in client_ports \
                    and inode in held:
                count += 1
    return count


def with_waiters(server: Server, count: int, measure: Callable[[], Result]) -> Result:
    """Runs `measure` while `count` timeline requests wait (waitMs=30000) on a quiet session."""
    with server.client() as client:
        client.create_session("waiter", id="waited-on")
        last = client.read_session("waited-on")["counts"]["timeline"]
    pid, port = server_pid(server), int(url(server).rsplit(":", 1)[1])
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port))
            sockets.append(sock)
            sock.sendall(f"GET /v1/sessions/waited-on/timeline?after={last}&waitMs=30000 HTTP/1.1\r\n"
                         "Host: bench\r\n\r\n".encode())
        # Every one taken by the server (a descriptor of its own) before the measurement starts.
        # Counted by connection, not by the server's number of descriptors: one it closes
        # meanwhile (a connection of the run before) would keep that number short for good.
        ours = {sock.getsockname()[1] for sock in sockets}
        assert wait_until(lambda: accepted(pid, port, ours) == count, 30), \
            f"the server took {accepted(pid, port, ours)} of the {count} waiting requests within 30 s"
        return measure()
    finally:
        for sock in sockets:
            sock.close()


def storage_ceiling(binary: str, synchronous: str) -> float:
    """`todaysim-bench storage` (beside the binary): transactions/s, the median of RUNS runs."""
    runs = []
    for _ in range(RUNS):
        output = subprocess.run([os.path.join(os.path.dirname(binary), "todaysim-bench"), "storage", "--seconds",
                                 str(SECONDS), "--synchronous", synchronous], capture_output=True, text=True,
                                check=True, timeout=SECONDS + 120).stdout
        runs.append(float(output.split()[2]))
    return statistics.median(runs)


def sqlite_runs(server: Server, binary: str, synchronous: str, table: Table, figure: Record) -> None:
    """The endpoint runs on `server` (a SQLite store with `synchronous`), printed as a table;
    their results kept in SQLITE."""
    normal = synchronous == "normal"
    with server.client() as client:
        create_sessions(client, [f"bench-{i}" for i in range(SESSIONS)])
    base = url(server)
    ceiling = storage_ceiling(binary, synchronous)
    figure(f"storage ceiling, synchronous={synchronous}", ceiling, "tx/s")
    if normal:
        health = wrk(base + "/healthz")
        table.row("GET /healthz (HTTP ceiling)", health)
        view = SQLITE[(synchronous, "view")] = wrk(base, "get-session.lua", env=SESSION_ENV)
        table.row(f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)", view, "/healthz", view[0] / health[0], 0.60)
    writes = SQLITE[(synchronous, "web-events")] = wrk(base, "web-events.lua", env=SESSION_ENV)
    table.row("POST …/web-events (pull→render→result)", writes, "storage", writes[0] / ceiling, 0.50 if normal else None)
    lifecycle = SQLITE[(synchronous, "lifecycle")] = wrk(base, "lifecycle.lua", env=SESSION_ENV)
    table.row("POST …/lifecycle", lifecycle, "storage", lifecycle[0] / ceiling)
    if normal:
        page = SQLITE[(synchronous, "timeline")] = wrk(base + "/v1/sessions/bench-0/timeline?after=10&limit=100")
        table.row("GET …/timeline?after=10&limit=100", page)
        waiting = with_waiters(server, 200, lambda: wrk(base, "get-session.lua", env=SESSION_ENV))
        table.row("GET /v1/sessions/{id} beside 200 parked waitMs requests", waiting, "without", waiting[0] / view[0])
    table.note("storage ceiling: SQLite alone, 1 row + 3 entries per tx", f"{ceiling:,.0f}", "", "", "tx/s")
    table.print(f"synchronous={synchronous.upper()} (WAL)" + (" — the shipped setting" if normal else ""))


@pytest.mark.parametrize("synchronous", ["normal", "full"])
def test_sqlite_store(synchronous: str, start_server: Callable[..., Server], binary: str, tmp_path: Path,
                      table: Table, figure: Record) -> None:
    header()
    server = serve(start_server, os.path.join(tmp_path, f"bench-{synchronous}.sqlite"), "--synchronous", synchronous)
    sqlite_runs(server, binary, synchronous, table, figure)


def test_history(start_server: Callable[..., Server], tmp_path: Path, table: Table, figure: Record) -> None:
    """10,002 sessions, one ('big') with 100,000 timeline entries: writes and reads on it against a
    fresh one, a deep timeline page, the server's memory."""
    if os.environ.get("BENCH_SKIP_HISTORY") == "1":
        pytest.skip("BENCH_SKIP_HISTORY=1")
    header()
    server = serve(start_server, os.path.join(tmp_path, "bench-history.sqlite"))
    base = url(server)
    with server.client() as client:
        started = time.monotonic()
        create_sessions(client, [f"h-{i}" for i in range(10_000)])
        create_sessions(client, ["fresh", "big"])
        # 100,000 timeline entries on one session: background/foreground pairs, 4 entries each.
        for i in range(25_000):
            client.lifecycle("big", "background" if i % 2 == 0 else "foreground")
        entries = client.read_session("big")["counts"]["timeline"]
        seeded = time.monotonic() - started
    results = {}
    for name in ("fresh", "big"):
        results[("write", name)] = wrk(base, "lifecycle-one.lua", env={"BENCH_SESSION": name})
        results[("read", name)] = wrk(f"{base}/v1/sessions/{name}")
    for kind, label in (("write", "POST …/lifecycle on"), ("read", "GET /v1/sessions/")):
        fresh, big = results[(kind, "fresh")], results[(kind, "big")]
        table.row(f"{label} fresh", fresh)
        table.row(f"{label} big", big, "fresh", big[0] / fresh[0], 0.80)
    deep = wrk(f"{base}/v1/sessions/big/timeline?after={entries // 2}&limit=100", connections=4)
    table.row(f"GET big timeline?after={entries // 2}&limit=100 (-c4)", deep)
    table.print(f"history: 10,002 sessions, 'big' has {entries:,} timeline entries (seeded in {seeded:.0f} s)")
    figure("history seeded", seeded, "s")
    figure("deep timeline page p50", deep[1], "ms", goal=2)
    print(f"deep timeline page p50 {deep[1]:.2f} ms (target < 2 ms: {'met' if deep[1] < 2 else 'MISSED'})")
    rss = rss_mib(server_pid(server))
    figure("server resident memory", rss, "MiB", goal=100)
    print(f"server resident memory: {rss:.1f} MiB (target < 100 MiB: {'met' if rss < 100 else 'MISSED'})")
