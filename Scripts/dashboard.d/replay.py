"""A kept host-trace replay on the dashboard (issue 21, item 7), for Scripts/dashboard-test's driver.

A session is played (a pull Web never answers: the deadline reloads once, H6 and H9), its golden
trace is read back, and a broken host's trace is made from it: its spinner never followed the
reload nor ended (every `pull` output after 0 ms dropped: H11 missing), and it showed a header
`updated` no request asked for (H13 unexpected). Posted with `?keep=`, the replay is opened in the
page: the verdict badge counts the divergences, each `missing` one is marked on the replay's entry
it expected (expected and actual side by side) and the `unexpected` one on the native lane at its
time.
"""
import json, urllib.request


def post_trace(base_url, path, lines):
    body = ("\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n").encode()
    request = urllib.request.Request(base_url + path, method="POST", data=body, headers={"Content-Type": "application/x-ndjson"})
    with urllib.request.urlopen(request, timeout=120) as r: return json.load(r)


def broken_trace(base_url, api):
    api("POST", "/v1/sessions", {"uid": "u9", "id": "r0"})
    api("POST", "/v1/sessions/r0/gestures", {"type": "pull"})
    api("POST", "/v1/sessions/r0/clock", {"advanceMs": 13000})
    with urllib.request.urlopen(base_url + "/v1/sessions/r0/timeline?format=trace", timeout=30) as r:
        golden = [json.loads(line) for line in r.read().decode().splitlines() if line.strip()]
    broken = [line for line in golden if line.get("kind") != "pull" or line.get("atMs") == 0]
    stray = {"atMs": 2000, "kind": "header", "type": "updated", "requestId": None, "data": {"from": "hidden", "to": "updated"}}
    at = next(i for i, line in enumerate(broken) if i > 0 and line.get("atMs", 0) > 2000)
    return broken[:at] + [stray] + broken[at:]


def check_replay(chrome, api, report, base_url):
    q = lambda sel: f"document.querySelector({json.dumps(sel)})"
    count = lambda sel: f"document.querySelectorAll({json.dumps(sel)}).length"
    js, wait = chrome.js, chrome.wait
    verdict = post_trace(base_url, "/v1/host-traces?keep=replay-1&label=traces", broken_trace(base_url, api))
    listed = verdict["divergences"]
    missing = [d for d in listed if d["problem"] == "missing"]
    stray = [d for d in listed if d["problem"] == "unexpected"]
    report(verdict["session"] == "replay-1" and not verdict["conforms"] and len(missing) >= 1 and len(stray) == 1
           and all(d["rule"] == "H11" and "replaySeq" in d for d in missing) and stray[0]["rule"] == "H13",
           f"the broken host's trace is kept as replay-1: {len(missing)} missing (H11, each with its replaySeq), 1 unexpected (H13)",
           json.dumps([(d["problem"], d["rule"], d.get("replaySeq")) for d in listed]))
    view = api("GET", "/v1/sessions/replay-1")
    js("location.hash = 'session=replay-1'")
    wait(f"replay-1 opens with all {view['counts']['timeline']} entries, its verdict the last",
         f"{q('#session-id')}.textContent === 'replay-1' && {count('#timeline .entry')} === {view['counts']['timeline']} && "
         f"{q('#lane-native .entry[data-kind=verdict][data-type=diverges]')} !== null",
         show=count('#timeline .entry'))
    wait(f"the verdict badge counts {verdict['divergenceCount']} divergences",
         f"!{q('#trace-verdict')}.hidden && {q('#trace-verdict')}.dataset.count === '{verdict['divergenceCount']}'",
         show=f"{q('#trace-verdict')}.textContent")
    for d in missing:
        node = q(f'#timeline .entry[data-seq="{d["replaySeq"]}"]')
        wait(f"H11 missing {d['type']} at {d['atMs']} ms: marked on the replay's entry #{d['replaySeq']} (rules and host side by side)",
             f"{node} !== null && {node}.classList.contains('diverged') && {node}.dataset.kind === 'pull' && "
             f"{node}.querySelector('.dv[data-rule=H11][data-problem=missing] tr[data-field=type] .dve').textContent === {json.dumps(d['type'])} && "
             f"{node}.querySelector('.dv[data-rule=H11] thead .dva').textContent === 'host: none'",
             show=f"({node} || {{}}).outerHTML")
    d = stray[0]
    wait(f"H13 unexpected header updated at {d['atMs']} ms: marked on the native lane's entry at or before it, with the line",
         f"[...document.querySelectorAll('#lane-native .entry.diverged')].some(n => Number(n.dataset.atMs) <= {d['atMs']} && "
         f"n.querySelector('.dv[data-rule=H13][data-problem=unexpected]') && n.querySelector('.dv[data-rule=H13] .dvh').textContent.includes('line {d['line']}') && "
         f"n.querySelector('.dv[data-rule=H13] tr[data-field=to] .dva').textContent === 'updated' && "
         f"n.querySelector('.dv[data-rule=H13] thead .dve').textContent === 'rules: none')",
         show=count('#lane-native .entry.diverged'))
