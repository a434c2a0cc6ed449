"""What a system test sees on the wire and the package's client folds away, through the client's
own `transport=` option: whether a request reached a server at all, the last answer's status and
headers, and how many answers were replayed from a stored Idempotency-Key.

    wire = Wire()
    client = Client(server.url, transport=wire)

The client answers a connection that broke under a request as `TodaysimError` status 0 with
`sent` True (it may have been applied), and a connection refused — nothing sent, nothing can
have been applied — with `sent` False, after sending it again for `retry_refused_for` seconds;
`refused` counts the refusals this wire saw (the client's retry sits above it)."""
from __future__ import annotations

import ssl
import threading
from typing import Optional

import httpx

_TLS: list[ssl.SSLContext] = []  # one for every Wire (loopback HTTP never uses it)
_TLS_LOCK = threading.Lock()


def _tls() -> ssl.SSLContext:
    """httpx makes a TLS context per transport, loading the CA bundle: 70 ms of CPU on a loaded
    machine, which held a SIGTERM round's clients back past its SIGTERM. One made once serves all."""
    with _TLS_LOCK:
        if not _TLS:
            _TLS.append(ssl.create_default_context())
        return _TLS[0]


class Wire(httpx.HTTPTransport):
    """An `httpx` transport for `Client(url, transport=Wire())` (one per client; thread-safe)."""

    def __init__(self) -> None:
        super().__init__(verify=_tls())
        self.last: Optional[httpx.Response] = None  # the last answer (its body may be unread)
        self.replayed = 0  # answers with `Idempotent-Replayed: true`
        self.refused = 0  # connections refused (nothing sent)
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = super().handle_request(request)
        except httpx.ConnectError:
            with self._lock:
                self.refused += 1
            raise
        with self._lock:
            self.last = response
            if response.headers.get("Idempotent-Replayed") == "true":
                self.replayed += 1
        return response
