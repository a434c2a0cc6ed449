"""The dashboard (GET /) with one session played: the page is self-contained, /#session=s1
renders the session view and every timeline entry from the event stream (the DOM held against
GET /v1/sessions/s1), its buttons, filters and hash navigation act and their answers arrive live
over Server-Sent Events, and the documented screenshot command (docs/DASHBOARDS.md) saves a
settled page. Screenshots go to .build/dashboard/."""
from __future__ import annotations

import os
import re
import subprocess
from typing import Any, Callable

import pytest
from todaysim.models import SessionView

from support import ROOT
from support.browser import SCREENSHOTS, Tab, count, q, script, text
from support.dashboard import Dashboard

EXTERNAL = re.compile(r"""(src|href|action)=["']?(https?:)?//|@import|url\(["']?(https?:)?//""", re.I)


def play(dashboard: Dashboard) -> list[Any]:
    """s1: a pull Web never answers while the overlay is Web's and its header shows, then the
    deadline (6 s): a recovery reload. s2: closed, so the list has both statuses."""
    api = dashboard.api
    return [api.create_session("u1", id="s1", label="demo")["id"],
            api.gesture("s1", "pull", requestId="p1")["outcome"],
            api.web_event("s1", {"type": "webView.loadingPresentation", "owner": "web"})["outcome"],
            api.web_event("s1", {"type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "w1",
                                 "presentation": "header"})["outcome"],
            api.clock("s1", advanceMs=6000)["outcome"],
            api.create_session("u2", id="s2", label="other")["id"],
            api.lifecycle("s2", "teardown")["outcome"]]


@pytest.fixture
def view(dashboard: Dashboard) -> SessionView:
    """The session view of s1 once the scenario is played (the Client raised on any refusal)."""
    play(dashboard)
    played: SessionView = dashboard.api.read_session("s1")
    return played


def open_s1(tab: Tab, dashboard: Dashboard, view: SessionView) -> None:
    entries, now = view["counts"]["timeline"], view["clock"]["nowMs"]
    dashboard.open(tab, "s1")
    tab.wait(f"/#session=s1 renders the view and all {entries} timeline entries from the event stream",
             f"{count('#timeline .entry')} >= {entries} && {q('#clock-now')}.dataset.ms === '{now}' && "
             f"{count('#session-list [data-session-id]')} >= 2", show=count("#timeline .entry"))
    tab.wait("the stream badge says live", f"{text('#live')} === 'live'", show=text("#live"))
    tab.wait("the page says it settled (<html data-settled>, what a screenshot waits for)",
             "document.documentElement.dataset.settled === 'true'", show="document.documentElement.dataset.settled")


def test_the_scenario_plays_and_the_view_shows_the_recovery_reload(dashboard: Dashboard) -> None:
    assert play(dashboard) == ["s1", "applied", "applied", "applied", "applied", "s2", "applied"]
    view = dashboard.api.read_session("s1")
    assert view["pull"]["state"] == "refreshing", "the recovery reload carries the spinner"
    assert view["document"]["overlay"] == "visible", "the recovery reload shows the overlay"
    assert view["header"]["state"] == "hidden", "the header is hidden again"


def test_the_page_is_html_and_loads_nothing_from_elsewhere(dashboard: Dashboard) -> None:
    answer = dashboard.api.http.get("/")
    assert (answer.status_code, answer.headers["content-type"]) == (200, "text/html; charset=utf-8"), "GET / answers the HTML page"
    assert not EXTERNAL.search(answer.text), \
        f"the page loads nothing from elsewhere (no external scripts, styles or fonts): {EXTERNAL.findall(answer.text)[:3]}"


