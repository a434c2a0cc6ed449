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
first example that breaks the contract is recorded by the invariant itself and raised, and the
explorer's own pass (`minimize`) shrinks it, replaying candidates on fresh sessions, for at most
`shrink_seconds`. `explore()` returns the scenario as host steps in `/steps` element form, as a
pytest test to paste, and with the failing session's export (which reproduces the violation
without a page).

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
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Optional

import hypothesis.strategies as st
from hypothesis import HealthCheck, Phase, Verbosity, seed as fixed_seed, settings as Settings
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from .client import Client, Script
from .models import TimelineEntry
from .page import EPOCH_MS, BridgedPage, OriginRefused, SettleTimeout, check_origin, origin_of

Step = dict[str, Any]

#: The rules' thresholds: the header's 1 s settle, the 5 s soft deadline and foreground
#: threshold, the 10 s manual-refresh window, the 12 s watchdogs.
THRESHOLDS_MS = (1000, 5000, 10000, 12000)
#: A page's own work (the fixture page's fetch takes 50 ms).
PAGE_WORK_MS = (50, 200)
#: A few milliseconds: a second input right behind the first.
FEW_MS = (1, 20)
#: The fixed clock moves: just under, at and just over each threshold, and a page's work.
MOVES_MS = tuple(sorted({t + d for t in THRESHOLDS_MS for d in (-1, 0, 1)} | set(PAGE_WORK_MS)))


def gaps(zero: bool = True) -> st.SearchStrategy[int]:
    """A gap in ms, its kinds equally likely: 0 (when `zero`), a few ms, a page's work, and
    around each threshold. Shrinking (Hypothesis' order) goes to the first kind."""
    kinds = [st.integers(*FEW_MS), st.sampled_from(PAGE_WORK_MS)]
    kinds += [st.sampled_from((t - 1, t, t + 1)) for t in THRESHOLDS_MS]
    return st.one_of(([st.just(0)] if zero else []) + kinds)


#: What may follow an input: nothing, or a move of any kind.
THEN = gaps()
#: The inputs that may come right behind a lifecycle transition (none needs a state of its own).
SECOND_INPUTS: tuple[Step, ...] = (
    {"gesture": {"type": "pull"}}, {"lifecycle": {"type": "tabActivated"}}, {"lifecycle": {"type": "socketEvent"}},
    {"lifecycle": {"type": "timerTick"}}, {"lifecycle": {"type": "navigation"}},
    {"lifecycle": {"type": "webContentTerminated"}}, {"gesture": {"type": "liveWidget.created"}})
#: What may come right behind a lifecycle transition, as likely as not: a second input, 0 or a
#: few milliseconds later (the page still busy with the transition's request).
BEHIND = st.one_of(st.none(), st.tuples(st.one_of(st.just(0), st.integers(*FEW_MS)), st.sampled_from(SECOND_INPUTS)))
#: Rules an example takes at most (Hypothesis' `stateful_step_count`).
STEPS = 10
#: Examples one browser context and page serve before both are made anew: the default budget
#: (25 while every clock move added an init script to the context, which every later document ran).
RECYCLE_AFTER = 100


class Breach(AssertionError):
    """The page broke the contract: the session's report lists violations."""

    def __init__(self, violations: list[TimelineEntry]):
        self.violations = violations
        lines = [f"{v['type']} at {v['atMs']} ms: {v['data'].get('detail', '')}" for v in violations]
        super().__init__("the page broke the contract:\n" + "\n".join(lines))

    @property
    def codes(self) -> list[str]:
        return [v["type"] for v in self.violations]


