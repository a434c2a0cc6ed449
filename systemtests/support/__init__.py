"""What every system test shares: one port picker, one way to wait for a condition, one way to
start a server (the package's `todaysim.server.Server`), one way to report a figure beside its
goal. Nothing here sleeps a fixed time waiting for something: it waits for the condition."""
from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, TypeVar

T = TypeVar("T")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the clone


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


def stored_as_answered(session: str, entries: Sequence[Mapping[str, Any]],
                       answers: Iterable[tuple[int, Mapping[str, Any]]]) -> tuple[int, list[str]]:
    """A session's timeline (`entries`, all of them) against the inputs answered 200 (`answers`:
    each input's index and its answer): how many inputs it applied (the creation aside), and what
    is wrong — a gap in `seq`, an answered input whose entries are not stored exactly as answered."""
    by_seq = {entry["seq"]: entry for entry in entries}
    applied = sum(1 for entry in entries if entry["kind"] == "input" and entry["type"] != "create")
    problems = []
    if [entry["seq"] for entry in entries] != list(range(1, len(entries) + 1)):
        problems.append(f"{session}: seq has gaps")
    lost = [index for index, answer in answers if any(by_seq.get(entry["seq"]) != entry for entry in answer["entries"])]
    if lost:
        problems.append(f"{session}: {len(lost)} inputs answered 200 are not stored as answered, e.g. input {lost[0]}")
    return applied, problems


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
