"""The explorer's pages (`Pages`): each example's session and page, one browser context and page
reused from example to example and cleared between them."""
from __future__ import annotations

import contextlib
from typing import Any, Optional

from ..client import Client
from ..page import EPOCH_MS, BridgedPage, origin_of

#: Examples one browser context and page serve before both are made anew: the default budget
#: (25 while every clock move added an init script to the context, which every later document ran).
RECYCLE_AFTER = 100


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
