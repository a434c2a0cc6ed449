"""A real page on the session's clock: a Playwright page running the page under test with
todaysim's `/bridge.js` attached to a session, whose own timers run on Playwright's page clock
(paused before the page loads, at `EPOCH_MS` + the session's `nowMs`), so one call moves both
clocks together and a scenario that waits 12 s takes milliseconds and runs the same every time.

Playwright cannot list a page's pending timers: `TIMERS_JS`, an init script added after the
clock's own, records the due time of every `setTimeout`, `setInterval` and
`requestAnimationFrame`, and `move()` steps both clocks through the merged due times (the
session's watchdogs and the page's timers), settling after each, so a page timer at 4,999 ms acts
at 4,999 ms of session time, before a session deadline at 5,000 ms.

*Settled* (`settle()`): no bridge call in flight; every entry up to the session's
`counts.timeline` delivered to the page; the page's load is the session's and its stream is
open; no other page request in flight; no page timer due now — a look at the page, the
session's view, a second look equal to the first, and again (after a zero-length clock run
where a timer is due now) until that holds, within `settle_timeout` (2 s) of wall time. A miss
is `SettleTimeout` (the explorer's error, never a breach of the contract). On Chromium the first
look comes from a wait in the page (`page_driver.js`), the page clock runs inside the page, and
where nothing but the step can have changed the session its answer stands for the read (see
`settle`).
"""
from __future__ import annotations

import importlib.resources
import time
import urllib.parse
from typing import TYPE_CHECKING, Any, Mapping, NoReturn, Optional, TypedDict, Union, cast

from . import models as m
from .client import Client

if TYPE_CHECKING:  # the plugin and the explorer bring Playwright; the client never imports it
    from playwright.sync_api import CDPSession, Page, Request

#: Page time when the session's clock reads 0 (2026-01-01T00:00:00Z).
EPOCH_MS = 1_767_225_600_000

#: The timer tracker (`Web/virtual-time.js` in the repository, shipped here as
#: `virtual_time.js`): one script for this package and the TypeScript Playwright helper.
TIMERS_JS = (importlib.resources.files("todaysim") / "virtual_time.js").read_text(encoding="utf-8")

#: What the page says about settling, in one look (`Web/settle-probe.js`, shipped here as
#: `settle_probe.js`; one trip to the page: about 2.4 ms here, where the page reading the
#: session's view itself made a round cost 10 ms against 6.6 ms for a look, a read from Python
#: and a look).
PROBE_JS = (importlib.resources.files("todaysim") / "settle_probe.js").read_text(encoding="utf-8")
#: The same look as one expression, to embed in the driver's init script and its calls.
PROBE_EXPRESSION = PROBE_JS.strip().rstrip(";")


#: The Python driver's init script on Chromium (`Web/page-driver.js`, shipped here as
#: `page_driver.js`): each document the page loads takes its session's time as it loads, so the
#: page clock runs inside the page (one trip) instead of through `page.clock.run_for` (an init
#: script added to the context and a trip more, every call); and `__todaysimLook` and
#: `__todaysimWait`, the look and a wait in the page until it is quiet, one trip where polling
#: from here cost a trip per look.
DRIVER_JS = (importlib.resources.files("todaysim") / "page_driver.js").read_text(encoding="utf-8").strip()


class OriginRefused(RuntimeError):
    """The server does not let pages of the page under test's origin call it (no CORS grant for
    that `Origin`): every bridge call of the page would be refused. Raised before anything starts,
    naming the flag to add."""


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of `url`, as a browser sends it in `Origin` (default ports left out)."""
    parts = urllib.parse.urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    port = f":{parts.port}" if parts.port is not None and parts.port != default else ""
    return f"{scheme}://{host}{port}"


def refused_sentence(server: str, origin: str) -> str:
    """What the Python helpers raise and `/bridge.js` logs when the server refuses the page's origin."""
    return (f"todaysim at {server} does not allow pages of {origin} to call it (cross-origin), so every bridge call "
            f"of the page would be refused: start it with --allow-origin {origin} (Scripts/run --allow-origin {origin})")


def check_origin(client: Client, page_url: str) -> None:
    """Asks the server, as the browser will, whether a page at `page_url` may call it: a CORS
    preflight with the page's `Origin`. Nothing to ask when the page is served by the server
    itself; `OriginRefused` naming `--allow-origin` when the grant is missing."""
    origin, server = origin_of(page_url), origin_of(client.base_url)
    if origin == server:
        return
    granted = client.preflight("/v1/sessions", origin, "POST")
    if granted not in (origin, "*"):
        raise OriginRefused(refused_sentence(client.base_url, origin))


