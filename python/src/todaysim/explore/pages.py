"""The explorer's pages (`Pages`): each example's session and page, one browser context and page
reused from example to example and cleared between them."""
from __future__ import annotations

import contextlib
import json
import time
from typing import Any, Optional, Union

from ..client import Client
from ..page import EPOCH_MS, BridgedPage, default_settle_timeout, origin_of
from .timing import END, PURGE, START, Timings

#: Examples one browser context and page serve before both are made anew: the default budget
#: (25 while every clock move added an init script to the context, which every later document ran).
RECYCLE_AFTER = 100


class Pages:
    """Where each example's page comes from: a session of its own and, by default, one browser
    context and page reused from example to example and cleared between them, which leaves
    nothing of one example for the next:

    - the document: the page leaves it for `about:blank` by its own navigation as the example
      ends (not waited for), and the next example's start waits until the blank document is
      there, so the example's document has unloaded (its unload handlers run, its scripts,
      timers, event stream and workers gone) before anything is cleared, and the blank document
      has the page's origin;
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
    - the session: a new one per example (the caller deletes it), made as the example before
      ends, while its document unloads;
    - ahead (`ahead=True`): two such contexts take turns, and while an example runs in one, the
      next example's session is made and its page loads in the other (a navigation that is not
      waited for), so an example starts with its page loaded: only its first settle is waited
      for. Each context is still cleared after each example it served, and the two share nothing
      (a browser context is a storage partition of its own). It pays only where a core is idle
      while an example runs: on a busy two-core machine the load beside the example slowed the
      example's steps by more than it saved (docs/EXPLORE.md), so it is not the default.

    Only on Chromium (the clearing goes through CDP); `fresh=True`, or another browser, gives
    every example a new context and page instead. A context serves `recycle_after` examples
    (the page clock, run inside the page, adds no init script per move: what a context holds stays
    the same from example to example; a new one now and then bounds whatever Chromium keeps)."""

    def __init__(self, browser: Any, client: Client, page_url: str, *, session_fields: Optional[dict[str, Any]] = None,
                 settle_timeout: Optional[float] = None, fresh: bool = False, recycle_after: int = RECYCLE_AFTER, ahead: bool = False,
                 timings: Optional[Timings] = None):
        #: Where the time goes (`timing`): the examples' parts and the requests and CDP commands in them.
        self.timings = timings or Timings()
        self.browser, self.client, self.page_url = browser, self.timings.client(client), page_url
        self.origin = origin_of(page_url)
        self.session_fields = dict(session_fields or {})
        self.settle_timeout = default_settle_timeout() if settle_timeout is None else settle_timeout
        self.fresh, self.recycle_after = fresh, recycle_after
        self.ahead = ahead and not fresh
        self.tabs: list[Tab] = []  # the contexts serving examples (two when loading ahead)
        self.ready: Optional[Tab] = None  # the tab the next example's page is loading in, when one is
        self.spare: Optional[str] = None  # a session made for the next example while the last one's page unloads
        #: Contexts made (a context per example with `fresh`).
        self.contexts = 0

    def open(self) -> BridgedPage:
        """A new session and the page under test loaded against it, settled."""
        with self.timings.part(START):
            return self._open()

    def _open(self) -> BridgedPage:
        tab, self.ready = self.ready, None
        if tab is None:  # nothing loading ahead: load the page now and wait for it
            tab = self._idle_tab()
            self._load(tab, wait=True)
        bridged = tab.bridged
        assert bridged is not None
        try:
            if tab.navigation is not None:  # loaded ahead: its first settle
                error, tab.navigation = tab.navigation.get("exceptionDetails"), None
                if error:
                    raise RuntimeError(f"the page under test could not be loaded ({bridged.address}): {error.get('text')}")
                bridged.settle()
            seen, now = bridged.last_settle, bridged.view["clock"]["nowMs"]
            if seen is None or seen["pageNow"] != EPOCH_MS + now:
                raise RuntimeError(f"the page clock reads {seen and seen['pageNow']}, not the session's {EPOCH_MS + now}")
        except BaseException:
            self._drop(tab)
            raise
        tab.served += 1
        tab.running = True
        if self.ahead:
            self._load_ahead()
        return bridged

    def _idle_tab(self) -> Tab:
        """A tab no example runs or loads in (a new one when there is none, or it has served its examples)."""
        for tab in list(self.tabs):
            if tab.bridged is None and tab.served >= self.recycle_after:
                self._drop(tab)
            elif tab.bridged is None:
                try:
                    if tab.left:
                        tab.clear()
                    return tab
                except Exception:
                    self._drop(tab)
        tab = Tab(self)
        self.tabs.append(tab)
        self.contexts += 1
        return tab

    def _load_ahead(self) -> None:
        """Starts loading the next example's page in an idle tab (the second one, made the first
        time: its context's first document is waited for, through `BridgedPage.open`)."""
        tab = self._idle_tab() if len(self.tabs) < 2 or any(t.bridged is None for t in self.tabs) else None
        if tab is not None:
            self._load(tab, wait=not tab.opened)
            self.ready = tab

    def _load(self, tab: Tab, wait: bool) -> None:
        """A new session and its page in `tab`: loaded and settled (`BridgedPage.open`: the context's
        clock and scripts set up the first time) when `wait`, else a navigation not waited for."""
        session_id, self.spare = self.spare or self.client.create_session("explorer", **self.session_fields)["id"], None
        tab.bridged = BridgedPage(self.client, session_id, tab.page, self.page_url, settle_timeout=self.settle_timeout,
                                  cdp=tab.cdp, listen=tab.cdp is None)
        try:
            if wait:
                tab.bridged.open()
                tab.opened = True
            else:
                # The page clock stays paused from the example before; the document takes the
                # new session's time as it loads (`BridgedPage.open`). The blank document
                # navigates itself: answered at once, where Page.navigate waits for the commit.
                navigate = f"location.href = {json.dumps(tab.bridged.address)}"
                tab.navigation = tab.cdp.send("Runtime.evaluate", {"expression": navigate})
        except BaseException:
            self._drop(tab)
            raise

    def close(self, bridged: BridgedPage) -> None:
        """Ends an example: its page sent to `about:blank`, to be cleared as the next example starts
        (or its context closed)."""
        with self.timings.part(END):
            self._close(bridged)

    def _close(self, bridged: BridgedPage) -> None:
        tab = next((tab for tab in self.tabs if tab.bridged is bridged), None)
        if tab is None:
            return
        tab.bridged, tab.running = None, False  # (the caller deletes the session)
        if tab.cdp is None or tab.foreign:  # a page of its own (`fresh`), or one that showed another origin
            self._drop(tab)
            return
        try:
            tab.leave()
        except Exception:
            self._drop(tab)
            return
        if self.spare is None:  # while the document unloads: the next example's session
            self.spare = self.client.create_session("explorer", **self.session_fields)["id"]

    def _drop(self, tab: Tab) -> None:
        """Closes `tab`'s context; a session loaded ahead in it (no example's yet) is deleted."""
        if tab.bridged is not None and not tab.running:
            with contextlib.suppress(Exception):
                self.client.delete_session(tab.bridged.session_id)
        if self.ready is tab:
            self.ready = None
        if tab in self.tabs:
            self.tabs.remove(tab)
        tab.close()

    def discard(self) -> None:
        """Closes every context (the next `open` makes a new one); the sessions made for an
        example that did not come (loaded ahead, or made as the last one ended) are deleted (an
        example's is the caller's)."""
        for tab in list(self.tabs):
            self._drop(tab)
        if self.spare is not None:
            with self.timings.part(PURGE), contextlib.suppress(Exception):
                self.client.delete_session(self.spare)
            self.spare = None

    @property
    def page(self) -> Any:
        """The Playwright page of the last example opened (None before)."""
        running = [tab for tab in self.tabs if tab.running]
        return running[-1].page if running else None


