"""Fixtures of the system tests: the binary under test (`--todaysim-bin` or TODAYSIM_BIN),
servers started the package's one way and always stopped, a throwaway PostgreSQL, a random seed
printed for a rerun (`--seed` or TODAYSIM_SEED), figures reported beside their goals at the end
of the run, and `--long` for the long versions (`@pytest.mark.long`)."""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Iterator

import pytest
from todaysim.server import Server

from support import Figure
from support.postgres import Postgres

pytest_plugins = ["support.checks", "support.abuse",  # soft checks counted in the summary; the abused server
                  "support.browser", "support.dashboard",  # browser, new_tab, page_server; dashboard
                  "support.fleet",  # fleet (3 replicas behind nginx), fleet_sizes
                  "support.docs_examples",  # --docs FILE: the documents test_docs_examples.py checks
                  "support.bench",  # the benches' options (--bench-db, --bench-other, --bench-rounds), table
                  "support.packaging"]  # --static-bin: the binary test_package.py packages

FIGURES: list[Figure] = []
SEEDS: list[tuple[str, int]] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--todaysim-bin", default=os.environ.get("TODAYSIM_BIN"),
                     help="the todaysim binary under test (default: TODAYSIM_BIN)")
    parser.addoption("--long", action="store_true",
                     help="run the long versions (tests marked long) and hold every goal")
    parser.addoption("--seed", type=int, default=os.environ.get("TODAYSIM_SEED"),
                     help="the seed of the tests that draw at random (default: TODAYSIM_SEED, else the time; "
                          "each is printed for a rerun)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="the long version: run with --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def long_version(pytestconfig: pytest.Config) -> bool:
    return bool(pytestconfig.getoption("--long"))


@pytest.fixture(scope="session")
def binary(pytestconfig: pytest.Config) -> str:
    path = pytestconfig.getoption("--todaysim-bin")
    if not path or not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.exit(f"no todaysim binary: pass --todaysim-bin or set TODAYSIM_BIN (got {path!r})", returncode=2)
    return str(os.path.abspath(path))


@pytest.fixture
def start_server(binary: str) -> Iterator[Callable[..., Server]]:
    """`start_server(db=..., args=[...], port=...)`: a started `todaysim serve`; every server
    a test started is stopped (SIGTERM) when the test ends, whatever happened."""
    started: list[Server] = []

    def start(**options: Any) -> Server:
        server = Server(binary=binary, **options)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def postgres() -> Iterator[Postgres]:
    """A started PostgreSQL of the test's own (`.uri`; `.stop()`, `.start()` restart it on the
    same port; `.query(sql)`), stopped and removed when the test ends."""
    database = Postgres()
    try:
        database.start()
        yield database
    finally:
        database.remove()


@pytest.fixture
def seed(request: pytest.FixtureRequest, pytestconfig: pytest.Config) -> int:
    """The test's random seed: `--seed` (or TODAYSIM_SEED), else the time; printed (in a failing
    test's output and the run's summary) so a failing run can be repeated with `--seed N`."""
    chosen = pytestconfig.getoption("--seed")
    value = int(chosen) if chosen is not None else int(time.time())
    SEEDS.append((request.node.nodeid, value))
    print(f"seed {value} (rerun: --seed {value})")
    return value


@pytest.fixture
def figure(request: pytest.FixtureRequest, long_version: bool) -> Callable[..., Figure]:
    """`figure(name, value, unit, goal=None, higher_is_better=False)`: records a figure, printed
    in the run's summary; in the long version a missed goal fails the test."""
    def record(name: str, value: float, unit: str = "", goal: float | None = None,
               higher_is_better: bool = False) -> Figure:
        measured = Figure(request.node.nodeid, name, value, unit, goal, higher_is_better)
        FIGURES.append(measured)
        if long_version and measured.met is False:
            pytest.fail(measured.line())
        return measured
    return record


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if SEEDS:
        terminalreporter.section("seeds (repeat a run with --seed N)")
        for nodeid, value in SEEDS:
            terminalreporter.write_line(f"SEED {nodeid}: {value}")
    if FIGURES:
        terminalreporter.section("figures (goals are held only by --long)")
        for measured in FIGURES:
            terminalreporter.write_line(measured.line())
