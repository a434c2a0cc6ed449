"""A real page on the session's clock: a Playwright page running the page under test with
todaysim's `/bridge.js` attached to a session, whose own timers run on todaysim's virtual clock
(`Web/virtual-time.js`: paused, set to `EPOCH_MS` + the session's `nowMs` as each document
loads), so one call moves both clocks together and a scenario that waits 12 s takes
milliseconds and runs the same every time. Playwright's public API only: an init script, page
evaluations (a CDP session's `Runtime.evaluate` on Chromium, one trip straight to the page) and
the page's events; never Playwright's own page clock.

This class is the Python half of the one page driver; the in-page half, `Web/page-driver.js`,
is the TypeScript helper's too (`todaysim/playwright`), so both settle and move alike:

*Settled* (`settle()`): no bridge call in flight; every entry up to the session's
`counts.timeline` delivered to the page; the page's load is the session's and its stream is
open; no other page request in flight; nothing of the page's due now — a wait in the page until
it says so (one trip), the session's view, a second look equal to the first, and again until
that holds, within `settle_timeout` of wall time (`default_settle_timeout()` when not given:
`TODAYSIM_SETTLE_TIMEOUT_MS`, else 2 s). A miss is `SettleTimeout` (the
explorer's error, never a breach of the contract). Where nothing but the step can have changed
the session its answer stands for the read (see `settle`).

*A clock move* (`move()`) steps both clocks through the merged due times (the session's
watchdogs and the page's timers: the page driver's `advance`), settling after each, so a page
timer at 4,999 ms acts at 4,999 ms of session time, before a session deadline at 5,000 ms.
"""
from __future__ import annotations

import importlib.resources
import json
import os
import time
import urllib.parse
from typing import TYPE_CHECKING, Any, Mapping, NoReturn, Optional, TypedDict, Union, cast

from . import models as m
from .client import Client
from .origin import OriginRefused, check_origin, origin_of, refused_sentence

if TYPE_CHECKING:  # the plugin and the explorer bring Playwright; the client never imports it
    from playwright.sync_api import CDPSession, Page, Request

__all__ = ["EPOCH_MS", "TIMERS_JS", "PROBE_JS", "DRIVER_JS", "INIT_JS", "NO_BRIDGE", "BridgedPage", "OriginRefused",
           "SETTLE_TIMEOUT_VARIABLE", "SettleTimeout", "Settled", "Stop", "check_origin", "default_settle_timeout", "origin_of",
           "refused_sentence"]

#: Page time when the session's clock reads 0 (2026-01-01T00:00:00Z).
EPOCH_MS = 1_767_225_600_000

#: The variable that sets a settle's deadline where the caller gives none: ms of wall time, as
#: typescript/'s `settleTimeoutMs`. A suite on a loaded machine (a CI runner beside builds) sets
#: it generous rather than racing 2 s; a page that never settles then fails only that late.
SETTLE_TIMEOUT_VARIABLE = "TODAYSIM_SETTLE_TIMEOUT_MS"


def default_settle_timeout() -> float:
    """Seconds of wall time a settle may take when the caller gives none: `TODAYSIM_SETTLE_TIMEOUT_MS`
    (a whole number of ms, more than 0 and less than an hour), else 2.0. A value that is not one
    is a `ValueError` naming the variable, at once."""
    given = os.environ.get(SETTLE_TIMEOUT_VARIABLE, "")
    if given == "":
        return 2.0
    ms = int(given) if given.isascii() and given.isdigit() else 0
    if not 0 < ms < 3_600_000:
        raise ValueError(f"{SETTLE_TIMEOUT_VARIABLE} is {given!r}: say the ms of wall time a settle may take, "
                         "a whole number more than 0 and less than 3600000")
    return ms / 1000


def _shipped(name: str) -> str:
    return (importlib.resources.files("todaysim") / name).read_text(encoding="utf-8")


