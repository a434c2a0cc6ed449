"""Item 2: inputs to one session are serialized across replicas. 8 clients write one session
through nginx at once (round-robin: through every replica); If-Match and Idempotency-Key
across replicas, each request sent straight to a chosen replica."""
import threading
import time

from common import call, once, timeline


def concurrent_writers(fleet, report, clients, inputs):
    session = "c2-shared"
    created = once(fleet, "POST", "/v1/sessions", {"uid": "c2", "id": session})
    if not report.check(2, "create the shared session", created.status == 201, f"{created.status}"):
        return
    answers, problems = {}, []

    def client(number):
        connection = fleet.connect()
        try:
            for index in range(inputs):
                name = f"w{number}-{index}"
                answer = call(connection, "POST", f"/v1/sessions/{session}/web-events",
                              {"type": "todayPage.track", "name": name}, {"Idempotency-Key": name})
                if answer.status != 200:
                    problems.append(f"{name}: {answer.status} {answer.body[:120]!r}")
                    return
                answers[name] = answer.json()["session"]["version"]
        except Exception as error:  # noqa: BLE001 (reported as the check's failure)
            problems.append(f"client {number}: {error!r}")
        finally:
            connection.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = clients * inputs
    report.check(2, f"{clients} clients × {inputs} inputs through nginx all answered 200", not problems,
                 "; ".join(problems[:3]))
    versions = sorted(answers.values())
    report.check(2, "each input's answer carries its own version, +1 each (2..N+1)",
                 versions == list(range(2, total + 2)), f"{len(set(versions))} distinct of {len(versions)}, "
                 f"range {versions[:1]}..{versions[-1:]}")
    entries = timeline(fleet, session)
    seqs = [entry["seq"] for entry in entries]
    report.check(2, "the timeline's seq is gapless", seqs == list(range(1, len(seqs) + 1)),
                 f"{len(seqs)} entries, first {seqs[:3]}, last {seqs[-3:]}")
    applied = [entry["data"]["input"]["name"] for entry in entries
               if entry["kind"] == "input" and entry["type"] == "todayPage.track"]
    report.check(2, "every input applied exactly once", sorted(applied) == sorted(answers) and len(applied) == total,
                 f"{len(applied)} applied, {len(set(applied))} distinct, {total} sent")
    view = once(fleet, "GET", f"/v1/sessions/{session}").json()
    report.check(2, "the session's version is one per input", view["version"] == total + 1, f"version {view['version']}")
    used = replicas_used(fleet, f"/v1/sessions/{session}/web-events")
    report.check(2, "nginx spread the writes over every replica", used == len(fleet.replicas),
                 f"{used} of {len(fleet.replicas)} replicas answered them (nginx's access log)")


def replicas_used(fleet, path):
    """How many replicas answered `path`, by nginx's access log, which nginx writes in buffers
    flushed every second (deploy/nginx.conf): read until every replica shows, or for 30 s."""
    deadline = time.monotonic() + 30
    while True:
        with open(f"{fleet.folder}/nginx/access.log", encoding="utf-8") as log:
            used = len({line.split()[-3] for line in log if f" {path} " in line})
        if used >= len(fleet.replicas) or time.monotonic() > deadline:
            return used
        time.sleep(0.1)


def conditional_and_idempotent(fleet, report):
    session = "c2-cross"
    once(fleet, "POST", "/v1/sessions", {"uid": "c2", "id": session}, replica=1)
    version = once(fleet, "GET", f"/v1/sessions/{session}", replica=1).json()["version"]
    body = {"type": "background"}
    first = once(fleet, "POST", f"/v1/sessions/{session}/lifecycle", body, {"If-Match": str(version)}, replica=2)
    stale = once(fleet, "POST", f"/v1/sessions/{session}/lifecycle", {"type": "foreground"},
                 {"If-Match": str(version)}, replica=3)
    after = once(fleet, "GET", f"/v1/sessions/{session}", replica=1).json()
    report.check(2, "If-Match read on replica 1, written on 2 (200), the stale tag on 3 is 412 and changes nothing",
                 first.status == 200 and stale.status == 412 and after["version"] == version + 1,
                 f"{first.status}, {stale.status}, version {version} -> {after['version']}")
    key = {"Idempotency-Key": "c2-key"}
    path, event = f"/v1/sessions/{session}/web-events", {"type": "todayPage.track", "name": "once"}
    answers = [once(fleet, "POST", path, event, key, replica=replica) for replica in (1, 2, 3)]
    replayed = [answer.headers.get("idempotent-replayed") for answer in answers]
    report.check(2, "an Idempotency-Key retry sent to replicas 2 and 3 replays replica 1's answer",
                 all(a.status == 200 for a in answers) and answers[1].body == answers[0].body == answers[2].body
                 and replayed == [None, "true", "true"], f"statuses {[a.status for a in answers]}, replayed {replayed}")
    other = once(fleet, "POST", path, {"type": "todayPage.track", "name": "other"}, key, replica=3)
    tracks = [e for e in timeline(fleet, session, replica=2) if e["kind"] == "input" and e["type"] == "todayPage.track"]
    report.check(2, "the key with another body is 422 on another replica; the input is stored once",
                 other.status == 422 and len(tracks) == 1, f"{other.status}, {len(tracks)} stored")


def run(fleet, report, fast):
    concurrent_writers(fleet, report, 8, 12 if fast else 100)
    conditional_and_idempotent(fleet, report)
