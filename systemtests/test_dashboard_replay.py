"""Kept host-trace replays on the dashboard (issue 21, item 7; issue 34, item 5).

A broken host: a session is played (a pull Web never answers: the deadline reloads once, H6 and
H9), its golden trace read back, and a broken host's trace made from it: its spinner never
followed the reload nor ended (every `pull` output after 0 ms dropped: H11 missing), and it
showed a header `updated` no request asked for (H13 unexpected). Kept with `?keep=`, the replay
opens in the page: the verdict badge counts the divergences, each `missing` one is marked on the
replay's entry it expected and the `unexpected` one on the native lane at its time.

A different host, at 1280x800 and 390x844: its spinner ends `succeeded` where the rules time it
out (H11 `different`), with the host's own upper-case UUIDs. The card shows the rules' output and
the host's side by side, a row a field, and marks only the field that differs (`outcome`): the
request id is the trace's on both sides; a short value (up to 12 characters) sits on one line;
every entry's label is whole (a long type wraps) and what is cut (a request id) is whole in the
entry's title; Teardown and Delete stay on one row, at 1280 px on the session id's. A screenshot
of the card at each size goes to .build/dashboard/ (docs/DASHBOARDS.md shows the 1280x800 one)."""
from __future__ import annotations

import json
import re
from typing import Any, Callable

import pytest
from todaysim.client import Client

from support.browser import Tab, count, q, script
from support.dashboard import Dashboard

SIZES = [(1280, 800), (390, 844)]
SHORT = 12
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def golden_trace(api: Client, session: str) -> list[dict[str, Any]]:
    """A pull Web never answers, 13 s on: the session's trace as the rules make it."""
    api.create_session("u9", id=session)
    api.gesture(session, "pull")
    api.clock(session, advanceMs=13000)
    return [json.loads(line) for line in api.timeline(session, format="trace").splitlines() if line.strip()]


