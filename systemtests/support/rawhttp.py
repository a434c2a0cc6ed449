"""HTTP below any client, for what no client would send (issue 7, item 5; issue 12): malformed
or ambiguous requests, oversized and never-ending bodies, connections that never finish a
request. One request on a fresh connection (`call`), raw bytes on a raw socket and the one
answer read back (`send_raw`, `read_answer`), a chunked upload (`chunked`), whether and how the
server closed a socket (`how_closed`, `note_cuts`), an event stream read in a thread
(`EventStream`). Ordinary API calls use the package's client, `todaysim.client.Client`.

Every wait here is a deadline no healthy run comes near (`ANSWER_SECONDS`, 30 s): it ends as
soon as what it waits for happened."""
from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

HOST = "127.0.0.1"
ANSWER_SECONDS = 30.0  # any answer that should be immediate: a deadline no healthy run comes near
LIMIT = 1 << 20        # the server's body limit


def short(data: bytes, n: int = 160) -> str:
    return repr(data[:n]) + ("…" if len(data) > n else "")


def problem_value(body: bytes, key: str) -> Optional[str]:
    """A problem document's `code` or `field` (None when the body is not one)."""
    try:
        value = json.loads(body).get(key)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


@dataclass
class Reply:
    """What `call` got: the status, headers and body of one answer, and how long it took."""
    status: int
    headers: http.client.HTTPMessage
    data: bytes
    seconds: float

    @property
    def content_type(self) -> str:
        return str(self.headers.get("Content-Type", ""))

    def is_problem(self, code: str) -> bool:
        return self.content_type.startswith("application/problem+json") and problem_value(self.data, "code") == code


def call(port: int, method: str, path: str, body: Any = None, content_type: Optional[str] = "application/json",
         headers: Optional[dict[str, str]] = None, timeout: float = ANSWER_SECONDS) -> Reply:
    """One request on a fresh connection, its body sent as given (bytes) or as JSON."""
    all_headers = dict(headers or {})
    data = body if body is None or isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
    if data is not None and content_type is not None:
        all_headers["Content-Type"] = content_type
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    began = time.monotonic()
    try:
        connection.request(method, path, body=data, headers=all_headers)
        response = connection.getresponse()
        read = response.read()
        return Reply(response.status, response.headers, read, time.monotonic() - began)
    finally:
        connection.close()


@dataclass
class Answer:
    """What came back on a raw socket. kind: answer | closed (no answer) | reset | silent (nothing
    by the deadline) | cut (a send failed) | stalled (a send blocked for good)."""
    kind: str
    raw: bytes = b""
    seconds: float = 0.0
    status: Optional[int] = None
    fields: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    trailing: bytes = b""
    error: str = ""
    sent: int = 0  # body bytes sent before it (chunked uploads)

    @property
    def closes(self) -> bool:
        return self.fields.get("connection", "").lower() == "close"

    def is_problem(self, code: str) -> bool:
        return (self.fields.get("content-type", "").startswith("application/problem+json")
                and problem_value(self.body, "code") == code)

    def said(self) -> str:
        """What came back, in a few words: kind, status, error."""
        return " ".join(str(part) for part in (self.kind, self.status, self.error) if part)


def _head(buffer: bytes) -> tuple[int, dict[str, str], int]:
    top, _, _ = buffer.partition(b"\r\n\r\n")
    lines = top.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower().decode(errors="replace")] = value.strip().decode(errors="replace")
    try:
        status = int(parts[1])
    except (IndexError, ValueError):
        status = 0
    return status, fields, len(top) + 4


def read_answer(sock: socket.socket, deadline: float) -> Answer:
    """Reads one HTTP response from a raw socket until it is complete (and, when it announces
    `Connection: close`, until the close), the server closes or resets, or `deadline` passes."""
    buffer, began = b"", time.monotonic()
    head: Optional[tuple[int, dict[str, str], int]] = None

    def answer(kind: str, error: str = "") -> Answer:
        seconds = time.monotonic() - began
        if head is None:
            return Answer(kind, buffer, seconds, error=error)
        status, fields, length = head
        body = buffer[length:]
        announced = int(fields.get("content-length", "0") or 0)
        return Answer("answer", buffer, seconds, status, fields, body[:announced], body[announced:], error)

    while True:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise socket.timeout
            sock.settimeout(remaining)
            data = sock.recv(65536)
        except socket.timeout:  # an answer when a complete one lacks only its announced close
            complete = head is not None and len(buffer) - head[2] >= int(head[1].get("content-length", "0") or 0)
            return answer("silent") if complete else Answer("silent", buffer, time.monotonic() - began)
        except OSError as error:
            return answer("reset", repr(error))
        if not data:
            return answer("closed")
        buffer += data
        if head is None and b"\r\n\r\n" in buffer:
            head = _head(buffer)
        if head:
            status, fields, length = head
            if (len(buffer) - length >= int(fields.get("content-length", "0") or 0)
                    and fields.get("connection", "").lower() != "close"):
                return answer("answer")


