"""What the test and bench scripts share (Python's standard library only): a free loopback port,
starting `todaysim serve` and waiting until it answers, checks printed as `PASS|FAIL<TAB>name<TAB>
detail` lines with their tally, percentiles, and waiting for a condition with a deadline.

A script under Scripts/<name>.d/ imports it with

    sys.path.insert(0, os.path.join(ROOT, "Scripts", "lib"))
    from testkit import Checks, free_port, start_server
"""
import http.client
import os
import socket
import subprocess
import time


def free_port(host="127.0.0.1"):
    """A port nothing listens on now (the kernel's pick), for a server about to be started."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def wait_until(condition, seconds, step=0.02):
    """Calls `condition` until it returns a true value (returned) or `seconds` pass (None). Never
    a fixed pause: it returns as soon as the condition holds."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(step)


def healthy(port, host="127.0.0.1", path="/healthz"):
    """Whether the server on `port` answers `path` with 200 now."""
    try:
        connection = http.client.HTTPConnection(host, port, timeout=2)
        connection.request("GET", path)
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False


def start_server(binary, port, *args, log=subprocess.DEVNULL, seconds=30, host="127.0.0.1", env=None):
    """`binary serve --port PORT ARGS…`, waited for until /healthz answers 200 (a loaded machine
    starts it slowly: `seconds`, 30 by default). Exits the script when it does not come up."""
    process = subprocess.Popen([binary, "serve", "--port", str(port), *args], stdout=log, stderr=log,
                               env={**os.environ, **(env or {})})
    if not wait_until(lambda: process.poll() is not None or healthy(port, host), seconds) or process.poll() is not None:
        process.kill()
        raise SystemExit(f"{os.path.basename(binary)} serve --port {port} did not come up within {seconds} s "
                         f"(exit {process.poll()})")
    return process


def percentile(values, fraction):
    """The value `fraction` (0–1) of the way through `values` sorted (nan when there are none)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


class Checks:
    """Checks printed as they come (`PASS|FAIL<TAB>name<TAB>detail`, one line each; a subclass
    formats its own `line`) and counted; `summary()` prints `N passed, M failed` and gives the
    exit code. `fast`: latency goals are reported figures, not checks (`goal`)."""

    def __init__(self, fast=False):
        self.passed = self.failed = 0
        self.fast, self.goals_met, self.goals_missed = fast, 0, 0

    def line(self, verdict, name, detail):
        return f"{verdict}\t{name}\t{' '.join(str(detail).split())}"

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(self.line("PASS" if ok else "FAIL", name, detail), flush=True)
        return ok

    def goal(self, met, name, detail=""):
        """A latency goal: a check in the long version; in the fast version a figure printed as
        `GOAL met` or `GOAL MISSED` that never fails the run (on a loaded machine it measures the
        machine, not the product)."""
        if not self.fast:
            return Checks.check(self, met, name, detail)
        if met:
            self.goals_met += 1
        else:
            self.goals_missed += 1
        note = "(reported, not a failure in the fast version)"
        print(self.line(f"GOAL {'met' if met else 'MISSED'}", name, f"{detail} {note}" if detail else note), flush=True)
        return met

    def equal(self, name, got, expected):
        return self.check(got == expected, name, f"got {got!r}, expected {expected!r}")

    def summary(self, extra=""):
        print(f"{self.passed} passed, {self.failed} failed{extra}")
        return 1 if self.failed else 0