class Pages:
    """Where each example's page comes from: a session of its own and, by default, one browser
    context and page reused from example to example and cleared between them, which leaves
    nothing of one example for the next:

    - the document: the page leaves it for `about:blank` by its own navigation, so the example's
      document has unloaded (its unload handlers run, its scripts, timers, event stream and
      workers gone) before anything is cleared, and the blank document has the page's origin;
    - storage: there, the origin's session storage is cleared (it belongs to the tab), then
      everything else of the origin (`Storage.clearDataForOrigin`, all types: local storage,
      IndexedDB, Cache Storage, service workers, cookies, file systems), then every cookie of
      the context; `window.name` is reset;
    - reuse is refused (the context is closed and the next example gets a new one) when a frame
      of another origin was shown (its storage could not be cleared this way), when the blank
      document does not have the page's origin, and when anything in clearing fails;
    - the clock: the context's page clock stays paused, and the new document takes the new
      session's time as it loads (`BridgedPage.open`: read from the session by an init script),
      and the load is refused unless the page then reads exactly the session's time;
    - the session: a new one per example (the caller deletes it).

    Only on Chromium (the clearing goes through CDP); `fresh=True`, or another browser, gives
    every example a new context and page instead. A context serves `recycle_after` examples
    (the page clock, run inside the page, adds no init script per move: what a context holds stays
    the same from example to example; a new one now and then bounds whatever Chromium keeps)."""

    def __init__(self, browser: Any, client: Client, page_url: str, *, session_fields: Optional[dict[str, Any]] = None,
                 settle_timeout: float = 2.0, fresh: bool = False, recycle_after: int = RECYCLE_AFTER):
        self.browser, self.client, self.page_url = browser, client, page_url
        self.origin = origin_of(page_url)
        self.session_fields = dict(session_fields or {})
        self.settle_timeout, self.fresh, self.recycle_after = settle_timeout, fresh, recycle_after
        self.context: Any = None
        self.page: Any = None
        self.cdp: Any = None
        self.served = 0  # examples the current context has served
        self.current: Optional[BridgedPage] = None  # the example's page, while it runs
        self.foreign: set[str] = set()  # origins other than the page's that a frame showed
        #: Contexts made (a context per example with `fresh`).
        self.contexts = 0

    def _new_context(self) -> None:
        self.discard()
        self.context = self.browser.new_context()
        self.page = self.context.new_page()
        self.page.on("framenavigated", self._navigated)
        # The page's requests and errors go to the example's BridgedPage (listeners added once).
        self.page.on("request", self._request_started)
        self.page.on("requestfinished", self._request_ended)
        self.page.on("requestfailed", self._request_ended)
        self.page.on("pageerror", self._page_error)
        try:
            self.cdp = None if self.fresh else self.context.new_cdp_session(self.page)
        except Exception:  # not Chromium: a context per example
            self.cdp = None
        self.served, self.foreign = 0, set()
        self.contexts += 1

    def _request_started(self, request: Any) -> None:
        if self.current is not None:
            self.current._started(request)

    def _request_ended(self, request: Any) -> None:
        if self.current is not None:
            self.current._ended(request)

    def _page_error(self, error: Any) -> None:
        if self.current is not None:
            self.current._error(error)

    def _navigated(self, frame: Any) -> None:
        if frame.url != "about:blank" and origin_of(frame.url) != self.origin:
            self.foreign.add(frame.url)

    def open(self) -> BridgedPage:
        """A new session and the page under test loaded against it, settled."""
        if self.context is None or self.cdp is None or self.served >= self.recycle_after:
            self._new_context()
        page = self.page
        session_id = self.client.create_session("explorer", **self.session_fields)["id"]
        try:
            # The page clock stays paused from the example before; the document takes the new
            # session's time as it loads (`BridgedPage.open`).
            bridged = BridgedPage(self.client, session_id, page, self.page_url, settle_timeout=self.settle_timeout,
                                  cdp=self.cdp, listen=self.cdp is None)
            if self.cdp is not None:
                self.current = bridged
            bridged.open()
            seen, now = bridged.last_settle, bridged.view["clock"]["nowMs"]
            if seen is None or seen["pageNow"] != EPOCH_MS + now:
                raise RuntimeError(f"the page clock reads {seen and seen['pageNow']}, not the session's {EPOCH_MS + now}")
        except BaseException:
            with contextlib.suppress(Exception):
                self.client.delete_session(session_id)
            self.discard()
            raise
        self.served += 1
        return bridged

    def close(self, bridged: BridgedPage) -> None:
        """Ends an example: its page cleared for the next one (or its context closed)."""
        page = bridged.page
        if self.current is bridged:
            self.current = None
        else:  # a page of its own (`fresh`): its listeners and CDP session go with it
            with contextlib.suppress(Exception):
                for event, handler in (("request", bridged._started), ("requestfinished", bridged._ended),
                                       ("requestfailed", bridged._ended), ("pageerror", bridged._error)):
                    page.remove_listener(event, handler)
                cdp = getattr(bridged, "_cdp", None)
                if cdp is not None:
                    cdp.detach()
        if self.cdp is None or page is not self.page or self.foreign:
            self.discard()
            return
        try:
            self.clear()
        except Exception:
            self.discard()

    def clear(self) -> None:
        """Leaves nothing of the example before (see the class); raises when it cannot."""
        # Evaluated on the CDP session (a trip straight to Chromium; page.evaluate first finds
        # the new document's context through Playwright, several trips).
        with self.page.expect_navigation(url="about:blank", timeout=self.settle_timeout * 1000):
            with contextlib.suppress(Exception):  # the evaluation may end with its document
                self.cdp.send("Runtime.evaluate", {"expression": "location.replace('about:blank')"})
        answer = self.cdp.send("Runtime.evaluate", {"expression": "sessionStorage.clear(), window.name = '', window.origin",
                                                    "returnByValue": True})
        origin = None if "exceptionDetails" in answer else answer["result"].get("value")
        if origin != self.origin:
            raise RuntimeError(f"the blank page's origin is {origin}, not {self.origin}")
        self.cdp.send("Storage.clearDataForOrigin", {"origin": self.origin, "storageTypes": "all"})
        self.context.clear_cookies()

    def discard(self) -> None:
        """Closes the context (the next `open` makes a new one)."""
        context, self.context, self.page, self.cdp, self.current = self.context, None, None, None, None
        if context is not None:
            with contextlib.suppress(Exception):
                context.close()