#: The virtual clock (`Web/virtual-time.js`, shipped here as `virtual_time.js`).
TIMERS_JS = _shipped("virtual_time.js")
#: What the page says about settling, in one look (`Web/settle-probe.js`, as `settle_probe.js`).
PROBE_JS = _shipped("settle_probe.js")
PROBE_EXPRESSION = PROBE_JS.strip().rstrip(";")
#: The in-page driver (`Web/page-driver.js`, as `page_driver.js`).
DRIVER_JS = _shipped("page_driver.js").strip()
#: What BridgedPage adds to its context once, as the TypeScript helper adds it: the clock, then
#: the driver with the epoch and the look.
INIT_JS = f"{TIMERS_JS}\n({DRIVER_JS})({EPOCH_MS}, () => {PROBE_EXPRESSION});\n"

#: What a settle saw last: the session's view and the page clock's time and next due time (epoch ms).
Settled = TypedDict("Settled", {"view": m.SessionView, "pageNow": int, "pageNext": Optional[int]})

#: One stop of a clock move (the page driver's `advance`): where both clocks go next (session
#: ms) and which side has something due there.
Stop = TypedDict("Stop", {"at": int, "session": bool, "page": bool})

#: One look at the page (`settle_probe.js`'s answer, or why there was none), as `_state` reads it.
Look = dict[str, Any]


# What a settle's timeout says when the page has no bridge: the most common cause, said first.
NO_BRIDGE = ("the page never loaded /bridge.js (it must, from its `todaysim` and `session` query parameters: "
             '<script src="${todaysim}/bridge.js?session=${session}">, before its own scripts; docs/TESTING-A-PAGE.md, '
             '"The page\'s part")')


class SettleTimeout(Exception):
    """The page and the session did not settle within the wall deadline: an error of the
    explorer or the environment (a page that never stops working), never a contract breach."""


