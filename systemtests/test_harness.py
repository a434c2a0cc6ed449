"""The harness itself: servers a test starts are stopped whatever the test did; a missed goal is
a reported figure in the fast version and a failure in the long one; `long` tests run only with
--long. Each is checked on an inner pytest run of this tree's conftest."""
from __future__ import annotations

import os

import pytest

from support import wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
pytest_plugins = ["pytester"]

INNER_CONFTEST = f"""
import importlib.util, sys
sys.path.insert(0, {HERE!r})
spec = importlib.util.spec_from_file_location("systemtests_conftest", {os.path.join(HERE, "conftest.py")!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
globals().update({{name: value for name, value in vars(module).items() if not name.startswith("__")}})
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) is not running
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def inner(pytester: pytest.Pytester, binary: str) -> pytest.Pytester:
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makeini("[pytest]\nmarkers =\n    long: the long version\n")
    return pytester


def test_servers_of_a_failing_test_are_stopped(inner: pytest.Pytester, binary: str) -> None:
    pids = inner.path / "pids"
    inner.makepyfile(test_inner=f"""
def test_starts_two_and_fails(start_server):
    first, second = start_server(), start_server(db=":memory:")
    assert first.client().health()["status"] == "ok"
    open({str(pids)!r}, "w").write(f"{{first.process.pid}} {{second.process.pid}}")
    assert False, "the test fails with its servers running"
""")
    result = inner.runpytest_subprocess(f"--todaysim-bin={binary}")
    result.assert_outcomes(failed=1)
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 2
    assert wait_until(lambda: not any(alive(pid) for pid in started), 60), f"still running: {started}"


def test_a_missed_goal_is_reported_in_the_fast_version_and_fails_the_long_one(inner: pytest.Pytester, binary: str) -> None:
    inner.makepyfile(test_inner="""
import pytest

def test_measures(figure):
    figure("p99 latency", 750, "ms", goal=500)
    figure("throughput", 20, "inputs/s", goal=10, higher_is_better=True)

@pytest.mark.long
def test_only_long():
    pass
""")
    fast = inner.runpytest_subprocess(f"--todaysim-bin={binary}")
    fast.assert_outcomes(passed=1, skipped=1)
    fast.stdout.fnmatch_lines(["*p99 latency: 750 ms (goal ≤ 500 ms: MISSED)*",
                               "*throughput: 20 inputs/s (goal ≥ 10 inputs/s: met)*"])
    long = inner.runpytest_subprocess(f"--todaysim-bin={binary}", "--long")
    long.assert_outcomes(passed=1, failed=1)
    long.stdout.fnmatch_lines(["*FIGURE*p99 latency: 750 ms (goal ≤ 500 ms: MISSED)*"])
