"""Abuse with bodies (issue 7, item 5): over the 1 MiB limit (announced: 413 before the body is
sent; chunked: read on and 413 if the body ends by 8 MiB, the connection cut past 8 MiB), deeply
nested or huge JSON, invalid UTF-8, wrong content types. Each gets a clear answer, nothing in the
store changes (checked after every round), memory stays bounded: peak RSS under 300 MiB, and two
more rounds of the same bad bodies grow RSS by under 40 MiB."""
from __future__ import annotations

from typing import Any, Callable

from support.abuse import GROWTH_BOUND_MIB, SINK, Target
from support.rawhttp import LIMIT, Answer, chunked, exchange, short



CHUNK_CAP = 8 * LIMIT        # a chunked body past this has its connection cut
ENDLESS_CAP = 4 * CHUNK_CAP  # an endless chunked upload not cut by then fails
EVENTS = "/v1/sessions/abuse-ref-1/web-events"
PREFIX, SUFFIX = b'{"type":"todayPage.track","name":"', b'"}'


def chunked_said(outcome: Answer) -> str:
    return (f"{outcome.said()} after {outcome.sent} body bytes ({outcome.sent / LIMIT:.1f} MiB) in "
            f"{outcome.seconds:.2f} s: {short(outcome.raw)}")


def announced(target: Target, what: str, path: str, length: int) -> None:
    """Headers only, announcing `length` bytes: a 413 problem, although the body is never sent
    (the server decided on the headers; one waiting for the body would be cut by its deadline
    instead: `closed`, not an answer)."""
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()
    answer = exchange(target.port, head)
    target.slowest_bad = max(target.slowest_bad, answer.seconds)
    if target.checks(answer.kind == "answer" and answer.status == 413,
                     f"{what}: Content-Length {length} to {path} (headers only) got {answer.said()} after "
                     f"{answer.seconds:.2f} s: {short(answer.raw)}"):
        target.checks(answer.is_problem("payload_too_large"),
                      f"{what}: 413 without a payload_too_large problem document: {short(answer.raw)}")


def oversized(target: Target) -> Answer:
    """Bodies over the limit, announced or chunked; returns the endless upload's outcome."""
    checks = target.checks
    for path in ("/v1/sessions", EVENTS, "/v1/no-such-path"):
        announced(target, "2 MiB announced", path, 2 * LIMIT)
        announced(target, "10 GiB announced", path, 10 << 30)
        announced(target, "1 MiB + 1 announced", path, LIMIT + 1)
    # A chunked body that grows past the limit but ends within CHUNK_CAP: read on, then a clean 413.
    ended = chunked(target.port, EVENTS, 2 * LIMIT)
    if checks(ended.kind == "answer" and ended.status == 413,
              f"a finished chunked body of {2 * LIMIT} bytes to {EVENTS} (64 KiB chunks, then 0\\r\\n\\r\\n) got "
              f"{chunked_said(ended)}; expected a 413 answer after the final chunk"):
        checks(ended.is_problem("payload_too_large"), f"a finished chunked body of {2 * LIMIT} bytes: 413 without "
                                                      f"a payload_too_large problem document: {short(ended.raw)}")
    # A chunked body that never ends: the connection cut once past CHUNK_CAP, before ENDLESS_CAP
    # (counted in bytes sent, not seconds).
    endless = chunked(target.port, EVENTS, ENDLESS_CAP, endless=True)
    cut = endless.kind in ("cut", "closed", "reset") or (endless.kind == "answer" and endless.status == 413
                                                         and endless.closes)
    checks(cut and CHUNK_CAP <= endless.sent < ENDLESS_CAP,
           f"an endless chunked upload to {EVENTS} (64 KiB chunks, no final chunk) got {chunked_said(endless)}; "
           f"expected the connection cut past {CHUNK_CAP} bytes, before {ENDLESS_CAP}")
    # Chunked, finished just over the limit: 413 (or cut); exactly at it: not 413.
    over = chunked(target.port, EVENTS, LIMIT + 1)
    checks(over.kind in ("cut", "closed", "reset") or over.status == 413,
           f"a finished chunked body of {LIMIT + 1} bytes got {over.said()}: {short(over.raw)}")
    exact = chunked(target.port, f"/v1/sessions/{SINK}/web-events", LIMIT)
    checks(exact.status in (200, 400), f"a chunked body of exactly {LIMIT} bytes got {exact.said()}: {short(exact.raw)}")
    # Exactly 1 MiB with Content-Length: a long string, and a whitespace-padded object.
    target.expect("exactly 1 MiB (long string)", "POST", f"/v1/sessions/{SINK}/web-events",
                  PREFIX + b"x" * (LIMIT - len(PREFIX) - len(SUFFIX)) + SUFFIX, (200, 400))
    padded = b'{"type":"todayPage.track","name":"pad"}'
    target.expect("exactly 1 MiB (whitespace padded)", "POST", f"/v1/sessions/{SINK}/web-events",
                  padded + b" " * (LIMIT - len(padded)), (200, 400))
    return endless


