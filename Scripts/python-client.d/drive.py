"""One scenario through the Python client generated from OpenAPI/todaysim.yaml (Scripts/python-client).

First the generated models: each enum of the document is one class (a nullable enum spelt
`type: [string, 'null']` made three copies of itself, under names such as
`CreateSessionRequestClockType2Type1`; so did an enum repeated inline). Then it starts the
server (argv[1]) on a free 127.0.0.1 port with a database in argv[2], creates a session,
pulls, answers the pull with a typed `RefreshResultEvent`, relays a broken page's
refreshResult (no `mode`) as a `RawWebEvent` — the catch-all branch — which the bridge rejects
(M8), advances the clock, reads the report as JSON and as JUnit, and sends a typo (warned about; refused under
`fieldValidation=Strict`). Every answer is decoded by
the generated models and checked; any mismatch fails with what was seen.
"""
import collections
import enum
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

import httpx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testkit import free_port  # noqa: E402
import todaysim_client.models
from todaysim_client import Client
from todaysim_client.api.inputs import clock, gesture, web_event
from todaysim_client.api.reading import report, report_junit
from todaysim_client.api.service import health
from todaysim_client.api.sessions import create_session
from todaysim_client.models import (
    Advance, ClockMode, CreateSessionRequest, GestureRequest, GestureRequestType, InputResponse,
    InputResponseOutcome, Platform, RawWebEvent, RefreshReason, RefreshResultEvent, RefreshResultEventMode,
    Problem, Report, RequestOutcome, SessionView,
)

failures = []


def check(name, got, expected):
    ok = got == expected
    print(f"{'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": got {got!r}, expected {expected!r}"), flush=True)
    if not ok:
        failures.append(name)


def typed(name, value, kind):
    """The generated client answers a model for a documented status, else None or a Problem."""
    if not isinstance(value, kind):
        print(f"FAIL {name}: expected a {kind.__name__}, got {value!r}")
        sys.exit(1)
    return value


def enums_are_one_class_each():
    """Two generated enum classes with the same values are one enum of the document, copied."""
    classes = collections.defaultdict(list)
    for name, value in vars(todaysim_client.models).items():
        if isinstance(value, type) and issubclass(value, enum.Enum):
            classes[frozenset(member.value for member in value)].append(name)
    check("each enum of the document is one generated class",
          sorted(sorted(names) for names in classes.values() if len(names) > 1), [])
    if len(classes) < 20:
        sys.exit(f"FAIL found only {len(classes)} enum classes: the scan is broken")


def wait_until_healthy(client, server, deadline_s=30):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"FAIL the server exited with {server.returncode} before it was healthy")
        try:
            if health.sync(client=client) is not None:
                return
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.1)
    sys.exit(f"FAIL the server was not healthy after {deadline_s} s")


def scenario(client):
    created = typed("create", create_session.sync(client=client, body=CreateSessionRequest(
        uid="u1", id="py1", platform=Platform.ANDROID, clock=ClockMode.VIRTUAL)), SessionView)
    check("the session is the one asked for", (created.id, created.platform, created.clock.mode, created.version),
          ("py1", Platform.ANDROID, ClockMode.VIRTUAL, 1))

    pulled = typed("pull", gesture.sync("py1", client=client, body=GestureRequest(
        type_=GestureRequestType.PULL, request_id="pull-1")), InputResponse)
    check("the pull asks Web for a refresh", (pulled.outcome, [p.request_id for p in pulled.session.refresh.pending]),
          (InputResponseOutcome.APPLIED, ["pull-1"]))

    answered = typed("typed refreshResult", web_event.sync("py1", client=client, body=RefreshResultEvent(
        type_="todayPage.refreshResult", schema_version=1, request_id="pull-1",
        mode=RefreshResultEventMode.SOFT, status="succeeded")), InputResponse)
    check("the typed result settles the pull", (answered.outcome, answered.session.refresh.pending,
                                                answered.session.pull.request_id), (InputResponseOutcome.APPLIED, [], None))

    broken = typed("catch-all refreshResult", web_event.sync("py1", client=client, body=RawWebEvent(
        type_="todayPage.refreshResult", schema_version=1, request_id="pull-1", status="succeeded")), InputResponse)
    check("the bridge rejects the broken result (HTTP 200)", (broken.outcome, broken.reason),
          (InputResponseOutcome.REJECTED, "mode: is required"))
    check("and records M8", [e.data["code"] for e in broken.entries if e.kind == "violation"], ["M8"])

    moved = typed("clock", clock.sync("py1", client=client, body=Advance(advance_ms=20_000)), InputResponse)
    check("the clock moved", moved.session.clock.now_ms, 20_000)

    verdict = typed("report", report.sync("py1", client=client), Report)
    check("the report names the violation", (verdict.conforms, [v.data["code"] for v in verdict.violations]),
          (False, ["M8"]))
    request = verdict.requests[0] if len(verdict.requests) == 1 else None
    check("and the pull's request", request and (request.request_id, request.reason, request.outcome, request.answered_in_ms),
          ("pull-1", RefreshReason.USER_PULL, RequestOutcome.SUCCEEDED, 0))

    xml = typed("report as JUnit", report_junit.sync("py1", client=client), str)
    root = ElementTree.fromstring(xml)
    failed = [(case.get("classname").rsplit(".", 1)[-1], case.get("name").split(" (")[0].split(":")[0], failure.get("type"))
              for case in root.iter("testcase") for failure in case.iter("failure")]
    check("the JUnit report fails M8 on the rule's case and on the request the broken result named",
          (root.tag, root.get("failures"), sorted(failed)),
          ("testsuites", "2", [("requests", "request pull-1", "M8"), ("rules", "M8", "M8")]))

    # A typo in a control-plane body (issue 23): applied as if absent, and the answer says so;
    # under Strict it is refused. The request schemas are open: the generated model carries it.
    typo = GestureRequest(type_=GestureRequestType.PULL)
    typo.additional_properties["requestID"] = "pull-2"
    warned = typed("a pull with a typo", gesture.sync("py1", client=client, body=typo), InputResponse)
    check("the typo is warned about, with a did-you-mean", [(w.field, w.detail) for w in warned.warnings],
          [("requestID", "unknown field; did you mean requestId?")])
    refused = typed("the same under Strict", gesture.sync("py1", client=client, body=typo, field_validation="Strict"),
                    Problem)
    check("and refused under Strict, naming the field", (refused.code, refused.field), ("invalid_field", "requestID"))


def main():
    binary, work = sys.argv[1], sys.argv[2]
    enums_are_one_class_each()
    port = free_port()
    with open(f"{work}/server.log", "w") as log:
        server = subprocess.Popen([binary, "serve", "--port", str(port), "--db", f"{work}/db.sqlite", "--quiet"],
                                  stdout=log, stderr=log)
    try:
        client = Client(base_url=f"http://127.0.0.1:{port}", raise_on_unexpected_status=True,
                        timeout=httpx.Timeout(30))
        wait_until_healthy(client, server)
        scenario(client)
    finally:
        server.terminate()
        server.wait(30)
    if failures:
        sys.exit(f"python-client: {len(failures)} check(s) failed")
    print("python-client: the generated client drove the scenario; every answer as expected")


if __name__ == "__main__":
    main()
