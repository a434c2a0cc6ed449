"""Abuse (issue 7, item 5): bodies over the limit, deeply nested or huge JSON, invalid UTF-8,
wrong content types, malformed requests, hundreds of slow connections that never finish a
request (silent, partial or trickling a header byte now and then), thousands of sessions
created fast, and (issue 12, item 9) fields past their limits: 100 creations with a 1 MiB uid,
NULs in uid/label and their filters, a 1 MiB Web event field. Each must get a clear answer or be cut off, ordinary clients must keep being
served, long polls and event streams must outlive the request deadline, memory must stay
bounded and nothing in the store may change (reference sessions, their timelines and the
session list are compared byte for byte after every phase).

    python3 abuse.py TODAYSIM_BINARY [SLOW=500] [CREATIONS=3000] [TIMEOUT=30]

TIMEOUT is the server's --connection-timeout-seconds (it is started with it and with
--heartbeat-seconds 1): the idle timeout and the deadline for a request's headers and body.
A run takes about 10 s plus TIMEOUT + 2 s when the server cuts what it must: about 40 s with
the defaults (500 slow connections, 3000 creations, 30 s), about 13 s for `100 300 3` (the fast
version for CI: SLOW < 500).

What fails the run (outcomes; see the FAIL messages): an announced oversized body answered 413
payload_too_large before its body is sent; every other bad body answered as listed; a chunked
body that grows past 1 MiB but ends by 8 MiB gets a 413 payload_too_large problem document; one
that never ends has its connection cut past 8 MiB and before 32 MiB (counted in bytes, not
seconds); every ordinary request during the slow phase answered 200, at least one of them
before the server cut its first slow connection (it serves beside them; a server that did not
would answer the first only once the slow ones are cut, TIMEOUT s later) and each input applied
once; every idle partial connection and every trickler (a header byte every min(3, TIMEOUT/3) s)
closed by the server, none before TIMEOUT - 1 s (a lower bound on the server's own timer: load
only makes cuts later); a long poll waiting TIMEOUT + 2 s answered 200 with no entries after at
least TIMEOUT s (when that fits in waitMs' 30 s, i.e. TIMEOUT < 28) and an event stream still
open and getting heartbeats after the TIMEOUT s deadline; peak RSS (VmHWM) under 300 MiB and
RSS growth over two more rounds of the bad bodies under 40 MiB; every over-limit field a 400
invalid_field naming it, the database growing under 5 MiB and RSS under 40 MiB over those, no
M8 from an oversized Web event field, a list of 1000 sessions under 1 MiB; SIGTERM: exit 0.

Time bounds that stay are deadlines no healthy run comes near (issue 20, item 1): an answer
that should be immediate may take ANSWER_SECONDS (30 s); a slow connection or trickler must be
cut by TIMEOUT + 60 s (CUT_BOUND; the server cuts at TIMEOUT), the stream's heartbeat after the
deadline may take 30 s more, SIGTERM's exit 120 s (the server drains for 5 s at most). A healthy
run waits none of them out: each wait ends as soon as what it waits for happened.

Latency goal (a reported figure, with its goal beside it): the ordinary requests' p99 during
the slow phase <= 500 ms. In the fast version (SLOW < 500, Scripts/test) it never fails the
run; in the long version (run by hand) a missed goal is a failure. The creation rate, its p99
and every phase's duration are figures only. Surprising behaviour that the brief does not call
a failure is printed as FINDING.
"""
import http.client
import json
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import abuse_http  # issue 12's phases at the HTTP layer (smuggling, connection limit, streams)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testkit import free_port  # noqa: E402

BINARY = sys.argv[1]
SLOW = int(sys.argv[2]) if len(sys.argv) > 2 else 500
CREATIONS = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
TIMEOUT = int(sys.argv[4]) if len(sys.argv) > 4 else 30
if not 1 <= TIMEOUT <= 3600:
    raise SystemExit(f"abuse: TIMEOUT must be 1-3600 seconds (the server's --connection-timeout-seconds), not {TIMEOUT}")
TRICKLERS = max(10, SLOW // 5)
STREAMS = max(1000, SLOW * 4)            # event streams opened and closed at once (stream memory)
FAST = SLOW < 500                        # the fast version (Scripts/test): latency goals reported, not failed
CONNECTION_LIMIT = None if SLOW >= 500 else 20  # --max-connections of the limit phase (None: the default)
TRICKLE_SECONDS = min(3.0, TIMEOUT / 3)   # one header byte this often: always under the timeout
IDLE_TIMEOUT = float(TIMEOUT)             # the server's idle timeout and request deadline
# Every unfinished request must be cut by this long after its opening. The server cuts at
# TIMEOUT; 60 s more is a bound no healthy run comes near (a loaded machine is late by
# milliseconds, not a minute): it catches a deadline that never fires, not a slow machine.
CUT_BOUND = IDLE_TIMEOUT + 60
EARLY_CUT = IDLE_TIMEOUT - 1  # ... and none before this: the server's timer cannot fire early
LONG_POLL_MS = min(TIMEOUT * 1000 + 2000, 30000)      # waitMs of the long poll that must outlive the deadline
HEARTBEAT_SECONDS = 1
ORDINARY_GETS, ORDINARY_INPUTS = 200, 50
P99_GOAL_MS = 500            # the ordinary requests' p99 in the slow phase: a goal (failing in the long version only)
PEAK_RSS_BOUND_MIB = 300
ROUND_GROWTH_BOUND_MIB = 40
ANSWER_SECONDS = 30          # any answer that should be immediate: a deadline no healthy run comes near
STOP_SECONDS = 120           # SIGTERM to exit; the server drains for 5 s at most
LIMIT = 1 << 20
CHUNK_CAP = 8 * LIMIT        # a chunked body past this has its connection cut
ENDLESS_CAP = 4 * CHUNK_CAP  # an endless chunked upload not cut by then fails
CREATION_THREADS = 8
HOST = "127.0.0.1"

WORK = tempfile.mkdtemp(prefix="todaysim-abuse-")
DB = os.path.join(WORK, "db.sqlite")
STARTED = time.monotonic()
PORT = free_port()
state = {"process": None, "phase": "setup", "checks": 0}
failures, findings = [], []
rss_figures = []             # (phase, KiB)
tally = {"bad": 0, "statuses": {}, "slowest_bad": 0.0}


def check(ok, message):
    state["checks"] += 1
    if not ok:
        failures.append(f"[{state['phase']}] {message}")
        print(f"FAIL [{state['phase']}] {message}", flush=True)
    return ok


def goal(met, message):
    """A latency goal: printed as a figure with its goal beside it; a failure in the long
    version only (in the fast version, on a shared or loaded machine, it is a measurement)."""
    if FAST:
        state.setdefault("goals", []).append(met)
        print(f"GOAL {'met' if met else 'MISSED'} [{state['phase']}] {message} (reported, not a failure in the "
              f"fast version)", flush=True)
        return met
    return check(met, message)


def finding(message):
    if message not in findings:
        findings.append(message)
        print(f"FINDING [{state['phase']}] {message}", flush=True)


def short(data, n=160):
    return repr(data[:n]) + ("…" if len(data) > n else "")


def readable(sock, seconds):
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(int(seconds * 1000)))


def how_closed(sock):
    """What a socket the server may have closed holds: None (nothing yet), closed, an answer or a reset."""
    try:
        sock.setblocking(False)
        data = sock.recv(65536)
        return "closed" if not data else f"answered {short(data, 80)}"
    except BlockingIOError:
        return None
    except OSError as error:
        return f"reset ({error.__class__.__name__})"


