"""The dashboard says what it means (issue 23, item 4), for Scripts/dashboard-test's browser driver,
at 1280x800 and 390x844:

- card values are whole: a long request id, "load #2 · recovery", the card titles ("Refresh
  requests") are shown in full, wrapped, not cut with an ellipsis;
- every entry's rule id links to its anchor on /rules (docs/RULES.md as this build serves it),
  and every anchor linked exists there;
- the shared softRefreshDeadline watchdog shows no request id, as the API has it; a pull
  watchdog shows its own id whole;
- a session closed while open says "ended", and its badge never said "reconnecting" on the way;
  an already-closed session opens as "ended" too;
- a clock at an absurd value reads with thousands separators, its title as days and h:mm:ss.mmm.
"""
import json

SIZES = [(1280, 800), (390, 844)]
LONG_ID = "pull-request-id-long-enough-to-have-been-cut-at-eight-characters-0001"
FAR_MS = 8_999_999_999_980_000  # under the clock's latest move (its end less the 12 s watchdog)

# Records every state the stream badge takes from now on, in the page.
WATCH_LIVE = """(() => { window.__liveSeen = [document.querySelector('#live').dataset.state];
  new MutationObserver(() => window.__liveSeen.push(document.querySelector('#live').dataset.state))
    .observe(document.querySelector('#live'), {attributes: true, attributeFilter: ['data-state']}); })()"""

# Elements of the cards whose text is cut: one line, an ellipsis or hidden overflow, wider than
# shown. An id (.idv) may be, as it is whole in its title and its copy button (checked apart).
CUT = """[...document.querySelectorAll('.card.head .meta, .states .t, .states .x, .states .x > div, .states .badge, #watchdogs .k, #watchdogs .rid, #watchdogs .due')]
  .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1 && !(e.matches('.x, .rid, .pend') && e.querySelector('.idv')))
  .map(e => (e.id || e.className) + ': ' + e.textContent)"""


