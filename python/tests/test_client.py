"""The client against a real server: every part of the API a test suite uses, and refusals as
one exception type carrying `code`, `status` and `field`."""
import json
import os
import threading
import time
import xml.etree.ElementTree as ET
from typing import Any

import httpx
import pytest

from todaysim import Client, Server, TodaysimError
from todaysim.models import SessionView, TimelinePage
from todaysim.transport import RetryRefused
from todaysim.plugin import HostSession, TodaysimServer

RESULT = {"type": "todayPage.refreshResult", "schemaVersion": 1, "mode": "soft", "status": "succeeded"}


def test_sessions_inputs_and_views(todaysim: Client, host_session: HostSession) -> None:
    view = host_session(uid="py-u1", id="py-s1", platform="android", label="py-client")
    assert (view["id"], view["platform"], view["header"]["state"], view["pull"]["state"]) == ("py-s1", "android", "hidden", "idle")
    pulled = todaysim.gesture("py-s1", "pull", requestId="p1")
    assert pulled["outcome"] == "applied"
    assert [e["data"]["payload"]["requestId"] for e in pulled["entries"] if e["kind"] == "emit"] == ["p1"]
    answered = todaysim.web_event("py-s1", {**RESULT, "requestId": "p1"})
    assert (answered["outcome"], answered["session"]["pull"]["state"]) == ("applied", "idle")
    assert todaysim.lifecycle("py-s1", "background")["outcome"] == "applied"
    moved = todaysim.clock("py-s1", advanceMs=6000)
    assert moved["session"]["clock"]["nowMs"] == 6000
    back = todaysim.lifecycle("py-s1", "foreground", requestId="fg-1")
    assert [w["kind"] for w in todaysim.watchdogs("py-s1")] == ["softRefreshDeadline"]
    assert back["session"]["refresh"]["pending"][0]["requestId"] == "fg-1"
    scrolled = todaysim.command("py-s1", "todayPage.scrollToSection", batchId="b1")
    assert scrolled["entries"][-1]["data"]["payload"]["batchId"] == "b1"
    assert todaysim.read_session("py-s1")["version"] == scrolled["session"]["version"]
    assert [s["id"] for s in todaysim.iter_sessions(label="py-client")] == ["py-s1"]
    assert todaysim.list_sessions(uid="py-u1", limit=1)["sessions"][0]["id"] == "py-s1"


def test_steps_timeline_paging_and_the_report(todaysim: Client, host_session: HostSession) -> None:
    host_session(uid="py-u2", id="py-s2")
    batch = todaysim.steps("py-s2", [{"gesture": {"type": "pull", "requestId": "p1"}}, {"clock": {"advanceMs": 5000}}])
    assert [r["outcome"] for r in batch["results"]] == ["applied", "applied"]
    entries = todaysim.entries("py-s2")
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    page = todaysim.timeline("py-s2", after=2, limit=3)
    assert ([e["seq"] for e in page["entries"]], page["next"], page["more"]) == ([3, 4, 5], 5, True)
    assert [e["type"] for e in todaysim.entries("py-s2", kind="violation")] == ["M7"]
    report = todaysim.report("py-s2")
    assert (report["conforms"], [v["type"] for v in report["violations"]]) == (False, ["M7"])
    junit = ET.fromstring(todaysim.report_junit("py-s2"))
    assert junit.tag == "testsuites" and junit.get("failures") == "2"
    assert any(v["entry"]["type"] == "M7" for v in todaysim.violations(uid="py-u2")["violations"])


def test_a_long_poll_wakes_on_the_entry(todaysim: Client, host_session: HostSession) -> None:
    host_session(uid="py-u3", id="py-s3")
    count = todaysim.read_session("py-s3")["counts"]["timeline"]
    answers: list[TimelinePage] = []
    poll = threading.Thread(target=lambda: answers.append(todaysim.timeline("py-s3", after=count, wait_ms=20000)))
    poll.start()
    # Whatever the poll's timing, the pull is an entry after `count`: it is answered with it.
    todaysim.gesture("py-s3", "pull", requestId="p1")
    poll.join(60)
    assert answers and answers[0]["entries"] and answers[0]["entries"][0]["seq"] == count + 1


def test_the_event_stream_ends_with_the_session(todaysim: Client, host_session: HostSession) -> None:
    host_session(uid="py-u4", id="py-s4")
    todaysim.gesture("py-s4", "pull", requestId="p1")
    todaysim.lifecycle("py-s4", "teardown")
    seen = [event for event in todaysim.session_events("py-s4")]  # ends after the last entry of a closed session
    assert [e.entry["seq"] for e in seen] == list(range(1, len(seen) + 1))
    assert seen[-1]["event"] in ("input", "header", "pull", "request", "navigation", "analytics", "emit")
    assert any(e.entry["type"] == "teardown" for e in seen)