def note_cuts(entries, seconds):
    """Waits up to `seconds` for the sockets of the entries not yet cut (entry["cut"] None) to be
    closed by the server, and records when (monotonic) and how; returns how many are still open."""
    poller, by_fd = select.poll(), {}
    for entry in entries:
        if entry["cut"] is None:
            by_fd[entry["sock"].fileno()] = entry
            poller.register(entry["sock"], select.POLLIN | select.POLLERR | select.POLLHUP)
    if not by_fd:
        return 0
    events = poller.poll(int(seconds * 1000))
    now = time.monotonic()
    for fd, _ in events:
        entry = by_fd[fd]
        entry["cut"], entry["how"] = now, how_closed(entry["sock"]) or "readable"
    return len(by_fd) - len(events)


# MARK: the server

def start():
    log = open(os.path.join(WORK, "server.log"), "wb")
    state["process"] = subprocess.Popen(
        [BINARY, "serve", "--port", str(PORT), "--db", DB, "--quiet", "--connection-timeout-seconds", str(TIMEOUT),
         "--heartbeat-seconds", str(HEARTBEAT_SECONDS)], stdout=log, stderr=log)
    deadline = time.time() + 30  # a loaded machine starts it slowly
    while time.time() < deadline:
        if state["process"].poll() is not None:
            break
        try:
            if call("GET", "/healthz", timeout=5)[0] == 200:
                return
        except (OSError, http.client.HTTPException):
            time.sleep(0.05)
    raise SystemExit(f"abuse: the server did not start (see {WORK}/server.log)")


def server_log_tail():
    try:
        with open(os.path.join(WORK, "server.log"), "rb") as f:
            return f.read()[-600:].decode(errors="replace")
    except OSError:
        return ""