class BridgedPage:
    """One session and the Playwright page that runs the page under test against it.

    `page` is a Playwright (sync API) page of a context whose clock this object owns; `url` is
    the page under test (its query gets `todaysim`, `session` and `access_token`, as the fixture
    page and `docs/TESTING-A-PAGE.md` expect). Call `open()` once."""

    def __init__(self, client: Client, session_id: str, page: Page, url: str, settle_timeout: Optional[float] = None,
                 cdp: Optional[CDPSession] = None, listen: bool = True):
        self.client, self.session_id, self.page, self.url = client, session_id, page, url
        self.settle_timeout = default_settle_timeout() if settle_timeout is None else settle_timeout
        self.requests: set[Request] = set()
        self.started = 0  # requests Playwright has seen the page start (as `requests` counts them)
        #: The session's view as last seen settled (empty until the first settle: `open()`
        #: settles), and what `settle()` last returned.
        self.view: m.SessionView = cast(m.SessionView, {})
        self.last_settle: Optional[Settled] = None
        self._settled_look: Optional[Look] = None  # the look the last settle ended on
        self._settled_started = 0  # `started` then
        self.errors: list[str] = []
        # The page driver's calls go straight to Chromium (Runtime.evaluate on a CDP session:
        # 1.6 ms a look here against 3.2 ms through page.evaluate), on `cdp` when the caller has
        # one for this page (`Pages` does); another browser uses page.evaluate.
        self._cdp: Optional[CDPSession] = cdp
        if cdp is None:
            try:
                self._cdp = page.context.new_cdp_session(page)
            except Exception:
                self._cdp = None
        # The page's errors and requests; `listen=False` when the caller, which keeps the page
        # from one BridgedPage to the next, forwards them itself (`Pages`: adding and removing
        # Playwright listeners is a trip each).
        if listen:
            page.on("pageerror", self._error)
            page.on("request", self._started)
            page.on("requestfinished", self._ended)
            page.on("requestfailed", self._ended)

    @property
    def _view_url(self) -> str:
        query = "?" + urllib.parse.urlencode({"access_token": self.client.token}) if self.client.token else ""
        return f"{self.client.base_url}/v1/sessions/{urllib.parse.quote(self.session_id, safe='')}{query}"

    # Requests the page makes other than its event stream (which never ends) and the reads of
    # the session's view (the settling round's own, and the driver's when a document loads).
    def _started(self, request: Request) -> None:
        path = request.url.split("?")[0]
        if not path.endswith("/events") and not (request.method == "GET" and path == self._view_url.split("?")[0]):
            self.requests.add(request)
            self.started += 1

    def _ended(self, request: Request) -> None:
        self.requests.discard(request)

    def _error(self, error: Exception) -> None:
        self.errors.append(str(error))

    @property
    def address(self) -> str:
        settings = {"todaysim": self.client.base_url, "session": self.session_id}
        if self.client.token:
            settings["access_token"] = self.client.token
        parts = urllib.parse.urlsplit(self.url)
        query = "&".join(filter(None, [parts.query, urllib.parse.urlencode(settings)]))
        return parts._replace(query=query).geturl()

    def now_ms(self) -> int:
        return self.client.read_session(self.session_id)["clock"]["nowMs"]

    def open(self) -> "BridgedPage":
        """Adds the virtual clock and the page driver to the page's context (once a context: a
        later page of the same context finds them there), loads the page, whose document takes
        the session's time as it loads, and waits until it is settled."""
        context = self.page.context
        if not getattr(context, "_todaysim_driver", False):
            context.add_init_script(INIT_JS)
            setattr(context, "_todaysim_driver", True)
        self.page.goto(self.address, wait_until="domcontentloaded")
        seen = self.settle()
        if seen["pageNow"] != EPOCH_MS + seen["view"]["clock"]["nowMs"]:
            raise RuntimeError(f"the page clock reads {seen['pageNow'] - EPOCH_MS} ms, not the session's "
                               f"{seen['view']['clock']['nowMs']}: the page's document could not read {self._view_url}")
        return self

    # -- the page driver ---------------------------------------------------------------------
    def _evaluate(self, expression: str) -> Any:
        if self._cdp is None:
            return self.page.evaluate(expression)
        answer = self._cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in answer:
            raise RuntimeError(answer["exceptionDetails"].get("text", "the evaluation failed"))
        return answer["result"].get("value")

    def _state(self, look: Look) -> Look:
        timers = look.get("timers") or {}
        return {
            "bridge": look["bridge"], "inFlight": look["inFlight"], "delivered": look["delivered"],
            "pageLoad": look["loadId"], "open": look["open"], "requests": len(self.requests),
            "pageRequests": look.get("requests", 0), "ready": look["ready"],
            "pageNow": timers.get("now"), "pageNext": timers.get("next"),
            # Requests the document's scripts started, and the document.
            "started": look.get("started"), "doc": look.get("doc"),
            # What the page alone can tell: no bridge call in flight, no other request, nothing due.
            "quiet": bool(look["bridge"] and look["inFlight"] == 0 and look["delivered"] is not None
                          and not look.get("requests") and not self.requests
                          and (timers.get("next") is None or timers["next"] > timers["now"])),
        }

    def _call(self, expression: str) -> Look:
        """The state after a call of the page driver that answers a look."""
        try:
            return self._state(cast(Look, self._evaluate(expression)))
        except Exception as error:  # a page navigating (the shim reloads it on a host reload)
            return {"page": str(error)[:200], "quiet": False}

    def _probe(self) -> Look:
        """One look at the page."""
        return self._call("__todaysimDriver.look()")

    def _wait(self, end: float, expect: int = 0, closed: bool = False, run_to: Optional[int] = None) -> Look:
        """A look at the page once it is quiet (`page_driver.js`'s `wait`: one trip that first runs
        the page clock to `run_to`, session ms, when given; fires what is due now; waits for
        every entry up to `expect` delivered), or when `end` comes. `run_to` is given only where
        the session's clock already reads it: a document that loads meanwhile (and ends this
        trip) takes that time as it loads."""
        target = "null" if run_to is None else str(EPOCH_MS + run_to)
        ms = max(0, int((end - time.monotonic()) * 1000))
        return self._call(f"__todaysimDriver.wait({target}, {int(expect)}, {json.dumps(closed)}, {ms})")

    def _advance(self, now: int, target: int, view: m.SessionView) -> Stop:
        """The next stop of a clock move from `now` to `target` (session ms), the page clock run
        to where it goes first (`page_driver.js`'s `advance`: the timer merge)."""
        watchdogs = json.dumps([w["dueAtMs"] for w in view["watchdogs"]])
        return cast(Stop, self._evaluate(f"__todaysimDriver.advance({int(now)}, {int(target)}, {watchdogs})"))

    # -- settling ----------------------------------------------------------------------------
    @staticmethod
    def _agrees(probe: Look, view: m.SessionView) -> bool:
        """What needs the session too: every entry delivered, the session's load, the stream open
        (a closed session's stream ends, and it has nothing more to deliver)."""
        closed = view["status"] == "closed"
        return bool((probe["delivered"] >= view["counts"]["timeline"] or closed)
                    and probe["pageLoad"] == view["document"]["loadId"] and (probe["open"] or closed))

    def settle(self, expect: int = 0, closed: bool = False, run_to: Optional[int] = None,
               answer: Optional[m.SessionView] = None) -> Settled:
        """Waits (never a fixed pause: it looks again until two looks agree) for the page and the
        session to be settled; `SettleTimeout` after `settle_timeout` s of wall time. Returns the
        session's view and the page's timers as last seen (`view`, `pageNow`, `pageNext`).
        `expect` and `closed` say what the caller knows the page must have had delivered (the
        timeline count of a view the server answered, and whether the session is closed) and
        `run_to` a time (session ms) to run the page clock to first, in the same trip. `answer`
        is the session's view as the server answered the driver's last request (the step's).

        One round: a look at the page once it is quiet (`_wait`); the session's view; then a
        second look at the page, which must equal the first. The view is read between two equal
        quiet looks, so nothing the page did can fall between them unseen: the page acts only on
        a timer (none is due), a delivered entry (all are), a request's answer (none is in
        flight) or a bridge answer (none is in flight).

        Where nothing but the driver's step can have changed the session since the last settle,
        the step's `answer` is the session's view and the read and the second look are not made:
        when the first look is quiet and has every entry of `answer` delivered (exactly its
        count) on its load, in the same document as the last settle's look with no request
        started since by the page's scripts (`virtual_time.js` counts fetch and XHR) nor seen by
        Playwright (`started`). A session changes only by a request (its clock is the driver's),
        the driver made none after the step, and the page none since the last settle's look; so
        a read would return `answer` and a second look, the page being quiet with nothing more
        to be delivered, what the first saw."""
        end = time.monotonic() + self.settle_timeout
        first = self._wait(end, expect, closed, run_to)
        while True:
            if time.monotonic() > end:
                self._timed_out(first)
            if answer is not None and self._unchanged(first, answer):
                return self._settled(answer, first)
            answer = None  # one chance: after a wait of its own the page may have acted
            if first["quiet"]:
                view = self.client.read_session(self.session_id)
                second = self._probe()
                if second == first and self._agrees(first, view):
                    return self._settled(view, first)
                if second != first:  # the page moved between the looks: look again at once
                    first = second
                    continue
                # Quiet, but the session has entries the page has not had yet: wait for them.
                expect, closed = view["counts"]["timeline"], view["status"] == "closed"
            elif "page" in first or self.requests:
                # Between two documents, or a request only Playwright sees (the page cannot wait
                # for either): a moment before the next trip, which would answer at once.
                time.sleep(0.002)
            first = self._wait(end, expect, closed)

    def _unchanged(self, look: Look, answer: m.SessionView) -> bool:
        """Whether `answer`, the session's view after the driver's last request, is the session's
        view now, as `look` and the last settle show it (see `settle`)."""
        before = self._settled_look
        return bool(look["quiet"] and before is not None and look.get("doc") is not None
                    and look["doc"] == before["doc"] and look["started"] == before["started"]
                    and self.started == self._settled_started and look["delivered"] == answer["counts"]["timeline"]
                    and self._agrees(look, answer))

    def _settled(self, view: m.SessionView, look: Look) -> Settled:
        self.view, self._settled_look, self._settled_started = view, look, self.started
        self.last_settle = {"view": view, "pageNow": look["pageNow"], "pageNext": look["pageNext"]}
        return self.last_settle

    def _timed_out(self, seen: Look) -> NoReturn:
        state = dict(seen)
        try:
            view = self.client.read_session(self.session_id)
            state.update(timeline=view["counts"]["timeline"], sessionLoad=view["document"]["loadId"], status=view["status"])
        except Exception as error:
            state.update(session=str(error)[:200])
        cause = "" if seen.get("bridge") else NO_BRIDGE + "; "
        raise SettleTimeout(f"session {self.session_id} and its page did not settle within "
                            f"{self.settle_timeout} s: {cause}{state}; page errors: {self.errors[-3:] or 'none'}")

    # -- one time for both -------------------------------------------------------------------
    def _page_now(self) -> int:
        return int(self._evaluate("Date.now()")) - EPOCH_MS

    def move(self, ms: int, settled: bool = False) -> list[m.InputResponse]:
        """Moves both clocks `ms` forward through every due time in between (the session's
        watchdogs and the page's timers, earliest first: `_advance`); returns the session's
        answers to the clock inputs it sent. At each due time the clock that has nothing due there
        moves first (so a page timer's bridge calls are recorded at its own time on the session
        clock, and the session's emits reach a page whose clock already reads their time); where
        both have something due at one millisecond, the session's timers act first and the page's
        right after. Both are settled after each stop.

        `settled=True` says nothing has touched the page or the session since the last settle (a
        driver that only steps through this object, as the explorer does), so the move starts
        from `last_settle` instead of settling first."""
        if ms < 0:
            raise ValueError("a clock moves forward only")
        seen = self.last_settle if settled and self.last_settle else self.settle()
        now = seen["view"]["clock"]["nowMs"]
        target = now + ms
        answers: list[m.InputResponse] = []
        while now < target:
            stop = self._advance(now, target, seen["view"])
            answer = self.client.clock(self.session_id, toMs=stop["at"])
            answers.append(answer)
            view = answer["session"]
            counts = view["counts"]["timeline"], view["status"] == "closed"
            if stop["session"] and stop["page"]:  # the session's timers first, then the page's
                self.settle(*counts, answer=view)
            seen = self.settle(*counts, run_to=stop["at"] if stop["page"] else None, answer=view)
            now = seen["view"]["clock"]["nowMs"]
        return answers

    def step(self, element: Mapping[str, Any], settled: bool = False) -> Union[list[m.InputResponse], m.StepsResponse]:
        """Applies one host step in `/steps` element form (`{"gesture": {...}}`, `{"lifecycle":
        {...}}`, `{"command": {...}}`, `{"webEvent": {...}}`, `{"clock": {...}}`) and settles: a
        clock move goes through `move` (both clocks, every due time in between); anything else
        is a one-step batch. One step per call, a settle after each: a `/steps` batch is one
        transaction, in which the page could not react between its steps."""
        if len(element) != 1:
            raise ValueError(f"a step holds exactly one input: {element}")
        (key, body), = element.items()
        if key == "clock" and set(body) == {"advanceMs"}:
            return self.move(int(body["advanceMs"]), settled)
        if key == "clock" and set(body) == {"toMs"}:
            now = self.last_settle["view"]["clock"]["nowMs"] if settled and self.last_settle else self.now_ms()
            return self.move(max(0, int(body["toMs"]) - now), settled)
        answer = self.client.steps(self.session_id, [element])
        view = answer["session"]
        self.settle(view["counts"]["timeline"], view["status"] == "closed", answer=view)
        return answer

    def report(self) -> m.Report:
        return self.client.report(self.session_id)
