"""The explorer: finds the contract breaches nobody scripted in a real page.

`HostExplorer` is a Hypothesis `RuleBasedStateMachine` whose rules are the host's inputs (pull;
background and foreground; tab activation; socket and timer refreshes; navigation; account
switch; Web content termination; scrollToSection; live widget created and cancelled; dialog
choose and dismiss) and clock moves drawn around the rules' thresholds (just under, at and just
over 1 s, 5 s, 10 s and 12 s). Each example runs on a fresh session and a fresh page (a new
browser context; one browser for the run), one step at a time with a settle after each, and
the invariant is the contract monitor's verdict: the session's report conforms after every
settled step. Hypothesis shrinks a breach to the shortest sequence that still breaks the
contract; `explore()` returns it as host steps in `/steps` element form, as a pytest test to
paste, and with the failing session's export (which reproduces the violation without a page).

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
import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import hypothesis.strategies as st
from hypothesis import HealthCheck, settings as Settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from .client import Client
from .page import BridgedPage, OriginRefused, SettleTimeout, check_origin

#: The rules' thresholds: the header's 1 s settle, the 5 s soft deadline and foreground
#: threshold, the 10 s manual-refresh window, the 12 s watchdogs.
THRESHOLDS_MS = (1000, 5000, 10000, 12000)
#: Clock moves: just under, at and just over each threshold, and short ones (a page's fetch).
MOVES_MS = tuple(sorted({t + d for t in THRESHOLDS_MS for d in (-1, 0, 1)} | {50, 200}))
#: What may follow an input: nothing, or one of the moves.
THEN = st.sampled_from((0,) + MOVES_MS)
#: Rules an example takes at most (Hypothesis' `stateful_step_count`).
STEPS = 10


class Breach(AssertionError):
    """The page broke the contract: the session's report lists violations."""

    def __init__(self, violations: list):
        self.violations = violations
        lines = [f"{v['type']} at {v['atMs']} ms: {v['data'].get('detail', '')}" for v in violations]
        super().__init__("the page broke the contract:\n" + "\n".join(lines))

    @property
    def codes(self) -> list[str]:
        return [v["type"] for v in self.violations]


