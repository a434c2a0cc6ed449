"""What every system test shares: one port picker, one way to wait for a condition, one way to
start a server (the package's `todaysim.server.Server`), one way to report a figure beside its
goal. Nothing here sleeps a fixed time waiting for something: it waits for the condition."""
from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

T = TypeVar("T")


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the kernel's pick), for a server about to be started."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until(condition: Callable[[], Optional[T]], seconds: float, step: float = 0.02) -> Optional[T]:
    """Calls `condition` until it returns a true value (returned) or `seconds` pass (None)."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(step)


def percentile(values: list[float], fraction: float) -> float:
    """The value `fraction` (0–1) of the way through `values` sorted (nan when there are none)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


@dataclass
class Figure:
    """A measured figure beside its goal. In the fast version a missed goal is reported, never a
    failure (on a loaded machine it measures the machine); `--long` holds the goal."""
    test: str
    name: str
    value: float
    unit: str
    goal: Optional[float] = None
    higher_is_better: bool = False

    @property
    def met(self) -> Optional[bool]:
        if self.goal is None:
            return None
        return self.value >= self.goal if self.higher_is_better else self.value <= self.goal

    def line(self) -> str:
        text = f"FIGURE {self.test} · {self.name}: {self.value:.4g} {self.unit}".rstrip()
        if self.goal is not None:
            sign = "≥" if self.higher_is_better else "≤"
            text += f" (goal {sign} {self.goal:g} {self.unit}: {'met' if self.met else 'MISSED'})"
        return text
