"""`Scripts/bench --wake` (formerly lines of Scripts/bench itself): the Swift suite's two latency
measurements (TODAYSIM_MEASURE_WAKE=1, off in `Scripts/test`, which asserts no latency), run with
`swift test --skip-build` in this clone (Scripts/bench builds the tests first): a wall timer's
lateness beyond the machine's wake-up delay (goal 50 ms + twice that delay) and a long poll's
wake across two servers on a throwaway PostgreSQL (goal p99 <= 100 ms over 200 inputs), each a
figure beside its goal. The test fails when the Swift tests fail, never on a figure (but under
`--long`)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from support import ROOT
from support.bench import Record

pytestmark = pytest.mark.bench
FILTER = "realTimeWatchdogLatencyBeyondTheMachinesWakeUpDelay|realTimeWakeLatencyAcrossServers"
WALL = re.compile(r"^wall timer: fired (\d+) ms late \(goal <= ([\d.]+) ms")
CROSS = re.compile(r"^cross-server wake: p50 ([\d.]+) ms, p99 ([\d.]+) ms \(goal p99 <= ([\d.]+) ms")


def test_wake_latencies(figure: Record) -> None:
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    done = subprocess.run([swift, "test", "--skip-build", "--filter", FILTER], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800, env={**os.environ, "TODAYSIM_MEASURE_WAKE": "1"})
    output = done.stdout + done.stderr
    lines = [line for line in output.splitlines() if re.match(r"^(wall timer|cross-server wake):|.*(✘|Test run)", line)]
    print("\n" + "\n".join(lines or output.splitlines()[-20:]))
    assert done.returncode == 0, f"swift test exited {done.returncode}"
    wall = [WALL.match(line) for line in lines]
    cross = [CROSS.match(line) for line in lines]
    for match in filter(None, wall):
        figure("wall timer lateness", float(match.group(1)), "ms", goal=float(match.group(2)))
    for match in filter(None, cross):
        figure("cross-server wake p50", float(match.group(1)), "ms")
        figure("cross-server wake p99", float(match.group(2)), "ms", goal=float(match.group(3)))
    assert any(wall) and any(cross), "the two measurements printed no figure (TODAYSIM_MEASURE_WAKE=1)"
