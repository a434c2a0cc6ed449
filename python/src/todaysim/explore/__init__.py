"""The explorer: finds the contract breaches nobody scripted in a real page.

`HostExplorer` is a Hypothesis `RuleBasedStateMachine` whose rules are the host's inputs (pull;
background and foreground; tab activation; socket and timer refreshes; navigation; account
switch; Web content termination; scrollToSection; live widget created and cancelled; dialog
choose and dismiss) and clock moves. A gap (the move after an input, or between leaving and
coming back) is drawn from seven kinds, each as likely as the others: none (0 ms), a few
milliseconds (1–20: two inputs close together), a page's own work (50 or 200 ms), and just
under, at or just over each of the rules' thresholds (1 s, 5 s, 10 s, 12 s). A lifecycle
transition (background, foreground, the round trip) is as likely as not followed by a second
input 0 or a few milliseconds behind it, while the page still works on the transition's
request: drawn from the rules alone, two inputs that close after a transition came up in about
one example in seventy. Each example runs
on a session of its own and a page cleared of everything the example before it left (`Pages`),
one step at a time with a settle after each, and the invariant is the contract monitor's
verdict: the session's report conforms after every settled step.

Hypothesis only generates (its `generate` phase: `settings`, `@seed`, no database, quiet): the
first example that breaks the contract is recorded by the invariant itself, which ends the run
there (`Stop`: not an `Exception`, so Hypothesis does not run the example again to report it), and
the explorer's own pass (`minimize`) shrinks it, replaying candidates on fresh sessions, for at most
`shrink_seconds`. `explore()` returns the scenario as host steps in `/steps` element form, as a
pytest test to paste, and with the failing session's export (which reproduces the violation
without a page).

The parts: `machine` (`HostExplorer`, its rules and strategies, the invariant), `pages` (`Pages`:
each example's session and page) and `shrink` (`minimize`, `reproduces`, `merged`); this front
runs them (`explore`) and says what they found (`Found`). Every public name is importable from
here.

A team adds rules of its own by subclassing (a network failure it injects, a feature flag):

    class MyExplorer(HostExplorer):
        @rule()
        def api_down(self):
            self.custom("api_down")                       # recorded in the scenario
            self.page.page.route("**/api/**", lambda route: route.abort())
"""
from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any, Optional

from hypothesis import HealthCheck, Phase, Verbosity, seed as fixed_seed, settings as Settings
from hypothesis.errors import Flaky
from hypothesis.stateful import invariant, precondition, rule, run_state_machine_as_test

from ..client import Client, Script
from ..page import OriginRefused, SettleTimeout, check_origin
from .machine import (BEHIND, FEW_MS, MOVES_MS, PAGE_WORK_MS, SECOND_INPUTS, STEPS, THEN, THRESHOLDS_MS, Breach,
                      HostExplorer, Step, Stop, _Run, gaps)
from .pages import RECYCLE_AFTER, Pages
from .shrink import merged, minimize, reproduces
from .timing import Timings


@dataclass
class Found:
    """What `explore` found: nothing (`breach` None), or the minimal failing scenario."""

    page_url: str
    examples: int
    breach: Optional[Breach] = None
    #: The example that first broke the contract (the examples after it shrank it).
    found_after: Optional[int] = None
    steps: list[Step] = field(default_factory=list)
    export: Optional[Script] = None
    #: Of `examples`, those Hypothesis gave up mid-way (a draw it rejected), by exception name;
    #: `max_examples` does not count them, so a run of N examples runs N + these.
    discarded: dict[str, int] = field(default_factory=dict)
    #: Where the run's time went (`Timings.lines(examples)` prints it), the shrinking's replays included.
    timings: Optional[Timings] = None

    @property
    def codes(self) -> list[str]:
        return self.breach.codes if self.breach else []

    def pytest_source(self, name: str = "test_breach_found_by_the_explorer") -> str:
        """A pytest test to paste: the same steps against the same page, one per call."""
        steps = ",\n        ".join(json.dumps(step) for step in self.steps if "custom" not in step)
        customs = [step["custom"] for step in self.steps if "custom" in step]
        note = f"    # custom steps of a subclass were left out: {customs}\n" if customs else ""
        return (f"def {name}(bridged_page, todaysim):\n"
                f"{note}"
                f"    page = bridged_page({self.page_url!r})\n"
                f"    for step in [\n        {steps},\n    ]:\n"
                f"        page.step(step)\n"
                f"    report = todaysim.report(page.session_id)\n"
                f"    assert report[\"conforms\"], [v[\"data\"][\"detail\"] for v in report[\"violations\"]]\n")

    @property
    def tally(self) -> str:
        """What ran, counted exactly: `--examples N` asks for N examples Hypothesis counts; the
        ones it stopped mid-way (a draw it rejected) are not among them, and after a breach the
        shrinking replays more."""
        stopped = sum(self.discarded.values())
        if self.breach is None:
            extra = f" (+{stopped} Hypothesis stopped mid-way, which it does not count)" if stopped else ""
            return f"{self.examples - stopped} examples{extra}"
        after = self.examples - (self.found_after or self.examples)
        extra = f", {stopped} of all of them stopped mid-way by Hypothesis" if stopped else ""
        return f"{self.examples} examples: {self.found_after} until the first breach, {after} replayed while shrinking{extra}"

    def describe(self) -> str:
        if self.breach is None:
            return f"{self.tally} against {self.page_url}: no breach of the contract found"
        lines = [f"{self.page_url}: the contract broken ({', '.join(dict.fromkeys(self.codes))}), first in example "
                 f"{self.found_after} of {self.examples}; the minimal scenario has {len(self.steps)} steps:"]
        lines += ["  " + json.dumps(step) for step in self.steps] or ["  (none: on load)"]
        lines += ["violations:"] + ["  " + line for line in str(self.breach).splitlines()[1:]]
        lines += ["as a pytest test:", self.pytest_source()]
        return "\n".join(lines)


