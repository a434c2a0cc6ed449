"""A divergence card and the entries' labels read whole (issue 34, item 5), for
Scripts/dashboard-test's browser driver, at 1280x800 and 390x844.

A host trace whose pull spinner ends `succeeded` where the rules time it out (H11 `different`),
with the host's own upper-case UUIDs, is kept as a replay and opened:
- the card shows the rules' output and the host's side by side, a row a field, and marks only
  the field that differs (`outcome`): the request id is the trace's on both sides;
- a short value (up to 12 characters) sits on one line, never broken character by character;
- every entry's label is whole: its kind and text are not clipped (a long type wraps), and what
  is cut (a request id) is whole in the entry's title;
- Teardown and Delete stay on one row; at 1280 px, on the session id's row.
A screenshot of the card at each size goes to .build/dashboard/ (docs/DASHBOARDS.md shows the
one at 1280x800).
"""
import base64, json, os, re, urllib.request

SIZES = [(1280, 800), (390, 844)]
SID = "replay-different"
SHORT = 12

# Measured in the page: every fact the checks below read.
MEASURE = """(() => {
  const card = document.querySelector('#timeline .entry.diverged .dv[data-problem=different]');
  const lines = el => { const r = document.createRange(); r.selectNodeContents(el);
    return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size; };
  const rows = card ? [...card.querySelectorAll('.dvt tbody tr')].map(tr => ({field: tr.dataset.field, differs: tr.classList.contains('differs'),
    rules: tr.querySelector('.dve').textContent, host: tr.querySelector('.dva').textContent})) : null;
  const broken = card ? [...card.querySelectorAll('.dvt td')].filter(td => td.textContent.length <= %d && lines(td) > 1)
    .map(td => td.textContent) : null;
  const clipped = [], untitled = [];
  for (const e of document.querySelectorAll('#timeline .entry')) {
    const box = e.getBoundingClientRect();
    for (const part of e.querySelectorAll(':scope > .kind, :scope > .txt, :scope > .rule')) {
      const r = part.getBoundingClientRect();
      if (part.scrollWidth > part.clientWidth + 1 || r.right > box.right + 0.5) clipped.push(e.dataset.seq + ': ' + part.textContent);
    }
    const txt = e.querySelector(':scope > .txt'), rid = e.querySelector(':scope > .rid');
    if (!e.title.includes(txt.textContent) || (rid && !e.title.includes(rid.textContent))) untitled.push(e.dataset.seq);
  }
  const top = id => Math.round(document.getElementById(id).getBoundingClientRect().top);
  const middle = id => { const r = document.getElementById(id).getBoundingClientRect(); return Math.round(r.top + r.height / 2); };
  return {rows, broken, clipped, untitled, teardown: top('btn-teardown'), del: top('btn-delete'),
          buttonMiddle: middle('btn-teardown'), idMiddle: middle('session-id'),
          watchdog: (n => n && n.textContent)(document.querySelector('#lane-timers .entry[data-kind=watchdog] .txt'))};
})()""" % SHORT


def different_trace(base_url, api):
    """A pull Web never answers, its trace with upper-case host ids and the spinner's end changed."""
    api("POST", "/v1/sessions", {"uid": "u-diff", "id": "diff-golden"})
    api("POST", "/v1/sessions/diff-golden/gestures", {"type": "pull"})
    api("POST", "/v1/sessions/diff-golden/clock", {"advanceMs": 13000})
    with urllib.request.urlopen(base_url + "/v1/sessions/diff-golden/timeline?format=trace", timeout=30) as r:
        text = r.read().decode()
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", lambda m: m.group(0).upper(), text)
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.get("kind") == "pull" and line.get("data", {}).get("outcome") == "timedOut":
            line["data"]["outcome"] = "succeeded"
    return lines


def check_divergence(chrome, api, report, base_url, out_dir, post_trace):
    verdict = post_trace(base_url, f"/v1/host-traces?keep={SID}&label=traces", different_trace(base_url, api))
    different = [d for d in verdict["divergences"] if d["problem"] == "different"]
    report(len(different) == 1 and different[0]["rule"] == "H11"
           and different[0]["expected"]["requestId"] == different[0]["actual"]["requestId"],
           "a spinner that ends succeeded where the rules time it out: one H11 different, its expected in the trace's ids",
           json.dumps(verdict["divergences"])[:300])
    entries = api("GET", f"/v1/sessions/{SID}")["counts"]["timeline"]
    for w, h in SIZES:
        size = f"{w}x{h}"
        chrome.call("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})
        chrome.call("Page.navigate", {"url": "about:blank"})
        chrome.call("Page.navigate", {"url": f"{base_url}/#session={SID}"})
        if not chrome.wait(f"{size}: {SID} opens with its {entries} entries and the different divergence marked",
                           f"document.querySelectorAll('#timeline .entry').length === {entries} && "
                           "document.querySelector('#timeline .entry.diverged .dv[data-problem=different] .dvt') !== null && "
                           "document.fonts.status === 'loaded'",
                           show="document.querySelectorAll('#timeline .entry').length"):
            continue
        m = chrome.js(MEASURE)
        rows = {row["field"]: row for row in m["rows"] or []}
        report(set(rows) >= {"type", "requestId", "state", "outcome"}
               and [f for f, row in rows.items() if row["differs"]] == ["outcome"]
               and (rows["outcome"]["rules"], rows["outcome"]["host"]) == ("timedOut", "succeeded")
               and rows["requestId"]["rules"] == rows["requestId"]["host"] == different[0]["actual"]["requestId"],
               f"{size}: rules and host side by side, a row a field, only outcome marked as differing", json.dumps(m["rows"])[:300])
        report(m["broken"] == [], f"{size}: every value of up to {SHORT} characters reads on one line", json.dumps(m["broken"]))
        report(m["clipped"] == [], f"{size}: every entry's kind and label are whole (a long one wraps)", json.dumps(m["clipped"])[:300])
        report(m["untitled"] == [], f"{size}: each entry's title holds its whole label and request id", json.dumps(m["untitled"]))
        report(m["watchdog"] == "softRefreshDeadline fired", f"{size}: the timer lane reads 'softRefreshDeadline fired' whole",
               json.dumps(m["watchdog"]))
        same_row = m["teardown"] == m["del"] and (w < 600 or abs(m["buttonMiddle"] - m["idMiddle"]) <= 4)
        report(same_row, f"{size}: Teardown and Delete on one row" + ("" if w < 600 else ", the session id's"),
               json.dumps({k: m[k] for k in ("teardown", "del", "buttonMiddle", "idMiddle")}))
        chrome.js("document.querySelector('#timeline .entry.diverged .dv[data-problem=different]').closest('.entry')"
                  ".scrollIntoView({block: 'center'})")
        path = os.path.join(out_dir, f"dashboard-divergence-{size}.png")
        data = chrome.call("Page.captureScreenshot", {"format": "png"}, timeout=30)["data"]
        with open(path, "wb") as f: f.write(base64.b64decode(data))
        report(os.path.getsize(path) > 10000, f"{size}: screenshot of the divergence card", path)
