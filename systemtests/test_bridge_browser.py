"""The browser bridge end to end (issue 8): the fixture Today Page (examples/today-page)
loads /bridge.js in headless Chromium, served from another origin than the todaysim server it
talks to (started with --allow-origin naming the page's origin, so CORS is exercised, and with a
token, so the shim's access_token is); the session is driven over HTTP and both sides checked.

- A conforming page (s1) boots from cache and answers its own refresh; then a pull, a
  background/foreground return, a live widget sheet and its creation, a native dialog whose
  promise resolves when the user chooses, a server restart with a request made before the page's
  stream reconnects, a today:// link click: the page saw exactly the native -> Web messages of
  the timeline, in order, once each, and the report conforms; a second pull within 10 s reloads
  the document and the page answers the reload. A todayPage.* call never rejects, even when the
  HTTP call fails; another call does.
- A broken page (s2, broken=1, the repository's Web/bridge.js bundled from the page's origin and
  set up by window.todaysimBridge with another event name): the report lists exactly M1 for every
  request it answered twice and M3 for the pull it showed header feedback for.
- Scripts/open-page keeps the page open while the native side is driven, and closes at SIGTERM."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Union, cast

import pytest
from todaysim.client import Client
from todaysim.models import GestureType, LifecycleType
from todaysim.server import Server

from support import ROOT, free_port, wait_until
from support.browser import DEADLINE, Tab

TOKEN = "bridge-test-token"
FIXTURE = "/examples/today-page/index.html"


@dataclass
class Bridge:
    server: Server
    api: Client
    pages: str  # the page server's base URL

    @property
    def base(self) -> str:
        assert self.server.url
        return self.server.url

    def page_url(self, session: str) -> str:
        return f"{self.pages}{FIXTURE}?todaysim={self.base}&session={session}&access_token={TOKEN}"

    def results_for(self, session: str, request_id: str) -> list[Any]:
        return [e for e in self.api.entries(session, kind="bridge")
                if e["type"] == "todayPage.refreshResult" and e.get("requestId") == request_id]

    def eventually(self, what: str, probe: Callable[[], bool]) -> None:
        assert wait_until(probe, DEADLINE, step=0.05), f"{what}: not true after {DEADLINE:g} s"


@pytest.fixture
def bridge(start_server: Callable[..., Server], page_server: str, tmp_path: Any) -> Iterator[Bridge]:
    """A server with a token, allowing the page server's origin, on a fixed port (a restart
    brings it back where the page's stream reconnects) and a file database (its sessions
    survive the restart)."""
    server = start_server(token=TOKEN, allow_origin=page_server, port=free_port(), db=str(tmp_path / "db.sqlite"))
    with server.client() as api:
        yield Bridge(server, api, page_server)


def open_page(tab: Tab, bridge: Bridge, session: str, broken: bool = False) -> None:
    url = bridge.page_url(session)
    if broken:  # and with the bundled copy, set up by a global with another event name
        url += "&broken=1&bundled=/Web/bridge.js"
    tab.goto(url)
    tab.wait(f"{session}: the page loads the shim and boots (its own refresh answered)",
             "window.fixture && fixture.booted && fixture.answered.length === 1 && window.todaysimBridge",
             show="document.body ? document.body.innerText.slice(0, 200) : null")
    tab.js("todaysimBridge.ready")


def native_request(tab: Tab, bridge: Bridge, session: str, path: str, type: Union[GestureType, LifecycleType], request_id: str) -> None:
    """Posts a gesture or lifecycle request and waits until the page answered it and the bridge
    has no call in flight, so the answer reached the host before the test's next input."""
    if path == "gestures":
        bridge.api.gesture(session, cast(GestureType, type), requestId=request_id)
    else:
        bridge.api.lifecycle(session, cast(LifecycleType, type), requestId=request_id)
    tab.wait(f"{session}: the page got {request_id} and answered it",
             f"fixture.answered.indexOf({json.dumps(request_id)}) >= 0 && todaysimBridge.inFlight === 0",
             show="JSON.stringify(fixture.received)")