def explore(page_url: str, client: Client, browser: Any, *, examples: int = 100, seed: Optional[int] = None,
            steps: int = STEPS, machine: type[HostExplorer] = HostExplorer, session_fields: Optional[dict[str, Any]] = None,
            settle_timeout: Optional[float] = None, shrink_seconds: float = 120, fresh_pages: bool = False,
            load_ahead: bool = False) -> Found:
    """Runs the explorer against `page_url` (`examples` examples of at most `steps` rules; `seed`
    makes the run repeatable). A breach is shrunk by `minimize` for at most `shrink_seconds`.
    Returns what it found (its `export` is the session that showed the breach, replayed on a
    new page when shrinking left the scenario as it was); raises `OriginRefused` before anything
    starts when the server does not let pages of `page_url`'s origin call it, `SettleTimeout`
    (or another error) when it could not explore. Every session the run made is purged when it
    returns or raises. `fresh_pages=True` gives every example a new browser context and page
    instead of the cleared one (`Pages`); `load_ahead=True` loads the next example's page in a
    second context while an example runs (`Pages`, `ahead`)."""
    check_origin(client, page_url)
    pages = Pages(browser, client, page_url, session_fields=session_fields, settle_timeout=settle_timeout, fresh=fresh_pages,
                  ahead=load_ahead)
    run = _Run(pages)
    explorer: type[HostExplorer] = type(machine.__name__, (machine,), {
        "page_url": page_url, "client": pages.client, "browser": browser, "run": run})
    if seed is not None:
        explorer = fixed_seed(seed)(explorer)
    options = Settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                       phases=[Phase.generate], verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
                       print_blob=False, report_multiple_bugs=False)
    try:
        try:
            run_state_machine_as_test(explorer, settings=options)
        except Stop:
            pass  # the first breach, recorded with its steps and session: the explorer shrinks it
        except (Breach, Flaky):
            # A breach raised by a rule of a subclass' own after the first; or Hypothesis finding
            # a draw that did not go as the same draw went before (a page that does not behave
            # the same every time, seen through a precondition) once a breach was recorded.
            if run.breach is None:
                raise
        if run.breach is None or run.session_id is None:
            return Found(page_url, run.examples, discarded=dict(run.discarded), timings=pages.timings)
        found = Found(page_url, run.examples, breach=run.breach, steps=list(run.steps), found_after=run.found_after,
                      discarded=dict(run.discarded), timings=pages.timings)
        session = run.session_id
        if not any("custom" in step for step in found.steps):
            code = found.codes[0]
            shortest: list[Optional[str]] = [None]

            def reproduce(candidate: list[Step]) -> Optional[str]:
                session_id = reproduces(pages, candidate, code)
                if session_id is not None:
                    run.made.append(session_id)
                return session_id

            def keep(session_id: str) -> None:
                if shortest[0] is not None:
                    client.delete_session(shortest[0])
                    run.made.remove(shortest[0])
                shortest[0] = session_id

            found.steps, replays = minimize(found.steps, code, reproduce, seconds=shrink_seconds, discard=keep)
            found.examples += replays
            if shortest[0] is not None:
                session = shortest[0]
                found.breach = Breach(client.report(session)["violations"])
        found.export = client.export_all(session)
        return found
    finally:
        pages.discard()
        pages.timings.stop()
        for session_id in run.made:
            with contextlib.suppress(Exception):
                client.delete_session(session_id)


__all__ = ["HostExplorer", "Breach", "Found", "Pages", "explore", "minimize", "reproduces", "merged", "gaps",
           "SettleTimeout", "OriginRefused", "MOVES_MS", "THRESHOLDS_MS", "PAGE_WORK_MS", "FEW_MS", "THEN", "BEHIND",
           "SECOND_INPUTS", "STEPS", "RECYCLE_AFTER", "Step", "Timings", "rule", "invariant", "precondition"]
