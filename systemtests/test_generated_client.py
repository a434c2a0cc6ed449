"""A client generated from the OpenAPI document against the real server (issue 13, item 5):
openapi-python-client (PyPI, `CLIENT_GENERATOR_PIN` in Scripts/lib/deps.sh, in the tests' venv)
generates a Python client from OpenAPI/todaysim.yaml with openapi-python-client.yaml beside this
file — any warning fails — and one scenario is driven through it: create, pull, a typed and a
catch-all Web event (the bridge rejects the broken one, M8), the clock, the report as JSON and
as JUnit, and a typo in a body (warned about, refused under `fieldValidation=Strict`).

The generated modules exist only once the generator has run, so they are reached as `Any`
through `importlib`; every answer is decoded by the generated models and checked."""
from __future__ import annotations

import collections
import enum
import importlib
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import pytest
from todaysim.server import Server

from support import ROOT
from support.checks import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "todaysim_client"


@dataclass
class Generated:
    returncode: int
    output: str
    folder: str

    @property
    def complaints(self) -> list[str]:
        """Beyond the exit code: any line but `Generating <path>` (a skipped post-hook too)."""
        return [line for line in self.output.splitlines() if line.strip() and not line.startswith("Generating ")]

    def module(self, name: str) -> Any:
        assert self.returncode == 0 and not self.complaints, f"the generator did not run clean:\n{self.output}"
        return importlib.import_module(f"{PACKAGE}.{name}" if name else PACKAGE)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    """The client generated into a folder of the module's own, importable while the module runs."""
    work = str(tmp_path_factory.mktemp("generated"))
    bin_folder = os.path.dirname(sys.executable)
    # The generator runs ruff (one of its dependencies) on what it wrote: the venv's bin goes first.
    done = subprocess.run([os.path.join(bin_folder, "openapi-python-client"), "generate",
                           "--path", os.path.join(ROOT, "OpenAPI", "todaysim.yaml"),
                           "--config", os.path.join(HERE, "openapi-python-client.yaml"), "--meta", "none",
                           "--output-path", os.path.join(work, PACKAGE), "--fail-on-warning"],
                          env={**os.environ, "PATH": bin_folder + os.pathsep + os.environ.get("PATH", "")},
                          capture_output=True, text=True, timeout=300)
    sys.path.insert(0, work)
    try:
        yield Generated(done.returncode, done.stdout + done.stderr, os.path.join(work, PACKAGE))
    finally:
        sys.path.remove(work)
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture
def client(generated: Generated, start_server: Callable[..., Server], tmp_path: Any) -> Iterator[Any]:
    """The generated `Client` on a server of the test's own (a temporary database file)."""
    import httpx  # the generated client's transport

    server = start_server(db=str(tmp_path / "db.sqlite"))
    with generated.module("").Client(base_url=server.url, raise_on_unexpected_status=True,
                                     timeout=httpx.Timeout(30)) as made:
        yield made


def typed(name: str, value: Any, kind: type) -> Any:
    """The generated client answers a model for a documented status, else None or a Problem."""
    assert isinstance(value, kind), f"{name}: expected a {kind.__name__}, got {value!r}"
    return value


def same(checks: Checks, name: str, got: Any, expected: Any) -> None:
    checks(got == expected, f"{name}: got {got!r}, expected {expected!r}")


def test_the_generator_writes_the_client_without_a_warning(generated: Generated) -> None:
    assert generated.returncode == 0, f"the generator exited {generated.returncode}:\n{generated.output}"
    assert generated.complaints == [], generated.output
    modules = [name for _, _, files in os.walk(generated.folder) for name in files if name.endswith(".py")]
    print(f"generated {len(modules)} modules, no warning")
    assert len(modules) > 20, modules


def test_each_enum_of_the_document_is_one_generated_class(generated: Generated) -> None:
    """A nullable enum spelt `type: [string, 'null']` made three copies of itself, under names
    such as `CreateSessionRequestClockType2Type1`; so did an enum repeated inline. Two generated
    enum classes with the same values are one enum of the document, copied."""
    classes: dict[frozenset[Any], list[str]] = collections.defaultdict(list)
    for name, value in vars(generated.module("models")).items():
        if isinstance(value, type) and issubclass(value, enum.Enum):
            classes[frozenset(member.value for member in value)].append(name)
    assert len(classes) >= 20, f"found only {len(classes)} enum classes: the scan is broken"
    assert sorted(sorted(names) for names in classes.values() if len(names) > 1) == []