def test_the_page_renders_the_session_view_and_every_entry(dashboard: Dashboard, view: SessionView,
                                                           new_tab: Callable[..., Tab]) -> None:
    tab = new_tab()
    open_s1(tab, dashboard, view)
    facts = tab.js(script("dom-facts.js"))
    tab.shot("dashboard.png")
    rows = {row["id"]: row for row in facts["rows"]}
    assert rows.get("s1") == {"id": "s1", "status": "active", "selected": True}, "the session list shows s1, active and selected"
    assert rows.get("s2", {}).get("status") == "closed", "the session list shows s2, closed"
    shown = facts["texts"]
    assert shown.get("session-id") == "s1", "the detail shows session s1"
    assert shown.get("header-state") == view["header"]["state"], "#header-state matches the view"
    assert shown.get("pull-state") == view["pull"]["state"], "#pull-state matches the view"
    assert shown.get("overlay-state") == view["document"]["overlay"], "#overlay-state matches the view"
    now = view["clock"]["nowMs"]
    assert shown.get("clock-now") == f"{now:,}", "#clock-now shows the session clock, with thousands separators"
    assert facts["clockMs"] == str(now), "#clock-now keeps the clock's value in data-ms"
    assert facts["violationCount"] == str(view["counts"]["violations"]), "the violation count matches the view"
    assert len(facts["watchdogs"]) == len(view["watchdogs"]), "as many watchdog rows as the view has"
    listed = {w["kind"]: w for w in facts["watchdogs"]}
    for watchdog in view["watchdogs"]:
        watched, due, rid = watchdog["kind"], watchdog["dueAtMs"], watchdog.get("requestId") or ""
        row = listed.get(watched, {})
        assert row.get("due") == str(due) and f"{due:,} ms" in row.get("text", ""), \
            f"watchdog {watched} is listed with its due time ({due:,} ms on the session clock): {row}"
        assert (row.get("requests") or "") == rid and (f"request {rid}" if rid else "no request id") in row.get("text", ""), \
            f"watchdog {watched} shows {rid or 'no request id'}: {row}"
    entries = facts["entries"]
    assert sorted(e["seq"] for e in entries) == list(range(1, view["counts"]["timeline"] + 1)), \
        "every timeline entry arrived over the event stream, once, in seq order"
    on = {(e["lane"], e["kind"], e["type"]) for e in entries}
    for lane, kind, type, what in [("native", "input", "pull", "native lane: the pull gesture"),
                                   ("native", "emit", "todayPage.refreshRequested", "native lane: refreshRequested emitted to Web"),
                                   ("native", "request", "timedOut", "native lane: the request timed out"),
                                   ("native", "navigation", "recovery", "native lane: the recovery reload"),
                                   ("native", "overlay", "visible", "native lane: the overlay shown again"),
                                   ("native", "header", "hidden", "native lane: the header hidden again"),
                                   ("web", "bridge", "webView.loadingPresentation", "Web lane: the loadingPresentation bridge message"),
                                   ("web", "input", "todayPage.refreshStarted", "Web lane: refreshStarted as Web sent it"),
                                   ("timers", "watchdog", "softRefreshDeadline", "timers lane: the soft deadline fired")]:
        assert (lane, kind, type) in on, f"{what}: no {kind} {type} entry on the {lane} lane"
    assert {e["kind"] for e in entries if e["lane"] == "timers"} == {"watchdog"}, "timers lane holds the watchdog entries only"
    assert any(v["seq"].isdigit() and re.search("M7.*p1", v["text"]) for v in facts["violations"]), \
        f"a violation element names M7 and the request p1: {facts['violations']}"


