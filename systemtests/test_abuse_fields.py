"""Fields and numbers past their limits (issue 12, items 1 and 9): 100 creations with a 1 MiB uid
once grew the database to 843 MiB and RSS to 497 MB, and a list of them answered 191 MiB; one
/steps request of 1,025 clock advances once overflowed Int64 and killed the server. Each is now a
400 naming the field, the database and memory stay where they were, a NUL in uid/label is
refused, an oversized Web event field is the client's 400 (no M8), every move of a session clock
past its reach is refused (C1) and the server serves on."""
from __future__ import annotations

import json
from collections import Counter
from typing import Any, Callable

from support.abuse import GROWTH_BOUND_MIB, SINK, Sizes, Target, status_of
from support.rawhttp import LIMIT, problem_value, short

DB_GROWTH_BOUND_MIB = 5      # what the database may grow by across the phase
LIST_BOUND_BYTES = 1 << 20   # GET /v1/sessions?limit=1000 afterwards


def test_unbounded_fields(abused: Target, sizes: Sizes, figure: Callable[..., Any]) -> None:
    """100 creations (10 fast) with a 1 MiB uid: each 400 invalid_field naming uid; a 1 MiB label
    and NULs in uid/label refused naming the field, in a create and in the list's and purge's
    filters; a 1 MiB `mode` in a Web event: 400 invalid_field and no violation (M8); a list of
    1,000 sessions under 1 MiB; the database grows under 5 MiB and RSS under 40 MiB."""
    checks, client = abused.checks, abused.client
    size_before, rss_before = abused.database_bytes(), abused.rss_kib()
    huge = "u" * LIMIT  # the JSON body is 1 MiB minus a little: under the body limit
    body = json.dumps({"uid": huge[:LIMIT - 100], "label": "abuse-huge"}).encode()
    answers: Counter[tuple[int, Any]] = Counter()
    for _ in range(sizes.unbounded_creations):
        reply = abused.call("POST", "/v1/sessions", body)
        answers[(reply.status, problem_value(reply.data, "field"))] += 1
    checks(answers == {(400, "uid"): sizes.unbounded_creations},
           f"{sizes.unbounded_creations} creations with a {len(body)}-byte uid answered {dict(answers)}, expected 400 "
           f"naming uid")
    for what, field, value in (("a 1 MiB label", "label", {"uid": "u", "label": huge[:LIMIT - 100]}),
                               ("a NUL in uid", "uid", {"uid": "ab\u0000cd", "label": "abuse-ref"}),
                               ("a NUL in label", "label", {"uid": "u", "label": "abuse-ref\u0000X"})):
        if abused.expect(what, "POST", "/v1/sessions", json.dumps(value).encode(), (400,), "invalid_field") == 400:
            named = problem_value(abused.call("POST", "/v1/sessions", value).data, "field")
            checks(named == field, f"{what}: the problem names {named}, not {field}")
    for method, path, field in (("GET", "/v1/sessions?uid=ab%00cd", "uid"),
                                ("GET", "/v1/sessions?label=abuse-ref%00X", "label"),
                                ("DELETE", "/v1/sessions?label=abuse-ref%00X", "label")):
        reply = abused.call(method, path)
        checks(reply.status == 400 and problem_value(reply.data, "field") == field,
               f"{method} {path} answered {reply.status}: {short(reply.data)}")
    # A Web event with an oversized field: the client's 400, decided before the bridge (no M8).
    violations = len(client.entries(SINK, kind="violation"))
    event = {"type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "r", "mode": huge[:LIMIT - 200],
             "status": "succeeded"}
    abused.expect("a 1 MiB mode in a Web event", "POST", f"/v1/sessions/{SINK}/web-events", json.dumps(event).encode(),
                  (400,), "invalid_field")
    added = len(client.entries(SINK, kind="violation")) - violations
    checks(added == 0, f"an oversized Web event field added {added} violations (M8)")
    listed = abused.call("GET", "/v1/sessions?limit=1000")
    checks(listed.status == 200 and len(listed.data) < LIST_BOUND_BYTES,
           f"GET /v1/sessions?limit=1000 answered {listed.status} with {len(listed.data)} bytes (bound {LIST_BOUND_BYTES})")
    growth = (abused.database_bytes() - size_before) / (1 << 20)
    figure("database growth over the phase", growth, "MiB")
    checks(growth < DB_GROWTH_BOUND_MIB, f"the database grew {growth:.1f} MiB (bound {DB_GROWTH_BOUND_MIB} MiB)")
    rss_growth = (abused.rss_kib() - rss_before) / 1024
    figure("RSS growth over the phase", rss_growth, "MiB")
    checks(rss_growth < GROWTH_BOUND_MIB, f"RSS grew {rss_growth:.1f} MiB over the unbounded-fields phase "
                                          f"(bound {GROWTH_BOUND_MIB} MiB)")
    abused.finish(figure)


