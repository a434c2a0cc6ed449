"""A fleet behaves like one server (issue 15, items 1 and 2), on a fleet of 3 behind nginx with TLS
(support/fleet.py): the curl scenarios, the contract report and the multi-account example
through nginx unchanged (`Scripts/scenarios/run-all`, curl trusting the fleet's certificate
through CURL_CA_BUNDLE); inputs to one session serialized across replicas: 8 clients write one
session through nginx at once (round-robin: through every replica), then If-Match and
Idempotency-Key across replicas, each request sent straight to a chosen replica."""
from __future__ import annotations

import os
import re
import subprocess
import threading

from todaysim.client import TodaysimError

from support.checks import Checks
from support.fleet import SCRIPTS, Fleet, FleetSizes

WRITERS = 8


def test_the_curl_scenarios_run_through_nginx_unchanged(fleet: Fleet, binary: str) -> None:
    done = subprocess.run([os.path.join(SCRIPTS, "scenarios", "run-all")], capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "CURL_CA_BUNDLE": fleet.cafile, "SCENARIO_BASE": fleet.base,
                               "TODAYSIM_BIN": binary})
    assert done.returncode == 0, f"Scripts/scenarios/run-all through nginx exited {done.returncode}:\n{done.stdout}{done.stderr}"
    summary = re.fullmatch(r"(\d+) passed, 0 failed", (done.stdout.strip().splitlines() or [""])[-1])
    assert summary and int(summary[1]) > 0, f"run-all ran no scenario: {done.stdout[-500:]}"


def test_eight_clients_write_one_session_through_every_replica(fleet: Fleet, fleet_sizes: FleetSizes,
                                                               checks: Checks) -> None:
    session, inputs = "c2-shared", fleet_sizes.writer_inputs
    with fleet.client() as client:
        client.create_session("c2", id=session)
    versions: dict[str, int] = {}
    problems: list[str] = []

    def write(number: int) -> None:
        with fleet.client() as client:
            for index in range(inputs):
                name = f"w{number}-{index}"
                try:
                    answer = client.web_event(session, {"type": "todayPage.track", "name": name}, idempotency_key=name)
                except TodaysimError as error:
                    problems.append(f"{name}: {error}"[:200])
                    return
                versions[name] = answer["session"]["version"]

    threads = [threading.Thread(target=write, args=(number,)) for number in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = WRITERS * inputs
    checks(not problems, f"{WRITERS} clients × {inputs} inputs through nginx all answered 200: {problems[:3]}")
    ordered = sorted(versions.values())
    checks(ordered == list(range(2, total + 2)), f"each input's answer carries its own version, +1 each (2..N+1): "
           f"{len(set(ordered))} distinct of {len(ordered)}, range {ordered[:1]}..{ordered[-1:]}")
    with fleet.client() as client:
        entries = client.entries(session)
        view = client.read_session(session)
    seqs = [entry["seq"] for entry in entries]
    checks(seqs == list(range(1, len(seqs) + 1)), f"the timeline's seq is gapless: {len(seqs)} entries, "
           f"first {seqs[:3]}, last {seqs[-3:]}")
    applied = [entry["data"]["input"]["name"] for entry in entries
               if entry["kind"] == "input" and entry["type"] == "todayPage.track"]
    checks(sorted(applied) == sorted(versions) and len(applied) == total,
           f"every input applied exactly once: {len(applied)} applied, {len(set(applied))} distinct, {total} sent")
    checks(view["version"] == total + 1, f"the session's version is one per input: {view['version']}")
    used = fleet.replicas_used(f"/v1/sessions/{session}/web-events")
    checks(used == len(fleet.replicas), f"nginx spread the writes over every replica: {used} of {len(fleet.replicas)} "
           "answered them (nginx's access log)")
    checks.assert_all()


def test_if_match_and_idempotency_key_hold_across_replicas(fleet: Fleet, checks: Checks) -> None:
    session = "c2-cross"
    one, two, three = (fleet.client(replica) for replica in (1, 2, 3))
    with one, two, three:
        one.create_session("c2", id=session)
        version = one.read_session(session)["version"]
        first = two.http.post(f"/v1/sessions/{session}/lifecycle", json={"type": "background"},
                              headers={"If-Match": str(version)})
        stale = three.http.post(f"/v1/sessions/{session}/lifecycle", json={"type": "foreground"},
                                headers={"If-Match": str(version)})
        after = one.read_session(session)["version"]
        checks(first.status_code == 200 and stale.status_code == 412 and after == version + 1,
               "If-Match read on replica 1, written on 2 (200), the stale tag on 3 is 412 and changes nothing: "
               f"{first.status_code}, {stale.status_code}, version {version} -> {after}")
        path, key = f"/v1/sessions/{session}/web-events", {"Idempotency-Key": "c2-key"}
        answers = [client.http.post(path, json={"type": "todayPage.track", "name": "once"}, headers=key)
                   for client in (one, two, three)]
        replayed = [answer.headers.get("idempotent-replayed") for answer in answers]
        checks(all(answer.status_code == 200 for answer in answers)
               and answers[1].content == answers[0].content == answers[2].content and replayed == [None, "true", "true"],
               "an Idempotency-Key retry sent to replicas 2 and 3 replays replica 1's answer: "
               f"statuses {[answer.status_code for answer in answers]}, replayed {replayed}")
        other = three.http.post(path, json={"type": "todayPage.track", "name": "other"}, headers=key)
        tracks = [entry for entry in two.entries(session) if entry["kind"] == "input" and entry["type"] == "todayPage.track"]
        checks(other.status_code == 422 and len(tracks) == 1,
               f"the key with another body is 422 on another replica; the input is stored once: "
               f"{other.status_code}, {len(tracks)} stored")
    checks.assert_all()