class HostExplorer(RuleBasedStateMachine):
    """The host inputs as rules; set `page_url`, `client` and `browser` (the runner does)."""

    page_url: ClassVar[Optional[str]] = None
    client: ClassVar[Optional[Client]] = None
    browser: ClassVar[Any] = None
    session_fields: ClassVar[dict] = {}
    settle_timeout: ClassVar[float] = 2.0
    #: The last example run (Hypothesis runs the minimal failing one last) and every example's count.
    last: ClassVar[Optional["HostExplorer"]] = None
    examples: ClassVar[int] = 0
    #: Examples that ran to their end or to a breach, and the ones Hypothesis gave up mid-way
    #: (a draw it rejected: an overrun, or rules filtered away), which `max_examples` does not count.
    ran: ClassVar[int] = 0
    discarded: ClassVar[int] = 0
    discarded_why: ClassVar[dict] = {}
    #: The example in which a breach was first seen (the shrinking runs the ones after it).
    found_after: ClassVar[Optional[int]] = None
    #: Sessions the run made and has not purged yet (a breach's, kept for its export, and any
    #: an error left): all purged when `explore` returns or raises.
    made: ClassVar[list] = []

    def __init__(self):
        super().__init__()
        cls = type(self)
        cls.examples += 1
        cls.last = self
        self.steps: list[dict] = []
        self.untouched = True
        self.breach: Optional[Breach] = None
        self.context = cls.browser.new_context()
        view = cls.client.create_session("explorer", **cls.session_fields)
        self.session_id = view["id"]
        cls.made.append(self.session_id)  # purged when the run ends, however it ends
        try:
            self.page = BridgedPage(cls.client, self.session_id, self.context.new_page(), cls.page_url,
                                    settle_timeout=cls.settle_timeout).open()
        except BaseException:
            self.context.close()
            raise

    # -- recording -----------------------------------------------------------------------------
    def step(self, element: dict) -> Any:
        """One host step (`/steps` element form): recorded, applied, settled."""
        self.steps.append(element)
        # A clock move starts from the last settle unless a rule of a subclass' own (`custom`)
        # may have touched the page since.
        answer = self.page.step(element, settled=self.untouched)
        self.untouched = True
        return answer

    def custom(self, name: str, **args: Any) -> None:
        """Records a step of a subclass' own rule (it appears in the scenario as a call)."""
        self.steps.append({"custom": {"rule": name, **args}})
        self.untouched = False

    # -- the host's inputs ---------------------------------------------------------------------
    # Each input may be followed by a clock move (`then`, 0 for none): most breaches need time to
    # pass after an input, and a rule drawn among sixteen would rarely be the move. Shrinking
    # takes `then` to 0 (the first choice), which drops the move from the scenario.
    def act(self, element: dict, then: int) -> None:
        self.step(element)
        if then:
            self.step({"clock": {"advanceMs": then}})

    def app(self, state: str) -> bool:
        return self.page.view.get("app", {}).get("state") == state

    @rule(then=THEN)
    def pull(self, then):
        self.act({"gesture": {"type": "pull"}}, then)

    @precondition(lambda self: self.app("foreground"))
    @rule(then=THEN)
    def background(self, then):
        self.act({"lifecycle": {"type": "background"}}, then)

    @precondition(lambda self: self.app("background"))
    @rule(then=THEN)
    def foreground(self, then):
        self.act({"lifecycle": {"type": "foreground"}}, then)

    @precondition(lambda self: self.app("foreground"))
    @rule(away=st.sampled_from(MOVES_MS), then=THEN)
    def leave_and_return(self, away, then):
        """Background, `away` ms, foreground: the round trip H15 measures against its 5 s threshold."""
        self.step({"lifecycle": {"type": "background"}})
        self.step({"clock": {"advanceMs": away}})
        self.act({"lifecycle": {"type": "foreground"}}, then)

    @rule(then=THEN)
    def tab_activated(self, then):
        self.act({"lifecycle": {"type": "tabActivated"}}, then)

    @rule(then=THEN)
    def socket_event(self, then):
        self.act({"lifecycle": {"type": "socketEvent"}}, then)

    @rule(then=THEN)
    def timer_tick(self, then):
        self.act({"lifecycle": {"type": "timerTick"}}, then)

    @rule(then=THEN)
    def navigation(self, then):
        self.act({"lifecycle": {"type": "navigation"}}, then)

    @rule(uid=st.sampled_from(["explorer-2", "explorer"]), then=THEN)
    def account_switch(self, uid, then):
        self.act({"lifecycle": {"type": "accountSwitch", "uid": uid}}, then)

    @rule(then=THEN)
    def web_content_terminated(self, then):
        self.act({"lifecycle": {"type": "webContentTerminated"}}, then)

    @rule(batch=st.sampled_from(["b1", "b2"]), then=THEN)
    def scroll_to_section(self, batch, then):
        self.act({"command": {"type": "todayPage.scrollToSection", "batchId": batch}}, then)

    @rule(then=THEN)
    def live_widget_created(self, then):
        self.act({"gesture": {"type": "liveWidget.created"}}, then)

    @precondition(lambda self: self.page.view.get("liveWidgetSheet") == "presented")
    @rule(then=THEN)
    def live_widget_cancelled(self, then):
        self.act({"gesture": {"type": "liveWidget.cancelled"}}, then)

    @precondition(lambda self: self.page.view.get("dialog") is not None)
    @rule(action=st.sampled_from(["ok", "cancel"]), then=THEN)
    def dialog_choose(self, action, then):
        self.act({"gesture": {"type": "dialog.choose", "actionId": action}}, then)

    @precondition(lambda self: self.page.view.get("dialog") is not None)
    @rule(then=THEN)
    def dialog_dismiss(self, then):
        self.act({"gesture": {"type": "dialog.dismiss"}}, then)

    @rule(ms=st.sampled_from(MOVES_MS))
    def advance(self, ms):
        self.step({"clock": {"advanceMs": ms}})

    # -- the oracle ----------------------------------------------------------------------------
    @invariant()
    def conforms(self):
        # The view read at the last settle counts the violations (the report lists exactly those),
        # so a conforming step costs no request; a breach reads the report for its details.
        if self.page.view.get("counts", {}).get("violations", 1) == 0:
            return
        report = type(self).client.report(self.session_id)
        if not report["conforms"]:
            self.breach = Breach(report["violations"])
            cls = type(self)
            if cls.found_after is None:
                cls.found_after = cls.examples
            raise self.breach

    def teardown(self):
        cls = type(self)
        # How the example ended: teardown runs in Hypothesis' `finally`, so the exception that
        # ends the example, if any, is the one being handled.
        ending = sys.exc_info()[1]
        if ending is None or isinstance(ending, Breach):
            cls.ran += 1
        else:
            cls.discarded += 1
            cls.discarded_why[type(ending).__name__] = cls.discarded_why.get(type(ending).__name__, 0) + 1
        self.context.close()
        if self.breach is None:
            with contextlib.suppress(Exception):
                cls.client.delete_session(self.session_id)
                cls.made.remove(self.session_id)


