"""How the client reaches the server: one HTTP connection pool, a refused connection tried again,
and every failure, answered or not, as `TodaysimError`.

A refused connection is the one failure any request may be sent again after, a POST too: nothing
reached a server, so nothing can have been applied (a server restarting on its port, a replica
coming back). `Client(retry_refused_for=seconds)` has `RetryRefused` do that, once, for every
request and stream of the client. Anything else is not retried here: a connection that broke
after the request was sent may have applied it (send it again with its `Idempotency-Key`), and an
answer is the server's to give.
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterable, Mapping, Optional

import httpx

__all__ = ["Connection", "RetryRefused", "TodaysimError"]


class TodaysimError(Exception):
    """A refusal by the server: its problem document (RFC 9457) as attributes.

    `status` (the HTTP status), `code` (the stable problem code, e.g. `invalid_field`), `field`
    (for `invalid_field`, the field named), `detail`, and `problem` (the whole document). A
    failure to reach the server at all has status 0 and code `unreachable`; `sent` is False when
    the request never left (its connection was refused: sending it again is safe) and True
    otherwise (answered, or broken after it was sent: it may have been applied).
    """

    def __init__(self, status: int, code: str, detail: str, field: Optional[str] = None,
                 problem: Optional[dict[str, Any]] = None, request: str = "", sent: bool = True):
        self.status, self.code, self.detail, self.field = status, code, detail, field
        self.problem = problem or {}
        self.request = request
        self.sent = sent
        where = f" (field {field})" if field else ""
        super().__init__(f"{request}: {status} {code}{where}: {detail}" if request else f"{status} {code}{where}: {detail}")

    @classmethod
    def unreachable(cls, error: httpx.TransportError, what: str, request: str) -> "TodaysimError":
        """A transport failure: `what` failed, and whether the request left at all."""
        if isinstance(error, httpx.ConnectError):
            return cls(0, "unreachable", f"{what}: the connection was refused, nothing was sent ({error})", request=request, sent=False)
        return cls(0, "unreachable", f"{what}: {error}", request=request)

    @classmethod
    def of_answer(cls, response: httpx.Response, request: str) -> "TodaysimError":
        """The refusal an answer carries (its problem document, or its status and text)."""
        try:
            problem = response.json()
        except ValueError:
            problem = {}
        if not isinstance(problem, dict):
            problem = {}
        return cls(response.status_code, str(problem.get("code", "unexpected_status")),
                   str(problem.get("detail", response.text[:300])), problem.get("field"), problem, request)


class RetryRefused(httpx.BaseTransport):
    """`transport`, with a request whose connection is refused sent again until `seconds` after
    its first try (pauses of 10 ms doubling to 250 ms); then the refusal is raised. `clock` and
    `sleep` are time's, for tests to replace."""

    def __init__(self, transport: httpx.BaseTransport, seconds: float,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        if not seconds >= 0:
            raise ValueError(f"retry_refused_for must be a number of seconds >= 0, not {seconds!r}")
        self.transport, self.seconds, self.clock, self.sleep = transport, seconds, clock, sleep

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = self.clock() + self.seconds
        pause = 0.01
        while True:
            try:
                return self.transport.handle_request(request)
            except httpx.ConnectError:
                left = deadline - self.clock()
                if left <= 0:
                    raise
                self.sleep(min(pause, left))
                pause = min(pause * 2, 0.25)

    def close(self) -> None:
        self.transport.close()


class Connection:
    """The client's plumbing: the base URL, the token, the field validation and the timeout, and
    `send` / `json`, which turn every failure into `TodaysimError`."""

    def __init__(self, base_url: str, token: Optional[str], timeout: float, field_validation: Optional[str],
                 transport: Optional[httpx.BaseTransport], retry_refused_for: float):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.field_validation = field_validation
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if retry_refused_for:
            transport = RetryRefused(transport or httpx.HTTPTransport(), retry_refused_for)
        self.http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)

    def close(self) -> None:
        self.http.close()

    def _send(self, method: str, path: str, *, json_body: Any = None, content: Optional[bytes] = None,
              params: Optional[Mapping[str, Any]] = None, headers: Optional[Mapping[str, Optional[str]]] = None,
              expect: Iterable[int] = (200,), validated: bool = False, timeout: Optional[float] = None) -> httpx.Response:
        query = {k: v for k, v in (params or {}).items() if v is not None}
        if validated and self.field_validation and "fieldValidation" not in query:
            query["fieldValidation"] = self.field_validation
        request = f"{method} {path}"
        try:
            response = self.http.request(method, path, params=query or None, headers={k: v for k, v in (headers or {}).items() if v is not None},
                                         content=content if content is not None else (None if json_body is None else json.dumps(json_body).encode()),
                                         timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT)
        except httpx.TransportError as error:
            raise TodaysimError.unreachable(error, f"cannot reach todaysim at {self.base_url}", request) from None
        if response.status_code not in tuple(expect):
            raise TodaysimError.of_answer(response, request)
        return response

    def _json(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        """The answer's JSON (None when it has no body); each method casts it to the document's type."""
        response = self._send(method, path, json_body=body, **kwargs)
        return response.json() if response.content else None
