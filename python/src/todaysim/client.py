"""A typed client for the whole todaysim HTTP API (OpenAPI/todaysim.yaml, served at /openapi.yaml).

Every operation of the document is one method, marked with `@operation(operationId, METHOD,
path)`; `tests/test_contract.py` checks, against the document the server serves, that each
operation has exactly one method with its method and path, and `tools/generate_models.py
--check` that `models.py` (the return and body types) is what the document makes. A problem
document (`application/problem+json`) is raised as `TodaysimError`, carrying `status`, `code`
and `field`.

Bodies are passed as the API spells them, typed by the document's request schemas: an input's
`type` (or a creation's `uid`) first, its other fields as keywords (`client.gesture("s1",
"pull", requestId="p1")`, checked by mypy against `models.GestureType` and `models.GestureFields`);
a Web event and a batch of steps as the JSON they are. The plumbing is `transport.py` (and a
refused connection retried, `retry_refused_for`), the event streams `streams.py`.
"""
from __future__ import annotations

import json
import urllib.parse
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, Optional, TypedDict, TypeVar, Union, Unpack, cast, overload

import httpx

from . import models as m
from .streams import StreamEvent, read_events
from .transport import Connection, TodaysimError

__all__ = ["Client", "TodaysimError", "StreamEvent", "Script", "operation", "OPERATIONS"]

F = TypeVar("F", bound=Callable[..., Any])

#: A session as a script (`Client.export_all`): its creation and every input, replayable with
#: `Client.replay` (or as `POST /v1/sessions` and `/steps`).
Script = TypedDict("Script", {"create": m.CreateSessionRequest, "steps": list[dict[str, Any]]})

#: A host trace for `Client.verify_host_trace` and `Client.compare_traces`: NDJSON bytes or text, or
#: its lines (text or dicts).
Trace = Union[bytes, str, Iterable[Union[str, Mapping[str, Any]]]]

#: operationId -> (HTTP method, path template, Client method name); filled by `@operation`.
OPERATIONS: dict[str, tuple[str, str, str]] = {}


def operation(operation_id: str, method: str, path: str) -> Callable[[F], F]:
    """Marks a Client method as the one that calls `operation_id` (checked against the document)."""
    def mark(function: F) -> F:
        if operation_id in OPERATIONS:
            raise ValueError(f"two methods for {operation_id}")
        OPERATIONS[operation_id] = (method, path, function.__name__)
        setattr(function, "operation_id", operation_id)
        return function
    return mark