def test_a_broken_hosts_replay_marks_its_divergences(dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    api, tab = dashboard.api, new_tab()
    golden = golden_trace(api, "r0")
    broken = [line for line in golden if line.get("kind") != "pull" or line.get("atMs") == 0]
    stray = {"atMs": 2000, "kind": "header", "type": "updated", "requestId": None, "data": {"from": "hidden", "to": "updated"}}
    at = next(i for i, line in enumerate(broken) if i > 0 and line.get("atMs", 0) > 2000)
    verdict = api.verify_host_trace(broken[:at] + [stray] + broken[at:], keep="replay-1", label="traces")
    listed = verdict["divergences"]
    missing = [d for d in listed if d["problem"] == "missing"]
    unexpected = [d for d in listed if d["problem"] == "unexpected"]
    assert verdict["session"] == "replay-1" and not verdict["conforms"] and len(missing) >= 1 and len(unexpected) == 1 \
        and all(d["rule"] == "H11" and "replaySeq" in d for d in missing) and unexpected[0]["rule"] == "H13", \
        f"the broken host's trace is kept as replay-1: {len(missing)} missing (H11, each with its replaySeq), 1 unexpected (H13): " \
        + json.dumps([(d["problem"], d["rule"], d.get("replaySeq")) for d in listed])
    view = api.read_session("replay-1")
    dashboard.open(tab, "replay-1")
    tab.wait(f"replay-1 opens with all {view['counts']['timeline']} entries, its verdict the last",
             f"{q('#session-id')}.textContent === 'replay-1' && {count('#timeline .entry')} === {view['counts']['timeline']} && "
             f"{q('#lane-native .entry[data-kind=verdict][data-type=diverges]')} !== null", show=count("#timeline .entry"))
    tab.wait(f"the verdict badge counts {verdict['divergenceCount']} divergences",
             f"!{q('#trace-verdict')}.hidden && {q('#trace-verdict')}.dataset.count === '{verdict['divergenceCount']}'",
             show=f"{q('#trace-verdict')}.textContent")
    for d in missing:
        node = q(f'#timeline .entry[data-seq="{d["replaySeq"]}"]')
        tab.wait(f"H11 missing {d['type']} at {d['atMs']} ms: marked on the replay's entry #{d['replaySeq']} (rules and host side by side)",
                 f"{node} !== null && {node}.classList.contains('diverged') && {node}.dataset.kind === 'pull' && "
                 f"{node}.querySelector('.dv[data-rule=H11][data-problem=missing] tr[data-field=type] .dve').textContent === {json.dumps(d['type'])} && "
                 f"{node}.querySelector('.dv[data-rule=H11] thead .dva').textContent === 'host: none'",
                 show=f"({node} || {{}}).outerHTML")
    d = unexpected[0]
    tab.wait(f"H13 unexpected header updated at {d['atMs']} ms: marked on the native lane's entry at or before it, with the line",
             f"[...document.querySelectorAll('#lane-native .entry.diverged')].some(n => Number(n.dataset.atMs) <= {d['atMs']} && "
             f"n.querySelector('.dv[data-rule=H13][data-problem=unexpected]') && n.querySelector('.dv[data-rule=H13] .dvh').textContent.includes('line {d['line']}') && "
             f"n.querySelector('.dv[data-rule=H13] tr[data-field=to] .dva').textContent === 'updated' && "
             f"n.querySelector('.dv[data-rule=H13] thead .dve').textContent === 'rules: none')",
             show=count("#lane-native .entry.diverged"))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_divergence_card_reads_side_by_side(size: tuple[int, int], dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    api, sid, name = dashboard.api, "replay-different", f"{size[0]}x{size[1]}"
    trace = [json.loads(UUID.sub(lambda m: m.group(0).upper(), json.dumps(line))) for line in golden_trace(api, "diff-golden")]
    for line in trace:  # the host's spinner ends succeeded where the rules time it out
        if line.get("kind") == "pull" and line.get("data", {}).get("outcome") == "timedOut":
            line["data"]["outcome"] = "succeeded"
    verdict = api.verify_host_trace(trace, keep=sid, label="traces")
    different = [d for d in verdict["divergences"] if d["problem"] == "different"]
    assert len(different) == 1 and different[0]["rule"] == "H11" \
        and different[0]["expected"]["requestId"] == different[0]["actual"]["requestId"], \
        "a spinner that ends succeeded where the rules time it out: one H11 different, its expected in the trace's ids: " \
        + json.dumps(verdict["divergences"])[:300]
    entries, tab = api.read_session(sid)["counts"]["timeline"], new_tab(size)
    dashboard.open(tab, sid)
    tab.wait(f"{name}: {sid} opens with its {entries} entries and the different divergence marked",
             f"document.querySelectorAll('#timeline .entry').length === {entries} && "
             "document.querySelector('#timeline .entry.diverged .dv[data-problem=different] .dvt') !== null && "
             "document.fonts.status === 'loaded'", show="document.querySelectorAll('#timeline .entry').length")
    m = tab.js(script("divergence-measure.js"), SHORT)
    rows = {row["field"]: row for row in m["rows"] or []}
    assert set(rows) >= {"type", "requestId", "state", "outcome"} and [f for f, row in rows.items() if row["differs"]] == ["outcome"] \
        and (rows["outcome"]["rules"], rows["outcome"]["host"]) == ("timedOut", "succeeded") \
        and rows["requestId"]["rules"] == rows["requestId"]["host"] == different[0]["actual"]["requestId"], \
        f"{name}: rules and host side by side, a row a field, only outcome marked as differing: {json.dumps(m['rows'])[:300]}"
    assert m["broken"] == [], f"{name}: every value of up to {SHORT} characters reads on one line: {m['broken']}"
    assert m["clipped"] == [], f"{name}: every entry's kind and label are whole (a long one wraps): {json.dumps(m['clipped'])[:300]}"
    assert m["untitled"] == [], f"{name}: each entry's title holds its whole label and request id: {m['untitled']}"
    assert m["watchdog"] == "softRefreshDeadline fired", f"{name}: the timer lane reads 'softRefreshDeadline fired' whole: {m['watchdog']!r}"
    assert m["teardown"] == m["del"] and (size[0] < 600 or abs(m["buttonMiddle"] - m["idMiddle"]) <= 4), \
        f"{name}: Teardown and Delete on one row" + ("" if size[0] < 600 else ", the session id's") + ": " \
        + json.dumps({k: m[k] for k in ("teardown", "del", "buttonMiddle", "idMiddle")})
    tab.js("document.querySelector('#timeline .entry.diverged .dv[data-problem=different]').closest('.entry').scrollIntoView({block: 'center'})")
    tab.shot(f"dashboard-divergence-{name}.png")
