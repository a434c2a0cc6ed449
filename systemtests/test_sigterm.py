"""Graceful shutdown under load (issue 12, item 2). In each round the server is started, four
keep-alive clients write to their own sessions, a long poll and an event stream wait, and the
server gets SIGTERM at a random moment. It must exit 0 (no libmicrohttpd abort, no Swift fatal
error) and not hang, `PRAGMA integrity_check` must say ok after every round, and across all
rounds every input answered 200 is stored exactly as answered (nothing acknowledged lost),
nothing is answered otherwise than 200 or `503 shutting_down` (or not at all: the connection
closed under it), the number of applied inputs lies between the acknowledged ones and those plus
the unanswered and in-doubt ones, and `seq` has no gap.

Time (issue 20, item 1): the server drains for 5 s at SIGTERM (what is in flight that long is
answered `503 shutting_down` "may have been applied": in doubt), so a healthy exit takes about
6 s at most; STOP_BOUND (120 s) is a hang, not a slow machine. How long each stop took is a
figure. A 503 is a refusal (must not be applied) only when it says nothing was applied.

Fast version (Scripts/test): 10 rounds; long (`--long`): 100."""
from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Union

import pytest
from todaysim.client import Client, TodaysimError
from todaysim.server import Server

from support import Figure, stored_as_answered, wait_until
from support.wire import Wire

WRITERS = 4
STOP_BOUND = 120.0         # seconds from SIGTERM to exit: it drains 5 s at most, so this is a hang
CLIENT_SECONDS = 30        # a writer gives up on an answer after this (then: unanswered, no failure)
LOAD_BEFORE = (0.05, 0.6)  # the SIGTERM comes this many seconds (uniform) after every writer was answered
QUIET = "sigterm-quiet"    # a session nobody writes to: the long poll waits on it
REFUSED_SECONDS = 1.0      # the client sends a refused request again this long, then the loop asks whether the round is over

# What an input got: its 200 answer, or "refused" (503, nothing applied), "in doubt" (503 when
# the drain ran out: may have been applied) or "unanswered" (the connection broke under it).
Outcome = Union[dict[str, Any], str]


class Load:
    """One round's clients: WRITERS keep-alive writers, a long poll, an event stream, until `stop`."""

    def __init__(self, url: str, outcomes: dict[int, dict[int, Outcome]], quiet_after: int) -> None:
        self.url, self.outcomes, self.quiet_after = url, outcomes, quiet_after
        self.stop = threading.Event()
        self.problems: list[str] = []
        self.polls = self.streams = 0
        self.lock = threading.Lock()
        self.first = {number: len(outcomes[number]) for number in range(WRITERS)}
        self.threads = [threading.Thread(target=self.writer, args=(n,), daemon=True) for n in range(WRITERS)]
        self.threads += [threading.Thread(target=self.long_poll, daemon=True),
                         threading.Thread(target=self.event_stream, daemon=True)]
        for thread in self.threads:
            thread.start()

    def running(self) -> bool:
        """Whether every writer has had an input answered (one way or another) this round."""
        return all(len(self.outcomes[number]) > self.first[number] for number in range(WRITERS))

    def join(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def writer(self, number: int) -> None:
        """Inputs back to back (the client keeps its connection alive) until the server is gone."""
        session, outcomes = f"sigterm-{number}", self.outcomes[number]
        with Client(self.url, timeout=CLIENT_SECONDS, transport=Wire(), retry_refused_for=REFUSED_SECONDS) as client:
            index = len(outcomes)
            while not self.stop.is_set():
                try:
                    if index % 2:
                        answer = client.clock(session, advanceMs=700)
                    else:
                        answer = client.web_event(session, {"type": "todayPage.track", "name": f"w{number}-{index}"})
                    outcomes[index] = dict(answer)
                except TodaysimError as error:
                    if not error.sent:  # refused past the client's retry: the server is gone, the input never left
                        continue
                    if error.status == 0:
                        outcomes[index] = "unanswered"
                        time.sleep(0.01)  # the server is going or gone: do not spin
                    elif error.code == "shutting_down":
                        # "nothing was applied": refused before it ran. Otherwise (the drain ran out
                        # before its answer was ready: "may have been applied") in doubt, like no answer.
                        outcomes[index] = "refused" if "nothing was applied" in error.detail else "in doubt"
                    else:
                        outcomes[index] = "unanswered"
                        with self.lock:
                            self.problems.append(f"writer {number}, input {index}: {error}")
                index += 1

    def long_poll(self) -> None:
        """Timeline long polls on a session that never changes, one after another."""
        with Client(self.url, timeout=CLIENT_SECONDS, transport=Wire(), retry_refused_for=REFUSED_SECONDS) as client:
            while not self.stop.is_set():
                try:
                    client.timeline(QUIET, after=self.quiet_after, wait_ms=30000)
                except TodaysimError as error:
                    if error.status == 0:
                        time.sleep(0.01)
                        continue
                    if error.status != 503:
                        with self.lock:
                            self.problems.append(f"the long poll answered {error}")
                with self.lock:
                    self.polls += 1

    def event_stream(self) -> None:
        """An event stream of writer 0's session, read until the server ends it."""
        with Client(self.url, timeout=CLIENT_SECONDS, transport=Wire(), retry_refused_for=REFUSED_SECONDS) as client:
            while not self.stop.is_set():
                try:
                    for _ in client.session_events("sigterm-0"):
                        pass
                except TodaysimError as error:
                    if not error.sent:  # refused past the client's retry: no stream was read
                        continue
                    time.sleep(0.01)  # it broke or was refused as the server went
                with self.lock:
                    self.streams += 1


def stop_under_load(server: Server, rng: random.Random, load: Load, hang_stacks: Path) -> tuple[int | str, float]:
    """SIGTERM at a random moment of the load: its exit code (or why none) and the seconds it took."""
    process = server.process
    assert process is not None
    if not wait_until(load.running, 30):
        load.problems.append("the writers got no answer within 30 s of the round's start")
    time.sleep(rng.uniform(*LOAD_BEFORE))  # a random moment of the load: the test's input, not a wait
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code: int | str
    try:
        code = process.wait(timeout=STOP_BOUND)
    except subprocess.TimeoutExpired:
        code = f"none within {STOP_BOUND:.0f} s (killed; thread stacks in {hang_stacks})"
        if shutil.which("gdb"):  # where it hangs, for whoever reads the failure
            with open(hang_stacks, "wb") as stacks:
                subprocess.run(["gdb", "-p", str(process.pid), "-batch", "-ex", "thread apply all bt"],
                               stdout=stacks, stderr=subprocess.STDOUT, timeout=60)
        server.kill()
    seconds = time.monotonic() - began
    load.join()
    return code, seconds


def integrity(db: str) -> str:
    with sqlite3.connect(db) as connection:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])


