"""Abuse phases of issue 12 at the HTTP layer, run by abuse.py (each takes the abuse module,
for its server, raw sockets and checks): request smuggling (item 4), the connection limit and
memory kept after event streams close (item 11)."""

SMUGGLED = "abuse-smuggled"


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
        result, sock = abuse.raw(data, 5.0)
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
    result, sock = abuse.raw(twice, 5.0)
    sock.close()
    abuse.check(result.get("status") == 200 and result["fields"].get("connection", "").lower() != "close",
                f"smuggling, the same Content-Length twice: got {result['kind']} {result.get('status')} "
                f"{abuse.short(result['raw'], 200)}; expected 200 on a kept connection")
    status = abuse.call("GET", f"/v1/sessions/{SMUGGLED}")[0]
    abuse.check(status == 404, f"smuggling: a hidden request ran ({SMUGGLED} answered {status})")
    abuse.tally["smuggling"] = (f"smuggling: {'; '.join(said)}; the same Content-Length twice: "
                                f"{result.get('status')}; hidden requests run: {'none' if status == 404 else 'SOME'}")
