"""Disk full, without a special mount (issue 12, items 6 and 8): the server runs under a file size
limit (RLIMIT_FSIZE, set on its process with `prlimit(2)`), lowered under it until writes fail.

Every failed write is `507 insufficient_storage` with Retry-After (never 500) and changes nothing;
/readyz says degraded/full while /healthz stays 200; wall-clock timers falling due meanwhile cost
almost no CPU and a line or two of log (backoff), not a spinning core; once the limit is raised
again writes resume on their own and readiness comes back; SIGTERM exits 0; a new server on the
same file holds every acknowledged session and none of the refused ones; integrity_check ok.

Time (issue 20, item 1): the waits are deadlines no healthy run comes near (30 s for writes and
readiness to come back, 45 s for the timers, 120 s to exit at SIGTERM: the server drains 5 s at
most); the CPU check is the server's own CPU time, which another process's load does not add
to, over a measuring window. The wall timers are armed just before the disk fills, 8 s ahead of
their due time, so the few requests in between have all of it."""
from __future__ import annotations

import os
import resource
import sqlite3
import time
from pathlib import Path
from typing import Callable

import pytest
from todaysim.client import Client, TodaysimError
from todaysim.server import Server

from support import Figure, wait_until
from support.wire import Wire

HARD = 64 << 20  # the hard file size limit; the soft one moves under it
TICKS = os.sysconf("SC_CLK_TCK")
WALL_SESSIONS = 5
DUE_IN_MS = 8000
WINDOW = 3.0  # seconds of the CPU measuring window


def cpu_seconds(server: Server) -> float:
    assert server.process is not None
    with open(f"/proc/{server.process.pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def file_size_limit(server: Server, soft: int) -> None:
    assert server.process is not None
    resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE, (soft, HARD))


def created(client: Client, session: str, uid: str = "u" * 200) -> int:
    """Creates `session`: 201, or the refusal's status (0: no answer)."""
    try:
        client.create_session(uid, id=session)
        return 201
    except TodaysimError as error:
        return error.status


def wall_lines(server: Server) -> list[str]:
    return [line for line in server.log_lines if "todaysim-wall-clock:" in line]


def test_disk_full(start_server: Callable[..., Server], figure: Callable[..., Figure], tmp_path: Path) -> None:
    db = os.path.join(tmp_path, "full.sqlite")
    # --quiet: the server keeps its last 500 log lines, and request lines would push out the
    # wall clock's, which this test counts.
    server = start_server(db=db, args=["--quiet"])
    file_size_limit(server, HARD)
    wire = Wire()
    client = server.client(transport=wire)
    acknowledged, refused, others = [], [], []
    for number in range(50):
        if created(client, f"early-{number}") == 201:
            acknowledged.append(f"early-{number}")
    # Wall sessions whose timers fall due while the disk is full (after the fill below), armed
    # last, so only the fill's few requests come between them and the full disk.
    for number in range(WALL_SESSIONS):
        client.create_session("wall", id=f"wall-{number}", clock="wall",
                              timing={"softRefreshDeadlineMs": DUE_IN_MS, "pullWatchdogMs": DUE_IN_MS + 500})
        client.gesture(f"wall-{number}", "pull", requestId=f"p{number}")
    due_at = time.time() + DUE_IN_MS / 1000
    # No file may grow any more: writes go on while the WAL has room, then fail.
    file_size_limit(server, max(os.path.getsize(path) for path in (db, db + "-wal") if os.path.exists(path)))
    full_at = None
    for number in range(20000):
        status = created(client, f"fill-{number}")
        if status == 201:
            acknowledged.append(f"fill-{number}")
            continue
        full_at = time.time()
        if status == 507:
            refused.append(f"fill-{number}")
            problem, headers = wire.last.json() if wire.last else {}, wire.last.headers if wire.last else {}
            assert problem.get("code") == "insufficient_storage" and headers.get("Retry-After") == "10", \
                f"a write on a full disk is 507 insufficient_storage with Retry-After: {problem}, {dict(headers)}"
        else:
            others.append((f"fill-{number}", status))
        break
    assert full_at is not None, f"the disk never filled up ({len(acknowledged)} sessions acknowledged)"
    figure("sessions acknowledged before the disk filled", len(acknowledged), "sessions")
    figure("the disk full before the wall timers fall due", due_at - full_at, "s")
    # A checkpoint can make room in the WAL again (as deleting a file would on a real disk);
    # from here on there is none at all, so what follows is decided by the server alone.
    file_size_limit(server, 1)
    for number in range(20):
        status = created(client, f"more-{number}")
        if status in (201, 507):
            (acknowledged if status == 201 else refused).append(f"more-{number}")
        else:
            others.append((f"more-{number}", status))
    assert not others, f"no write is answered anything but 201 or 507: {others[:3]}"
    assert client.readiness() == {"status": "degraded", "storage": "full"} and wire.last and wire.last.status_code == 503, \
        "/readyz is 503 degraded/full"
    assert client.health()["status"] == "ok", "/healthz stays 200 (liveness)"  # the client raises on another status

    # The wall timers fall due now; the scheduler must back off, not spin.
    assert wait_until(lambda: time.time() >= due_at + 0.5 and wall_lines(server), 45), \
        "the failing wall-clock write is logged"
    cpu_before, lines_before = cpu_seconds(server), len(server.log_lines)
    time.sleep(WINDOW)  # a measuring window, not a wait for something to happen
    cpu = cpu_seconds(server) - cpu_before
    figure("CPU of failing wall-clock writes", cpu, f"s in {WINDOW:.0f} s")
    assert cpu < 0.3 * WINDOW, f"failing wall-clock writes cost little CPU: {cpu:.2f} s CPU in {WINDOW:.0f} s"
    logged = wall_lines(server)
    assert 1 <= len(logged) <= 2, (f"the failing wall-clock write is logged once, not per try: {len(logged)} line(s), "
                                   f"{len(server.log_lines) - lines_before} lines in the window; first: {logged[:1]}")
    with pytest.raises(TodaysimError) as still_full:
        client.gesture("wall-0", "pull", requestId="late")
    assert still_full.value.status == 507, "the store is still full before the limit is raised"

    # Room again: writes resume by themselves.
    file_size_limit(server, HARD)
    assert wait_until(lambda: created(client, "after-room", "u") in (201, 409), 30), \
        "writes resume on their own once there is room"
    acknowledged.append("after-room")
    assert wait_until(lambda: client.readiness()["status"] == "ok" and wire.last and wire.last.status_code == 200, 30), \
        "/readyz is 200 again"
    assert wait_until(lambda: all(len(client.timeline(f"wall-{n}", kind="watchdog")["entries"]) >= 2
                                  for n in range(WALL_SESSIONS)), 45), \
        "the wall timers that fell due while full fire once writes succeed"
    client.close()
    assert server.stop(timeout=120) == 0, "SIGTERM exits 0"

    after = start_server(db=db, args=["--quiet"])
    with after.client() as reader:
        missing = [session for session in acknowledged if read_status(reader, session) != 200]
        present = [session for session in refused if read_status(reader, session) != 404]
    after.stop()
    assert not missing, f"a new server on the file holds every acknowledged session: {len(acknowledged)}, missing {missing[:5]}"
    assert refused and not present, f"no refused write is stored: {len(refused)} refused, present {present[:5]}"
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check"


def read_status(client: Client, session: str) -> int:
    """How reading `session` is answered: 200, or the refusal's status."""
    try:
        client.read_session(session)
        return 200
    except TodaysimError as error:
        return error.status
