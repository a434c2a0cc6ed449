"""The explorer's shrinker: `minimize` leaves steps out of a breaking scenario (and merges clock
moves) as long as `reproduces`, replaying each candidate on a new session and a cleared page,
still shows the violation."""
from __future__ import annotations

import contextlib
import time
from typing import Callable, Optional

from .machine import Step
from .pages import Pages
from .timing import PURGE, VERDICT, step_part


def reproduces(pages: Pages, steps: list[Step], code: str) -> Optional[str]:
    """Replays `steps` one per call on a new session and a cleared page, checking the verdict
    after each (as the explorer does); the session's id when `code` is among the violations,
    else None (that session is then deleted)."""
    page = pages.open()
    session_id, client, found = page.session_id, pages.client, False
    try:
        for step in [None] + steps:
            if step is not None:
                with pages.timings.part(step_part(step)):
                    page.step(step, settled=True)
            if page.view["counts"]["violations"]:
                with pages.timings.part(VERDICT):
                    found = code in [v["type"] for v in client.report(session_id)["violations"]]
                if found:
                    break
    finally:
        pages.close(page)
        if not found:
            with pages.timings.part(PURGE), contextlib.suppress(Exception):
                client.delete_session(session_id)
    return session_id if found else None


def merged(steps: list[Step]) -> list[list[Step]]:
    """`steps` with two clock moves in a row made one move of their sum, for each such pair."""
    tried: list[list[Step]] = []
    for i in range(len(steps) - 1):
        a, b = steps[i].get("clock", {}), steps[i + 1].get("clock", {})
        if set(a) == {"advanceMs"} and set(b) == {"advanceMs"}:
            tried.append(steps[:i] + [{"clock": {"advanceMs": a["advanceMs"] + b["advanceMs"]}}] + steps[i + 2:])
    return tried


def minimize(steps: list[Step], code: str, reproduce: Callable[[list[Step]], Optional[str]], *,
             seconds: float = 120.0, discard: Callable[[str], None] = lambda session_id: None) -> tuple[list[Step], int]:
    """The explorer's shrinking, as long as `reproduce` still shows `code` (and for at most
    `seconds` of wall time, keeping the shortest reached): passes that leave out runs of steps,
    the boldest first (half of them, then a quarter, … then one at a time), going on from where a
    run was left out at the same size rather than starting over, then merge neighbouring clock
    moves (`merged`); a pass that changed anything is followed by another, so the scenario
    returned is one where no single step can be left out (when the time allowed it). `discard`
    gets the session of each reproduction that shortened the scenario, as it is made (`explore`
    keeps the last). Returns the scenario and the replays it made."""
    end = time.monotonic() + seconds
    replays = 0

    def shorter(candidate: list[Step]) -> bool:
        nonlocal replays
        replays += 1
        session_id = reproduce(candidate)
        if session_id is None:
            return False
        discard(session_id)
        return True

    changed = True
    while changed and time.monotonic() < end:
        changed = False
        size = max(1, len(steps) // 2)
        while size >= 1 and steps and time.monotonic() < end:
            start = 0
            while start < len(steps) and time.monotonic() < end:
                candidate = steps[:start] + steps[start + size:]
                if shorter(candidate):
                    steps, changed = candidate, True
                else:
                    start += size
            size //= 2
        for candidate in merged(steps):
            if time.monotonic() >= end:
                break
            if shorter(candidate):
                steps, changed = candidate, True
                break
    return steps, replays