def verify(client: Client, outcomes: dict[int, dict[int, Outcome]]) -> tuple[dict[str, int], list[str]]:
    """Every acknowledged input stored as answered, the applied ones within the bounds: the tally
    of outcomes and what is wrong."""
    tally = {"answered": 0, "refused": 0, "in doubt": 0, "unanswered": 0}
    problems = []
    for number in range(WRITERS):
        session = f"sigterm-{number}"
        answered = [(index, outcome) for index, outcome in outcomes[number].items() if isinstance(outcome, dict)]
        counts = {kind: sum(1 for outcome in outcomes[number].values() if outcome == kind)
                  for kind in ("refused", "in doubt", "unanswered")}
        tally["answered"] += len(answered)
        for kind, count in counts.items():
            tally[kind] += count
        applied, wrong = stored_as_answered(session, client.entries(session), answered)
        problems += wrong
        if not len(answered) <= applied <= len(answered) + counts["unanswered"] + counts["in doubt"]:
            problems.append(f"{session}: {applied} inputs applied, {len(answered)} answered 200, {counts['unanswered']} "
                            f"unanswered, {counts['in doubt']} in doubt ({counts['refused']} refused 503 must not be applied)")
    return tally, problems


@pytest.mark.parametrize("rounds", [pytest.param(10, id="fast"), pytest.param(100, id="long", marks=pytest.mark.long)])
def test_sigterm_under_load(start_server: Callable[..., Server], seed: int, figure: Callable[..., Figure],
                            tmp_path: Path, rounds: int) -> None:
    rng, db = random.Random(seed), os.path.join(tmp_path, "sigterm.sqlite")
    server = start_server(db=db, args=["--quiet"])
    with server.client() as client:
        for session in [f"sigterm-{n}" for n in range(WRITERS)] + [QUIET]:
            client.create_session("sigterm", id=session)
        quiet_after = client.entries(QUIET)[-1]["seq"]
    server.stop()
    outcomes: dict[int, dict[int, Outcome]] = {number: {} for number in range(WRITERS)}
    problems: list[str] = []
    stops: list[float] = []
    polls = streams = exits = 0
    for number in range(rounds):
        server = start_server(db=db, args=["--quiet"])
        assert server.url
        load = Load(server.url, outcomes, quiet_after)
        code, seconds = stop_under_load(server, rng, load, tmp_path / f"hang-{number}.txt")
        stops.append(seconds)
        problems += load.problems
        polls, streams = polls + load.polls, streams + load.streams
        # An exit 0 logs "stopped" last: once it is read, so is everything before it.
        stopped = code == 0 and wait_until(lambda: "todaysim: stopped" in server.log_lines, 30)
        log = "\n".join(server.log_lines)
        if not stopped or "Fatal error" in log:
            problems.append(f"round {number}: exit {code} after {seconds:.2f} s; log tail: {log[-400:]!r}")
        else:
            exits += 1
        checked = integrity(db)
        if checked != "ok":
            problems.append(f"round {number}: integrity_check {checked}")
    server = start_server(db=db, args=["--quiet"])
    with server.client() as client:
        tally, wrong = verify(client, outcomes)
    problems += wrong
    verified_exit = server.stop(timeout=STOP_BOUND)
    if verified_exit != 0:
        problems.append(f"the verifying server exited {verified_exit}")
    stops.sort()
    figure("rounds that exited 0", exits, f"of {rounds}")
    figure("stop after SIGTERM, median", stops[len(stops) // 2], "s")
    figure("stop after SIGTERM, max", stops[-1], "s")
    for kind, count in tally.items():
        figure(f"inputs {kind}", count, "inputs")
    figure("long polls", polls, "polls")
    figure("event streams", streams, "streams")
    assert not problems, f"seed {seed}, database and hang stacks in {tmp_path}: {problems[:10]}"
