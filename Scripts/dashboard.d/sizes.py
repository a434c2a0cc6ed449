"""The dashboard at everyday window sizes, for Scripts/dashboard-test's browser driver.

Plays a session that fills every panel (three pending watchdogs, two pending soft requests, a
violation, 50+ timeline entries), opens it at each size, saves a screenshot and runs layout.js
in the page. Thresholds:
- no panel clips its content and nothing is wider than the window (layout.js says what counts);
- at the desktop sizes the timeline, the page's main content, has room for MIN_ROWS rows inside
  the window as loaded: one pull is 6 entries (input, spinner, emit, its Web answer, header), so
  8 rows show an input with all its effects;
- on a phone (390 px) the main panel is at least MIN_MAIN_SHARE of the width (the rest is its
  margin) and the timeline's own scroll box has room for MIN_ROWS rows.
"""
import base64, json, os

SIZES = [(1440, 900), (1280, 720), (1024, 700), (390, 844)]
MIN_ROWS = 8
MIN_MAIN_SHARE = 0.9
LAYOUT = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "layout.js")).read()
SID = "busy"


def busy_session(api):
    """Creates SID and brings it to a state with every panel full; returns its view."""
    base = f"/v1/sessions/{SID}"
    def result(rid):
        return {"type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": rid, "mode": "soft", "status": "succeeded"}
    def started(rid):
        return {"type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": rid, "presentation": "header"}
    api("POST", "/v1/sessions", {"uid": "u9", "id": SID, "label": "a-label-long-enough-to-be-cut-in-the-list"})
    for _ in range(6):  # answered socket-event refreshes: a long timeline
        rid = api("POST", base + "/lifecycle", {"type": "socketEvent"})["session"]["refresh"]["pending"][0]["requestId"]
        api("POST", base + "/web-events", result(rid))
        api("POST", base + "/clock", {"advanceMs": 700})
    api("POST", base + "/gestures", {"type": "pull", "requestId": "pull-with-a-rather-long-request-id-0001"})
    api("POST", base + "/web-events", started("web-minted-header-request-0002"))
    api("POST", base + "/lifecycle", {"type": "tabActivated", "requestId": "tab-activated-request-0003"})
    api("POST", base + "/web-events", started("tab-activated-request-0003"))  # M3: a violation with a long detail
    return api("GET", base)


def check_sizes(chrome, api, report, base_url, out_dir):
    view = busy_session(api)
    pending = [p["requestId"] for p in view["refresh"]["pending"]]
    n = view["counts"]["timeline"]
    report(len(pending) == 2 and len(view["watchdogs"]) == 3 and view["counts"]["violations"] == 1 and n >= 50,
           f"session {SID} fills the panels: 2 pending soft requests, 3 watchdogs, a violation, {n} entries",
           json.dumps({"pending": pending, "watchdogs": view["watchdogs"], "counts": view["counts"]}))
    for w, h in SIZES:
        phone, size = w < 600, f"{w}x{h}"
        chrome.call("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": phone})
        chrome.call("Page.navigate", {"url": "about:blank"})
        chrome.call("Page.navigate", {"url": f"{base_url}/#session={SID}"})
        if not chrome.wait(f"{size}: {SID} loaded ({n} entries, {len(view['watchdogs'])} watchdogs, stream live)",
                           f"document.querySelectorAll('#timeline .entry').length === {n} && "
                           f"document.querySelectorAll('#watchdogs [data-kind]').length === {len(view['watchdogs'])} && "
                           "document.querySelector('#live').textContent === 'live' && document.fonts.status === 'loaded'",
                           show="document.querySelectorAll('#timeline .entry').length"):
            continue
        shot(chrome, report, f"{size}: screenshot", os.path.join(out_dir, f"dashboard-{size}.png"), full_page=phone)
        m = chrome.js(LAYOUT)
        layout_verdict(report, f"{size}: no panel clips its content, nothing is wider than the window", m["problems"])
        if phone:
            report(m["mainShare"] >= MIN_MAIN_SHARE, f"{size}: the main panel is {m['mainShare']:.0%} of the width (at least {MIN_MAIN_SHARE:.0%})")
            report(m["rowsInBox"] >= MIN_ROWS, f"{size}: the timeline box has room for {m['rowsInBox']} rows (at least {MIN_ROWS})")
        else:
            report(m["rowsInView"] >= MIN_ROWS, f"{size}: the timeline has room for {m['rowsInView']} rows in the window (at least {MIN_ROWS})")
        if (w, h) == (1024, 700):
            check_reading(chrome, report, size, pending, out_dir)


def check_reading(chrome, report, size, pending, out_dir):
    """What is cut to fit can be read whole: the pending requests, a truncated entry."""
    rid = chrome.js("(r => r && [r.dataset.requests, r.textContent])"
                    "(document.querySelector('#watchdogs [data-kind=softRefreshDeadline] .rid'))") or ["", ""]
    listed = chrome.js("document.querySelector('#refresh-x').textContent")
    report(rid == ["", "no request id · shared"] and all(p in listed for p in pending),
           f"{size}: the shared soft-refresh deadline has no request id; the soft requests card lists both whole",
           json.dumps([rid, listed]))
    # A label wraps; only a request id is cut to fit (issue 34).
    seq = chrome.js("(e => e && e.dataset.seq)([...document.querySelectorAll('#timeline .entry')]"
                    ".find(e => (r => r && r.scrollWidth > r.clientWidth + 1)(e.querySelector(':scope > .rid'))))")
    if seq is None:
        report(False, f"{size}: some entry's request id is cut to fit (the premise of the next checks)"); return
    e = f"document.querySelector('#timeline .entry[data-seq=\"{seq}\"]')"
    report(chrome.js(f"{e}.title.includes({e}.querySelector('.txt').textContent) && {e}.title.includes({e}.querySelector('.rid').textContent)"),
           f"{size}: an entry whose request id is cut (#{seq}) has its whole text and id in its title, shown on hover")
    chrome.js(f"{e}.click()")
    chrome.wait(f"{size}: clicking entry #{seq} opens it whole, with its JSON",
                f"{e}.classList.contains('open') && {e}.scrollWidth <= {e}.clientWidth + 1 && {e}.scrollHeight <= {e}.clientHeight + 1 && "
                f"JSON.parse({e}.querySelector('pre').textContent).seq === {seq}",
                show=f"[{e}.className, {e}.scrollWidth, {e}.clientWidth]")
    chrome.js(f"{e}.scrollIntoView({{block: 'center'}})")
    shot(chrome, report, f"{size}: screenshot with entry #{seq} open", os.path.join(out_dir, f"dashboard-{size}-entry-open.png"))
    layout_verdict(report, f"{size}: with the entry open still nothing clips", chrome.js(LAYOUT)["problems"])
    chrome.js(f"{e}.click()")
    chrome.wait(f"{size}: a second click closes it", f"!{e}.classList.contains('open') && !{e}.querySelector('pre')")


def layout_verdict(report, name, problems):
    more = f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""
    report(not problems, name, "; ".join(problems[:4]) + more)


def shot(chrome, report, name, path, full_page=False):
    data = chrome.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": full_page}, timeout=30)["data"]
    with open(path, "wb") as f: f.write(base64.b64decode(data))
    report(os.path.getsize(path) > 10000, name, path)