def test_a_conforming_page_sees_every_message_once_and_conforms(bridge: Bridge, new_tab: Callable[..., Tab]) -> None:
    api, tab = bridge.api, new_tab()
    api.create_session("u1", id="s1", capabilities=["today_page_revalidate_feedback.v1", "live_widget_creation.v1",
                                                     "native_dialog.v1"])
    loaded_at = api.read_session("s1")["counts"]["timeline"]
    open_page(tab, bridge, "s1")
    assert tab.js("window.__todayWebView") == api.read_session("s1")["document"]["injected"], \
        "window.__todayWebView is the session's document.injected (H2)"
    boot_id = tab.js("fixture.answered[0]")
    bridge.eventually("the boot refresh: refreshStarted and one refreshResult under the page's own id reached the session",
                      lambda: len(bridge.results_for("s1", boot_id)) == 1 and any(
                          e["type"] == "todayPage.refreshStarted" and e.get("requestId") == boot_id
                          for e in api.entries("s1", kind="bridge")))
    assert api.read_session("s1")["document"]["overlay"] == "hidden", "the overlay was released by webView.loadingPresentation"

    native_request(tab, bridge, "s1", "gestures", "pull", "p1")
    bridge.eventually("the pull's result ended the spinner", lambda: api.read_session("s1")["pull"]["state"] == "idle")
    api.lifecycle("s1", "background")
    api.clock("s1", advanceMs=6000)
    native_request(tab, bridge, "s1", "lifecycle", "foreground", "fg-1")
    assert tab.js("todayWebViewBridge.emit('liveWidgetCreation.present')") == {"presented": True}, \
        "liveWidgetCreation.present resolves the host's answer"
    native_request(tab, bridge, "s1", "gestures", "liveWidget.created", "lw-1")
    tab.js("window.dialogResult = null; todayWebViewBridge.emit('nativeDialog.present', {title: 'Delete?', actions: "
           "[{actionId: 'delete', title: 'Delete'}, {actionId: 'keep', title: 'Keep'}]}).then(v => { window.dialogResult = v; }); 0")
    bridge.eventually("nativeDialog.present opened the native dialog", lambda: api.read_session("s1")["dialog"] is not None)
    api.gesture("s1", "dialog.choose", actionId="delete")
    tab.wait("the dialog's promise resolves when the user chooses (a resolution entry on the stream)",
             "window.dialogResult && dialogResult.type === 'action' && dialogResult.actionId === 'delete'",
             show="JSON.stringify(window.dialogResult)")
    # A restart drops the page's event stream; a request made before it reconnects must still
    # arrive (Last-Event-ID resume), once.
    bridge.server.stop()
    bridge.server.start()
    native_request(tab, bridge, "s1", "lifecycle", "tabActivated", "tab-1")
    tab.click("#chat-link")
    bridge.eventually("a today:// link click reached the host as webView.navigationAction",
                      lambda: any(e["type"] == "webView.navigationAction" for e in api.entries("s1", kind="bridge")))
    assert tab.js("location.pathname") == FIXTURE, "the page did not navigate away"
    api.clock("s1", advanceMs=2000)
    bridge.eventually("every answer reached the session",
                      lambda: all(len(bridge.results_for("s1", i)) == 1 for i in ["p1", "fg-1", "lw-1", "tab-1"]))

    emitted = [{"type": e["type"], "requestId": e.get("requestId")} for e in api.entries("s1", kind="emit") if e["seq"] > loaded_at]
    assert tab.js("fixture.received.map(m => ({type: m.type, requestId: m.requestId}))") == emitted, \
        "the page saw exactly the native -> Web messages of the timeline, in order, once each"
    requests = [(m["requestId"], m["reason"]) for m in tab.js("fixture.received") if m["type"] == "todayPage.refreshRequested"]
    assert requests == [("p1", "user_pull"), ("fg-1", "app_foreground"), ("lw-1", "live_widget_created"), ("tab-1", "tab_activated")], \
        "the refresh requests arrived with their reasons, in order"
    report = api.report("s1")
    assert (report["conforms"], [v["type"] for v in report["violations"]]) == (True, []), "the session's report: conforms"
    assert {r["requestId"]: r["outcome"] for r in report["requests"]} == {
        "p1": "succeeded", "fg-1": "succeeded", "lw-1": "succeeded", "tab-1": "succeeded"}, "the report's native requests all succeeded"

    # Two pulls within 10 s: the host reloads the document (manualRepeat), so the page reloads
    # and answers the reload's request (mode hard).
    api.clock("s1", advanceMs=11000)
    native_request(tab, bridge, "s1", "gestures", "pull", "p3")
    api.gesture("s1", "pull", requestId="p4")
    reload = api.read_session("s1")["document"]
    assert (reload["loadId"], reload["cause"]) == (2, "manualRepeat"), "a second pull within 10 s made the host reload the document"
    reload_id = str(reload["requestId"])
    tab.wait("the page reloaded with the host and answered the reload's request",
             f"window.fixture && fixture.load.loadId === 2 && fixture.answered.indexOf({json.dumps(reload_id)}) >= 0",
             show="window.fixture && JSON.stringify(fixture.load)")
    bridge.eventually("the reload's hard refreshResult reached the session",
                      lambda: len(bridge.results_for("s1", reload_id)) == 1)
    report = api.report("s1")
    outcomes = {r["requestId"]: (r["kind"], r["outcome"]) for r in report["requests"]}
    assert (report["conforms"], outcomes.get(reload_id)) == (True, ("reload", "succeeded")), \
        "after the reload the report still conforms, the reload succeeded"

    # The bridge rule: todayPage.* resolves undefined, never rejects, even when HTTP fails.
    assert tab.js("todayWebViewBridge.emit('todayPage.somethingNew', {schemaVersion: 1})"
                  ".then(v => v === undefined ? 'undefined' : v)") == "undefined", "an unknown todayPage.* event resolves undefined"
    api.lifecycle("s1", "teardown")
    assert tab.js("todayWebViewBridge.emit('todayPage.refreshStarted', {schemaVersion: 1, requestId: 'x', presentation: 'header'})"
                  ".then(v => v === undefined ? 'undefined' : 'resolved ' + v, e => 'rejected')") == "undefined", \
        "after the session closed (409), a todayPage.* call still resolves undefined"
    assert tab.js("todayWebViewBridge.emit('track', {event: 'x'}).then(() => 'resolved', e => 'rejected: ' + e.message)")[:17] \
        == "rejected: todaysi", "and any other call rejects"


