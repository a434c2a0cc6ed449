"""The dashboard says what it means (issue 23, item 4), at 1280x800 and 390x844:

- card values are whole: a long request id, "load #2 · recovery", the card titles ("Soft
  requests") are shown in full, wrapped, not cut with an ellipsis;
- every entry's rule id links to its anchor on /rules (docs/RULES.md as this build serves it),
  and every anchor linked exists there;
- the shared softRefreshDeadline watchdog shows no request id, as the API has it; a pull
  watchdog shows its own id whole;
- a session closed while open says "ended", and its badge never said "reconnecting" on the way;
  an already-closed session opens as "ended" too;
- a clock at an absurd value reads with thousands separators, its title as days and h:mm:ss.mmm."""
from __future__ import annotations

import json
from typing import Callable

import pytest

from support.browser import Tab, q
from support.dashboard import Dashboard

SIZES = [(1280, 800), (390, 844)]
LONG_ID = "pull-request-id-long-enough-to-have-been-cut-at-eight-characters-0001"
FAR_MS = 8_999_999_999_980_000  # under the clock's latest move (its end less the 12 s watchdog)

# Records every state the stream badge takes from now on, in the page.
WATCH_LIVE = """(() => { window.__liveSeen = [document.querySelector('#live').dataset.state];
  new MutationObserver(() => window.__liveSeen.push(document.querySelector('#live').dataset.state))
    .observe(document.querySelector('#live'), {attributes: true, attributeFilter: ['data-state']}); })()"""
# The same from a page's first script on (for a page about to load).
WATCH_LIVE_FROM_THE_START = ("window.__liveSeen = []; new MutationObserver(() => { const b = document.querySelector('#live'); "
                             "if (b) window.__liveSeen.push(b.dataset.state); }).observe(document, "
                             "{subtree: true, attributes: true, attributeFilter: ['data-state']});")

# Elements of the cards whose text is cut: one line, an ellipsis or hidden overflow, wider than
# shown. An id (.idv) may be, as it is whole in its title and its copy button (checked apart).
CUT = """[...document.querySelectorAll('.card.head .meta, .states .t, .states .x, .states .x > div, .states .badge, #watchdogs .k, #watchdogs .rid, #watchdogs .due')]
  .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1 && !(e.matches('.x, .rid, .pend') && e.querySelector('.idv')))
  .map(e => (e.id || e.className) + ': ' + e.textContent)"""


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_cards_read_whole_and_link_their_rules(size: tuple[int, int], dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    api, tab = dashboard.api, new_tab(size)
    name, sid = f"{size[0]}x{size[1]}", f"reading-{size[0]}"
    api.create_session("u-reading", id=sid)
    api.gesture(sid, "pull", requestId=LONG_ID)
    dashboard.open(tab, sid)
    view = api.read_session(sid)
    tab.wait(f"{name}: {sid} open with its pull pending ({view['counts']['timeline']} entries, stream live)",
             f"document.querySelectorAll('#timeline .entry').length === {view['counts']['timeline']} && "
             f"{q('#live')}.dataset.state === 'live' && document.querySelectorAll('#watchdogs [data-kind]').length === 2",
             show="document.querySelectorAll('#timeline .entry').length")
    tab.js(WATCH_LIVE)
    soft = tab.js(f"(r => r && [r.dataset.requests, r.textContent])({q('#watchdogs [data-kind=softRefreshDeadline] .rid')})")
    assert soft == ["", "no request id · shared"], \
        f"{name}: the shared softRefreshDeadline watchdog shows no request id, as the API has it: {soft}"
    # A long id: on one line where it fits, whole in its title and its copy button.
    for where, selector in (("the pull watchdog", "#watchdogs [data-kind=pullWatchdog] .rid"), ("the pull card", "#pull-rid"),
                            ("the soft requests card", "#refresh-x .pend")):
        chip = tab.js(f"(r => r && [r.textContent, r.querySelector('.idv')?.title, r.querySelector('.idv')?.dataset.id, "
                      f"r.querySelector('button.copy')?.dataset.copy])({q(selector)})")
        assert chip is not None and chip[0].endswith(LONG_ID) and chip[1:] == [LONG_ID] * 3, \
            f"{name}: {where} holds the request id whole, in its title and its copy button: {chip}"
    if size == SIZES[0]:
        tab.page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=dashboard.base)
        tab.click("#pull-rid button.copy")
        tab.wait(f"{name}: the copy button copies the whole id", f"{q('#pull-rid button.copy')}.dataset.copied === 'true'",
                 show=f"{q('#pull-rid button.copy')}.dataset.copied")
        copied = tab.js("navigator.clipboard.readText().catch(e => 'unreadable: ' + e)")
        assert copied == LONG_ID, f"{name}: the clipboard holds {LONG_ID}: {copied}"

    # The request times out and the document reloads (H6, H9): "load #2 · recovery" on its card.
    api.clock(sid, advanceMs=5000)
    view = api.read_session(sid)
    tab.wait(f"{name}: the recovery reload shows whole on the document card",
             f"{q('#document-x')}.textContent === 'load #2 · recovery' && "
             f"document.querySelectorAll('#timeline .entry').length === {view['counts']['timeline']}", show=f"{q('#document-x')}.textContent")
    cut = tab.js(CUT)
    assert cut == [], f"{name}: no card value is cut (titles, values, ids, watchdogs): {'; '.join(cut)[:300]}"
    title = tab.js(f"{q('.states .st:last-child .t')}.textContent")
    assert title == "Soft requests", f"{name}: the soft requests card's title reads whole: {title!r}"

    # Rule ids link to their anchors on /rules.
    links = tab.js("[...document.querySelectorAll('#timeline .entry[data-rule]')].filter(e => e.dataset.rule)"
                   ".map(e => [e.dataset.rule, (e.querySelector('a.rule') || {}).getAttribute?.('href') || null])")
    assert links and all(href == "/rules#" + rule.lower() for rule, href in links), \
        f"{name}: each of the {len(links or [])} entries with a rule links it to /rules#<id>: {json.dumps(links)[:300]}"
    rules = sorted({rule for rule, _ in links})
    assert all(r in rules for r in ("H6", "H9", "M7", "H10")), f"{name}: the links include H6, H9, H10 and M7: {rules}"

    # Torn down while open: the badge ends, and never said "reconnecting".
    api.lifecycle(sid, "teardown")
    tab.wait(f"{name}: torn down while open, the stream badge says ended",
             f"{q('#live')}.dataset.state === 'ended' && {q('#session-status')}.dataset.state === 'closed'", show=f"{q('#live')}.dataset.state")
    seen = tab.js("window.__liveSeen")
    assert "reconnecting" not in (seen or []), f"{name}: the badge never said reconnecting on the way: {seen}"

    # Opened once closed: "ended" from the start.
    tab.goto("about:blank")
    tab.page.add_init_script(WATCH_LIVE_FROM_THE_START)
    dashboard.open(tab, sid)
    tab.wait(f"{name}: a closed session opens with its stream ended",
             f"{q('#live')}.dataset.state === 'ended' && document.documentElement.dataset.settled === 'true'", show=f"{q('#live')}.dataset.state")
    seen = tab.js("window.__liveSeen")
    assert "reconnecting" not in (seen or []), f"{name}: opening it, the badge never said reconnecting: {seen}"