def test_export_fork_replay_and_host_traces(todaysim: Client, host_session: HostSession) -> None:
    host_session(uid="py-u5", id="py-s5")
    todaysim.gesture("py-s5", "pull", requestId="p1")
    todaysim.clock("py-s5", advanceMs=5000)  # M7, then a recovery reload
    script = todaysim.export_all("py-s5")
    replayed = todaysim.replay(script, session_id="py-s5-replayed")
    try:
        assert [v["type"] for v in todaysim.report("py-s5-replayed")["violations"]] == ["M7"]
    finally:
        todaysim.delete_session(replayed["id"])
    fork = todaysim.fork_session("py-s5", "py-s5-fork")
    try:
        assert fork["version"] == todaysim.read_session("py-s5")["version"]
    finally:
        todaysim.delete_session("py-s5-fork")
    trace = todaysim.timeline("py-s5", format="trace")
    verdict = todaysim.verify_host_trace(trace)
    assert verdict["conforms"] is True
    # The same trace as lines (dicts), and kept as a replay the dashboard can show.
    kept = todaysim.verify_host_trace([json.loads(line) for line in trace.splitlines()], keep="py-s5-kept")
    try:
        assert (kept["conforms"], kept["session"]) == (True, "py-s5-kept")
    finally:
        todaysim.delete_session("py-s5-kept")
    assert ET.fromstring(todaysim.verify_host_trace(trace, junit=True)).tag == "testsuites"
    with pytest.raises(TodaysimError) as refused:
        todaysim.verify_host_trace(b"not a trace\n")
    assert (refused.value.status, refused.value.code) == (400, "invalid_trace")


def test_two_recordings_of_one_scenario_compared(todaysim: Client, host_session: HostSession) -> None:
    traces = []
    for platform in ("ios", "android"):
        host_session(uid="py-u9", id=f"py-s9-{platform}", platform=platform)
        todaysim.steps(f"py-s9-{platform}", [{"lifecycle": {"type": "background"}}, {"clock": {"advanceMs": 6000}},
                                             {"lifecycle": {"type": "foreground"}}, {"clock": {"advanceMs": 6000}}])
        traces.append(todaysim.timeline(f"py-s9-{platform}", format="trace"))
    ios, android = traces
    same = todaysim.compare_traces(ios, android.encode())
    assert (same["identical"], same["differenceCount"], same["a"]["conforms"], same["b"]["conforms"]) == (True, 0, True, True)
    # The Android host that never makes the recovery reload (H9): its own fault.
    broken = [line for line in android.splitlines() if '"type":"recovery"' not in line]
    found = todaysim.compare_traces([json.loads(line) for line in ios.splitlines()], broken, tolerance_ms=100)
    assert found["identical"] is False
    assert [(d["problem"], d["rule"], d.get("side"), d["kind"]) for d in found["differences"]] == [("onlyA", "H9", "b", "navigation")]
    assert ET.fromstring(todaysim.compare_traces(ios, broken, junit=True)).tag == "testsuites"
    with pytest.raises(TodaysimError) as refused:
        todaysim.compare_traces(ios, b"not a trace\n")
    assert (refused.value.status, refused.value.code, refused.value.field) == (400, "invalid_trace", "b: line 1")
    with pytest.raises(TodaysimError) as unaligned:
        todaysim.compare_traces(ios, [line for line in ios.splitlines() if '"kind":"input","type":"background"' not in line])
    assert (unaligned.value.status, unaligned.value.code) == (400, "traces_not_comparable")


def test_refusals_are_one_exception_with_code_status_and_field(todaysim_server: TodaysimServer, todaysim: Client,
                                                                host_session: HostSession) -> None:
    host_session(uid="py-u6", id="py-s6")
    with pytest.raises(TodaysimError) as typo:  # the plugin's client is Strict
        # mypy names the typo too (GestureFields has no requestID); sent anyway, for the server's answer.
        todaysim.gesture("py-s6", "pull", requestID="p1")  # type: ignore[call-arg]
    assert (typo.value.status, typo.value.code, typo.value.field) == (400, "invalid_field", "requestID")
    assert "did you mean requestId?" in typo.value.detail
    with todaysim_server.client(field_validation="Warn") as warned:
        answer = warned.gesture("py-s6", "pull", requestID="p2")  # type: ignore[call-arg]
        assert answer["warnings"] == [{"field": "requestID", "detail": "unknown field; did you mean requestId?"}]
    with pytest.raises(TodaysimError) as missing:
        todaysim.read_session("py-no-such-session")
    assert (missing.value.status, missing.value.code, missing.value.field) == (404, "session_not_found", None)
    todaysim.lifecycle("py-s6", "teardown")
    with pytest.raises(TodaysimError) as closed:
        todaysim.gesture("py-s6", "pull")
    assert (closed.value.status, closed.value.code) == (409, "session_closed")
    with pytest.raises(TodaysimError) as unreachable:
        Client("http://127.0.0.1:9", timeout=5).health()
    assert (unreachable.value.status, unreachable.value.code, unreachable.value.sent) == (0, "unreachable", False)


def test_the_service_documents(todaysim: Client) -> None:
    assert todaysim.health() == {"status": "ok"}
    assert todaysim.readiness()["status"] == "ok"
    assert "todaysim" in todaysim.dashboard()
    assert "todaysim_sessions" in todaysim.metrics()
    assert todaysim.rules_markdown().startswith("# The rules todaysim implements")
    assert "/rules.md" in todaysim.rules_page()
    assert "todayWebViewBridge" in todaysim.bridge_script()
    assert json.loads(json.dumps(todaysim.list_sessions(limit=1)))["sessions"] is not None