def test_the_buttons_act_and_their_answers_arrive_live(dashboard: Dashboard, view: SessionView, new_tab: Callable[..., Tab]) -> None:
    api, tab = dashboard.api, new_tab()
    open_s1(tab, dashboard, view)
    tab.click("#btn-background")
    tab.wait("Background button: app backgrounded, the input on the native lane",
             f"{q('#app-state')}.dataset.state === 'background' && {q('#lane-native .entry[data-kind=input][data-type=background]')}")
    tab.fill("#advance-ms", "2000")
    tab.click("#btn-advance")
    tab.wait("Advance clock button (2000 ms): the clock shows 8,000",
             f"{text('#clock-now')} === '8,000' && {count('#lane-native .entry[data-type=clock]')} === 2", show=text("#clock-now"))
    tab.click("#btn-foreground")
    tab.wait("Foreground button: app in the foreground again",
             f"{q('#app-state')}.dataset.state === 'foreground' && {q('#lane-native .entry[data-type=foreground]')}")
    rid = api.read_session("s1")["document"]["requestId"]
    answer = api.web_event("s1", {"type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": rid, "mode": "soft",
                                  "status": "succeeded"})
    result_entry = q('#lane-web .entry[data-kind=bridge][data-type="todayPage.refreshResult"]')
    tab.wait("a refreshResult posted from outside shows up live on the Web lane and ends the spinner",
             f"{result_entry} && "
             f"{q('#pull-state')}.dataset.state === 'idle'")
    violations = answer["session"]["counts"]["violations"]
    tab.wait(f"violations raised meanwhile are marked live ({violations} in all)",
             f"{count('#timeline .violation')} === {violations} && {q('#violation-count')}.dataset.count === '{violations}'",
             show=count("#timeline .violation"))
    # A second pull inside the manual-refresh window reloads the document (cause manualRepeat).
    tab.click("#btn-pull")
    tab.wait("Pull button: a second pull on the native lane, the spinner back on",
             f"{count('#lane-native .entry[data-kind=input][data-type=pull]')} === 2 && {q('#pull-state')}.dataset.state === 'refreshing'")
    now = api.read_session("s1")
    tab.wait(f"after the inputs the page matches GET /v1/sessions/s1 ({now['counts']['timeline']} entries)",
             f"{count('#timeline .entry')} === {now['counts']['timeline']} && {q('#clock-now')}.dataset.ms === '{now['clock']['nowMs']}' && "
             f"{q('#header-state')}.dataset.state === '{now['header']['state']}' && {q('#pull-state')}.dataset.state === '{now['pull']['state']}' && "
             f"{q('#overlay-state')}.dataset.state === '{now['document']['overlay']}' && {count('#watchdogs [data-kind]')} === {len(now['watchdogs'])}",
             show=count("#timeline .entry"))
    tab.shot("dashboard-after-inputs.png")


ROWS = "[...document.querySelectorAll('#session-list [data-session-id]')].map(r => r.dataset.sessionId).join(',')"


def test_the_filters_and_the_hash_choose_what_is_shown(dashboard: Dashboard, view: SessionView, new_tab: Callable[..., Tab]) -> None:
    tab = new_tab()
    open_s1(tab, dashboard, view)
    tab.fill("#filter-label", "demo")
    tab.wait("label filter 'demo' lists s1 only", f"{ROWS} === 's1'", show=ROWS)
    tab.fill("#filter-label", "")
    tab.fill("#filter-status", "closed")
    tab.wait("status filter 'closed' lists s2 only", f"{ROWS} === 's2'", show=ROWS)
    tab.fill("#filter-status", "")
    tab.fill("#filter-uid", "u1")
    tab.wait("uid filter 'u1' lists s1 only", f"{ROWS} === 's1'", show=ROWS)
    tab.fill("#filter-uid", "")
    tab.wait("no filter lists both", f"{ROWS} === 's1,s2'", show=ROWS)

    # A wall-clock session: the hash opens it, and advancing its clock shows the 409.
    dashboard.api.create_session("u3", id="s3", clock="wall")
    tab.js("location.hash = 'session=s3'")
    tab.wait("the hash #session=s3 opens the wall-clock session", f"{text('#session-id')} === 's3' && {text('#clock-mode')} === 'wall'")
    tab.click("#btn-advance")
    tab.wait("Advance clock on a wall session shows the clock_not_virtual error",
             f"!{q('#input-error')}.hidden && {text('#input-error')}.includes('clock_not_virtual')", show=text("#input-error"))
    tab.click('#session-list [data-session-id="s1"]')
    tab.wait("clicking s1 in the list opens it again (hash and timeline)",
             f"location.hash === '#session=s1' && {text('#session-id')} === 's1' && "
             f"{count('#timeline .entry')} === {view['counts']['timeline']} && {q('#input-error')}.hidden")


def test_the_documented_screenshot_command_saves_a_settled_page(dashboard: Dashboard, view: SessionView) -> None:
    """docs/DASHBOARDS.md's command as written there, but for the address and the output path."""
    out = os.path.join(SCREENSHOTS, "readme-command.png")
    os.makedirs(SCREENSHOTS, exist_ok=True)
    if os.path.exists(out):
        os.remove(out)
    run = subprocess.run([os.path.join(ROOT, "Scripts", "open-page"), "--screenshot", out, "--size", "1280x720",
                          f"{dashboard.base}/#session=s1"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and os.path.getsize(out) > 10000, \
        f"the documented screenshot command saves a settled /#session=s1 (exit {run.returncode}): {run.stdout}{run.stderr}"