def check_reading(chrome, api, report, base_url):
    q = lambda sel: f"document.querySelector({json.dumps(sel)})"
    js, wait = chrome.js, chrome.wait
    for w, h in SIZES:
        size, sid = f"{w}x{h}", f"reading-{w}"
        chrome.call("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})
        api("POST", "/v1/sessions", {"uid": "u-reading", "id": sid})
        api("POST", f"/v1/sessions/{sid}/gestures", {"type": "pull", "requestId": LONG_ID})
        chrome.call("Page.navigate", {"url": "about:blank"})
        chrome.call("Page.navigate", {"url": f"{base_url}/#session={sid}"})
        view = api("GET", f"/v1/sessions/{sid}")
        if not wait(f"{size}: {sid} open with its pull pending ({view['counts']['timeline']} entries, stream live)",
                    f"document.querySelectorAll('#timeline .entry').length === {view['counts']['timeline']} && "
                    f"{q('#live')}.dataset.state === 'live' && document.querySelectorAll('#watchdogs [data-kind]').length === 2",
                    show="document.querySelectorAll('#timeline .entry').length"):
            continue
        js(WATCH_LIVE)
        soft = js(f"(r => r && [r.dataset.requests, r.textContent])({q('#watchdogs [data-kind=softRefreshDeadline] .rid')})")
        report(soft == ["", "no request id · shared"],
               f"{size}: the shared softRefreshDeadline watchdog shows no request id, as the API has it", json.dumps(soft))
        # A long id: on one line where it fits, whole in its title and its copy button.
        for where, sel in (("the pull watchdog", "#watchdogs [data-kind=pullWatchdog] .rid"), ("the pull card", "#pull-rid"),
                           ("the soft requests card", "#refresh-x .pend")):
            chip = js(f"(r => r && [r.textContent, r.querySelector('.idv')?.title, r.querySelector('.idv')?.dataset.id, "
                      f"r.querySelector('button.copy')?.dataset.copy])({q(sel)})")
            report(chip is not None and chip[0].endswith(LONG_ID) and chip[1:] == [LONG_ID] * 3,
                   f"{size}: {where} holds the request id whole, in its title and its copy button", json.dumps(chip))
        if w == SIZES[0][0]:
            chrome.call("Browser.grantPermissions", {"origin": base_url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
                        browser=True)
            js(f"{q('#pull-rid button.copy')}.click()")
            wait(f"{size}: the copy button copies the whole id", f"{q('#pull-rid button.copy')}.dataset.copied === 'true'",
                 show=f"{q('#pull-rid button.copy')}.dataset.copied")
            copied = js("navigator.clipboard.readText().catch(e => 'unreadable: ' + e)")
            report(copied == LONG_ID, f"{size}: the clipboard holds {LONG_ID}", copied)

        # The request times out and the document reloads (H6, H9): "load #2 · recovery" on its card.
        api("POST", f"/v1/sessions/{sid}/clock", {"advanceMs": 5000})
        view = api("GET", f"/v1/sessions/{sid}")
        wait(f"{size}: the recovery reload shows whole on the document card",
             f"{q('#document-x')}.textContent === 'load #2 · recovery' && "
             f"document.querySelectorAll('#timeline .entry').length === {view['counts']['timeline']}",
             show=f"{q('#document-x')}.textContent")
        cut = js(CUT)
        report(cut == [], f"{size}: no card value is cut (titles, values, ids, watchdogs)", "; ".join(cut or [])[:300])
        title = js(f"{q('.states .st:last-child .t')}.textContent")
        report(title == "Soft requests", f"{size}: the soft requests card's title reads whole", title)

        # Rule ids link to their anchors on /rules.
        links = js("[...document.querySelectorAll('#timeline .entry[data-rule]')].filter(e => e.dataset.rule)"
                   ".map(e => [e.dataset.rule, (e.querySelector('a.rule') || {}).getAttribute?.('href') || null])")
        report(bool(links) and all(href == "/rules#" + rule.lower() for rule, href in links),
               f"{size}: each of the {len(links or [])} entries with a rule links it to /rules#<id>", json.dumps(links)[:300])
        rules = sorted({rule for rule, _ in links or []})
        report(all(r in rules for r in ("H6", "H9", "M7", "H10")), f"{size}: the links include H6, H9, H10 and M7", json.dumps(rules))

        # Torn down while open: the badge ends, and never said "reconnecting".
        api("POST", f"/v1/sessions/{sid}/lifecycle", {"type": "teardown"})
        wait(f"{size}: torn down while open, the stream badge says ended", f"{q('#live')}.dataset.state === 'ended' && "
             f"{q('#session-status')}.dataset.state === 'closed'", show=f"{q('#live')}.dataset.state")
        seen = js("window.__liveSeen")
        report("reconnecting" not in (seen or []), f"{size}: the badge never said reconnecting on the way", json.dumps(seen))

        # Opened once closed: "ended" from the start.
        chrome.call("Page.navigate", {"url": "about:blank"})
        chrome.call("Page.addScriptToEvaluateOnNewDocument", {"source": "window.__liveSeen = []; new MutationObserver(() => { const b = "
                    "document.querySelector('#live'); if (b) window.__liveSeen.push(b.dataset.state); }).observe(document, "
                    "{subtree: true, attributes: true, attributeFilter: ['data-state']});"})
        chrome.call("Page.navigate", {"url": f"{base_url}/#session={sid}"})
        wait(f"{size}: a closed session opens with its stream ended", f"{q('#live')}.dataset.state === 'ended' && "
             "document.documentElement.dataset.settled === 'true'", show=f"{q('#live')}.dataset.state")
        seen = js("window.__liveSeen")
        report("reconnecting" not in (seen or []), f"{size}: opening it, the badge never said reconnecting", json.dumps(seen))

    # A clock far along: readable, with separators, and nothing on the page clipped by it.
    sid = "reading-far"
    api("POST", "/v1/sessions", {"uid": "u-reading", "id": sid})
    api("POST", f"/v1/sessions/{sid}/clock", {"advanceMs": FAR_MS})
    api("POST", f"/v1/sessions/{sid}/gestures", {"type": "pull", "requestId": "far-pull"})
    chrome.call("Page.navigate", {"url": "about:blank"})
    chrome.call("Page.navigate", {"url": f"{base_url}/#session={sid}"})
    wait("390x844: a clock at 8,999,999,999,980,000 ms shows with thousands separators",
         f"{q('#clock-now')}.textContent === '8,999,999,999,980,000' && {q('#clock-now')}.dataset.ms === '{FAR_MS}'",
         show=f"{q('#clock-now')}.textContent")
    title = js(f"{q('#clock-now')}.parentElement.title")
    report(title == "session clock: 8,999,999,999,980,000 ms = 104,166,666 d 15:59:40.000",
           "390x844: its title says it in days and h:mm:ss.mmm", title)
    due = js(f"{q('#watchdogs [data-kind=pullWatchdog] .due')}.textContent")
    report(due == "8,999,999,999,992,000 ms", "390x844: a watchdog due then reads with separators too", due)
    cut = js(CUT)
    report(cut == [], "390x844: nothing in the cards is cut at that clock", "; ".join(cut or [])[:300])

    # The rules page has every anchor the dashboard links.
    chrome.call("Page.navigate", {"url": f"{base_url}/rules#m7"})
    wait("/rules#m7 renders docs/RULES.md with M7's heading as its anchor",
         "document.documentElement.dataset.settled === 'true' && document.getElementById('m7')?.textContent.startsWith('M7')",
         show="document.getElementById('m7')?.textContent")
    missing = js("['c1','h6','h9','h10','h13','h14','m1','m7','m9'].filter(id => !document.getElementById(id))")
    report(missing == [], "/rules has the anchors of the rules the dashboard links (H6 … M9)", json.dumps(missing))