def rss_kib(field="VmRSS"):
    with open(f"/proc/{state['process'].pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def alive_or_abort():
    """The process must still run and /healthz answer 200; without a server nothing else can be checked."""
    code = state["process"].poll()
    if code is not None:
        check(False, f"the server died (exit {code}); log tail: {server_log_tail()!r}")
        raise SystemExit(report())
    try:
        status = call("GET", "/healthz")[0]
    except (OSError, http.client.HTTPException) as error:
        status = repr(error)
    check(status == 200, f"/healthz answered {status}")


# MARK: HTTP

def call(method, path, body=None, content_type="application/json", headers=None, timeout=ANSWER_SECONDS):
    """One request on a fresh connection: (status, headers, body bytes, seconds)."""
    all_headers = dict(headers or {})
    if body is not None and not isinstance(body, (bytes, bytearray)):
        body = json.dumps(body).encode()
    if body is not None and content_type is not None:
        all_headers["Content-Type"] = content_type
    connection = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
    began = time.monotonic()
    try:
        connection.request(method, path, body=body, headers=all_headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, response, data, time.monotonic() - began
    finally:
        connection.close()


def read_answer(sock, deadline):
    """Reads one HTTP response from a raw socket. kind: answer | closed | reset | silent."""
    buffer, began = b"", time.monotonic()
    head = None
    while True:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise socket.timeout
            sock.settimeout(remaining)
            data = sock.recv(65536)
        except socket.timeout:
            if head and "body" in head:  # complete, only the announced close is missing
                return {"kind": "answer", "raw": buffer, "seconds": time.monotonic() - began, **head}
            return {"kind": "silent", "raw": buffer, "seconds": time.monotonic() - began}
        except OSError as error:
            kind = "answer" if head else "reset"
            return {"kind": kind, "raw": buffer, "error": repr(error), "seconds": time.monotonic() - began,
                    **(head or {})}
        if not data:
            if head:
                return {"kind": "answer", "raw": buffer, "seconds": time.monotonic() - began, **head}
            return {"kind": "closed", "raw": buffer, "seconds": time.monotonic() - began}
        buffer += data
        if head is None and b"\r\n\r\n" in buffer:
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
            head = {"status": status, "fields": fields, "head_length": len(top) + 4}
        if head:
            body = buffer[head["head_length"]:]
            length = int(head["fields"].get("content-length", "0") or 0)
            if len(body) >= length:
                head["body"] = body[:length]
                head["trailing"] = body[length:]
                if head["fields"].get("connection", "").lower() != "close":
                    return {"kind": "answer", "raw": buffer, "seconds": time.monotonic() - began, **head}


def raw(data, seconds):
    """Sends raw bytes on a fresh socket and reads one answer; returns (result, socket)."""
    sock = socket.create_connection((HOST, PORT), timeout=ANSWER_SECONDS)
    try:
        sock.sendall(data)
    except OSError as error:
        return {"kind": "reset", "raw": b"", "error": repr(error), "seconds": 0.0}, sock
    result = read_answer(sock, time.monotonic() + seconds)
    if result["kind"] == "answer" and "body" not in result:
        result["body"] = result["raw"][result["head_length"]:]
    return result, sock


def count_status(status, seconds):
    tally["bad"] += 1
    tally["statuses"][status] = tally["statuses"].get(status, 0) + 1
    tally["slowest_bad"] = max(tally["slowest_bad"], seconds)


def problem_code(body):
    try:
        return json.loads(body).get("code")
    except (ValueError, AttributeError):
        return None


def expect(what, method, path, body, statuses, code=None, content_type="application/json"):
    """Sends a bad (or borderline) body; requires one of `statuses` within ANSWER_SECONDS."""
    try:
        status, response, data, seconds = call(method, path, body, content_type=content_type)
    except (OSError, http.client.HTTPException) as error:
        check(False, f"{what}: {len(body)} bytes to {method} {path} got no answer: {error!r}")
        return None
    count_status(status, seconds)
    ok = check(status in statuses, f"{what}: {method} {path} ({len(body)} bytes, Content-Type {content_type}) "
                                   f"answered {status}, expected {statuses}: {short(data)}")
    if ok and code is not None:
        kind = response.getheader("Content-Type", "")
        check(kind.startswith("application/problem+json") and problem_code(data) == code,
              f"{what}: answered {status} {kind} {short(data)}, expected a problem document with code {code}")
    return status


# MARK: the store

def page_all(path, key):
    items, raws = [], []
    cursor = "0" if key == "entries" else ""
    while True:
        separator = "&" if "?" in path else "?"
        status, _, data, _ = call("GET", f"{path}{separator}limit=1000&after={urllib.parse.quote(cursor)}")
        if status != 200:
            raise SystemExit(f"abuse: GET {path} answered {status}: {short(data)}")
        raws.append(data)
        page = json.loads(data)
        items += page[key]
        if key == "entries":
            if not page["more"]:
                return items, raws
            cursor = str(page["next"])
        else:
            if page["next"] is None:
                return items, raws
            cursor = str(page["next"])


REFERENCE = ["abuse-ref-1", "abuse-ref-2", "abuse-ref-3"]
SINK, LIVE = "abuse-sink", "abuse-live"  # take the accepted big bodies / the ordinary inputs


def snapshot():
    """Byte-exact views and timelines of the reference sessions, their label's list, all ids."""
    parts = {}
    for session in REFERENCE:
        parts[f"view {session}"] = call("GET", f"/v1/sessions/{session}")[2]
        parts[f"timeline {session}"] = b"".join(page_all(f"/v1/sessions/{session}/timeline", "entries")[1])
    parts["list label=abuse-ref"] = b"".join(page_all("/v1/sessions?label=abuse-ref", "sessions")[1])
    parts["all session ids"] = json.dumps(sorted(s["id"] for s in page_all("/v1/sessions", "sessions")[0])).encode()
    return parts


def checkpoint(reference):
    alive_or_abort()
    now = snapshot()
    for name, data in reference.items():
        if now[name] != data:
            at = next((i for i, (a, b) in enumerate(zip(data, now[name])) if a != b), min(len(data), len(now[name])))
            check(False, f"the store changed: {name} differs at byte {at}: was {short(data[max(0, at - 40):], 120)}, "
                         f"now {short(now[name][max(0, at - 40):], 120)}")
        else:
            check(True, name)
    rss_figures.append((state["phase"], rss_kib()))


# MARK: phases

def setup():
    for number, session in enumerate(REFERENCE):
        status = call("POST", "/v1/sessions", {"uid": f"ref{number}", "id": session, "label": "abuse-ref"})[0]
        check(status == 201, f"creating {session} answered {status}")
        for path, body in ((f"/v1/sessions/{session}/gestures", {"type": "pull"}),
                           (f"/v1/sessions/{session}/web-events", {"type": "todayPage.track", "name": "ref"}),
                           (f"/v1/sessions/{session}/lifecycle", {"type": "background"})):
            status = call("POST", path, body)[0]
            check(status == 200, f"POST {path} answered {status}")
    for session in (SINK, LIVE):
        status = call("POST", "/v1/sessions", {"uid": "u", "id": session, "label": session})[0]
        check(status == 201, f"creating {session} answered {status}")


def announced(what, path, length):
    """Headers only, announcing `length` bytes: a 413 problem, although the body is never sent
    (the server decided on the headers; one waiting for the body would be cut by its timeout
    instead: `closed`, not an answer). How long it took is a figure (the slowest bad request)."""
    head = (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()
    result, sock = raw(head, ANSWER_SECONDS)
    sock.close()
    count_status(result.get("status", result["kind"]), result["seconds"])
    ok = check(result["kind"] == "answer" and result["status"] == 413,
               f"{what}: Content-Length {length} to {path} (headers only) got {result['kind']} "
               f"{result.get('status')} after {result['seconds']:.2f} s: {short(result['raw'])}")
    if ok:
        check(result["fields"].get("content-type", "").startswith("application/problem+json")
              and problem_code(result["body"]) == "payload_too_large",
              f"{what}: 413 without a payload_too_large problem document: {short(result['raw'])}")


def chunked(path, total, endless=False):
    """Streams a JSON string of `total` body bytes in 64 KiB chunks, then the final 0-chunk, and
    reads the answer. endless: no end to the JSON and no final chunk; stops as soon as the server
    answers or cuts the connection (or at `total`). Returns what happened, with the body bytes
    sent before it (`sent`) and the seconds from the first byte (`seconds`)."""
    sock = socket.create_connection((HOST, PORT), timeout=ANSWER_SECONDS)  # a send blocked this long: stalled
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
        outcome = {"kind": "stalled", "error": repr(error)}
    except OSError as error:
        outcome = {"kind": "cut", "error": repr(error)}
    if outcome is None:
        outcome = read_answer(sock, time.monotonic() + ANSWER_SECONDS)
    sock.close()
    outcome.update(sent=sent, seconds=time.monotonic() - began)
    return outcome


def outcome_said(outcome):
    """What came back, in a few words: kind, status, error."""
    return " ".join(str(part) for part in (outcome["kind"], outcome.get("status"), outcome.get("error")) if part)


def chunked_said(outcome):
    """One line for a chunked outcome: what came back, after how many bytes and seconds."""
    return (f"{outcome_said(outcome)} after {outcome['sent']} body bytes ({outcome['sent'] / LIMIT:.1f} MiB) in "
            f"{outcome['seconds']:.2f} s: {short(outcome.get('raw', b''))}")


def oversized():
    for path in ("/v1/sessions", "/v1/sessions/abuse-ref-1/web-events", "/v1/no-such-path"):
        announced("2 MiB announced", path, 2 * LIMIT)
        announced("10 GiB announced", path, 10 << 30)
        announced("1 MiB + 1 announced", path, LIMIT + 1)
    target = "/v1/sessions/abuse-ref-1/web-events"
    # A chunked body that grows past the limit but ends within CHUNK_CAP: read on, then a clean 413.
    ended = chunked(target, 2 * LIMIT)
    ok = check(ended["kind"] == "answer" and ended.get("status") == 413,
               f"a finished chunked body of {2 * LIMIT} bytes to {target} (64 KiB chunks, then 0\\r\\n\\r\\n) got "
               f"{chunked_said(ended)}; expected a 413 answer after the final chunk")
    if ok:
        check(ended["fields"].get("content-type", "").startswith("application/problem+json")
              and problem_code(ended["body"]) == "payload_too_large",
              f"a finished chunked body of {2 * LIMIT} bytes: 413 without a payload_too_large problem document: "
              f"{short(ended['raw'])}")
    # A chunked body that never ends: the connection cut once it is past CHUNK_CAP, before
    # ENDLESS_CAP (counted in bytes sent; how long it took is a figure in the tally).
    endless = chunked(target, ENDLESS_CAP, endless=True)
    cut = endless["kind"] in ("cut", "closed", "reset") or (
        endless["kind"] == "answer" and endless.get("status") == 413
        and endless["fields"].get("connection", "").lower() == "close")
    check(cut and CHUNK_CAP <= endless["sent"] < ENDLESS_CAP,
          f"an endless chunked upload to {target} (64 KiB chunks, no final chunk) got {chunked_said(endless)}; "
          f"expected the connection cut past {CHUNK_CAP} bytes, before {ENDLESS_CAP}")
    # Chunked, finished just over the limit: 413 (or cut), and exactly at it: not 413.
    over = chunked(target, LIMIT + 1)
    check(over["kind"] in ("cut", "closed", "reset") or over.get("status") == 413,
          f"a finished chunked body of {LIMIT + 1} bytes got {over['kind']} {over.get('status')}: "
          f"{short(over.get('raw', b''))}")
    exact = chunked(f"/v1/sessions/{SINK}/web-events", LIMIT)
    check(exact.get("status") in (200, 400),
          f"a chunked body of exactly {LIMIT} bytes got {exact['kind']} {exact.get('status')}: "
          f"{short(exact.get('raw', b''))}")
    tally.setdefault("endless", []).append(endless)
    tally["chunked"] = (f"2 MiB ended: {outcome_said(ended)} in {ended['seconds']:.2f} s; endless (one a round): "
                        + ", ".join(f"{outcome_said(e)} after {e['sent'] / LIMIT:.1f} MiB in {e['seconds']:.2f} s"
                                    for e in tally["endless"])
                        + f"; 1 MiB + 1: {outcome_said(over)}; exactly 1 MiB: {outcome_said(exact)}")
    # Exactly 1 MiB with Content-Length: a long string, and a whitespace-padded object.
    prefix, suffix = b'{"type":"todayPage.track","name":"', b'"}'
    expect("exactly 1 MiB (long string)", "POST", f"/v1/sessions/{SINK}/web-events",
           prefix + b"x" * (LIMIT - len(prefix) - len(suffix)) + suffix, (200, 400))
    padded = b'{"type":"todayPage.track","name":"pad"}'
    expect("exactly 1 MiB (whitespace padded)", "POST", f"/v1/sessions/{SINK}/web-events",
           padded + b" " * (LIMIT - len(padded)), (200, 400))


def deep_and_huge():
    track = b'{"type":"todayPage.track","x":'
    for levels in (513, 100_000):
        for what, body in ((f"{levels} levels of [", b"[" * levels + b"]" * levels),
                           (f"{levels} levels of {{\"a\":", b'{"a":' * levels + b"1" + b"}" * levels),
                           (f"{levels} unclosed [", b"[" * levels)):
            expect(what, "POST", "/v1/sessions/abuse-ref-1/web-events", body, (400,), "invalid_json")
            expect(what, "POST", "/v1/sessions", body, (400,), "invalid_json")
    expect("a 513-deep payload inside a create", "POST", "/v1/sessions",
           b'{"uid":"u","id":"abuse-deep","label":"abuse-ref","x":' + b"[" * 512 + b"]" * 512 + b"}",
           (400,), "invalid_json")
    # 512 levels is allowed (the cap is "deeper than 512").
    expect("512 levels (the cap)", "POST", f"/v1/sessions/{SINK}/web-events",
           track + b"[" * 511 + b"]" * 511 + b"}", (200,))
    numbers = track + b"[" + b",".join(b"%d" % (i % 1000) for i in range(200_000)) + b"]}"
    expect(f"200k numbers ({len(numbers)} bytes)", "POST", f"/v1/sessions/{SINK}/web-events", numbers, (200, 400))
    objects = track + b"[" + b",".join(b"{}" for _ in range(200_000)) + b"]}"
    expect(f"200k objects ({len(objects)} bytes)", "POST", f"/v1/sessions/{SINK}/web-events", objects, (200, 400))
    small = track + b"[" + b",".join(b'{"a":%d}' % (i % 10) for i in range(120_000)) + b"]}"
    expect(f"120k small objects ({len(small)} bytes)", "POST", f"/v1/sessions/{SINK}/web-events", small, (200, 400))
    keys = b'{"type":"todayPage.track",' + b",".join(b'"k%d":0' % i for i in range(90_000)) + b"}"
    expect(f"90k distinct keys ({len(keys)} bytes)", "POST", f"/v1/sessions/{SINK}/web-events", keys, (200, 400))
    same = b'{"type":"todayPage.track",' + b",".join(b'"a":0' for _ in range(150_000)) + b"}"
    expect(f"150k duplicate keys ({len(same)} bytes)", "POST", f"/v1/sessions/{SINK}/web-events", same, (200, 400))
    prefix, suffix = b'{"type":"todayPage.track","name":"', b'"}'
    fill = LIMIT - len(prefix) - len(suffix)
    for what, unit in (("\\u0000 and surrogate pairs", b"\\u0000\\ud83d\\ude00"),
                       ("\\\" \\\\ \\n \\t \\/", b'\\"\\\\\\n\\t\\/'),
                       ("lone \\ud800", b"\\ud800x"),
                       ("lone \\udc00", b"\\udc00"),
                       ("\\ud800 then \\u0041", b"\\ud800\\u0041")):
        body = prefix + unit * (fill // len(unit)) + suffix
        expect(f"1 MiB of escapes: {what}", "POST", f"/v1/sessions/{SINK}/web-events", body, (200, 400))


def invalid_utf8():
    cases = {
        "\\xff": b'{"type":"todayPage.track","name":"\xff"}',
        "\\xc0\\xaf (overlong /)": b'{"type":"todayPage.track","name":"\xc0\xaf"}',
        "truncated 3-byte sequence": b'{"type":"todayPage.track","name":"\xe2\x82"}',
        "truncated 4-byte sequence at the end": b'{"type":"todayPage.track","name":"x"}\xf0\x9f\x98',
        "encoded surrogate \\xed\\xa0\\x80": b'{"type":"todayPage.track","name":"\xed\xa0\x80"}',
        "above U+10FFFF": b'{"type":"todayPage.track","name":"\xf4\x90\x80\x80"}',
        "lone continuation byte": b'{"type":"todayPage.track","name":"\x80"}',
        "invalid byte in a key": b'{"ty\xfepe":"todayPage.track"}',
        "NUL byte inside a string": b'{"type":"todayPage.track","name":"a\x00b"}',
        "NUL byte between tokens": b'{"type":"todayPage.track",\x00"name":"a"}',
        "Latin-1 text": '{"type":"todayPage.track","name":"caf\u00e9"}'.encode("latin-1"),
    }
    for what, body in cases.items():
        expect(what, "POST", "/v1/sessions/abuse-ref-1/web-events", body, (400,), "invalid_json")
    expect("invalid UTF-8 in a create", "POST", "/v1/sessions",
           b'{"uid":"u\xff","id":"abuse-utf8","label":"abuse-ref"}', (400,), "invalid_json")
    expect("NUL in a create's id", "POST", "/v1/sessions",
           b'{"uid":"u","id":"abuse-\x00","label":"abuse-ref"}', (400,), "invalid_json")


MALFORMED = [
    ("GARBAGE request line", b"GARBAGE\r\n\r\n"),
    ("request line without a version", b"GET /healthz\r\n\r\n"),
    ("unknown HTTP version", b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n"),
    ("header line without a colon", b"GET /healthz HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n"),
    ("100 KB header", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"),
    ("100 KB URL", b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("10,000 headers", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X: y\r\n" * 10_000 + b"\r\n"),
    ("negative Content-Length", b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"),
    ("Content-Length beyond 64 bits",
     b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
    ("Content-Length not a number", b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"),
    ("bad chunk size", b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"),
    ("binary junk", b"\xff\xfe\xfd\r\n\r\n"),
    ("NUL and junk request line", b"\x00\xff\xfe\r\n\r\n"),
    ("only empty lines", b"\r\n\r\n\r\n\r\n"),
]
LENIENT = [  # not malformed enough for every parser: any clear answer, recorded
    ("HTTP/1.1 without Host", b"GET /healthz HTTP/1.1\r\n\r\n"),
    ("NUL inside the URL", b"GET /healthz\x00/../nowhere HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("NUL inside a header value", b"GET /healthz HTTP/1.1\r\nHost: x\x00y\r\n\r\n"),
]  # (Content-Length with chunked: the smuggling phase, abuse_http.py)
lingering = []  # (what, socket, sent at): no answer yet; must be closed by the server's timeout


def content_types():
    event = b'{"type":"todayPage.track","name":"content-type"}'
    for kind in ("application/xml", "multipart/form-data; boundary=x", "text/html", "application/octet-stream",
                 "image/png", "application/json; charset=latin1", "application/json; charset=utf-16",
                 "text/plain; charset=iso-8859-1", "garbage"):
        expect(f"Content-Type {kind!r}", "POST", "/v1/sessions/abuse-ref-1/web-events", event, (415,),
               "unsupported_media_type", content_type=kind)
    expect("Content-Type application/xml on a create", "POST", "/v1/sessions",
           b'{"uid":"u","id":"abuse-xml","label":"abuse-ref"}', (415,), "unsupported_media_type",
           content_type="application/xml")
    # Read as JSON: a body that is not JSON is then 400 invalid_json (and nothing changes).
    for kind in (None, "application/json", "application/json; charset=utf-8", "application/vnd.x+json",
                 "text/plain", "application/x-www-form-urlencoded"):
        expect(f"Content-Type {kind!r} read as JSON", "POST", "/v1/sessions/abuse-ref-1/web-events",
               b"not json", (400,), "invalid_json", content_type=kind)
    expect("an empty Content-Type", "POST", "/v1/sessions/abuse-ref-1/web-events", b"not json", (400, 415),
           content_type="")
    results = {}
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda probe: raw(probe[1], 2.0), MALFORMED + LENIENT))
    for (what, data), (result, sock) in zip(MALFORMED + LENIENT, answers):
        results[what] = result
        malformed = (what, data) in MALFORMED
        if result["kind"] == "silent":
            lingering.append((what, sock, time.monotonic()))
            continue
        sock.close()
        status = result.get("status")
        count_status(status or result["kind"], result["seconds"])
        if malformed:
            check(result["kind"] in ("closed", "reset") or 400 <= status < 500 or status == 505,
                  f"malformed request {what} ({short(data, 60)}) answered {status}: {short(result['raw'])}")
        else:
            check(result["kind"] in ("closed", "reset") or (status and status < 500),
                  f"request {what} answered {status}: {short(result['raw'])}")
            if status and status < 400:
                finding(f"{what} is accepted: {short(data, 80)} answered {status}")
        if result["kind"] == "answer" and (result.get("body", b"").startswith(b"HTTP/1.")
                                           or result.get("trailing")):
            finding(f"{what}: the {status} answer repeats its status line and headers inside the body "
                    f"(libmicrohttpd's own error page, Content-Length {result['fields'].get('content-length')}): "
                    f"sent {short(data, 80)}, got {short(result['raw'], 200)}")
    tally["raw"] = results


UNBOUNDED_CREATIONS = max(10, min(100, CREATIONS // 30))  # with a 1 MiB uid (issue 12, item 9): 100, 10 fast
DB_GROWTH_BOUND_MIB = 5             # what the database may grow by across the unbounded-fields phase
LIST_BOUND_BYTES = 1 << 20          # GET /v1/sessions?limit=1000 afterwards


def database_bytes():
    return sum(os.path.getsize(DB + suffix) for suffix in ("", "-wal") if os.path.exists(DB + suffix))


def unbounded_fields():
    """Issue 12, item 9: 100 creations with a 1 MiB uid grew the database to 843 MiB and RSS to
    497 MB, and a list of them answered 191 MiB. Each (100, or 10 in the fast version) must now be a 400 invalid_field naming
    the field, with the database and memory staying where they were; a NUL in uid/label is
    refused; an oversized Web event field is a 400, not an M8 violation."""
    size_before, rss_before = database_bytes(), rss_kib()
    huge = "u" * LIMIT  # the JSON body is 1 MiB minus a little: under the body limit
    body = json.dumps({"uid": huge[:LIMIT - 100], "label": "abuse-huge"}).encode()
    fields = {}
    for _ in range(UNBOUNDED_CREATIONS):
        status, _, data, seconds = call("POST", "/v1/sessions", body)
        count_status(status, seconds)
        fields[(status, problem_field(data))] = fields.get((status, problem_field(data)), 0) + 1
    check(fields == {(400, "uid"): UNBOUNDED_CREATIONS},
          f"{UNBOUNDED_CREATIONS} creations with a {len(body)}-byte uid answered {fields}, expected 400 naming uid")
    for what, field, value in (("a 1 MiB label", "label", {"uid": "u", "label": huge[:LIMIT - 100]}),
                               ("a NUL in uid", "uid", {"uid": "ab\u0000cd", "label": "abuse-ref"}),
                               ("a NUL in label", "label", {"uid": "u", "label": "abuse-ref\u0000X"})):
        status = expect(what, "POST", "/v1/sessions", json.dumps(value).encode(), (400,), "invalid_field")
        if status == 400:
            check(problem_field(call("POST", "/v1/sessions", json.dumps(value).encode())[2]) == field,
                  f"{what}: the problem does not name {field}")
    for path, field in (("/v1/sessions?uid=ab%00cd", "uid"), ("/v1/sessions?label=abuse-ref%00X", "label")):
        status, _, data, _ = call("GET", path)
        check(status == 400 and problem_field(data) == field, f"GET {path} answered {status}: {short(data)}")
    status, _, data, _ = call("DELETE", "/v1/sessions?label=abuse-ref%00X")
    check(status == 400 and problem_field(data) == "label", f"DELETE ?label=abuse-ref%00X answered {status}: {short(data)}")
    # A Web event with an oversized field: the client's 400, decided before the bridge (no M8).
    violations = len(page_all(f"/v1/sessions/{SINK}/timeline?kind=violation", "entries")[0])
    event = {"type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "r", "mode": huge[:LIMIT - 200],
             "status": "succeeded"}
    expect("a 1 MiB mode in a Web event", "POST", f"/v1/sessions/{SINK}/web-events", json.dumps(event).encode(),
           (400,), "invalid_field")
    after = len(page_all(f"/v1/sessions/{SINK}/timeline?kind=violation", "entries")[0])
    check(after == violations, f"an oversized Web event field added {after - violations} violations (M8)")
    status, _, listed, _ = call("GET", "/v1/sessions?limit=1000")
    check(status == 200 and len(listed) < LIST_BOUND_BYTES, f"GET /v1/sessions?limit=1000 answered {status} "
                                                            f"with {len(listed)} bytes (bound {LIST_BOUND_BYTES})")
    growth = (database_bytes() - size_before) / (1 << 20)
    check(growth < DB_GROWTH_BOUND_MIB, f"the database grew {growth:.1f} MiB (bound {DB_GROWTH_BOUND_MIB} MiB)")
    rss_growth = (rss_kib() - rss_before) / 1024
    check(rss_growth < ROUND_GROWTH_BOUND_MIB, f"RSS grew {rss_growth:.1f} MiB over the unbounded-fields phase "
                                               f"(bound {ROUND_GROWTH_BOUND_MIB} MiB)")
    tally["unbounded"] = (f"{UNBOUNDED_CREATIONS} creations with a 1 MiB uid: {fields}; database "
                          f"{size_before / (1 << 20):.1f} -> {database_bytes() / (1 << 20):.1f} MiB, RSS "
                          f"{rss_before / 1024:.0f} -> {rss_kib() / 1024:.0f} MiB, list of 1000 {len(listed)} bytes")


def problem_field(body):
    try:
        return json.loads(body).get("field")
    except (ValueError, AttributeError):
        return None


class Tricklers:
    """Connections that send one header byte every TRICKLE_SECONDS (under the idle timeout) from
    the start of the run: the request deadline must cut each, not before TIMEOUT (EARLY_CUT) and
    by CUT_BOUND (TIMEOUT + 60 s, unreachable when healthy) of its opening."""
    TEXT = b"GET /v1/sessions/abuse-ref-1 HTTP/1.1\r\nHost: x\r\nX-Trickle: " + b"a" * 100_000

    def __init__(self, count):
        self.entries, self.done = [], threading.Event()
        for _ in range(count):
            sock = socket.create_connection((HOST, PORT), timeout=ANSWER_SECONDS)
            sock.sendall(self.TEXT[:1])
            self.entries.append({"sock": sock, "opened": time.monotonic(), "bytes": 1, "cut": None, "how": None})
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        next_byte = time.monotonic() + TRICKLE_SECONDS
        while not self.done.is_set():
            if not note_cuts(self.entries, min(0.25, max(0.0, next_byte - time.monotonic()))):
                return  # every one cut
            if time.monotonic() < next_byte:
                continue
            next_byte += TRICKLE_SECONDS
            for entry in self.entries:
                if entry["cut"] is not None:
                    continue
                try:
                    entry["sock"].send(self.TEXT[entry["bytes"]:entry["bytes"] + 1])
                    entry["bytes"] += 1
                except OSError as error:
                    entry["cut"], entry["how"] = time.monotonic(), f"send failed ({error.__class__.__name__})"

    def open(self):
        return sum(1 for entry in self.entries if entry["cut"] is None)

    def stop(self, until):
        """Waits until every trickler is cut or `until` (monotonic), then closes them all."""
        while time.monotonic() < until and self.open():
            time.sleep(0.1)
        self.done.set()
        self.thread.join()
        note_cuts(self.entries, 0)
        for entry in self.entries:
            entry["sock"].close()


PARTIAL_REQUESTS = {
    "silent": b"",
    "half header": b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
    # A complete JSON document, but short of the announced length: applying it would show.
    "half body (create)": b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 100\r\n\r\n{\"uid\":\"u\",\"id\":\"abuse-slow\",\"label\":\"abuse-ref\"}",
    "half body (web-event)": b"POST /v1/sessions/abuse-ref-1/web-events HTTP/1.1\r\nHost: x\r\n"
                             b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                             b"{\"type\":\"todayPage.track\",\"name\":\"slow\"}",
}


def ordinary_plan():
    gets = [("GET", f"/v1/sessions/{REFERENCE[i % 3]}", None) for i in range(ORDINARY_GETS)]
    inputs = ([("POST", f"/v1/sessions/{LIVE}/gestures", {"type": "pull"})] * (ORDINARY_INPUTS // 2)
              + [("POST", f"/v1/sessions/{LIVE}/web-events", {"type": "todayPage.track", "name": "ordinary"})]
              * (ORDINARY_INPUTS - ORDINARY_INPUTS // 2))
    plan = [request for group in zip(*[iter(gets)] * 4, inputs) for request in group]  # 4 reads, 1 input
    return plan + gets[len(inputs) * 4:] + inputs[len(gets) // 4:]


class EventStream:
    """`GET /v1/sessions/{id}/events` on a raw socket, read in a thread: what came when, and
    whether (when, how) the server ended the stream."""

    def __init__(self, session):
        self.path = f"/v1/sessions/{session}/events"
        self.sock = socket.create_connection((HOST, PORT), timeout=ANSWER_SECONDS)
        self.opened = time.monotonic()
        self.sock.sendall(f"GET {self.path} HTTP/1.1\r\nHost: {HOST}\r\nAccept: text/event-stream\r\n\r\n".encode())
        self.pieces, self.ended, self.how, self.done = [], None, None, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
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

    def received(self):
        return b"".join(data for _, data in self.pieces)

    def heartbeats(self, after=0.0):
        """The `: heartbeat` comments that came `after` seconds or more after the stream was opened."""
        return sum(data.count(b": heartbeat") for at, data in self.pieces if at - self.opened >= after)

    def close(self):
        self.done.set()
        self.thread.join()
        self.sock.close()


def long_poll(result):
    """GET result["path"] (a long poll), waiting up to LONG_POLL_MS + ANSWER_SECONDS; fills `result`."""
    began = time.monotonic()
    try:
        status, _, data, seconds = call("GET", result["path"], timeout=LONG_POLL_MS / 1000 + ANSWER_SECONDS)
        result.update(status=status, data=data, seconds=seconds)
    except (OSError, http.client.HTTPException) as error:
        result.update(error=repr(error), seconds=time.monotonic() - began)


def ages_said(ages):
    return f"{ages[0]:.1f}-{ages[-1]:.1f} s" if ages else "-"


def hows_said(entries):
    hows = {}
    for entry in entries:
        how = "answered" if (entry["how"] or "").startswith("answered") else entry["how"]
        hows[how] = hows.get(how, 0) + 1
    return ", ".join(f"{count} {how}" for how, count in sorted(hows.items(), key=lambda kv: str(kv[0]))) or "none"


def judge_cuts(entries, what, detail):
    """Every entry (sock, opened, cut, how) must have been cut by the server, none before
    EARLY_CUT (the server's timer starts at its accept, after the client's connect: it cannot
    fire before TIMEOUT by the client's clock) and none later than CUT_BOUND (TIMEOUT + 60 s: a
    deadline that never fires, not a slow machine); an answer before the close is a FINDING.
    The ages are a figure in the tally. Returns the cut entries and their ages, shortest first."""
    cut = [entry for entry in entries if entry["cut"] is not None]
    ages = sorted(entry["cut"] - entry["opened"] for entry in cut)
    late = [age for age in ages if age > CUT_BOUND]
    check(len(cut) == len(entries) and not late,
          f"{len(entries) - len(cut)} of {len(entries)} {what} ({detail}) still open {CUT_BOUND:.0f} s after their "
          f"opening, {len(late)} cut later than that (ages {ages_said(ages)}); the server's timeout and request "
          f"deadline is {TIMEOUT} s, and {CUT_BOUND - IDLE_TIMEOUT:.0f} s more is a bound no healthy run comes near")
    early = [age for age in ages if age < EARLY_CUT]
    check(not early, f"{len(early)} {what} were cut before the {TIMEOUT} s timeout (earliest after "
                     f"{early[0] if early else 0:.1f} s, bound {EARLY_CUT:.0f} s)")
    answered = [entry["how"] for entry in cut if entry["how"].startswith("answered")]
    if answered:
        finding(f"{len(answered)} {what} got an answer before being closed, e.g. {answered[0]}")
    return cut, ages


def slow():
    """SLOW never-finished requests (and the tricklers) while an ordinary client works, a long poll
    waits and an event stream runs; then the server must have closed every partial one and every
    trickler (none early, none past CUT_BOUND), and answered the long poll and kept the stream."""
    kinds = list(PARTIAL_REQUESTS)
    sockets = []  # dicts: kind, sock, opened (monotonic), cut (monotonic), how
    before = json.loads(call("GET", f"/v1/sessions/{LIVE}")[2])["version"]
    stream = EventStream(REFERENCE[2])
    trickling = state["tricklers"].open()
    began = time.monotonic()
    for index in range(SLOW):
        kind = kinds[index % len(kinds)]
        try:
            sock = socket.create_connection((HOST, PORT), timeout=ANSWER_SECONDS)
            if PARTIAL_REQUESTS[kind]:
                sock.sendall(PARTIAL_REQUESTS[kind])
        except OSError as error:
            check(False, f"slow connection {index} ({kind}) could not be opened: {error!r}")
            break
        sockets.append({"kind": kind, "sock": sock, "opened": time.monotonic(), "cut": None, "how": None})
    opened = time.monotonic() - began
    last_open = time.monotonic()
    done = threading.Event()

    def watch():
        while not done.is_set() and note_cuts(sockets, 0.2):
            pass

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    polled = {}
    poller = None
    if TIMEOUT < 28:  # (waitMs is at most 30000): a long poll after the last entry of a session that stays still
        last = page_all(f"/v1/sessions/{REFERENCE[1]}/timeline", "entries")[0][-1]["seq"]
        polled["path"] = f"/v1/sessions/{REFERENCE[1]}/timeline?after={last}&waitMs={LONG_POLL_MS}"
        poller = threading.Thread(target=long_poll, args=(polled,), daemon=True)
        poller.start()

    # The ordinary client: a fresh connection per request, spread over the time the slow ones are
    # open. Each is sent even when the ones before took long (a slow machine is no failure), and
    # may wait ANSWER_SECONDS; every one must be answered 200.
    latencies, errors, inputs_answered, ok, answered_at = [], [], 0, 0, []
    plan = ordinary_plan()
    spread = max(0.0, IDLE_TIMEOUT * 13 / 15 - (time.monotonic() - last_open))
    for index, (method, path, body) in enumerate(plan):
        time.sleep(max(0.0, last_open + spread * index / len(plan) - time.monotonic()))
        try:
            status, _, data, seconds = call(method, path, body)
            latencies.append(seconds * 1000)
            if status != 200:
                errors.append(f"{method} {path} answered {status}: {short(data)}")
            else:
                ok += 1
                inputs_answered += method == "POST"
                answered_at.append(time.monotonic())
        except (OSError, http.client.HTTPException) as error:
            errors.append(f"{method} {path}: {error!r}")
    served_during = time.monotonic() - last_open
    check(not errors,
          f"{len(errors)} of {len(plan)} ordinary requests failed while {len(sockets)} slow and {trickling} "
          f"trickling connections were open: {errors[:3]}")
    # Served beside them: answers that came before the server cut any slow connection. The first
    # request goes out at once; the first cut comes TIMEOUT s after the first slow connection
    # opened. A server that served nobody while they were open answers none before.
    first_cut = min((s["cut"] for s in sockets if s["cut"] is not None), default=None)
    beside = sum(1 for at in answered_at if first_cut is None or at < first_cut)
    check(beside > 0, f"no ordinary request was answered while the {len(sockets)} slow connections were all open "
                      f"(the first was cut {first_cut - last_open if first_cut else 0:.1f} s after the last opened)")
    latencies.sort()
    p50 = latencies[len(latencies) // 2] if latencies else float("nan")
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan")
    goal(p99 <= P99_GOAL_MS, f"ordinary p99 {p99:.1f} ms (goal <= {P99_GOAL_MS} ms) beside {len(sockets)} slow connections")

    # The event stream: no request deadline while it is being answered. Past the deadline (the
    # sleep is time that must pass, not a wait for something), wait up to 30 s more for a
    # heartbeat sent after it: a loaded machine may send it late.
    time.sleep(max(0.0, stream.opened + IDLE_TIMEOUT + 2 - time.monotonic()))
    beat_deadline = time.monotonic() + 30
    while stream.ended is None and stream.heartbeats(after=IDLE_TIMEOUT) == 0 and time.monotonic() < beat_deadline:
        time.sleep(0.1)
    stream_age, received = time.monotonic() - stream.opened, stream.received()
    beats, late_beats = stream.heartbeats(), stream.heartbeats(after=IDLE_TIMEOUT)
    ended = f"ended ({stream.how}) after {stream.ended - stream.opened:.1f} s" if stream.ended else "still open"
    check(stream.ended is None and received.startswith(b"HTTP/1.1 200 ") and b"text/event-stream" in received
          and late_beats > 0,
          f"the event stream GET {stream.path} (opened at the start of the slow phase) is {ended} at "
          f"{stream_age:.1f} s with {beats} heartbeats, {late_beats} of them after the {TIMEOUT} s deadline "
          f"(one every {HEARTBEAT_SECONDS} s expected); it began {short(received, 200)}")
    stream.close()

    # The deadline: every partial connection closed by the server, by CUT_BOUND of its opening at
    # the latest (the wait ends as soon as all are).
    while time.monotonic() < last_open + CUT_BOUND and any(s["cut"] is None for s in sockets):
        time.sleep(0.25)
    done.set()
    watcher.join()
    after = json.loads(call("GET", f"/v1/sessions/{LIVE}")[2])["version"]
    check(after - before == inputs_answered == ORDINARY_INPUTS,
          f"the live session's version went {before} -> {after}; {inputs_answered} of {ORDINARY_INPUTS} ordinary "
          f"inputs answered 200")
    cut, ages = judge_cuts(sockets, "partial connections",
                           f"kinds still open: {sorted({s['kind'] for s in sockets if s['cut'] is None})}")
    for entry in sockets:
        entry["sock"].close()

    # The long poll: parked past the deadline, then answered as usual.
    if poller:
        poller.join()
        entries = json.loads(polled["data"]).get("entries") if polled.get("status") == 200 else None
        check(polled.get("status") == 200 and entries == [] and polled["seconds"] >= IDLE_TIMEOUT,
              f"the long poll GET {polled.get('path')} (started during the slow phase, waitMs over the {TIMEOUT} s "
              f"deadline) got {polled.get('status') or polled.get('error')} after {polled['seconds']:.1f} s: "
              f"{short(polled.get('data', b''))}; expected 200 with no entries after {LONG_POLL_MS / 1000:.0f} s")
        tally["long poll"] = (f"long poll waitMs={LONG_POLL_MS}: {polled.get('status') or polled.get('error')} after "
                              f"{polled['seconds']:.1f} s")
    else:
        tally["long poll"] = f"long poll: not tried (waitMs caps at 30000, not over the {TIMEOUT} s deadline)"
    tally["stream"] = (f"event stream {ended} at {stream_age:.1f} s, {beats} heartbeats ({late_beats} after "
                       f"{TIMEOUT} s)")

    # The tricklers: each cut (by CUT_BOUND of its opening at the latest), whatever bytes it still sends.
    tricklers = state["tricklers"]
    tricklers.stop(until=max(t["opened"] for t in tricklers.entries) + CUT_BOUND)
    most = max(t["bytes"] for t in tricklers.entries)
    trickler_cut, trickler_ages = judge_cuts(
        tricklers.entries, "tricklers",
        f"one header byte every {TRICKLE_SECONDS:g} s, up to {most} bytes sent of {short(Tricklers.TEXT, 60)}")
    trickler_open = len(tricklers.entries) - len(trickler_cut)
    # The malformed requests that got no answer must have been closed by the timeout by now.
    closed_lingering = 0
    for what, sock, sent in lingering:
        how = how_closed(sock)
        closed_lingering += how is not None
        check(how is not None, f"malformed request {what!r} still open {time.monotonic() - sent:.0f} s after it "
                               f"was sent, without an answer")
        sock.close()
    kinds_cut = ", ".join(f"{sum(1 for s in cut if s['kind'] == kind)} {kind}" for kind in kinds)
    tally["slow"] = (f"{len(sockets)} slow connections opened in {opened:.1f} s, {len(cut)} cut by the server "
                     f"({kinds_cut}; {hows_said(cut)}) after {ages_said(ages)} (timeout {TIMEOUT} s); "
                     f"{len(tricklers.entries)} tricklers (a byte every {TRICKLE_SECONDS:g} s), {len(trickler_cut)} "
                     f"cut ({hows_said(trickler_cut)}) after {ages_said(trickler_ages)} with up to {most} bytes sent, "
                     f"{trickler_open} still open; {len(lingering)} unanswered malformed requests, {closed_lingering} "
                     f"closed by the timeout")
    tally["ordinary"] = (f"ordinary client: {ok}/{len(plan)} answered 200 over {served_during:.0f} s, {beside} of "
                         f"them before the first slow connection was cut, p50 {p50:.1f} ms p99 {p99:.1f} ms (goal "
                         f"<= {P99_GOAL_MS} ms) max {latencies[-1] if latencies else 0:.1f} ms")


def creations():
    label = "abuse-bulk"
    lock = threading.Lock()
    counter = iter(range(CREATIONS))
    statuses, problems, latencies = {}, [], []

    def worker():
        connection = http.client.HTTPConnection(HOST, PORT, timeout=ANSWER_SECONDS)
        while True:
            with lock:
                index = next(counter, None)
            if index is None:
                break
            body = json.dumps({"uid": f"bulk{index}", "id": f"abuse-bulk-{index}", "label": label})
            began = time.monotonic()
            try:
                connection.request("POST", "/v1/sessions", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as error:
                with lock:
                    problems.append(f"abuse-bulk-{index}: {error!r}")
                connection.close()
                connection = http.client.HTTPConnection(HOST, PORT, timeout=ANSWER_SECONDS)
                continue
            with lock:
                latencies.append(time.monotonic() - began)
                statuses[response.status] = statuses.get(response.status, 0) + 1
                if response.status != 201:
                    problems.append(f"abuse-bulk-{index}: {response.status} {short(data)}")
        connection.close()

    began = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(CREATION_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - began
    rss_figures.append(("created", rss_kib()))
    check(statuses.get(201, 0) == CREATIONS and not problems,
          f"{statuses.get(201, 0)} of {CREATIONS} creations answered 201 ({statuses}); {problems[:3]}")
    listed = page_all(f"/v1/sessions?label={label}", "sessions")[0]
    ids = [s["id"] for s in listed]
    expected = {f"abuse-bulk-{i}" for i in range(CREATIONS)}
    check(len(ids) == len(set(ids)) == CREATIONS and set(ids) == expected,
          f"the label lists {len(ids)} sessions ({len(set(ids))} distinct), expected {CREATIONS}; "
          f"missing e.g. {sorted(expected - set(ids))[:3]}")
    status, _, data, delete_seconds = call("DELETE", f"/v1/sessions?label={label}", timeout=60)
    deleted = json.loads(data).get("deleted") if status == 200 else None
    check(status == 200 and deleted == CREATIONS, f"DELETE ?label={label} answered {status} {short(data)}")
    left = page_all(f"/v1/sessions?label={label}", "sessions")[0]
    check(not left, f"{len(left)} sessions still listed under {label} after the delete")
    gone = call("GET", "/v1/sessions/abuse-bulk-0")[0]
    check(gone == 404, f"GET /v1/sessions/abuse-bulk-0 after the delete answered {gone}")
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000 if latencies else 0
    tally["creations"] = (f"{CREATIONS} creations by {CREATION_THREADS} keep-alive clients in {seconds:.1f} s = "
                          f"{CREATIONS / seconds:.0f}/s (p99 {p99:.1f} ms), {len(ids)} listed, {deleted} deleted "
                          f"in {delete_seconds:.2f} s")


def run(name, phase, reference):
    state["phase"] = name
    began = time.monotonic()
    try:
        phase()
    except (OSError, http.client.HTTPException, ValueError) as error:
        check(False, f"the phase stopped: {error!r}")  # then: is the server still there?
    checkpoint(reference)
    print(f"  {name}: {time.monotonic() - began:.1f} s, RSS {rss_figures[-1][1] / 1024:.1f} MiB", flush=True)


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    start()
    rss_figures.append(("start", rss_kib()))
    setup()
    reference = snapshot()
    rss_figures.append(("reference", rss_kib()))
    state["tricklers"] = Tricklers(TRICKLERS)
    run("oversized", oversized, reference)
    run("deep/huge", deep_and_huge, reference)
    run("invalid utf-8", invalid_utf8, reference)
    run("content types", content_types, reference)
    run("smuggling", lambda: abuse_http.smuggling(sys.modules[__name__]), reference)
    run("clock numbers", lambda: abuse_http.clock_numbers(sys.modules[__name__]), reference)
    run("unbounded fields", unbounded_fields, reference)
    round_one = rss_kib()
    # Rounds two and three of the same bad bodies (~15 MiB sent, ~10 MiB echoed back per round):
    # memory must not keep growing with them.
    for again in (2, 3):
        for name, phase in (("oversized", oversized), ("deep/huge", deep_and_huge), ("invalid utf-8", invalid_utf8)):
            run(f"{name} {again}", phase, reference)
    growth = (rss_kib() - round_one) / 1024
    state["phase"] = "memory"
    check(growth < ROUND_GROWTH_BOUND_MIB, f"RSS grew {growth:.1f} MiB over two more rounds of the same bad bodies "
                                           f"(bound {ROUND_GROWTH_BOUND_MIB} MiB)")
    run("slow", slow, reference)
    run("creations", creations, reference)
    this = sys.modules[__name__]
    run("stream memory", lambda: abuse_http.stream_memory(this, STREAMS), reference)
    run("connection limit", lambda: abuse_http.connection_limit(this, CONNECTION_LIMIT), reference)
    state["phase"] = "end"
    peak = rss_kib("VmHWM") / 1024
    check(peak < PEAK_RSS_BOUND_MIB, f"peak RSS (VmHWM) {peak:.1f} MiB is over {PEAK_RSS_BOUND_MIB} MiB")
    began = time.monotonic()
    state["process"].send_signal(signal.SIGTERM)
    try:  # it drains for 5 s at most: 120 s is a hang, not a slow machine
        code = state["process"].wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        code = f"none within {STOP_SECONDS} s"
    stop_seconds = time.monotonic() - began
    check(code == 0, f"SIGTERM: exit {code}; log tail: {server_log_tail()!r}")
    statuses = ", ".join(f"{k} x{v}" for k, v in sorted(tally["statuses"].items(), key=lambda kv: str(kv[0])))
    rss = ", ".join(f"{name} {kib / 1024:.0f}" for name, kib in rss_figures)
    print(f"abuse test: {tally['bad']} bad or borderline requests answered ({statuses}), slowest "
          f"{tally['slowest_bad']:.2f} s; chunked past the limit: {tally.get('chunked')}; timeout {TIMEOUT} s: "
          f"{tally.get('slow')}; {tally.get('long poll')}; {tally.get('stream')}; "
          f"{tally.get('ordinary')}; {tally.get('creations')}; {tally.get('smuggling')}; {tally.get('clock numbers')}; {tally.get('stream memory')}; {tally.get('connection limit')}; {tally.get('unbounded')}; RSS MiB: {rss}, peak {peak:.0f} "
          f"(bound {PEAK_RSS_BOUND_MIB}), growth over rounds 2-3 {growth:.1f} (bound {ROUND_GROWTH_BOUND_MIB}); "
          f"store unchanged at every checkpoint: {'yes' if not any('store changed' in f for f in failures) else 'NO'}; "
          f"SIGTERM exit {code} in {stop_seconds:.1f} s; {len(findings)} findings; "
          f"{'latency goals met ' + str(state.get('goals', []).count(True)) + ' of ' + str(len(state.get('goals', []))) + ' (reported); ' if FAST else ''}"
          f"total {time.monotonic() - STARTED:.0f} s")
    return report()


def report():
    passed = state["checks"] - len(failures)
    print(f"{passed} passed, {len(failures)} failed" + (f" (server log and database in {WORK})" if failures else ""))
    if not failures and state["process"] and state["process"].poll() is not None:
        shutil.rmtree(WORK, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        if state.get("tricklers"):
            state["tricklers"].done.set()
        if state["process"] and state["process"].poll() is None:
            state["process"].kill()