def test_a_clock_far_along_reads_with_separators(dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    """At 390x844: readable, with separators, and nothing on the page clipped by it."""
    api, tab, sid = dashboard.api, new_tab((390, 844)), "reading-far"
    api.create_session("u-reading", id=sid)
    api.clock(sid, advanceMs=FAR_MS)
    api.gesture(sid, "pull", requestId="far-pull")
    dashboard.open(tab, sid)
    tab.wait("390x844: a clock at 8,999,999,999,980,000 ms shows with thousands separators",
             f"{q('#clock-now')}.textContent === '8,999,999,999,980,000' && {q('#clock-now')}.dataset.ms === '{FAR_MS}'",
             show=f"{q('#clock-now')}.textContent")
    title = tab.js(f"{q('#clock-now')}.parentElement.title")
    assert title == "session clock: 8,999,999,999,980,000 ms = 104,166,666 d 15:59:40.000", \
        f"390x844: its title says it in days and h:mm:ss.mmm: {title!r}"
    due = tab.js(f"{q('#watchdogs [data-kind=pullWatchdog] .due')}.textContent")
    assert due == "8,999,999,999,992,000 ms", f"390x844: a watchdog due then reads with separators too: {due!r}"
    cut = tab.js(CUT)
    assert cut == [], f"390x844: nothing in the cards is cut at that clock: {'; '.join(cut)[:300]}"


def test_the_rules_page_has_every_anchor_the_dashboard_links(dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    tab = new_tab()
    tab.goto(f"{dashboard.base}/rules#m7")
    tab.wait("/rules#m7 renders docs/RULES.md with M7's heading as its anchor",
             "document.documentElement.dataset.settled === 'true' && document.getElementById('m7')?.textContent.startsWith('M7')",
             show="document.getElementById('m7')?.textContent")
    missing = tab.js("['c1','h6','h9','h10','h13','h14','m1','m7','m9'].filter(id => !document.getElementById(id))")
    assert missing == [], f"/rules has the anchors of the rules the dashboard links (H6 … M9): {missing}"