def test_purging_a_label_and_resetting(todaysim: Client, host_session: HostSession) -> None:
    host_session(uid="py-u7", id="py-s7a", label="py-purge")
    host_session(uid="py-u7", id="py-s7b", label="py-purge")
    assert todaysim.purge_label("py-purge") == {"deleted": 2}
    assert list(todaysim.iter_sessions(label="py-purge")) == []
    # reset purges every session: on a server of its own.
    if os.environ.get("TODAYSIM_URL"):
        pytest.skip("reset needs a server of its own (TODAYSIM_BIN)")
    with Server() as own, own.client() as client:
        client.create_session("u1", id="r1")
        client.create_session("u1", id="r2")
        assert client.reset() == {"deleted": 2}
        assert client.list_sessions()["sessions"] == []


# -- a refused connection, sent again by the client's transport (Client(retry_refused_for=…)) ---------

def refusing(times: int, tries: list[str]) -> httpx.MockTransport:
    """A transport whose first `times` connections are refused; then it answers `{"status": "ok"}`."""
    def answer(request: httpx.Request) -> httpx.Response:
        tries.append(f"{request.method} {request.url.path}")
        if len(tries) <= times:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return httpx.Response(200, json={"status": "ok"})
    return httpx.MockTransport(answer)


def test_a_refused_connection_is_sent_again_until_it_is_taken() -> None:
    tries: list[str] = []
    with Client("http://todaysim.test", transport=refusing(3, tries), retry_refused_for=60) as client:
        assert dict(client.gesture("s1", "pull", requestId="p1")) == {"status": "ok"}
    assert tries == ["POST /v1/sessions/s1/gestures"] * 4
    tries.clear()
    with Client("http://todaysim.test", transport=refusing(1, tries)) as never, pytest.raises(TodaysimError) as refused:
        never.health()  # retry_refused_for defaults to 0: no second try
    assert (tries, refused.value.status, refused.value.sent) == (["GET /healthz"], 0, False)
    assert "nothing was sent" in refused.value.detail


def test_a_refusal_past_the_deadline_is_raised_as_unsent() -> None:
    now: list[float] = [0.0]
    pauses: list[float] = []
    tries: list[str] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds
    transport = RetryRefused(refusing(1000, tries), 1.0, clock=lambda: now[0], sleep=sleep)
    with Client("http://todaysim.test", transport=transport) as client, pytest.raises(TodaysimError) as refused:
        client.clock("s1", advanceMs=1000)
    assert (refused.value.status, refused.value.code, refused.value.sent) == (0, "unreachable", False)
    assert pauses[:6] == [0.01, 0.02, 0.04, 0.08, 0.16, 0.25] and max(pauses) == 0.25
    assert sum(pauses) == pytest.approx(1.0) and len(tries) == len(pauses) + 1
    with pytest.raises(ValueError, match="retry_refused_for"):
        Client("http://todaysim.test", retry_refused_for=float("nan"))


def test_a_connection_broken_after_sending_is_not_sent_again() -> None:
    tries: list[str] = []

    def broken(request: httpx.Request) -> httpx.Response:
        tries.append(request.url.path)
        raise httpx.ReadError("connection reset by peer", request=request)
    with Client("http://todaysim.test", transport=httpx.MockTransport(broken), retry_refused_for=60) as client:
        with pytest.raises(TodaysimError) as broke:
            client.lifecycle("s1", "background")
    assert (tries, broke.value.status, broke.value.sent) == (["/v1/sessions/s1/lifecycle"], 0, True)


class Refusals(httpx.HTTPTransport):
    """The real transport, counting the connections refused (the client's retry sits above it)."""
    refused = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handle_request(request)
        except httpx.ConnectError:
            self.refused += 1
            raise


def test_an_input_sent_while_the_server_restarts_is_applied_once_it_is_back(tmp_path: Any) -> None:
    if os.environ.get("TODAYSIM_URL"):
        pytest.skip("restarting needs a server of its own (TODAYSIM_BIN)")
    db = str(tmp_path / "restart.sqlite")
    first = Server(db=db).start()
    port = int(str(first.url).rsplit(":", 1)[1])
    with first.client() as client:
        client.create_session("u1", id="restarted")
    first.stop()
    wire = Refusals()
    answers: list[SessionView] = []
    with Client(str(first.url), transport=wire, retry_refused_for=120) as client:
        sender = threading.Thread(target=lambda: answers.append(client.gesture("restarted", "pull", requestId="p1")["session"]))
        sender.start()
        deadline = time.monotonic() + 60
        while wire.refused == 0 and time.monotonic() < deadline:  # the condition, not a time: a refusal seen
            time.sleep(0.01)
        assert wire.refused > 0, "the stopped server's port never refused the gesture"
        with Server(db=db, port=port):
            sender.join(120)
            assert [view["pull"]["requestId"] for view in answers] == ["p1"]
    assert wire.refused > 0