#: In the blank document the example's page left for: its session storage cleared, `window.name`
#: reset, its origin (null while the example's document is still there).
BLANK_CLEARED = "location.href === 'about:blank' ? (sessionStorage.clear(), window.name = '', window.origin) : null"


class Tab:
    """A browser context and its page, serving examples one after another (cleared between them),
    its page's requests and errors forwarded to the example's `BridgedPage` in it."""

    def __init__(self, pages: Pages):
        self.pages = pages
        self.context = pages.browser.new_context()
        self.page = self.context.new_page()
        self.page.on("framenavigated", self._navigated)
        self.cdp: Any = None
        try:
            self.cdp = None if pages.fresh else pages.timings.cdp(self.context.new_cdp_session(self.page))
        except Exception:  # not Chromium: a context per example
            self.cdp = None
        if self.cdp is not None:  # listeners added once a context (each is a trip to Playwright's driver)
            self.page.on("request", lambda request: self._forward("_started", request))
            self.page.on("requestfinished", lambda request: self._forward("_ended", request))
            self.page.on("requestfailed", lambda request: self._forward("_ended", request))
            self.page.on("pageerror", lambda error: self._forward("_error", error))
        self.bridged: Optional[BridgedPage] = None  # the example's page in it: loading ahead, or running
        self.running = False  # whether `bridged` is an example's (handed out by `open`)
        self.opened = False  # whether its context's first document went through `BridgedPage.open`
        self.navigation: Optional[dict[str, Any]] = None  # the answer to a page loading ahead's navigation
        self.served = 0
        self.left = False  # whether an example's page was sent to about:blank and not cleared since
        self.foreign: set[str] = set()  # origins other than the page's that a frame showed

    def _forward(self, handler: str, event: Union[Any, Exception]) -> None:
        if self.bridged is not None:
            getattr(self.bridged, handler)(event)

    def _navigated(self, frame: Any) -> None:
        if frame.url != "about:blank" and origin_of(frame.url) != self.pages.origin:
            self.foreign.add(frame.url)

    def leave(self) -> None:
        """Sends the page to `about:blank` by its own navigation (so the blank document keeps its
        origin), not waiting for it: `clear`, when the next example needs the tab, finds it
        there (meanwhile the caller deletes the session and Hypothesis draws the next example)."""
        # Evaluated on the CDP session (a trip straight to Chromium; page.evaluate first finds
        # the document's context through Playwright, several trips).
        self.left = True
        with contextlib.suppress(Exception):  # the evaluation may end with its document
            self.cdp.send("Runtime.evaluate", {"expression": "location.replace('about:blank')"})

    def clear(self) -> None:
        """Leaves nothing of the example before (see `Pages`) once the page is on `about:blank`
        (`leave`); raises when it cannot."""
        origin = self.pages.origin
        # The evaluation finds the blank document once the example's has unloaded, or is made
        # again until it does.
        end = time.monotonic() + self.pages.settle_timeout
        found: Any = None
        while found is None and time.monotonic() < end:
            with contextlib.suppress(Exception):  # a context going away
                answer = self.cdp.send("Runtime.evaluate", {"expression": BLANK_CLEARED, "returnByValue": True})
                found = None if "exceptionDetails" in answer else answer["result"].get("value")
        if found != origin:
            raise RuntimeError(f"the blank page's origin is {found}, not {origin}")
        self.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        self.context.clear_cookies()
        self.left = False

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.context.close()
