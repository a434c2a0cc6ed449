"""The explorer's machine: `HostExplorer`, a Hypothesis `RuleBasedStateMachine` whose rules are
the host's inputs and clock moves, the strategies its gaps are drawn from, and the invariant (the
contract monitor's verdict after every settled step) that raises `Breach`."""
from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import hypothesis.strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ..client import Client
from ..models import TimelineEntry
from .pages import Pages
from .timing import PURGE, VERDICT, step_part

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


class Breach(AssertionError):
    """The page broke the contract: the session's report lists violations."""

    def __init__(self, violations: list[TimelineEntry]):
        self.violations = violations
        lines = [f"{v['type']} at {v['atMs']} ms: {v['data'].get('detail', '')}" for v in violations]
        super().__init__("the page broke the contract:\n" + "\n".join(lines))

    @property
    def codes(self) -> list[str]:
        return [v["type"] for v in self.violations]


class Stop(BaseException):
    """Ends the run at its first breach (recorded in the run). Not an `Exception`: Hypothesis
    passes it on at once, as it does `KeyboardInterrupt`, where a failure would make it run the
    example again to report it — an example more for a breach the explorer shrinks itself."""


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
        with type(self).run.pages.timings.part(step_part(element)):
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
        run = type(self).run
        with run.pages.timings.part(VERDICT):
            report = type(self).client.report(self.session_id)
        if report["conforms"]:
            return
        self.breach = Breach(report["violations"])
        if run.breach is not None:  # (a breach in a rule of a subclass' own, after the first)
            raise self.breach
        # The first breach is the one the explorer shrinks: the run stops there.
        run.breach, run.found_after = self.breach, run.examples
        run.steps, run.session_id = list(self.steps), self.session_id
        raise Stop() from self.breach

    def teardown(self) -> None:
        run = type(self).run
        # How the example ended: teardown runs in Hypothesis' `finally`, so the exception that
        # ends the example, if any, is the one being handled.
        ending = sys.exc_info()[1]
        if ending is None or isinstance(ending, (Breach, Stop)):
            run.ran += 1
        else:
            name = type(ending).__name__
            run.discarded[name] = run.discarded.get(name, 0) + 1
        run.pages.close(self.page)
        if self.breach is None:
            with run.pages.timings.part(PURGE), contextlib.suppress(Exception):
                type(self).client.delete_session(self.session_id)
                run.made.remove(self.session_id)
