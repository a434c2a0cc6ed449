"""The dashboard at everyday window sizes: a session that fills every panel (three pending
watchdogs, two pending soft requests, a violation, 50+ timeline entries) opened at each size,
a screenshot saved (.build/dashboard/dashboard-WxH.png) and js/layout.js run in the page.
Thresholds:
- no panel clips its content and nothing is wider than the window (layout.js says what counts);
- at the desktop sizes the timeline, the page's main content, has room for MIN_ROWS rows inside
  the window as loaded: one pull is 6 entries (input, spinner, emit, its Web answer, header), so
  8 rows show an input with all its effects;
- on a phone (390 px) the main panel is at least MIN_MAIN_SHARE of the width (the rest is its
  margin) and the timeline's own scroll box has room for MIN_ROWS rows.
At 1024x700, what is cut to fit can be read whole: the pending requests, a truncated entry."""
from __future__ import annotations

import json
from typing import Any, Callable

import pytest
from todaysim.client import Client
from todaysim.models import SessionView

from support.browser import Tab, script
from support.dashboard import Dashboard

SIZES = [(1440, 900), (1280, 720), (1024, 700), (390, 844)]
MIN_ROWS = 8
MIN_MAIN_SHARE = 0.9
SID = "busy"


def busy_session(api: Client) -> SessionView:
    """Creates SID and brings it to a state with every panel full; returns its view."""
    def result(rid: str) -> dict[str, Any]:
        return {"type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": rid, "mode": "soft", "status": "succeeded"}

    def started(rid: str) -> dict[str, Any]:
        return {"type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": rid, "presentation": "header"}
    api.create_session("u9", id=SID, label="a-label-long-enough-to-be-cut-in-the-list")
    for _ in range(6):  # answered socket-event refreshes: a long timeline
        rid = api.lifecycle(SID, "socketEvent")["session"]["refresh"]["pending"][0]["requestId"]
        api.web_event(SID, result(rid))
        api.clock(SID, advanceMs=700)
    api.gesture(SID, "pull", requestId="pull-with-a-rather-long-request-id-0001")
    api.web_event(SID, started("web-minted-header-request-0002"))
    api.lifecycle(SID, "tabActivated", requestId="tab-activated-request-0003")
    api.web_event(SID, started("tab-activated-request-0003"))  # M3: a violation with a long detail
    view: SessionView = api.read_session(SID)
    return view


def no_clipping(problems: list[str]) -> str:
    more = f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""
    return "; ".join(problems[:4]) + more


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_busy_session_fits_the_window(size: tuple[int, int], dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    view = busy_session(dashboard.api)
    pending = [p["requestId"] for p in view["refresh"]["pending"]]
    n, watchdogs = view["counts"]["timeline"], len(view["watchdogs"])
    assert len(pending) == 2 and watchdogs == 3 and view["counts"]["violations"] == 1 and n >= 50, \
        f"session {SID} fills the panels: 2 pending soft requests, 3 watchdogs, a violation, {n} entries: " \
        + json.dumps({"pending": pending, "watchdogs": view["watchdogs"], "counts": view["counts"]})
    (w, h), phone = size, size[0] < 600
    name, tab = f"{w}x{h}", new_tab(size)
    dashboard.open(tab, SID)
    tab.wait(f"{name}: {SID} loaded ({n} entries, {watchdogs} watchdogs, stream live)",
             f"document.querySelectorAll('#timeline .entry').length === {n} && "
             f"document.querySelectorAll('#watchdogs [data-kind]').length === {watchdogs} && "
             "document.querySelector('#live').textContent === 'live' && document.fonts.status === 'loaded'",
             show="document.querySelectorAll('#timeline .entry').length")
    tab.shot(f"dashboard-{name}.png", full_page=phone)
    measured = tab.js(script("layout.js"))
    assert not measured["problems"], f"{name}: no panel clips its content, nothing is wider than the window: " \
        + no_clipping(measured["problems"])
    if phone:
        assert measured["mainShare"] >= MIN_MAIN_SHARE, \
            f"{name}: the main panel is {measured['mainShare']:.0%} of the width (at least {MIN_MAIN_SHARE:.0%})"
        assert measured["rowsInBox"] >= MIN_ROWS, f"{name}: the timeline box has room for {measured['rowsInBox']} rows (at least {MIN_ROWS})"
    else:
        assert measured["rowsInView"] >= MIN_ROWS, \
            f"{name}: the timeline has room for {measured['rowsInView']} rows in the window (at least {MIN_ROWS})"
    if size == (1024, 700):
        cut_to_fit_reads_whole(tab, name, pending)


def cut_to_fit_reads_whole(tab: Tab, name: str, pending: list[str]) -> None:
    """What is cut to fit can be read whole: the pending requests, a truncated entry."""
    rid = tab.js("(r => r && [r.dataset.requests, r.textContent])"
                 "(document.querySelector('#watchdogs [data-kind=softRefreshDeadline] .rid'))") or ["", ""]
    listed = tab.js("document.querySelector('#refresh-x').textContent")
    assert rid == ["", "no request id · shared"] and all(p in listed for p in pending), \
        f"{name}: the shared soft-refresh deadline has no request id; the soft requests card lists both whole: {[rid, listed]}"
    # A label wraps; only a request id is cut to fit (issue 34).
    seq = tab.js("(e => e && e.dataset.seq)([...document.querySelectorAll('#timeline .entry')]"
                 ".find(e => (r => r && r.scrollWidth > r.clientWidth + 1)(e.querySelector(':scope > .rid'))))")
    assert seq is not None, f"{name}: some entry's request id is cut to fit (the premise of the next checks)"
    e = f"document.querySelector('#timeline .entry[data-seq=\"{seq}\"]')"
    assert tab.js(f"{e}.title.includes({e}.querySelector('.txt').textContent) && {e}.title.includes({e}.querySelector('.rid').textContent)"), \
        f"{name}: an entry whose request id is cut (#{seq}) has its whole text and id in its title, shown on hover"
    tab.js(f"{e}.click()")
    tab.wait(f"{name}: clicking entry #{seq} opens it whole, with its JSON",
             f"{e}.classList.contains('open') && {e}.scrollWidth <= {e}.clientWidth + 1 && {e}.scrollHeight <= {e}.clientHeight + 1 && "
             f"JSON.parse({e}.querySelector('pre').textContent).seq === {seq}",
             show=f"[{e}.className, {e}.scrollWidth, {e}.clientWidth]")
    tab.js(f"{e}.scrollIntoView({{block: 'center'}})")
    tab.shot(f"dashboard-{name}-entry-open.png")
    problems = tab.js(script("layout.js"))["problems"]
    assert not problems, f"{name}: with the entry open still nothing clips: {no_clipping(problems)}"
    tab.js(f"{e}.click()")
    tab.wait(f"{name}: a second click closes it", f"!{e}.classList.contains('open') && !{e}.querySelector('pre')")