def send_raw(port: int, data: bytes, seconds: float = ANSWER_SECONDS) -> tuple[Answer, socket.socket]:
    """Sends raw bytes on a fresh socket and reads one answer for up to `seconds`; the socket is
    the caller's to close (one the server has not answered yet may be watched further)."""
    sock = socket.create_connection((HOST, port), timeout=ANSWER_SECONDS)
    try:
        sock.sendall(data)
    except OSError as error:
        return Answer("reset", error=repr(error)), sock
    return read_answer(sock, time.monotonic() + seconds), sock


def exchange(port: int, data: bytes, seconds: float = ANSWER_SECONDS) -> Answer:
    """`send_raw`, the socket closed afterwards."""
    answer, sock = send_raw(port, data, seconds)
    sock.close()
    return answer


def readable(sock: socket.socket, seconds: float) -> bool:
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(int(seconds * 1000)))


def how_closed(sock: socket.socket) -> Optional[str]:
    """What a socket the server may have closed holds: None (nothing yet), closed, an answer or a reset."""
    try:
        sock.setblocking(False)
        data = sock.recv(65536)
        return "closed" if not data else f"answered {short(data, 80)}"
    except BlockingIOError:
        return None
    except OSError as error:
        return f"reset ({error.__class__.__name__})"


@dataclass
class Held:
    """A connection the test keeps open and the server must cut: when it was opened, when (and how)
    the server closed it, how many bytes of its request it sent."""
    sock: socket.socket
    kind: str = ""
    opened: float = field(default_factory=time.monotonic)
    cut: Optional[float] = None
    how: str = ""
    sent: int = 0


def note_cuts(held: Iterable[Held], seconds: float) -> int:
    """Waits up to `seconds` for the not yet cut connections to be closed by the server, recording
    when and how; returns how many are still open."""
    poller, by_fd = select.poll(), {}
    for entry in held:
        if entry.cut is None:
            by_fd[entry.sock.fileno()] = entry
            poller.register(entry.sock, select.POLLIN | select.POLLERR | select.POLLHUP)
    if not by_fd:
        return 0
    events = poller.poll(int(seconds * 1000))
    now = time.monotonic()
    for fd, _ in events:
        entry = by_fd[fd]
        entry.cut, entry.how = now, how_closed(entry.sock) or "readable"
    return len(by_fd) - len(events)


def chunked(port: int, path: str, total: int, endless: bool = False) -> Answer:
    """Streams a JSON Web event of `total` body bytes in 64 KiB chunks, then the final 0-chunk, and
    reads the answer. endless: no end to the JSON and no final chunk; stops as soon as the server
    answers or cuts the connection (or at `total`). `sent`: the body bytes sent before it;
    `seconds`: from the first byte."""
    sock = socket.create_connection((HOST, port), timeout=ANSWER_SECONDS)  # a send blocked this long: stalled
    prefix, suffix = b'{"type":"todayPage.track","name":"', b'"}'
    sent, outcome = 0, None
    began = time.monotonic()
    try:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
                     f"Transfer-Encoding: chunked\r\n\r\n".encode())
        while sent < total:
            size = min(65536, total - sent)
            piece = b"a" * size
            if sent == 0:
                piece = prefix + piece[len(prefix):]
            if sent + size == total and not endless:
                piece = piece[:-len(suffix)] + suffix
            sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            sent += size
            if endless and readable(sock, 0):
                break
        if not endless:
            sock.sendall(b"0\r\n\r\n")
    except socket.timeout as error:  # the server stopped reading without a word: a hang
        outcome = Answer("stalled", error=repr(error))
    except OSError as error:
        outcome = Answer("cut", error=repr(error))
    if outcome is None:
        outcome = read_answer(sock, time.monotonic() + ANSWER_SECONDS)
    sock.close()
    outcome.sent, outcome.seconds = sent, time.monotonic() - began
    return outcome


class EventStream:
    """`GET /v1/sessions/{id}/events` on a raw socket, read in a thread: what came when, and
    whether (when, how) the server ended the stream."""

    def __init__(self, port: int, session: str):
        self.path = f"/v1/sessions/{session}/events"
        self.sock = socket.create_connection((HOST, port), timeout=ANSWER_SECONDS)
        self.opened = time.monotonic()
        self.sock.sendall(f"GET {self.path} HTTP/1.1\r\nHost: {HOST}\r\nAccept: text/event-stream\r\n\r\n".encode())
        self.pieces: list[tuple[float, bytes]] = []
        self.ended: Optional[float] = None
        self.how = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        self.sock.settimeout(0.25)
        while not self.done.is_set():
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError as error:
                self.ended, self.how = time.monotonic(), f"reset ({error.__class__.__name__})"
                return
            if not data:
                self.ended, self.how = time.monotonic(), "closed"
                return
            self.pieces.append((time.monotonic(), data))

    def received(self) -> bytes:
        return b"".join(data for _, data in self.pieces)

    def heartbeats(self, after: float = 0.0) -> int:
        """The `: heartbeat` comments that came `after` seconds or more after the stream was opened."""
        return sum(data.count(b": heartbeat") for at, data in self.pieces if at - self.opened >= after)

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self.sock.close()
