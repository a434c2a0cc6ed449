"""`Scripts/bench --compare OTHER_BIN_DIR [ROUNDS]` (formerly `bench.d/compare_bench.py` of Scripts/bench):
this build (the binary under test) against another (`--bench-other DIR`, its todaysim) in
alternating rounds (`--bench-rounds`, 6) on one machine.

A figure measured once on a busy 2-core machine moves by a third from one minute to the next;
a refactor's figures are "within noise" only beside the other build measured in the same
minutes. Each round starts a fresh server of each build (which goes first alternates), makes
the 64 sessions and runs one wrk per case; the table gives each case's median over the rounds,
the ratio this/other, and every round's figure, so the spread is there to read. No goal: the
ratio is the figure.

Beside the rate, the server's own CPU time per request (user + system, read from /proc around
each wrk run, divided by the requests it answered): what a build costs, which moves far less
than the rate when other work shares the cores (the rate also counts the time the server waited
for them)."""
from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import Callable, Optional

import pytest
from todaysim.server import Server

from support.bench import SECONDS, SESSION_ENV, SESSIONS, Record, create_sessions, url, wrk_once

pytestmark = pytest.mark.bench
CASES: list[tuple[str, str, Optional[str], Optional[dict[str, str]]]] = [
    ("GET /healthz (HTTP ceiling)", "/healthz", None, None),
    ("GET /v1/sessions/{id}", "", "get-session.lua", SESSION_ENV),
    ("POST …/web-events", "", "web-events.lua", SESSION_ENV),
    ("POST …/lifecycle", "", "lifecycle.lua", SESSION_ENV)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (/proc/PID/stat, fields 14 and 15)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_this_build_against_another(pytestconfig: pytest.Config, binary: str, tmp_path: Path,
                                    figure: Record) -> None:
    other_dir = pytestconfig.getoption("--bench-other")
    if not other_dir:
        pytest.skip("no other build: --bench-other DIR (Scripts/bench --compare OTHER_BIN_DIR)")
    other = os.path.join(str(other_dir), "todaysim")
    assert os.access(other, os.X_OK), f"no todaysim in {other_dir} (give a release folder: .build/release)"
    rounds = int(pytestconfig.getoption("--bench-rounds"))
    builds = [("this", binary), ("other", other)]
    figures: dict[tuple[str, str], list[float]] = {(build, case[0]): [] for build, _ in builds for case in CASES}
    cpu: dict[tuple[str, str], list[float]] = {key: [] for key in figures}
    for round_ in range(rounds):
        for build, path in (builds if round_ % 2 == 0 else builds[::-1]):
            # The package's Server of each build's binary (start_server's is the one under test).
            with Server(binary=path, db=os.path.join(tmp_path, f"{build}-{round_}.sqlite"), allow_origin=None) as server:
                with server.client() as client:
                    create_sessions(client, [f"bench-{i}" for i in range(SESSIONS)])
                assert server.process is not None
                for name, path_, script, env in CASES:
                    before = cpu_seconds(server.process.pid)
                    rate = wrk_once(url(server) + path_, script, env=env)[0]
                    figures[(build, name)].append(rate)
                    cpu[(build, name)].append((cpu_seconds(server.process.pid) - before) / (rate * SECONDS) * 1e6)
    print(f"\nthis {os.path.dirname(binary)} against other {other_dir}: {rounds} alternating rounds, req/s, median")
    print_table(figures, figure, "this/other", lambda x: f"{x:,.0f}")
    print("\nserver CPU per request, µs (user + system), median; this/other below 1 is cheaper")
    print_table(cpu, figure, "CPU per request, this/other", lambda x: f"{x:.1f}")


def print_table(figures: dict[tuple[str, str], list[float]], figure: Record, label: str,
                number: Callable[[float], str]) -> None:
    """Per case: the other build's median, this one's, their ratio, then every round's figure."""
    print(f"{'case':30s} {'other':>9s} {'this':>9s} {'this/other':>10s}  rounds (other | this)")
    for name, *_ in CASES:
        mine, theirs = figures[("this", name)], figures[("other", name)]
        ratio = statistics.median(mine) / statistics.median(theirs)
        figure(f"{name}: {label}", ratio, "x")
        print(f"{name:30s} {number(statistics.median(theirs)):>9s} {number(statistics.median(mine)):>9s} {ratio:10.2f}  "
              f"{' '.join(f'{x:,.0f}' for x in theirs)} | {' '.join(f'{x:,.0f}' for x in mine)}")