def test_a_broken_page_makes_the_report_list_exactly_its_violations(bridge: Bridge, new_tab: Callable[..., Tab]) -> None:
    api, tab = bridge.api, new_tab()
    api.create_session("u2", id="s2")
    open_page(tab, bridge, "s2", broken=True)
    assert tab.js("[todaysimBridge.base, todaysimBridge.session, todaysimBridge.event, document.scripts[1].src]") == \
        [bridge.base, "s2", "todaysim:native", bridge.pages + "/Web/bridge.js"], \
        "the bundled shim took its settings from window.todaysimBridge"
    boot_id = tab.js("fixture.answered[0]")
    native_request(tab, bridge, "s2", "gestures", "pull", "p2")
    api.lifecycle("s2", "background")
    api.clock("s2", advanceMs=6000)
    native_request(tab, bridge, "s2", "lifecycle", "foreground", "fg-2")
    bridge.eventually("the broken page answered every request twice",
                      lambda: all(len(bridge.results_for("s2", i)) == 2 for i in [boot_id, "p2", "fg-2"]))
    report = api.report("s2")
    found = sorted((v["type"], v.get("requestId")) for v in report["violations"])
    assert (report["conforms"], found) == (False, sorted([("M1", boot_id), ("M1", "p2"), ("M1", "fg-2"), ("M3", "p2")])), \
        "the broken page's report lists exactly its violations (M1 per doubled result, M3 for the pull)"


def test_open_page_keeps_the_page_open_until_sigterm(bridge: Bridge) -> None:
    api = bridge.api
    api.create_session("u3", id="s3")
    url = bridge.page_url("s3")
    opener = subprocess.Popen([os.path.join(ROOT, "Scripts", "open-page"), url], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        bridge.eventually("open-page: the page booted and answered its own load",
                          lambda: api.read_session("s3")["document"]["state"] == "rendered")
        api.gesture("s3", "pull", requestId="p3")
        bridge.eventually("open-page: the open page answered a pull made after it opened",
                          lambda: len(bridge.results_for("s3", "p3")) == 1)
        opener.send_signal(signal.SIGTERM)
        assert opener.wait(DEADLINE) == 0, "open-page: closes at SIGTERM with exit 0"
        assert opener.stdout
        output = opener.stdout.read()
        assert f"open-page: {url} is open" in output and "open-page: closed" in output, \
            f"open-page: said where the page is open, and that it closed:\n{output}"
    finally:
        if opener.poll() is None:
            opener.kill()
            opener.wait()
    report = api.report("s3")
    assert (report["conforms"], report["violations"]) == (True, []), "open-page: the session's report conforms"