#: What a settle saw last: the session's view and the page clock's time and next due time (epoch ms).
Settled = TypedDict("Settled", {"view": m.SessionView, "pageNow": int, "pageNext": Optional[int]})

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

    def __init__(self, client: Client, session_id: str, page: Page, url: str, settle_timeout: float = 2.0,
                 cdp: Optional[CDPSession] = None, listen: bool = True):
        self.client, self.session_id, self.page, self.url = client, session_id, page, url
        self.settle_timeout = settle_timeout
        self.requests: set[Request] = set()
        self.started = 0  # requests Playwright has seen the page start (as `requests` counts them)
        #: The session's view as last seen settled (empty until the first settle: `open()`
        #: settles), and what `settle()` last returned.
        self.view: m.SessionView = cast(m.SessionView, {})
        self.last_settle: Optional[Settled] = None
        self._settled_look: Optional[Look] = None  # the look the last settle ended on
        self._settled_started = 0  # `started` then
        self.errors: list[str] = []
        # The settling looks, waits and page-clock runs go straight to Chromium (Runtime.evaluate
        # on a CDP session: 1.6 ms a look here against 3.2 ms through page.evaluate), on `cdp`
        # when the caller has one for this page (`Pages` does); another browser uses
        # page.evaluate and page.clock.
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
    # the session's view (the settling round's own, and the shim's when the page loads).
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
        """Pauses the page clock at the session's time, adds the timer tracker and the clock sync
        (once a context: a later page of the same context finds them there, the clock paused),
        loads the page and waits until it is settled."""
        context = self.page.context
        if not getattr(context, "_todaysim_clock", False):
            now = self.now_ms()
            # Playwright's Python API takes a number as seconds (and truncates its milliseconds):
            # pause at the whole second, then run the clock on to the session's exact millisecond.
            self.page.clock.pause_at((EPOCH_MS + now - now % 1000) // 1000)
            if now % 1000:
                self.page.clock.run_for(now % 1000)
            context.add_init_script(TIMERS_JS)
            if self._cdp is not None:
                context.add_init_script(f"({DRIVER_JS})({EPOCH_MS}, () => {PROBE_EXPRESSION})")
            setattr(context, "_todaysim_clock", True)
        elif self._cdp is None:
            now = self.now_ms()  # no clock sync (not Chromium): the page clock is set from here
            self.page.clock.set_system_time((EPOCH_MS + now - now % 1000) // 1000)
            if now % 1000:
                self.page.clock.run_for(now % 1000)
        # With the clock sync, the document takes the session's time as it loads.
        self.page.goto(self.address, wait_until="domcontentloaded")
        self.settle()
        return self

    # -- settling ----------------------------------------------------------------------------
    def _state(self, look: Look) -> Look:
        timers = look.get("timers") or {}
        due_now = timers.get("next") is not None and timers["next"] <= timers["now"]
        return {
            "bridge": look["bridge"], "inFlight": look["inFlight"], "delivered": look["delivered"],
            "pageLoad": look["loadId"], "open": look["open"], "requests": len(self.requests),
            "pageRequests": look.get("requests", 0),
            "timerDueNow": due_now, "ready": look["ready"], "pageNow": timers.get("now"), "pageNext": timers.get("next"),
            # page_driver.js's (Chromium): requests the document's scripts started, the document.
            "started": look.get("started"), "doc": look.get("doc"),
            # What the page alone can tell: no bridge call in flight, no other request, no timer due.
            "quiet": bool(look["bridge"] and look["inFlight"] == 0 and look["delivered"] is not None
                          and not look.get("requests") and not self.requests and not due_now),
        }

    def _evaluate(self, expression: str) -> Any:
        assert self._cdp is not None
        answer = self._cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in answer:
            raise RuntimeError(answer["exceptionDetails"].get("text", "the evaluation failed"))
        return answer["result"].get("value")

    def _look(self) -> Look:
        if self._cdp is None:
            return cast(Look, self.page.evaluate(PROBE_JS))
        return cast(Look, self._evaluate(f"window.__todaysimLook ? __todaysimLook() : {PROBE_EXPRESSION}"))

    def _probe(self) -> Look:
        """One look at the page."""
        try:
            return self._state(self._look())
        except Exception as error:  # a page navigating (the shim reloads it on a host reload)
            return {"page": str(error)[:200], "quiet": False, "timerDueNow": False}

    def _wait(self, end: float, expect: int = 0, closed: bool = False, run_to: Optional[int] = None) -> Look:
        """A look at the page once it is quiet (`page_driver.js`: on Chromium, in one trip that
        first runs the page clock to `run_to`, session ms, when given; fires a timer due now;
        waits for every entry up to `expect` delivered), or when `end` comes; elsewhere a look
        (after the run). `run_to` is given only where the session's clock already reads it: a
        document that loads meanwhile (and ends this trip) takes that time as it loads."""
        if self._cdp is None:
            if run_to is not None:
                self._run_page_to(run_to)
            return self._probe()
        target = "null" if run_to is None else str(EPOCH_MS + run_to)
        ms = max(0, int((end - time.monotonic()) * 1000))
        try:
            look = self._evaluate(f"window.__todaysimWait ? __todaysimWait({target}, {int(expect)}, "
                                  f"{'true' if closed else 'false'}, {ms}) : {PROBE_EXPRESSION}")
            return self._state(cast(Look, look))
        except Exception as error:  # a page navigating (the shim reloads it on a host reload)
            return {"page": str(error)[:200], "quiet": False, "timerDueNow": False}

    def _run_page_to(self, at: int) -> None:
        """Runs the page clock to session time `at` (ms), firing the page's timers on the way: in
        the page on Chromium (a document that loads later takes the session's time from
        `page_driver.js`), else through `page.clock.run_for`."""
        if self._cdp is None:
            now = self._page_now()
            if at > now:
                self.page.clock.run_for(at - now)
            return
        target = EPOCH_MS + at
        self._evaluate(f"(async () => {{ if (Date.now() < {target}) await __pwClock.controller.runFor({target} - Date.now()); }})()")

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
        flight) or a bridge answer (none is in flight). A timer due now is fired by a
        zero-length clock run and the round starts again; with none due such a run fires
        nothing, so it is not made.

        Where nothing but the driver's step can have changed the session since the last settle,
        the step's `answer` is the session's view and the read and the second look are not made:
        when the first look is quiet and has every entry of `answer` delivered (exactly its
        count) on its load, in the same document as the last settle's look with no request
        started since by the page's scripts (`page_driver.js` counts fetch and XHR) nor seen by
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
            elif first["timerDueNow"]:  # (on Chromium the wait fires it itself)
                self.page.clock.run_for(0)
                first = self._wait(end, expect, closed)
                continue
            else:
                time.sleep(0.002)  # a request only Playwright sees, or the page navigating
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
        return int(self.page.evaluate("Date.now()")) - EPOCH_MS

    def move(self, ms: int, settled: bool = False) -> list[m.InputResponse]:
        """Moves both clocks `ms` forward through every due time in between (the session's
        watchdogs and the page's timers, earliest first); returns the session's answers to the
        clock inputs it sent. At each due time the clock that has nothing due there moves first
        (so a page timer's bridge calls are recorded at its own time on the session clock, and the
        session's emits reach a page whose clock already reads their time); where both have
        something due at one millisecond, the session's timers act first and the page's right
        after. A side with something due is settled after it acts.

        `settled=True` says nothing has touched the page or the session since the last settle (a
        driver that only steps through this object, as the explorer does), so the move starts
        from `last_settle` instead of settling first."""
        if ms < 0:
            raise ValueError("a clock moves forward only")
        seen = self.last_settle if settled and self.last_settle else self.settle()
        now = seen["view"]["clock"]["nowMs"]
        page_now = seen["pageNow"] - EPOCH_MS
        target = now + ms
        answers: list[m.InputResponse] = []

        def clock(to: int) -> m.SessionView:
            answer = self.client.clock(self.session_id, toMs=to)
            answers.append(answer)
            return answer["session"]

        while now < target:
            session_next = min([w["dueAtMs"] for w in seen["view"]["watchdogs"] if now < w["dueAtMs"] <= target], default=None)
            page_next = seen["pageNext"] - EPOCH_MS if seen["pageNext"] is not None else None
            page_next = page_next if page_next is not None and now < page_next <= target else None
            step_to = min([t for t in (session_next, page_next) if t is not None], default=target)
            session_acts, page_acts = session_next == step_to, page_next == step_to
            run_to: Optional[int] = None  # the page clock's run, made with the settle's wait when it is last
            if page_acts and not session_acts:
                view = clock(step_to)
                run_to = step_to
            elif session_acts and page_acts:
                if step_to - 1 > page_now:
                    self._run_page_to(step_to - 1)
                view = clock(step_to)
                self.settle(view["counts"]["timeline"], view["status"] == "closed", answer=view)
                run_to = step_to
            else:  # the session acts there, or nothing is due up to the target: the page clock first
                if step_to > page_now:
                    self._run_page_to(step_to)
                view = clock(step_to)
            now = page_now = step_to
            if session_acts or page_acts or now >= target:
                seen = self.settle(view["counts"]["timeline"], view["status"] == "closed", run_to, answer=view)
                now, page_now = seen["view"]["clock"]["nowMs"], seen["pageNow"] - EPOCH_MS
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