def test_a_scenario_with_typed_and_catch_all_web_events(generated: Generated, client: Any, checks: Checks) -> None:
    m = generated.module("models")
    api = {name: generated.module(f"api.{group}.{name}") for group, name in [
        ("sessions", "create_session"), ("inputs", "gesture"), ("inputs", "web_event"), ("inputs", "clock"),
        ("reading", "report"), ("reading", "report_junit")]}

    created = typed("create", api["create_session"].sync(client=client, body=m.CreateSessionRequest(
        uid="u1", id="py1", platform=m.Platform.ANDROID, clock=m.ClockMode.VIRTUAL)), m.SessionView)
    same(checks, "the session is the one asked for", (created.id, created.platform, created.clock.mode,
                                                      created.version), ("py1", m.Platform.ANDROID, m.ClockMode.VIRTUAL, 1))

    pulled = typed("pull", api["gesture"].sync("py1", client=client, body=m.GestureRequest(
        type_=m.GestureRequestType.PULL, request_id="pull-1")), m.InputResponse)
    same(checks, "the pull asks Web for a refresh", (pulled.outcome, [p.request_id for p in pulled.session.refresh.pending]),
         (m.InputResponseOutcome.APPLIED, ["pull-1"]))

    answered = typed("typed refreshResult", api["web_event"].sync("py1", client=client, body=m.RefreshResultEvent(
        type_="todayPage.refreshResult", schema_version=1, request_id="pull-1",
        mode=m.RefreshMode.SOFT, status=m.RefreshStatus.SUCCEEDED)), m.InputResponse)
    same(checks, "the typed result settles the pull", (answered.outcome, answered.session.refresh.pending,
                                                       answered.session.pull.request_id),
         (m.InputResponseOutcome.APPLIED, [], None))

    # A broken page's refreshResult (no `mode`), relayed as the catch-all RawWebEvent.
    broken = typed("catch-all refreshResult", api["web_event"].sync("py1", client=client, body=m.RawWebEvent(
        type_="todayPage.refreshResult", schema_version=1, request_id="pull-1", status="succeeded")), m.InputResponse)
    same(checks, "the bridge rejects the broken result (HTTP 200)", (broken.outcome, broken.reason),
         (m.InputResponseOutcome.REJECTED, "mode: is required"))
    same(checks, "and records M8", [e.data["code"] for e in broken.entries if e.kind == "violation"], ["M8"])

    moved = typed("clock", api["clock"].sync("py1", client=client, body=m.Advance(advance_ms=20_000)), m.InputResponse)
    same(checks, "the clock moved", moved.session.clock.now_ms, 20_000)

    verdict = typed("report", api["report"].sync("py1", client=client), m.Report)
    same(checks, "the report names the violation", (verdict.conforms, [v.data["code"] for v in verdict.violations]),
         (False, ["M8"]))
    request = verdict.requests[0] if len(verdict.requests) == 1 else None
    same(checks, "and the pull's request",
         request and (request.request_id, request.reason, request.outcome, request.answered_in_ms),
         ("pull-1", m.RefreshReason.USER_PULL, m.RequestOutcome.SUCCEEDED, 0))

    root = ElementTree.fromstring(typed("report as JUnit", api["report_junit"].sync("py1", client=client), str))
    failed = [(str(case.get("classname")).rsplit(".", 1)[-1], str(case.get("name")).split(" (")[0].split(":")[0],
               failure.get("type")) for case in root.iter("testcase") for failure in case.iter("failure")]
    same(checks, "the JUnit report fails M8 on the rule's case and on the request the broken result named",
         (root.tag, root.get("failures"), sorted(failed)),
         ("testsuites", "2", [("requests", "request pull-1", "M8"), ("rules", "M8", "M8")]))
    checks.assert_all()


def test_a_typo_in_a_body_is_warned_about_and_refused_under_strict(generated: Generated, client: Any,
                                                                    checks: Checks) -> None:
    """Issue 23: a typo in a control-plane body is applied as if absent, and the answer says so;
    under Strict it is refused. The request schemas are open: the generated model carries it."""
    m = generated.module("models")
    create_session, gesture = (generated.module(f"api.{name}") for name in ("sessions.create_session",
                                                                             "inputs.gesture"))
    typed("create", create_session.sync(client=client, body=m.CreateSessionRequest(uid="u1", id="py2")), m.SessionView)
    typo = m.GestureRequest(type_=m.GestureRequestType.PULL)
    typo.additional_properties["requestID"] = "pull-2"
    warned = typed("a pull with a typo", gesture.sync("py2", client=client, body=typo), m.InputResponse)
    same(checks, "the typo is warned about, with a did-you-mean", [(w.field, w.detail) for w in warned.warnings],
         [("requestID", "unknown field; did you mean requestId?")])
    refused = typed("the same under Strict", gesture.sync("py2", client=client, body=typo, field_validation="Strict"),
                    m.Problem)
    same(checks, "and refused under Strict, naming the field", (refused.code, refused.field),
         ("invalid_field", "requestID"))
    checks.assert_all()
