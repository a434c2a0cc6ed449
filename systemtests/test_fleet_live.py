"""Live reads across replicas (issue 15, item 4). A long poll held on replica A wakes when replica
B applies an input; an event stream on A gets B's entries; a Last-Event-ID reconnect to C
resumes; an account stream on A sees a session created on B. Every request goes straight to its
replica. Latency: from just before B is sent the input to the moment A delivers its entry.

Outcomes (failures): every long poll woken with B's entry (not answered empty at its waitMs),
every entry delivered on the stream, in order, the resume complete, the account stream seeing
the new session; each may take up to WAIT_SECONDS (30 s), a bound no healthy run comes near.
The latencies (p99 <= 1000 ms fast, 100 ms long) are figures beside their goals."""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from support import percentile
from support.checks import Checks
from support.fleet import WAIT_SECONDS, Fleet, FleetSizes, Stream, spread

TRACK = {"type": "todayPage.track", "name": "live"}
WAIT_MS = 30_000  # (the most waitMs takes) a long poll nothing wakes answers empty after this: not woken


def test_a_long_poll_on_one_replica_wakes_with_anothers_input(fleet: Fleet, fleet_sizes: FleetSizes,
                                                               figure: Callable[..., Any]) -> None:
    session, rounds = "c4-poll", fleet_sizes.live_rounds
    poller, writer, probe = fleet.client(1, timeout=20), fleet.client(2), fleet.client(1)
    with poller, writer, probe:
        writer.create_session("c4", id=session)
        last = writer.timeline(session)["entries"][-1]["seq"]
        latencies: list[float] = []
        for _ in range(rounds):
            result: dict[str, Any] = {}

            def poll(after: int = last) -> None:
                page = poller.timeline(session, after=after, wait_ms=WAIT_MS)
                result["at"], result["entries"] = time.monotonic(), page["entries"]

            thread = threading.Thread(target=poll)
            thread.start()
            # A request on A after the long poll was sent: A has (almost surely) parked the poll
            # by the time this answers. A poll parked late answers at once and only looks faster.
            probe.health()
            sent = time.monotonic()
            seqs = [entry["seq"] for entry in writer.web_event(session, TRACK)["entries"]]
            thread.join()
            entries = result.get("entries", [])
            assert entries and entries[0]["seq"] == seqs[0], \
                f"the poll after {last} answered {[entry['seq'] for entry in entries]}, B wrote {seqs}"
            latencies.append((result["at"] - sent) * 1000)
            last = seqs[-1]
    figure(f"long poll wake-up p99 ({spread(latencies)})", percentile(latencies, 0.99), "ms",
           goal=fleet_sizes.live_goal_ms)


def test_an_event_stream_gets_anothers_entries_and_resumes_on_a_third(fleet: Fleet, fleet_sizes: FleetSizes,
                                                                       checks: Checks,
                                                                       figure: Callable[..., Any]) -> None:
    session, rounds = "c4-stream", fleet_sizes.live_rounds
    with fleet.client(2) as writer:
        writer.create_session("c4", id=session)
        reader = Stream(fleet, f"/v1/sessions/{session}/events", replica=1)
        latencies: list[float] = []
        wrote: list[int] = []
        try:
            assert reader.opened.wait(WAIT_SECONDS), "the event stream on replica 1 opened"
            for _ in range(rounds):
                sent = time.monotonic()
                wrote += [entry["seq"] for entry in writer.web_event(session, TRACK)["entries"]]
                target = str(wrote[-1])
                if not reader.wait_for(lambda ids: target in ids):
                    break
                latencies.append((reader.arrival(target) or float("nan")) - sent)
            got = [int(event_id) for event_id in reader.ids()]
        finally:
            reader.close()
        delivered = checks(len(latencies) == rounds and got == list(range(1, wrote[-1] + 1)),
                           f"an event stream on replica 1 gets replica 2's entries in order ({rounds} rounds): "
                           f"{len(got)} events, last {got[-1:]} of {wrote[-1:]}")
        latencies = [latency * 1000 for latency in latencies]
        if delivered:
            figure(f"event stream delivery p99 ({spread(latencies)})", percentile(latencies, 0.99), "ms",
                   goal=fleet_sizes.live_goal_ms)
        middle = wrote[len(wrote) // 2]
        resumed = Stream(fleet, f"/v1/sessions/{session}/events", replica=3, last_event_id=middle)
        try:
            caught_up = resumed.wait_for(lambda ids: bool(ids) and ids[-1] == str(wrote[-1]))
            sent = time.monotonic()
            more = [entry["seq"] for entry in writer.web_event(session, TRACK)["entries"]]
            woke = resumed.wait_for(lambda ids: bool(ids) and ids[-1] == str(more[-1]))
            ids = [int(event_id) for event_id in resumed.ids()]
        finally:
            resumed.close()
        checks(caught_up and woke and ids == list(range(middle + 1, more[-1] + 1)),
               "Last-Event-ID resume on replica 3: the rest in order, then replica 2's next input: "
               f"after {middle}: {ids[:3]}..{ids[-3:]}, wanted ..{more[-1:]}, "
               f"woken in {(time.monotonic() - sent) * 1000:.0f} ms")
    checks.assert_all()


def test_an_account_stream_sees_a_session_created_on_another_replica(fleet: Fleet, fleet_sizes: FleetSizes,
                                                                     figure: Callable[..., Any]) -> None:
    uid = "c4-account"
    reader = Stream(fleet, f"/v1/events?uid={uid}", replica=1)
    try:
        assert reader.opened.wait(WAIT_SECONDS), "the account stream on replica 1 opened"
        sent = time.monotonic()
        with fleet.client(2) as creator:
            creator.create_session(uid, id="c4-new")
        assert reader.wait_for(lambda ids: "c4-new/1" in ids), \
            f"an account stream on replica 1 sees a session created on replica 2: not seen in {WAIT_SECONDS} s"
        latency = ((reader.arrival("c4-new/1") or float("nan")) - sent) * 1000
    finally:
        reader.close()
    figure("account stream delivery", latency, "ms", goal=fleet_sizes.live_goal_ms)
