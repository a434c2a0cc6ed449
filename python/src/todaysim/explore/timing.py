"""Where an explore run's time goes: the wall time of each of its parts (an example's start and
end, its inputs and clock moves, the verdict, the sessions' purge), and inside each part the trips
it made — HTTP requests to todaysim by client operation, CDP commands to the page by method (an
evaluation named by the page driver's function it calls) — each counted and timed. What no part
holds is Hypothesis' own work (drawing rules and values, checking preconditions) and the
explorer's bookkeeping. `Found.timings` has a run's; `lines()` prints them.

Timing costs two clock reads per part and per trip: it is always on."""
from __future__ import annotations

import contextlib
import re
import time
from collections import defaultdict
from typing import Any, Iterator, Optional, cast

from ..client import Client

#: The parts, in the order they are printed (an example's life).
START, INPUTS, MOVES, VERDICT, END, PURGE = ("example start: page cleared, session, page load, first settle",
                                             "steps: inputs", "steps: clock moves", "verdict: report reads",
                                             "example end: page left for about:blank", "sessions purged")
PARTS = (START, INPUTS, MOVES, VERDICT, END, PURGE)
#: What an evaluation in the page is named by: the page driver's functions, the page clock, the clearing's.
EVALUATED = re.compile(r"__todaysim\w+|__pwClock|location\.replace|sessionStorage\.clear")


def step_part(element: dict[str, Any]) -> str:
    """The part a host step (`/steps` element form) is timed in."""
    return MOVES if "clock" in element else INPUTS


class Timings:
    """Wall seconds by part (each part's own: a part entered inside another pauses the outer) and,
    by part, the trips made in it: seconds and count."""

    def __init__(self) -> None:
        self.began = time.perf_counter()
        self.ended: Optional[float] = None
        self.seconds: dict[str, float] = defaultdict(float)
        self.entered: dict[str, int] = defaultdict(int)
        self.trips: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
        self._open: list[list[Any]] = []  # [part, since] of each part entered and not left, innermost last

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[None]:
        now = time.perf_counter()
        if self._open:
            outer = self._open[-1]
            self.seconds[outer[0]] += now - outer[1]
        self._open.append([name, now])
        self.entered[name] += 1
        try:
            yield
        finally:
            now = time.perf_counter()
            _, since = self._open.pop()
            self.seconds[name] += now - since
            if self._open:
                self._open[-1][1] = now

    def trip(self, name: str, seconds: float) -> None:
        """A trip of `seconds` made in the innermost part entered (or outside every part)."""
        counted = self.trips[self._open[-1][0] if self._open else "outside the parts"][name]
        counted[0] += seconds
        counted[1] += 1

    def client(self, client: Client) -> Client:
        """`client`, its requests timed as trips (`HTTP <operation>`)."""
        return cast(Client, _Timed(client, self, lambda name, args, kwargs: f"HTTP {name}"))

    def cdp(self, session: Any) -> Any:
        """A CDP session, its commands timed as trips (`CDP <method>`, an evaluation by what it calls)."""
        def named(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
            method = args[0] if args else kwargs.get("method", name)
            params = args[1] if len(args) > 1 else kwargs.get("params") or {}
            called = EVALUATED.search(str(params.get("expression", ""))) if method == "Runtime.evaluate" else None
            return f"CDP {method}" + (f" {called.group(0)}" if called else "")
        return _Timed(session, self, named, only={"send"})

    def stop(self) -> None:
        self.ended = time.perf_counter()

    def lines(self, examples: int) -> list[str]:
        """The table: for each part its milliseconds an example, then each trip's count an example
        and milliseconds a trip; last, what no part holds."""
        wall = (self.ended or time.perf_counter()) - self.began
        per, steps = max(1, examples), self.entered[INPUTS] + self.entered[MOVES]
        shown = [part for part in PARTS if part in self.seconds] + sorted(set(self.seconds) - set(PARTS))
        lines = [f"where the time goes: {examples} examples, {steps} steps, {wall:.1f} s "
                 f"(ms an example; a trip's count an example and ms a trip):"]
        for part in shown:
            lines.append(f"  {part:58} {self.seconds[part] * 1000 / per:8.1f}")
            made = 0.0
            for name, (seconds, count) in sorted(self.trips.get(part, {}).items(), key=lambda item: -item[1][0]):
                made += seconds
                lines.append(f"    {name:46} {count / per:6.1f} × {seconds * 1000 / count:6.2f} = {seconds * 1000 / per:8.1f}")
            if self.trips.get(part):
                lines.append(f"    {'the rest (Playwright calls, Python)':56} {(self.seconds[part] - made) * 1000 / per:8.1f}")
        rest = wall - sum(self.seconds.values())
        lines.append(f"  {'Hypothesis (drawing rules and values) and the rest':58} {rest * 1000 / per:8.1f}")
        lines.append(f"  {'an example in all':58} {wall * 1000 / per:8.1f}  ({examples / wall if wall else 0:.2f} a second)")
        return lines


class _Timed:
    """`target` with its callables (those named in `only`, when given) timed as trips."""

    def __init__(self, target: Any, timings: Timings, name: Any, only: Optional[set[str]] = None):
        self._target, self._timings, self._name, self._only = target, timings, name, only

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self._target, attribute)
        if not callable(value) or attribute.startswith("_") or (self._only is not None and attribute not in self._only):
            return value
        timings, name = self._timings, self._name

        def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                timings.trip(name(attribute, args, kwargs), time.perf_counter() - began)
        return timed