@dataclass
class _Run:
    """One `explore` call's bookkeeping, shared by its examples."""

    pages: Pages
    examples: int = 0
    #: Examples that ran to their end or to a breach, and the ones Hypothesis gave up mid-way
    #: (a draw it rejected: an overrun, or rules filtered away), which `max_examples` does not count.
    ran: int = 0
    discarded: dict[str, int] = field(default_factory=dict)
    #: The first breach: the example it was seen in, its steps and its session.
    found_after: Optional[int] = None
    breach: Optional[Breach] = None
    steps: list[Step] = field(default_factory=list)
    session_id: Optional[str] = None
    #: Sessions made and not purged yet (a breach's, kept for its export, and any an error left).
    made: list[str] = field(default_factory=list)


class HostExplorer(RuleBasedStateMachine):
    """The host inputs as rules; `explore` sets `page_url`, `client`, `browser` and the run."""

    page_url: ClassVar[Optional[str]] = None
    client: ClassVar[Client]
    browser: ClassVar[Any] = None
    run: ClassVar[_Run]

    def __init__(self) -> None:
        super().__init__()
        run = type(self).run
        self.steps: list[Step] = []
        self.untouched = True
        self.breach: Optional[Breach] = None
        run.examples += 1
        self.page = run.pages.open()
        self.session_id = self.page.session_id
        run.made.append(self.session_id)  # purged when the run ends, however it ends

    # -- recording -----------------------------------------------------------------------------
    def step(self, element: Step) -> Any:
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
    # pass after an input, and a rule drawn among sixteen would rarely be the move.
    def act(self, element: Step, then: int) -> None:
        self.step(element)
        if then:
            self.step({"clock": {"advanceMs": then}})

    def transition(self, element: Step, behind: Optional[tuple[int, Step]], then: int) -> None:
        """A lifecycle transition, the second input `behind` it (its gap first), then `then`."""
        if behind is None:
            self.act(element, then)
            return
        self.step(element)
        gap, second = behind
        if gap:
            self.step({"clock": {"advanceMs": gap}})
        self.act(second, then)

    def app(self, state: str) -> bool:
        return bool(self.page.view["app"]["state"] == state)

    @rule(then=THEN)
    def pull(self, then: int) -> None:
        self.act({"gesture": {"type": "pull"}}, then)

    @precondition(lambda self: self.app("foreground"))
    @rule(behind=BEHIND, then=THEN)
    def background(self, behind: Optional[tuple[int, Step]], then: int) -> None:
        self.transition({"lifecycle": {"type": "background"}}, behind, then)

    @precondition(lambda self: self.app("background"))
    @rule(behind=BEHIND, then=THEN)
    def foreground(self, behind: Optional[tuple[int, Step]], then: int) -> None:
        self.transition({"lifecycle": {"type": "foreground"}}, behind, then)

    @precondition(lambda self: self.app("foreground"))
    @rule(away=gaps(zero=False), behind=BEHIND, then=THEN)
    def leave_and_return(self, away: int, behind: Optional[tuple[int, Step]], then: int) -> None:
        """Background, `away` ms, foreground: the round trip H15 measures against its 5 s threshold."""
        self.step({"lifecycle": {"type": "background"}})
        self.step({"clock": {"advanceMs": away}})
        self.transition({"lifecycle": {"type": "foreground"}}, behind, then)

    @rule(then=THEN)
    def tab_activated(self, then: int) -> None:
        self.act({"lifecycle": {"type": "tabActivated"}}, then)

    @rule(then=THEN)
    def socket_event(self, then: int) -> None:
        self.act({"lifecycle": {"type": "socketEvent"}}, then)

    @rule(then=THEN)
    def timer_tick(self, then: int) -> None:
        self.act({"lifecycle": {"type": "timerTick"}}, then)

    @rule(then=THEN)
    def navigation(self, then: int) -> None:
        self.act({"lifecycle": {"type": "navigation"}}, then)

    @rule(uid=st.sampled_from(["explorer-2", "explorer"]), then=THEN)
    def account_switch(self, uid: str, then: int) -> None:
        self.act({"lifecycle": {"type": "accountSwitch", "uid": uid}}, then)

    @rule(then=THEN)
    def web_content_terminated(self, then: int) -> None:
        self.act({"lifecycle": {"type": "webContentTerminated"}}, then)

    @rule(batch=st.sampled_from(["b1", "b2"]), then=THEN)
    def scroll_to_section(self, batch: str, then: int) -> None:
        self.act({"command": {"type": "todayPage.scrollToSection", "batchId": batch}}, then)

    @rule(then=THEN)
    def live_widget_created(self, then: int) -> None:
        self.act({"gesture": {"type": "liveWidget.created"}}, then)

    @precondition(lambda self: self.page.view["liveWidgetSheet"] == "presented")
    @rule(then=THEN)
    def live_widget_cancelled(self, then: int) -> None:
        self.act({"gesture": {"type": "liveWidget.cancelled"}}, then)

    @precondition(lambda self: self.page.view["dialog"] is not None)
    @rule(action=st.sampled_from(["ok", "cancel"]), then=THEN)
    def dialog_choose(self, action: str, then: int) -> None:
        self.act({"gesture": {"type": "dialog.choose", "actionId": action}}, then)

    @precondition(lambda self: self.page.view["dialog"] is not None)
    @rule(then=THEN)
    def dialog_dismiss(self, then: int) -> None:
        self.act({"gesture": {"type": "dialog.dismiss"}}, then)

    @rule(ms=gaps(zero=False))
    def advance(self, ms: int) -> None:
        self.step({"clock": {"advanceMs": ms}})

    # -- the oracle ----------------------------------------------------------------------------
    @invariant()
    def conforms(self) -> None:
        # The view read at the last settle counts the violations (the report lists exactly
        # those), so a conforming step costs no request; a breach reads the report.
        if self.page.view["counts"]["violations"] == 0:
            return
        report = type(self).client.report(self.session_id)
        if report["conforms"]:
            return
        self.breach = Breach(report["violations"])
        run = type(self).run
        # The first breach is the one the explorer shrinks (Hypothesis then runs its example
        # once more, to report it: that run's breach is not recorded).
        if run.breach is None:
            run.breach, run.found_after = self.breach, run.examples
            run.steps, run.session_id = list(self.steps), self.session_id
        raise self.breach

    def teardown(self) -> None:
        run = type(self).run
        # How the example ended: teardown runs in Hypothesis' `finally`, so the exception that
        # ends the example, if any, is the one being handled.
        ending = sys.exc_info()[1]
        if ending is None or isinstance(ending, Breach):
            run.ran += 1
        else:
            name = type(ending).__name__
            run.discarded[name] = run.discarded.get(name, 0) + 1
        run.pages.close(self.page)
        if self.breach is None:
            with contextlib.suppress(Exception):
                type(self).client.delete_session(self.session_id)
                run.made.remove(self.session_id)


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


