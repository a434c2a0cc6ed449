"""What the benches share (a pytest plugin; the tests marked `bench`, run by `Scripts/bench`, issue
37 moved them here from the folder `bench.d` of Scripts/bench): wrk runs against a server (`wrk/*.lua` beside the
tests), their medians, the tables `Scripts/bench` prints (each row's figures recorded through the
`figure` fixture, a goal beside the figure that has one), and the options of its modes.

Options via environment, as before: BENCH_SECONDS (3) per wrk run, BENCH_RUNS (3) runs a median
is taken of; the modes' own are read by their tests."""
from __future__ import annotations

import contextlib
import os
import re
import statistics
import subprocess
import time
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence

import pytest
from todaysim.client import Client
from todaysim.server import Server

from support import Figure

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRK_DIR = os.path.join(HERE, "wrk")
SECONDS = int(os.environ.get("BENCH_SECONDS", "3"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
THREADS, CONNECTIONS = 2, 32
SESSIONS = 64
SESSION_ENV = {"BENCH_SESSIONS": str(SESSIONS)}
TABLE_HEADER = ("case", "req/s", "p50 ms", "p99 ms", "vs ceiling")
Result = tuple[float, float, float]  # req/s, p50 ms, p99 ms
Record = Callable[..., Figure]  # the `figure` fixture


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bench", "the benches (tests marked bench: -m bench; Scripts/bench runs them)")
    group.addoption("--bench-db", default="postgres",
                    help="test_bench_postgres.py's database: `postgres` (a throwaway server, the default) or a URI "
                         "(a scratch database made there and dropped at the end)")
    group.addoption("--bench-other", default=None,
                    help="test_bench_compare.py: the other build's folder (holding its todaysim)")
    group.addoption("--bench-rounds", type=int, default=6, help="test_bench_compare.py: alternating rounds (6)")


HEADERS: set[str] = set()


def header(mode: str = "") -> None:
    """The run's first line, as Scripts/bench printed it (once per run and mode)."""
    if mode not in HEADERS:
        HEADERS.add(mode)
        print(f"\ntodaysim bench{mode}: nproc {os.cpu_count()}, wrk -t{THREADS} -c{CONNECTIONS} -d{SECONDS}s, "
              f"{RUNS} runs each (median), loopback", flush=True)


def serve(start_server: Callable[..., Server], db: str, *args: str, env: Optional[Mapping[str, str]] = None) -> Server:
    """`todaysim serve --db DB ARGS…` through the `start_server` fixture, no CORS origin (as the
    bench always ran it); `env` adds to its environment (PGOPTIONS, for instance)."""
    with environment(env or {}):
        return start_server(db=db, args=list(args), allow_origin=None)


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """`values` in os.environ for the block (a server started in it inherits them), then as before."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def url(server: Server) -> str:
    assert server.url is not None  # started
    return server.url


def create_sessions(client: Client, ids: Iterable[str]) -> None:
    for session in ids:
        client.create_session(f"u-{session}", id=session)


def metric(client: Client, name: str) -> float:
    """A sample's value from /metrics (0 when absent)."""
    match = re.search(rf"^{re.escape(name)} ([\d.e+-]+)$", client.metrics(), re.M)
    return float(match.group(1)) if match else 0.0


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def server_pid(server: Server) -> int:
    assert server.process is not None  # started
    return server.process.pid


def wrk_once(target: str, script: Optional[str] = None, connections: int = CONNECTIONS,
             env: Optional[Mapping[str, str]] = None) -> Result:
    """One wrk run of SECONDS against `target` (with a Lua script of wrk/); every answer must be 2xx/3xx."""
    command = ["wrk", f"-t{THREADS}", f"-c{connections}", f"-d{SECONDS}s", "--latency"]
    if script:
        command += ["-s", os.path.join(WRK_DIR, script)]
    token = f"r{time.time_ns()}"
    output = subprocess.run(command + [target], capture_output=True, text=True, timeout=SECONDS + 30,
                            env={**os.environ, "BENCH_TOKEN": token, "BENCH_DIR": WRK_DIR, **(env or {})}).stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    if rate is None:
        pytest.fail(f"wrk {target}: no rate in its output: {output[-500:]!r}", pytrace=False)

    def percentile(label: str) -> float:
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        assert match is not None, f"wrk printed no {label}th percentile"
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        pytest.fail(f"bench: {target} had {errors.group(1)} error answers", pytrace=False)
    return float(rate.group(1)), percentile("50"), percentile("99")


def wrk(target: str, script: Optional[str] = None, connections: int = CONNECTIONS,
        env: Optional[Mapping[str, str]] = None) -> Result:
    """(req/s, p50 ms, p99 ms), each the median of RUNS runs."""
    runs = [wrk_once(target, script, connections, env) for _ in range(RUNS)]
    rate, p50, p99 = (statistics.median(run[index] for run in runs) for index in range(3))
    return rate, p50, p99


class Table:
    """Rows printed under a title as Scripts/bench printed them (first and last columns
    left-aligned); `row` records a row's figures: its rate and p99, and its ratio to a ceiling
    beside the goal (`target`) when it has one."""

    def __init__(self, figure: Record):
        self.figure = figure
        self.rows: list[Sequence[str]] = []

    def row(self, name: str, result: Result, ceiling_name: str = "", ratio: Optional[float] = None,
            target: Optional[float] = None) -> None:
        rate, p50, p99 = result
        self.figure(f"{name}: rate", rate, "req/s")
        self.figure(f"{name}: p99", p99, "ms")
        verdict = ""
        if ratio is not None:
            self.figure(f"{name}: of {ceiling_name}", ratio, "x", goal=target, higher_is_better=True)
            verdict = f"{ratio:.2f} of {ceiling_name}" + (
                f" (target >= {target:.2f}: {'met' if ratio >= target else 'MISSED'})" if target else "")
        self.rows.append((name, f"{rate:,.0f}", f"{p50:.2f}", f"{p99:.2f}", verdict))

    def note(self, *cells: str) -> None:
        """A row as it is (a ceiling's figures, recorded by the caller)."""
        self.rows.append(cells)

    def print(self, title: str, columns: Sequence[str] = TABLE_HEADER) -> None:
        """Prints the rows under `title` and empties the table."""
        print(f"\n{title}")
        last = len(columns) - 1
        lines = [tuple(columns)] + [tuple(row) for row in self.rows]
        widths = [max(len(line[i]) for line in lines) for i in range(len(columns))]
        for line in lines:
            print("  ".join(cell.ljust(widths[i]) if i in (0, last) else cell.rjust(widths[i])
                            for i, cell in enumerate(line)).rstrip())
        self.rows.clear()


@pytest.fixture
def table(figure: Record) -> Table:
    return Table(figure)