def deep_and_huge(target: Target) -> None:
    """Nesting past the 512-level cap (400 invalid_json), 512 levels (taken), huge arrays, many
    keys and 1 MiB of escapes (a clear 200 or 400)."""
    track, sink = b'{"type":"todayPage.track","x":', f"/v1/sessions/{SINK}/web-events"
    for levels in (513, 100_000):
        for what, body in ((f"{levels} levels of [", b"[" * levels + b"]" * levels),
                           (f"{levels} levels of {{\"a\":", b'{"a":' * levels + b"1" + b"}" * levels),
                           (f"{levels} unclosed [", b"[" * levels)):
            target.expect(what, "POST", EVENTS, body, (400,), "invalid_json")
            target.expect(what, "POST", "/v1/sessions", body, (400,), "invalid_json")
    target.expect("a 513-deep payload inside a create", "POST", "/v1/sessions",
                  b'{"uid":"u","id":"abuse-deep","label":"abuse-ref","x":' + b"[" * 512 + b"]" * 512 + b"}",
                  (400,), "invalid_json")
    target.expect("512 levels (the cap)", "POST", sink, track + b"[" * 511 + b"]" * 511 + b"}", (200,))
    numbers = track + b"[" + b",".join(b"%d" % (i % 1000) for i in range(200_000)) + b"]}"
    objects = track + b"[" + b",".join(b"{}" for _ in range(200_000)) + b"]}"
    small = track + b"[" + b",".join(b'{"a":%d}' % (i % 10) for i in range(120_000)) + b"]}"
    keys = b'{"type":"todayPage.track",' + b",".join(b'"k%d":0' % i for i in range(90_000)) + b"}"
    same = b'{"type":"todayPage.track",' + b",".join(b'"a":0' for _ in range(150_000)) + b"}"
    for what, body in (("200k numbers", numbers), ("200k objects", objects), ("120k small objects", small),
                       ("90k distinct keys", keys), ("150k duplicate keys", same)):
        target.expect(f"{what} ({len(body)} bytes)", "POST", sink, body, (200, 400))
    fill = LIMIT - len(PREFIX) - len(SUFFIX)
    for what, unit in (("\\u0000 and surrogate pairs", b"\\u0000\\ud83d\\ude00"),
                       ("\\\" \\\\ \\n \\t \\/", b'\\"\\\\\\n\\t\\/'),
                       ("lone \\ud800", b"\\ud800x"),
                       ("lone \\udc00", b"\\udc00"),
                       ("\\ud800 then \\u0041", b"\\ud800\\u0041")):
        target.expect(f"1 MiB of escapes: {what}", "POST", sink, PREFIX + unit * (fill // len(unit)) + SUFFIX,
                      (200, 400))


INVALID_UTF8 = {
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


def invalid_utf8(target: Target) -> None:
    for what, body in INVALID_UTF8.items():
        target.expect(what, "POST", EVENTS, body, (400,), "invalid_json")
    target.expect("invalid UTF-8 in a create", "POST", "/v1/sessions",
                  b'{"uid":"u\xff","id":"abuse-utf8","label":"abuse-ref"}', (400,), "invalid_json")
    target.expect("NUL in a create's id", "POST", "/v1/sessions",
                  b'{"uid":"u","id":"abuse-\x00","label":"abuse-ref"}', (400,), "invalid_json")


def three_rounds(target: Target, name: str, phase: Callable[[Target], Any], figure: Callable[..., Any]) -> list[Any]:
    """The phase three times on one server, the store checked after each (~15 MiB sent, ~10 MiB
    echoed back a round for all three phases): RSS must not keep growing with them, under
    GROWTH_BOUND_MIB over rounds two and three. Returns what each round returned."""
    results, after_first = [], 0
    for round in (1, 2, 3):
        target.checks.phase = f"{name} {round}"
        results.append(phase(target))
        target.checkpoint(f"{name} {round}")
        after_first = after_first or target.rss_kib()
    growth = (target.rss_kib() - after_first) / 1024
    figure("RSS growth over rounds 2-3", growth, "MiB")
    target.checks(growth < GROWTH_BOUND_MIB, f"RSS grew {growth:.1f} MiB over two more rounds of the same bad "
                                             f"bodies (bound {GROWTH_BOUND_MIB} MiB)")
    target.finish(figure)
    return results


def test_bodies_over_the_limit(abused: Target, figure: Callable[..., Any]) -> None:
    for endless in three_rounds(abused, "oversized", oversized, figure):
        figure("an endless chunked upload cut after", endless.sent / LIMIT, "MiB")


def test_deep_or_huge_json(abused: Target, figure: Callable[..., Any]) -> None:
    three_rounds(abused, "deep/huge", deep_and_huge, figure)


def test_invalid_utf8(abused: Target, figure: Callable[..., Any]) -> None:
    three_rounds(abused, "invalid utf-8", invalid_utf8, figure)


def test_wrong_content_types(abused: Target, figure: Callable[..., Any]) -> None:
    """Content types the server does not read are 415; the ones it reads as JSON make a body that
    is not JSON a 400 invalid_json."""
    event = b'{"type":"todayPage.track","name":"content-type"}'
    for kind in ("application/xml", "multipart/form-data; boundary=x", "text/html", "application/octet-stream",
                 "image/png", "application/json; charset=latin1", "application/json; charset=utf-16",
                 "text/plain; charset=iso-8859-1", "garbage"):
        abused.expect(f"Content-Type {kind!r}", "POST", EVENTS, event, (415,), "unsupported_media_type",
                      content_type=kind)
    abused.expect("Content-Type application/xml on a create", "POST", "/v1/sessions",
                  b'{"uid":"u","id":"abuse-xml","label":"abuse-ref"}', (415,), "unsupported_media_type",
                  content_type="application/xml")
    for read_as_json in (None, "application/json", "application/json; charset=utf-8", "application/vnd.x+json",
                         "text/plain", "application/x-www-form-urlencoded"):
        abused.expect(f"Content-Type {read_as_json!r} read as JSON", "POST", EVENTS, b"not json", (400,),
                      "invalid_json", content_type=read_as_json)
    abused.expect("an empty Content-Type", "POST", EVENTS, b"not json", (400, 415), content_type="")
    abused.finish(figure)