@contextlib.contextmanager
def _shrinking_limited_to(seconds: int):
    """Hypothesis shrinks for at most 300 s (its engine's MAX_SHRINKING_SECONDS, not a setting):
    a page's examples take a second each, so the explorer gives its shrinking less and goes on
    with `minimize`. Left alone when that constant is not there."""
    from hypothesis.internal.conjecture import engine
    from hypothesis.reporting import current_reporter, with_reporter
    before = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if before is not None:
        engine.MAX_SHRINKING_SECONDS = seconds
    passed_on = current_reporter()

    # Its warning speaks of its own five minutes, which this limit replaced, and its note that
    # the test "exited early because it took too long to shrink" of a stop the explorer makes on
    # purpose (its `minimize` goes on from there): neither is passed on.
    def reporter(text):
        text = str(text)
        if not text.startswith("WARNING: Hypothesis has spent more than five minutes") \
                and "exited early because it took too long to shrink" not in text:
            passed_on(text)

    try:
        with with_reporter(reporter):
            yield
    finally:
        if before is not None:
            engine.MAX_SHRINKING_SECONDS = before


@dataclass
class Found:
    """What `explore` found: nothing (`breach` None), or the minimal failing scenario."""

    page_url: str
    examples: int
    breach: Optional[Breach] = None
    #: The example that first broke the contract (the examples after it shrank it).
    found_after: Optional[int] = None
    steps: list = field(default_factory=list)
    export: Optional[dict] = None
    #: Of `examples`, those Hypothesis gave up mid-way (a draw it rejected), by exception name;
    #: `max_examples` does not count them, so a run of N examples runs N + these.
    discarded: dict = field(default_factory=dict)

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


def _reproduce(steps: list, code: str, page_url: str, client: Client, browser: Any, session_fields: dict,
               settle_timeout: float) -> Optional[str]:
    """Replays `steps` one per call on a fresh session and page, checking the report after each
    (as the explorer does); the session's id when `code` is among the violations, else None (the
    session is then purged)."""
    context = browser.new_context()
    session_id = client.create_session("explorer", **session_fields)["id"]
    try:
        page = BridgedPage(client, session_id, context.new_page(), page_url, settle_timeout=settle_timeout).open()
        for step in [None] + steps:
            if step is not None:
                page.step(step)
            if code in [v["type"] for v in client.report(session_id)["violations"]]:
                return session_id
    except BaseException:
        with contextlib.suppress(Exception):
            client.delete_session(session_id)
        raise
    finally:
        context.close()
    client.delete_session(session_id)
    return None