def test_clock_numbers(abused: Target, figure: Callable[..., Any]) -> None:
    """C1: a move goes no further than the clock's end (9e15 ms) less the session's longest
    timer, so every timer an input arms stays reachable; every move past that is 400 and changes
    nothing (1,024 of them, and batches of 1,025 and 1,000); a timer as long as the clock allows
    no move at all yet is reached; the server serves on."""
    checks, client = abused.checks, abused.client
    ceiling = 9_000_000_000_000_000
    latest = ceiling - 12_000  # the default longest timer: the 12 s pull watchdog
    session, long = "abuse-clock", "abuse-clock-long"

    def answered(what: str, wanted: int, request: Callable[[], Any]) -> None:
        status = status_of(request)
        checks(status == wanted, f"clock numbers, {what}: answered {status}, expected {wanted}")

    client.create_session("u", id=session, label=session)
    answered("1,025 advances to the end in one batch", 400, lambda: client.steps(session, [{"clock": {"advanceMs": ceiling}}] * 1025))
    answered("1,000 advances to the end in one batch", 400, lambda: client.steps(session, [{"clock": {"advanceMs": ceiling}}] * 1000))
    answered("a move 1 ms past the latest", 400, lambda: client.clock(session, advanceMs=latest + 1))
    answered("a move 10 ms short of the latest", 200, lambda: client.clock(session, advanceMs=latest - 10))
    answered("a pull", 200, lambda: client.gesture(session, "pull", requestId="p1"))
    refused = sum(1 for _ in range(1024) if status_of(lambda: client.clock(session, advanceMs=ceiling)) == 400)
    checks(refused == 1024, f"clock numbers: {refused} of 1024 advances past the latest move answered 400")
    answered("11 ms more", 400, lambda: client.clock(session, advanceMs=11))
    # Every timer the pull armed is within reach: the soft deadline, then the watchdog at the end less 10 ms.
    answered("to the next timer", 200, lambda: client.clock(session, toNextTimer=True))
    answered("until idle", 200, lambda: client.clock(session, runUntilIdle=True))
    view = client.read_session(session)
    checks(view["clock"]["nowMs"] == ceiling - 10 and view["version"] == 5 and view["watchdogs"] == [],
           f"clock numbers: the session is not as its accepted inputs left it ({short(repr(view).encode())})")
    # A timer as long as the clock: no move at all, yet the timer an input arms is reached.
    client.create_session("u", id=long, label=session, timing={"pullWatchdogMs": ceiling})
    answered("a move with a timer as long as the clock", 400, lambda: client.clock(long, advanceMs=1))
    answered("a pull with it", 200, lambda: client.gesture(long, "pull", requestId="p1"))
    answered("until idle with it", 200, lambda: client.clock(long, runUntilIdle=True))
    view = client.read_session(long)
    checks(view["clock"]["nowMs"] == ceiling and view["watchdogs"] == [],
           f"clock numbers: a timer as long as the clock is not reached at its end ({short(repr(view).encode())})")
    answered("/healthz", 200, client.health)
    answered("purging the label", 200, lambda: client.purge_label(session))
    abused.finish(figure)