def reproduces(pages: Pages, steps: list[Step], code: str) -> Optional[str]:
    """Replays `steps` one per call on a new session and a cleared page, checking the verdict
    after each (as the explorer does); the session's id when `code` is among the violations,
    else None (that session is then deleted)."""
    page = pages.open()
    session_id, client, found = page.session_id, pages.client, False
    try:
        for step in [None] + steps:
            if step is not None:
                page.step(step, settled=True)
            if page.view["counts"]["violations"] and code in [v["type"] for v in client.report(session_id)["violations"]]:
                found = True
                break
    finally:
        pages.close(page)
        if not found:
            with contextlib.suppress(Exception):
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


def explore(page_url: str, client: Client, browser: Any, *, examples: int = 100, seed: Optional[int] = None,
            steps: int = STEPS, machine: type[HostExplorer] = HostExplorer, session_fields: Optional[dict[str, Any]] = None,
            settle_timeout: float = 2.0, shrink_seconds: float = 120, fresh_pages: bool = False) -> Found:
    """Runs the explorer against `page_url` (`examples` examples of at most `steps` rules; `seed`
    makes the run repeatable). A breach is shrunk by `minimize` for at most `shrink_seconds`.
    Returns what it found (its `export` is the session that showed the breach, replayed on a
    new page when shrinking left the scenario as it was); raises `OriginRefused` before anything
    starts when the server does not let pages of `page_url`'s origin call it, `SettleTimeout`
    (or another error) when it could not explore. Every session the run made is purged when it
    returns or raises. `fresh_pages=True` gives every example a new browser context and page
    instead of the cleared one (`Pages`)."""
    check_origin(client, page_url)
    pages = Pages(browser, client, page_url, session_fields=session_fields, settle_timeout=settle_timeout, fresh=fresh_pages)
    run = _Run(pages)
    explorer: type[HostExplorer] = type(machine.__name__, (machine,), {
        "page_url": page_url, "client": client, "browser": browser, "run": run})
    if seed is not None:
        explorer = fixed_seed(seed)(explorer)
    options = Settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                       phases=[Phase.generate], verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
                       print_blob=False, report_multiple_bugs=False)
    try:
        try:
            run_state_machine_as_test(explorer, settings=options)
        except (Breach, Flaky):
            # A breach; or the example that showed one did not show it again when Hypothesis
            # ran it once more (a page that does not behave the same every time): the first
            # breach, recorded with its steps and session, is what the explorer shrinks.
            if run.breach is None:
                raise
        if run.breach is None or run.session_id is None:
            return Found(page_url, run.examples, discarded=dict(run.discarded))
        found = Found(page_url, run.examples, breach=run.breach, steps=list(run.steps), found_after=run.found_after,
                      discarded=dict(run.discarded))
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
        for session_id in run.made:
            with contextlib.suppress(Exception):
                client.delete_session(session_id)


__all__ = ["HostExplorer", "Breach", "Found", "Pages", "explore", "minimize", "gaps", "SettleTimeout", "OriginRefused",
           "MOVES_MS", "THRESHOLDS_MS", "FEW_MS", "rule", "invariant", "precondition"]
