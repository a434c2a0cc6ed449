"""Abuse phases of issue 12 at the HTTP layer, run by abuse.py (each takes the abuse module,
for its server, raw sockets and checks): request smuggling (item 4), the connection limit and
memory kept after event streams close (item 11). Their waits are deadlines no healthy run comes
near (issue 20, item 1): abuse.ANSWER_SECONDS (30 s) for an answer, 30 s for a second server to
start or to serve a freed place, 120 s to exit at SIGTERM; each ends as soon as what it waits for
happened."""

SMUGGLED = "abuse-smuggled"


def answered(abuse, what, method, path, wanted, body=None):
    """One request on a fresh connection that must be answered `wanted`; returns the status."""
    status = abuse.call(method, path, body)[0]
    abuse.check(status == wanted, f"{what}: {method} {path} answered {status}, expected {wanted}")
    return status


def smuggling(abuse):
    """Requests whose body's end two hops could read differently: each refused (400, or 501 for
    an unknown Transfer-Encoding) with Connection: close and the connection closed, and the
    request hidden in its body (it would create SMUGGLED) never run."""
    hidden_body = b'{"uid":"u","id":"%s","label":"abuse-ref"}' % SMUGGLED.encode()
    hidden = (b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(hidden_body) + hidden_body)
    event = b'{"type":"todayPage.track","name":"smuggling"}'
    chunk = b"%x\r\n" % len(event) + event + b"\r\n0\r\n\r\n"

    def post(headers, body):
        return (b"POST /v1/sessions/" + abuse.SINK.encode() + b"/web-events HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\n" + headers + b"\r\n" + body)

    cases = [
        ("two Content-Lengths that differ", post(b"Content-Length: %d\r\nContent-Length: %d\r\n"
                                                  % (len(event), len(event) + len(hidden)), event + hidden),
         400, "malformed_request"),
        ("Content-Length and chunked", post(b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\n" + hidden),
         400, "malformed_request"),
        ("chunked and Content-Length", post(b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", b"0\r\n\r\n" + hidden),
         400, "malformed_request"),
        ("Transfer-Encoding: xchunked", post(b"Transfer-Encoding: xchunked\r\n", chunk + hidden),
         501, "unsupported_transfer_encoding"),
        ("Transfer-Encoding: gzip, chunked", post(b"Transfer-Encoding: gzip, chunked\r\n", chunk + hidden),
         501, "unsupported_transfer_encoding"),
        ("two Transfer-Encoding: chunked", post(b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                                                chunk + hidden), 501, "unsupported_transfer_encoding"),
        ("a bare CR inside a header", post(b"X-Note: a\rb\r\nContent-Length: %d\r\n" % len(event), event + hidden),
         400, "malformed_request"),
        ("whitespace before a header's colon", post(b"Content-Length : %d\r\n" % len(hidden), hidden),
         400, "malformed_request"),
    ]
    said = []
    for what, data, status, code in cases:
        result, sock = abuse.raw(data, abuse.ANSWER_SECONDS)
        sock.close()
        abuse.count_status(result.get("status", result["kind"]), result["seconds"])
        ok = abuse.check(result["kind"] == "answer" and result.get("status") == status
                         and abuse.problem_code(result.get("body", b"")) == code
                         and result["fields"].get("connection", "").lower() == "close",
                         f"smuggling, {what}: got {result['kind']} {result.get('status')} {abuse.short(result['raw'], 300)}; "
                         f"expected {status} {code} with Connection: close")
        said.append(f"{what}: {result.get('status', result['kind'])}{' closed' if ok else ''}")
    # The same length twice frames the body one way only: taken, and the connection kept.
    twice = post(b"Content-Length: %d\r\nContent-Length: %d\r\n" % (len(event), len(event)), event)
    result, sock = abuse.raw(twice, abuse.ANSWER_SECONDS)
    sock.close()
    abuse.check(result.get("status") == 200 and result["fields"].get("connection", "").lower() != "close",
                f"smuggling, the same Content-Length twice: got {result['kind']} {result.get('status')} "
                f"{abuse.short(result['raw'], 200)}; expected 200 on a kept connection")
    status = answered(abuse, "smuggling: did a hidden request run?", "GET", f"/v1/sessions/{SMUGGLED}", 404)
    abuse.tally["smuggling"] = (f"smuggling: {'; '.join(said)}; the same Content-Length twice: "
                                f"{result.get('status')}; hidden requests run: {'none' if status == 404 else 'SOME'}")


def connection_limit(abuse, limit, extra=50):
    """A second server with --max-connections LIMIT (None: the default, 4000): LIMIT kept-alive
    connections are served; EXTRA more each get 503 too_many_connections with Retry-After and
    are closed (none hangs); the refusals are logged once; a place freed is served again."""
    import os
    import socket
    import subprocess
    import time
    port = abuse.free_port()
    log_path = os.path.join(abuse.WORK, "limit.log")
    flags = [] if limit is None else ["--max-connections", str(limit)]
    process = subprocess.Popen([abuse.BINARY, "serve", "--port", str(port), "--db", os.path.join(abuse.WORK, "limit.sqlite"),
                                *flags], stdout=subprocess.DEVNULL, stderr=open(log_path, "wb"))
    limit = limit or 4000
    healthz = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

    def ask(sock):
        sock.sendall(healthz)
        return abuse.read_answer(sock, time.monotonic() + abuse.ANSWER_SECONDS)

    held, refused, began = [], [], time.monotonic()
    try:
        deadline = time.monotonic() + 30  # a loaded machine starts it slowly
        while True:
            try:
                first = socket.create_connection((abuse.HOST, port), timeout=abuse.ANSWER_SECONDS)
                break
            except OSError:
                if time.monotonic() > deadline:
                    abuse.check(False, "connection limit: the second server did not start")
                    return
                time.sleep(0.05)
        held.append(first)
        held += [socket.create_connection((abuse.HOST, port), timeout=abuse.ANSWER_SECONDS) for _ in range(limit - 1)]
        served = sum(1 for sock in held if ask(sock).get("status") == 200)
        abuse.check(served == limit, f"connection limit: {served} of {limit} connections within the limit answered 200")
        outcomes = {}
        for _ in range(extra):
            sock = socket.create_connection((abuse.HOST, port), timeout=abuse.ANSWER_SECONDS)
            result = ask(sock)
            said = (f"{result.get('status', result['kind'])} {abuse.problem_code(result.get('body', b''))}"
                    f"{' Retry-After' if 'retry-after' in result.get('fields', {}) else ''}"
                    f"{' closed' if result['kind'] == 'answer' and abuse.how_closed(sock) == 'closed' else ''}")
            outcomes[said] = outcomes.get(said, 0) + 1
            refused.append(sock)
        wanted = "503 too_many_connections Retry-After closed"
        abuse.check(outcomes == {wanted: extra}, f"connection limit: past {limit} connections the answers were "
                                                 f"{outcomes}, expected {extra} x {wanted!r}")
        for sock in held[:10]:
            sock.close()
        freed, deadline = None, time.monotonic() + 30  # until the server saw the closes
        while freed != 200 and time.monotonic() < deadline:
            with socket.create_connection((abuse.HOST, port), timeout=abuse.ANSWER_SECONDS) as sock:
                freed = ask(sock).get("status")
        abuse.check(freed == 200, f"connection limit: a new connection after 10 held ones closed got {freed} "
                                  f"(tried for 30 s)")
    finally:
        for sock in held + refused:
            sock.close()
        process.terminate()
        code = process.wait(timeout=abuse.STOP_SECONDS)
    with open(log_path, "rb") as f:
        notes = [line for line in f.read().decode(errors="replace").splitlines() if "connection limit" in line]
    abuse.check(len(notes) == 1, f"connection limit: {len(notes)} log lines about it, expected 1 (once per interval): "
                                 f"{notes[:3]}")
    abuse.check(code == 0, f"connection limit: the second server exited {code}")
    abuse.tally["connection limit"] = (f"--max-connections {limit}: {limit} served, {extra} more answered {outcomes}, "
                                       f"a freed place served again: {freed == 200}, {len(notes)} log line; "
                                       f"{time.monotonic() - began:.1f} s")


def stream_memory(abuse, count, bound_mib=15):
    """COUNT event streams opened at once, then all closed by their clients: the server's RSS
    must come back within BOUND_MIB of what it was before them (waited for, up to 30 s)."""
    import socket
    import time
    # A session of its own with a short timeline (each stream first gets all of it), removed
    # afterwards with its label so the store is as before.
    session = "abuse-streams"
    answered(abuse, "stream memory", "POST", "/v1/sessions", 201, {"uid": "u", "id": session, "label": session})
    before = abuse.rss_kib() / 1024
    began = time.monotonic()
    socks = []
    for _ in range(count):
        sock = socket.create_connection((abuse.HOST, abuse.PORT), timeout=abuse.ANSWER_SECONDS)
        sock.sendall(f"GET /v1/sessions/{session}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        socks.append(sock)
    opened = sum(1 for sock in socks if sock.recv(64).startswith(b"HTTP/1.1 200"))
    abuse.check(opened == count, f"stream memory: {opened} of {count} event streams answered 200")
    peak = abuse.rss_kib() / 1024
    for sock in socks:
        sock.close()
    deadline = time.monotonic() + 30
    after = abuse.rss_kib() / 1024
    while after > before + bound_mib and time.monotonic() < deadline:
        time.sleep(0.25)
        after = abuse.rss_kib() / 1024
    abuse.check(after <= before + bound_mib, f"stream memory: RSS {before:.0f} MiB before {count} event streams, "
                                             f"{peak:.0f} with them open, {after:.0f} up to 30 s after they closed "
                                             f"(bound: before + {bound_mib})")
    answered(abuse, "stream memory", "DELETE", f"/v1/sessions?label={session}", 200)
    abuse.tally["stream memory"] = (f"{count} event streams: RSS {before:.0f} MiB before, {peak:.0f} open, {after:.0f} "
                                    f"after they closed ({time.monotonic() - began:.1f} s)")


def clock_numbers(abuse):
    """Client numbers summed on a session clock (item 1): one /steps request of 1,025 advances
    once overflowed Int64 and killed the server; 1,024 accepted advances left a session that
    killed it on its next advance, again after every restart. C1: a move goes no further than the
    clock's end (9e15 ms) less the session's longest timer, so every timer an input arms stays
    reachable; every move past that is 400 and changes nothing; the server serves on."""
    ceiling = 9_000_000_000_000_000
    latest = ceiling - 12_000  # the default longest timer: the 12 s pull watchdog
    session = "abuse-clock"
    path = f"/v1/sessions/{session}"
    answered(abuse, "clock numbers", "POST", "/v1/sessions", 201, {"uid": "u", "id": session, "label": session})
    answered(abuse, "clock numbers", "POST", f"{path}/steps", 400, [{"clock": {"advanceMs": ceiling}}] * 1025)
    answered(abuse, "clock numbers", "POST", f"{path}/steps", 400, [{"clock": {"advanceMs": ceiling}}] * 1000)
    answered(abuse, "clock numbers", "POST", f"{path}/clock", 400, {"advanceMs": latest + 1})
    answered(abuse, "clock numbers", "POST", f"{path}/clock", 200, {"advanceMs": latest - 10})
    answered(abuse, "clock numbers", "POST", f"{path}/gestures", 200, {"type": "pull", "requestId": "p1"})
    refused = sum(1 for _ in range(1024) if abuse.call("POST", f"{path}/clock", {"advanceMs": ceiling})[0] == 400)
    abuse.check(refused == 1024, f"clock numbers: {refused} of 1024 advances past the latest move answered 400")
    answered(abuse, "clock numbers", "POST", f"{path}/clock", 400, {"advanceMs": 11})
    # Every timer the pull armed is within reach: the soft deadline, then the watchdog at the end less 10 ms.
    answered(abuse, "clock numbers", "POST", f"{path}/clock", 200, {"toNextTimer": True})
    answered(abuse, "clock numbers", "POST", f"{path}/clock", 200, {"runUntilIdle": True})
    status, _, raw, _ = abuse.call("GET", path)
    view = abuse.json.loads(raw) if status == 200 else {}
    abuse.check(view.get("clock", {}).get("nowMs") == ceiling - 10 and view.get("version") == 5 and view.get("watchdogs") == [],
                f"clock numbers: the session is as its accepted inputs left it ({abuse.short(raw)})")
    # A timer as long as the clock: no move at all, yet the timer an input arms is reached.
    long = f"/v1/sessions/{session}-long"
    answered(abuse, "clock numbers", "POST", "/v1/sessions", 201,
             {"uid": "u", "id": f"{session}-long", "label": session, "timing": {"pullWatchdogMs": ceiling}})
    answered(abuse, "clock numbers", "POST", f"{long}/clock", 400, {"advanceMs": 1})
    answered(abuse, "clock numbers", "POST", f"{long}/gestures", 200, {"type": "pull", "requestId": "p1"})
    answered(abuse, "clock numbers", "POST", f"{long}/clock", 200, {"runUntilIdle": True})
    status, _, raw, _ = abuse.call("GET", long)
    view = abuse.json.loads(raw) if status == 200 else {}
    abuse.check(view.get("clock", {}).get("nowMs") == ceiling and view.get("watchdogs") == [],
                f"clock numbers: a timer as long as the clock is reached at its end ({abuse.short(raw)})")
    answered(abuse, "clock numbers", "GET", "/healthz", 200)
    answered(abuse, "clock numbers", "DELETE", f"/v1/sessions?label={session}", 200)
    abuse.tally["clock numbers"] = f"clock numbers: 1,024 advances and two batches past the latest move answered 400, every timer reached, server up"