def _quote(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")


class Client(Connection):
    """todaysim over HTTP. `base_url` defaults to http://127.0.0.1:8080; `token` is sent as a
    Bearer token; `field_validation` (`Warn`, `Strict`, `Ignore`) is sent with every
    control-plane body as `?fieldValidation=` (tests are best written with `Strict`, so a typo
    fails at once); `retry_refused_for` (seconds, default 0: never) sends a request whose
    connection was refused again until that long after its first try — nothing was sent, so it
    is safe for any request (a server restarting on its port). The client is a context manager
    (it closes its connections)."""

    def __init__(self, base_url: str = "http://127.0.0.1:8080", token: Optional[str] = None, timeout: float = 30.0,
                 field_validation: Optional[str] = None, transport: Optional[httpx.BaseTransport] = None,
                 retry_refused_for: float = 0.0):
        super().__init__(base_url, token, timeout, field_validation, transport, retry_refused_for)

    # -- plumbing ------------------------------------------------------------------------------
    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _session(session_id: str) -> str:
        return f"/v1/sessions/{_quote(session_id)}"

    def preflight(self, path: str, origin: str, method: str) -> Optional[str]:
        """A CORS preflight (`OPTIONS path` with `Origin` and `Access-Control-Request-Method`), as
        a browser sends before a page's call: the `Access-Control-Allow-Origin` granted, or None
        (the server was not started with `--allow-origin` naming `origin`)."""
        response = self._send("OPTIONS", path, headers={"Origin": origin, "Access-Control-Request-Method": method},
                              expect=(200, 204))
        granted: Optional[str] = response.headers.get("Access-Control-Allow-Origin")
        return granted

    # -- the service ---------------------------------------------------------------------------
    @operation("health", "GET", "/healthz")
    def health(self) -> m.Health:
        return cast(m.Health, self._json("GET", "/healthz"))

    @operation("readiness", "GET", "/readyz")
    def readiness(self) -> m.Readiness:
        return cast(m.Readiness, self._json("GET", "/readyz", expect=(200, 503)))

    @operation("dashboard", "GET", "/")
    def dashboard(self) -> str:
        return self._send("GET", "/").text

    @operation("metrics", "GET", "/metrics")
    def metrics(self) -> str:
        return self._send("GET", "/metrics").text

    @operation("openAPIDocument", "GET", "/openapi.yaml")
    def openapi_document(self) -> str:
        return self._send("GET", "/openapi.yaml").text

    @operation("rulesPage", "GET", "/rules")
    def rules_page(self) -> str:
        return self._send("GET", "/rules").text

    @operation("rulesMarkdown", "GET", "/rules.md")
    def rules_markdown(self) -> str:
        return self._send("GET", "/rules.md").text

    @operation("bridgeScript", "GET", "/bridge.js")
    def bridge_script(self) -> str:
        return self._send("GET", "/bridge.js").text

    # -- sessions ------------------------------------------------------------------------------
    @operation("createSession", "POST", "/v1/sessions")
    def create_session(self, uid: str, **fields: Unpack[m.CreateSessionFields]) -> m.SessionView:
        """`create_session("u1", id="s1", platform="android", timing={...})`: 201 and the view
        (with `warnings` when a field was unknown)."""
        return cast(m.SessionView, self._json("POST", "/v1/sessions", {"uid": uid, **fields}, expect=(201,),
                                              validated=True))

    @operation("listSessions", "GET", "/v1/sessions")
    def list_sessions(self, uid: Optional[str] = None, label: Optional[str] = None, status: Optional[str] = None,
                      limit: Optional[int] = None, after: Optional[str] = None) -> m.SessionList:
        params = {"uid": uid, "label": label, "status": status, "limit": limit, "after": after}
        return cast(m.SessionList, self._json("GET", "/v1/sessions", params=params))

    def iter_sessions(self, **filters: Any) -> Iterator[m.SessionView]:
        """Every session matching the filters, page after page."""
        after: Optional[str] = None
        while True:
            page = self.list_sessions(**filters, after=after)
            yield from page["sessions"]
            after = page.get("next")
            if not after:
                return

    @operation("purgeLabel", "DELETE", "/v1/sessions")
    def purge_label(self, label: str) -> m.Deleted:
        return cast(m.Deleted, self._json("DELETE", "/v1/sessions", params={"label": label}))

    @operation("reset", "POST", "/v1/reset")
    def reset(self) -> m.Deleted:
        return cast(m.Deleted, self._json("POST", "/v1/reset"))

    @operation("readSession", "GET", "/v1/sessions/{id}")
    def read_session(self, session_id: str) -> m.SessionView:
        return cast(m.SessionView, self._json("GET", self._session(session_id)))

    @operation("deleteSession", "DELETE", "/v1/sessions/{id}")
    def delete_session(self, session_id: str) -> None:
        self._send("DELETE", self._session(session_id), expect=(204,))

    # -- inputs --------------------------------------------------------------------------------
    @staticmethod
    def _conditions(idempotency_key: Optional[str], if_match: Optional[int]) -> dict[str, Optional[str]]:
        return {"Idempotency-Key": idempotency_key, "If-Match": None if if_match is None else str(if_match)}

    def _input(self, session_id: str, suffix: str, body: Mapping[str, Any], idempotency_key: Optional[str],
               if_match: Optional[int], validated: bool = True) -> m.InputResponse:
        return cast(m.InputResponse, self._json("POST", self._session(session_id) + suffix, body,
                                                headers=self._conditions(idempotency_key, if_match), validated=validated))

    @operation("gesture", "POST", "/v1/sessions/{id}/gestures")
    def gesture(self, session_id: str, type: m.GestureType, *, idempotency_key: Optional[str] = None, if_match: Optional[int] = None,
                **fields: Unpack[m.GestureFields]) -> m.InputResponse:
        """`gesture("s1", "pull", requestId="p1")`, `gesture("s1", "dialog.choose", actionId="ok")`."""
        return self._input(session_id, "/gestures", {"type": type, **fields}, idempotency_key, if_match)

    @operation("lifecycle", "POST", "/v1/sessions/{id}/lifecycle")
    def lifecycle(self, session_id: str, type: m.LifecycleType, *, idempotency_key: Optional[str] = None, if_match: Optional[int] = None,
                  **fields: Unpack[m.LifecycleFields]) -> m.InputResponse:
        """`lifecycle("s1", "background")`, `lifecycle("s1", "foreground", requestId="fg-1")`, `lifecycle("s1", "teardown")`."""
        return self._input(session_id, "/lifecycle", {"type": type, **fields}, idempotency_key, if_match)

    @operation("webEvent", "POST", "/v1/sessions/{id}/web-events")
    def web_event(self, session_id: str, message: Union[m.WebEvent, Mapping[str, Any]], *, idempotency_key: Optional[str] = None,
                  if_match: Optional[int] = None) -> m.InputResponse:
        """A bridge message exactly as Web emits it (its unknown fields are Web's own, H21)."""
        return self._input(session_id, "/web-events", dict(message), idempotency_key, if_match, validated=False)

    @operation("command", "POST", "/v1/sessions/{id}/commands")
    def command(self, session_id: str, type: m.CommandType, *, idempotency_key: Optional[str] = None, if_match: Optional[int] = None,
                **fields: Unpack[m.CommandFields]) -> m.InputResponse:
        """`command("s1", "todayPage.scrollToSection", batchId="b1")`."""
        return self._input(session_id, "/commands", {"type": type, **fields}, idempotency_key, if_match)

    @overload
    def clock(self, session_id: str, *, idempotency_key: Optional[str] = None, if_match: Optional[int] = None,
              **move: Unpack[m.ClockRequestAdvance]) -> m.InputResponse: ...

    @overload
    def clock(self, session_id: str, *, idempotency_key: Optional[str] = None, if_match: Optional[int] = None,
              **move: Unpack[m.ClockRequestAdvanceTo]) -> m.InputResponse: ...

    @overload
    def clock(self, session_id: str, *, idempotency_key: Optional[str] = None, if_match: Optional[int] = None,
              **move: Unpack[m.ClockRequestToNextTimer]) -> m.InputResponse: ...

    @overload
    def clock(self, session_id: str, *, idempotency_key: Optional[str] = None, if_match: Optional[int] = None,
              **move: Unpack[m.ClockRequestRunUntilIdle]) -> m.InputResponse: ...

    @operation("clock", "POST", "/v1/sessions/{id}/clock")
    def clock(self, session_id: str, *, idempotency_key: Optional[str] = None, if_match: Optional[int] = None,
              **move: Any) -> m.InputResponse:
        """`clock("s1", advanceMs=6000)`, `clock("s1", toMs=12000)`, `clock("s1", toNextTimer=True)`, `clock("s1", runUntilIdle=True)`."""
        return self._input(session_id, "/clock", move, idempotency_key, if_match)

    @operation("steps", "POST", "/v1/sessions/{id}/steps")
    def steps(self, session_id: str, steps: Iterable[Mapping[str, Any]], *, idempotency_key: Optional[str] = None,
              if_match: Optional[int] = None) -> m.StepsResponse:
        """A batch in one transaction: `[{"gesture": {...}}, {"clock": {...}}, ...]` → `{results, session}`. The
        batch is taken as the JSON it is (relayed from an export or a page); `models.StepsRequest` types one."""
        return cast(m.StepsResponse, self._json("POST", self._session(session_id) + "/steps", list(steps),
                                                headers=self._conditions(idempotency_key, if_match), validated=True))

    # -- reading back --------------------------------------------------------------------------
    @overload
    def timeline(self, session_id: str, after: Optional[int] = None, limit: Optional[int] = None, kind: Optional[str] = None,
                 wait_ms: Optional[int] = None, format: Literal["json"] | None = None) -> m.TimelinePage: ...

    @overload
    def timeline(self, session_id: str, after: Optional[int] = None, limit: Optional[int] = None, kind: Optional[str] = None,
                 wait_ms: Optional[int] = None, *, format: Literal["trace"]) -> str: ...

    @operation("timeline", "GET", "/v1/sessions/{id}/timeline")
    def timeline(self, session_id: str, after: Optional[int] = None, limit: Optional[int] = None, kind: Optional[str] = None,
                 wait_ms: Optional[int] = None, format: Optional[str] = None) -> Union[m.TimelinePage, str]:
        """One page `{entries, next, more}`; `wait_ms` long-polls for entries after `after`;
        `format="trace"` answers the session as a golden host trace (NDJSON text)."""
        params = {"after": after, "limit": limit, "kind": kind, "waitMs": wait_ms, "format": format}
        # A long poll may take `wait_ms` before it answers: the read deadline waits that much more.
        timeout = None if wait_ms is None else (self.http.timeout.read or 30.0) + wait_ms / 1000
        response = self._send("GET", self._session(session_id) + "/timeline", params=params, timeout=timeout)
        return response.text if format == "trace" else cast(m.TimelinePage, response.json())

    def entries(self, session_id: str, kind: Optional[str] = None, after: int = 0) -> list[m.TimelineEntry]:
        """Every entry after `after` (all pages), optionally of one kind."""
        found: list[m.TimelineEntry] = []
        while True:
            page = self.timeline(session_id, after=after, limit=1000, kind=kind)
            found += page["entries"]
            if not page["more"]:
                return found
            after = page["next"]

    @operation("watchdogs", "GET", "/v1/sessions/{id}/watchdogs")
    def watchdogs(self, session_id: str) -> list[m.Watchdog]:
        return cast(m.WatchdogsResponse, self._json("GET", self._session(session_id) + "/watchdogs"))["watchdogs"]

    @operation("sessionEvents", "GET", "/v1/sessions/{id}/events")
    def session_events(self, session_id: str, after: Optional[int] = None, last_event_id: Optional[str] = None) -> Iterator[StreamEvent]:
        """The session's entries as they are recorded (Server-Sent Events); ends when the session
        is closed and its last entry sent, or purged. Iterate it; break to stop."""
        return read_events(self.http, self._session(session_id) + "/events", {"after": after}, last_event_id)

    @operation("accountEvents", "GET", "/v1/events")
    def account_events(self, uid: str, last_event_id: Optional[str] = None) -> Iterator[StreamEvent]:
        """Every session of one account as one stream (event ids `<session>/<seq>`)."""
        return read_events(self.http, "/v1/events", {"uid": uid}, last_event_id)

    @operation("exportSession", "GET", "/v1/sessions/{id}/export")
    def export_session(self, session_id: str, after: Optional[int] = None,
                       limit: Optional[int] = None) -> m.ExportSessionResponse:
        """One page of the session as a script: `{create, steps, closed, next, more}`."""
        return cast(m.ExportSessionResponse, self._json("GET", self._session(session_id) + "/export",
                                                        params={"after": after, "limit": limit}))

    def export_all(self, session_id: str) -> Script:
        """The whole script: `{create, steps}` (every page), replayable with `replay`."""
        page = self.export_session(session_id)
        script: Script = {"create": page["create"], "steps": list(page["steps"])}
        while page["more"]:
            page = self.export_session(session_id, after=page["next"])
            script["steps"] += page["steps"]
        return script

    def replay(self, script: Script | Mapping[str, Any], session_id: Optional[str] = None) -> m.SessionView:
        """Creates a session from an export (`export_all`) and applies its steps, 1,000 a batch.
        It keeps the export's session id unless given another: request ids the server made derive
        from the session's id, so under another id Web's recorded answers name other requests."""
        create = dict(script["create"])
        if session_id is not None:
            create["id"] = session_id
        view = cast(m.SessionView, self._json("POST", "/v1/sessions", create, expect=(201,)))
        steps: list[dict[str, Any]] = list(script["steps"])
        for start in range(0, len(steps), 1000):
            view = self.steps(view["id"], steps[start:start + 1000])["session"]
        return view

    @operation("forkSession", "POST", "/v1/sessions/{id}/fork")
    def fork_session(self, session_id: str, new_id: Optional[str] = None) -> m.SessionView:
        return cast(m.SessionView, self._json("POST", self._session(session_id) + "/fork", {"id": new_id} if new_id else None,
                                              expect=(201,), validated=True))

    @operation("report", "GET", "/v1/sessions/{id}/report")
    def report(self, session_id: str) -> m.Report:
        """`{conforms, violations, requests}`: the contract monitor's verdict on Web (M1–M9)."""
        return cast(m.Report, self._json("GET", self._session(session_id) + "/report"))

    @operation("reportJunit", "GET", "/v1/sessions/{id}/report/junit")
    def report_junit(self, session_id: str) -> str:
        return self._send("GET", self._session(session_id) + "/report/junit").text

    @operation("violations", "GET", "/v1/violations")
    def violations(self, uid: Optional[str] = None, code: Optional[str] = None, limit: Optional[int] = None,
                   after: Optional[str] = None) -> m.ViolationPage:
        params = {"uid": uid, "code": code, "limit": limit, "after": after}
        return cast(m.ViolationPage, self._json("GET", "/v1/violations", params=params))

    @overload
    def verify_host_trace(self, trace: Trace, *, keep: Optional[str] = None, label: Optional[str] = None,
                          tolerance_ms: Optional[int] = None, junit: Literal[False] = False) -> m.Verdict: ...

    @overload
    def verify_host_trace(self, trace: Trace, *, keep: Optional[str] = None, label: Optional[str] = None,
                          tolerance_ms: Optional[int] = None, junit: Literal[True]) -> str: ...

    @operation("verifyHostTrace", "POST", "/v1/host-traces")
    def verify_host_trace(self, trace: Trace, *, keep: Optional[str] = None, label: Optional[str] = None,
                          tolerance_ms: Optional[int] = None, junit: bool = False) -> Union[m.Verdict, str]:
        """Judges a native host's recorded trace (NDJSON bytes, text, or lines / dicts): the
        verdict (`conforms`, `divergences`, …), or with `junit=True` JUnit XML. An unsound trace
        is `TodaysimError` `invalid_trace` naming its line."""
        params = {"keep": keep, "label": label, "toleranceMs": tolerance_ms, "format": "junit" if junit else None}
        response = self._send("POST", "/v1/host-traces", content=_ndjson(trace), params=params,
                              headers={"Content-Type": "application/x-ndjson"})
        return response.text if junit else cast(m.Verdict, response.json())

    @overload
    def compare_traces(self, a: Trace, b: Trace, *, tolerance_ms: Optional[int] = None,
                       junit: Literal[False] = False) -> m.TraceComparison: ...

    @overload
    def compare_traces(self, a: Trace, b: Trace, *, tolerance_ms: Optional[int] = None, junit: Literal[True]) -> str: ...

    @operation("compareTraces", "POST", "/v1/host-traces/compare")
    def compare_traces(self, a: Trace, b: Trace, *, tolerance_ms: Optional[int] = None,
                       junit: bool = False) -> Union[m.TraceComparison, str]:
        """Compares two recordings of one scenario (iOS against Android, or two builds; each
        NDJSON bytes, text, or lines / dicts): `identical`, every output that differs with each
        side's line and time and its rule, and each trace's own verdict (`a`, `b`); with
        `junit=True` JUnit XML. A bad trace is `TodaysimError` `invalid_trace` (`field`
        `a: line N`); traces whose inputs do not align are `traces_not_comparable`."""
        body = {"a": _ndjson(a).decode(), "b": _ndjson(b).decode()}
        params = {"toleranceMs": tolerance_ms, "format": "junit" if junit else None}
        response = self._send("POST", "/v1/host-traces/compare", json_body=body, params=params)
        return response.text if junit else cast(m.TraceComparison, response.json())


def _ndjson(trace: Trace) -> bytes:
    """A trace as NDJSON bytes: text and bytes as given, lines (text or dicts) one a line."""
    if isinstance(trace, str):
        return trace.encode()
    if isinstance(trace, (bytes, bytearray)):
        return bytes(trace)
    return "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in trace).encode()