def minimize(steps: list, code: str, reproduce) -> tuple[list, Optional[str]]:
    """Hypothesis' shrinking can stop short (its time limit; a local minimum it cannot leave one
    change at a time): this pass takes the scenario further, greedily, as long as `reproduce`
    still shows `code`: two clock moves in a row become one move of their sum, and any single step
    goes. Returns the shortest scenario it reached and the session that last reproduced it."""
    session = reproduce(steps)
    if session is None:
        return steps, None
    changed = True
    while changed:
        changed = False
        candidates = []
        for i in range(len(steps) - 1):
            a, b = steps[i].get("clock", {}), steps[i + 1].get("clock", {})
            if set(a) == {"advanceMs"} and set(b) == {"advanceMs"}:
                candidates.append(steps[:i] + [{"clock": {"advanceMs": a["advanceMs"] + b["advanceMs"]}}] + steps[i + 2:])
        candidates += [steps[:i] + steps[i + 1:] for i in range(len(steps))]
        for candidate in candidates:
            found = reproduce(candidate)
            if found is not None:
                reproduce.discard(session)
                steps, session, changed = candidate, found, True
                break
    return steps, session


def explore(page_url: str, client: Client, browser: Any, *, examples: int = 100, seed: Optional[int] = None,
            steps: int = STEPS, machine: type = HostExplorer, session_fields: Optional[dict] = None,
            settle_timeout: float = 2.0, shrink_seconds: int = 120) -> Found:
    """Runs the explorer against `page_url` (`examples` examples of at most `steps` rules).
    Hypothesis shrinks a breach for at most `shrink_seconds`; `minimize` then takes the scenario
    further, replaying it. Returns what it found (its `export` is the session that last showed
    the breach); raises `OriginRefused` before anything starts when the server does not let
    pages of `page_url`'s origin call it, `SettleTimeout` (or another error) when it could not
    explore. Every session the run made is purged when it returns or raises."""
    check_origin(client, page_url)
    explorer = type(machine.__name__, (machine,), {
        "page_url": page_url, "client": client, "browser": browser, "session_fields": dict(session_fields or {}),
        "settle_timeout": settle_timeout, "last": None, "examples": 0, "ran": 0, "discarded": 0, "discarded_why": {}, "made": [], "found_after": None,
    })
    if seed is not None:
        explorer._hypothesis_internal_use_seed = seed  # what @hypothesis.seed sets
    options = Settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                       suppress_health_check=list(HealthCheck), print_blob=False, report_multiple_bugs=False)
    try:
        with _shrinking_limited_to(shrink_seconds):
            run_state_machine_as_test(explorer, settings=options)
    except Breach as breach:
        last = explorer.last
        found = Found(page_url, explorer.examples, breach=breach, steps=list(last.steps) if last else [],
                      found_after=explorer.found_after, discarded=dict(explorer.discarded_why))
        if last is None:
            return found
        session = last.session_id
        if not any("custom" in step for step in found.steps):
            code = breach.codes[0]
            fields = dict(session_fields or {})

            def reproduce(steps):
                reproduced = _reproduce(steps, code, page_url, client, browser, fields, settle_timeout)
                if reproduced is not None:
                    explorer.made.append(reproduced)
                return reproduced

            def discard(session_id):
                if session_id is not None and session_id != last.session_id:
                    client.delete_session(session_id)
                    explorer.made.remove(session_id)

            reproduce.discard = discard
            steps, reproduced = minimize(found.steps, code, reproduce)
            if reproduced is not None:
                found.steps, session = steps, reproduced
                found.breach = Breach(client.report(session)["violations"])
        found.export = client.export_all(session)
        return found
    finally:
        for session_id in explorer.made:
            with contextlib.suppress(Exception):
                client.delete_session(session_id)
    return Found(page_url, explorer.examples, discarded=dict(explorer.discarded_why))


__all__ = ["HostExplorer", "Breach", "Found", "explore", "SettleTimeout", "OriginRefused", "MOVES_MS", "THRESHOLDS_MS", "rule", "invariant", "precondition"]
