"""Checks that all run and are all reported (a pytest plugin: a test module loads it with
`pytest_plugins = ["support.checks"]`). An abuse phase makes hundreds of checks of one server
(every bad request's answer, every checkpoint of the store): `checks(ok, message)` records each,
`checks.assert_all()` fails the test with every failed one, not just the first. The run's summary
counts the checks each test asserted; findings (surprises no check calls a failure) are listed."""
from __future__ import annotations

from typing import Any, Generator, Iterator

import pytest

TALLY: list[tuple[str, int, int]] = []  # (test, checks, failed)
FINDINGS: list[tuple[str, str]] = []


class Checks:
    def __init__(self, test: str):
        self.test, self.count, self.asserted, self.phase = test, 0, False, ""
        self.failures: list[str] = []

    def __call__(self, ok: bool, message: str) -> bool:
        self.count += 1
        if not ok:
            self.failures.append(f"[{self.phase}] {message}" if self.phase else message)
        return ok

    def finding(self, message: str) -> None:
        if (self.test, message) not in FINDINGS:
            FINDINGS.append((self.test, message))

    def assert_all(self) -> None:
        self.asserted = True
        TALLY.append((self.test, self.count, len(self.failures)))
        assert self.count, "no check ran"
        if self.failures:
            pytest.fail(f"{len(self.failures)} of {self.count} checks failed:\n" + "\n".join(self.failures), pytrace=False)


@pytest.fixture
def checks(request: pytest.FixtureRequest) -> Iterator[Checks]:
    """The test's checks; a test that never asserts them fails at its teardown."""
    made = Checks(request.node.nodeid)
    yield made
    report = getattr(request.node, "rep_call", None)
    if not made.asserted and (report is None or report.passed):
        pytest.fail(f"{made.count} checks made, never asserted (checks.assert_all())")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TALLY:
        terminalreporter.section("checks")
        for test, count, failed in TALLY:
            terminalreporter.write_line(f"CHECKS {test}: {count - failed} held, {failed} failed")
        total, failed = sum(count for _, count, _ in TALLY), sum(failed for _, _, failed in TALLY)
        terminalreporter.write_line(f"CHECKS in all: {total - failed} held, {failed} failed, in {len(TALLY)} tests")
    for test, message in FINDINGS:
        terminalreporter.write_line(f"FINDING {test}: {message}")
