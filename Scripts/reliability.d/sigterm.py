"""Graceful shutdown under load (issue 12, item 2): in each round the server is started, four
keep-alive clients write to their own sessions, a long poll and an event stream wait, and the
server gets SIGTERM at a random moment. It must exit 0 (no libmicrohttpd abort) and not hang,
and across all rounds every input answered `200` must be stored exactly as answered (nothing
acknowledged lost), nothing answered otherwise than `200` or `503 shutting_down` (or no answer
at all, when the connection closed under it), the number of applied inputs between the
acknowledged ones and the acknowledged plus the unanswered and in-doubt ones, `seq` without
gaps and `PRAGMA integrity_check` ok after every round.

Time (issue 20, item 1): the server drains for 5 s at SIGTERM (requests in flight that long are
answered `503 shutting_down` "may have been applied", the in-doubt ones here), so a healthy
exit takes at most about 6 s; STOP_BOUND (120 s) is a hang, not a slow machine. How long each
stop took is a figure (median, max). A 503 is a refusal (must not be applied) only when it says
nothing was applied: one whose answer was not ready when the drain ran out may have been, and
counting it as refused made a write held past the 5 s drain on a loaded machine fail the run.

    python3 sigterm.py TODAYSIM_BINARY [ROUNDS=100] [SEED]
"""
import http.client
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from testkit import free_port, start_server  # noqa: E402

BINARY = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else int(time.time())
random.seed(SEED)
WRITERS = 4
STOP_BOUND = 120.0         # seconds from SIGTERM to exit: it drains 5 s at most, so this is a hang
CLIENT_SECONDS = 30        # a writer gives up on an answer after this (then: unanswered, no failure)
LOAD_BEFORE = (0.05, 0.6)  # the SIGTERM comes this many seconds (uniform) after the load started
HOST = "127.0.0.1"
WORK = tempfile.mkdtemp(prefix="todaysim-sigterm-")
DB = os.path.join(WORK, "sigterm.sqlite")
QUIET = "sigterm-quiet"    # a session nobody writes to: the long poll waits on it
quiet_after = {"seq": 0}   # its last entry: the long poll waits for the next one


PORT = free_port()
failures = []
tally = {"answered": 0, "refused": 0, "in doubt": 0, "unanswered": 0, "stop_seconds": [], "polls": 0, "streams": 0}
lock = threading.Lock()


def fail(message):
    failures.append(message)
    print(f"FAIL {message}", flush=True)


def start(log):
    return start_server(BINARY, PORT, "--db", DB, "--quiet", log=log)


def call(method, path, body=None):
    connection = http.client.HTTPConnection(HOST, PORT, timeout=CLIENT_SECONDS)
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None,
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


# What each writer's inputs got: index -> the 200 answer (parsed), or "refused" (503, nothing
# applied), "in doubt" (503, answered when the drain ran out: may have been applied) or "unanswered".
outcomes = {number: {} for number in range(WRITERS)}
next_index = {number: 0 for number in range(WRITERS)}


def writer(number, stop):
    """Inputs back to back on one keep-alive connection (a new one after a close) until the
    server is gone."""
    session = f"sigterm-{number}"
    connection = None
    while not stop.is_set():
        index = next_index[number]
        next_index[number] += 1
        body = {"advanceMs": 700} if index % 2 else {"type": "todayPage.track", "name": f"w{number}-{index}"}
        path = f"/v1/sessions/{session}/{'clock' if index % 2 else 'web-events'}"
        try:
            if connection is None:
                connection = http.client.HTTPConnection(HOST, PORT, timeout=CLIENT_SECONDS)
            connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            data = response.read()
        except ConnectionRefusedError:  # the server is gone: the input was never sent
            connection = None
            time.sleep(0.01)
            continue
        except (OSError, http.client.HTTPException):
            outcomes[number][index] = "unanswered"
            if connection is not None:
                connection.close()
            connection = None
            time.sleep(0.01)  # the server is going or gone: do not spin
            continue
        try:
            problem = json.loads(data) if response.status == 503 else {}
        except ValueError:
            problem = {}
        if response.status == 200:
            outcomes[number][index] = json.loads(data)
        elif problem.get("code") == "shutting_down":
            # "nothing was applied": refused before it ran. Otherwise (the drain ran out before
            # its answer was ready, "may have been applied") it is in doubt, like no answer.
            outcomes[number][index] = "refused" if "nothing was applied" in problem.get("detail", "") else "in doubt"
        else:
            outcomes[number][index] = "unanswered"
            fail(f"writer {number}, input {index}: {path} answered {response.status}: {data[:200]!r}")
        if response.getheader("Connection", "").lower() == "close":
            connection.close()
            connection = None
    if connection is not None:
        connection.close()


def long_poll(stop):
    """Timeline long polls on a session that never changes, one after another."""
    while not stop.is_set():
        try:
            connection = http.client.HTTPConnection(HOST, PORT, timeout=CLIENT_SECONDS + 30)  # waitMs 30000
            connection.request("GET", f"/v1/sessions/{QUIET}/timeline?after={quiet_after['seq']}&waitMs=30000")
            response = connection.getresponse()
            response.read()
            connection.close()
            if response.status not in (200, 503):
                fail(f"the long poll answered {response.status}")
            with lock:
                tally["polls"] += 1
        except (OSError, http.client.HTTPException):
            time.sleep(0.01)


def event_stream(stop):
    """An event stream of writer 0's session, read until the server ends it."""
    while not stop.is_set():
        try:
            sock = socket.create_connection((HOST, PORT), timeout=CLIENT_SECONDS + 30)
            sock.sendall(f"GET /v1/sessions/sigterm-0/events HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
            with lock:
                tally["streams"] += 1
            while sock.recv(65536):
                pass
            sock.close()
        except OSError:
            time.sleep(0.01)


def one_round(number):
    log_path = os.path.join(WORK, f"server-{number}.log")
    with open(log_path, "wb") as log:
        process = start(log)
        stop = threading.Event()
        threads = [threading.Thread(target=writer, args=(n, stop)) for n in range(WRITERS)]
        threads += [threading.Thread(target=long_poll, args=(stop,)), threading.Thread(target=event_stream, args=(stop,))]
        for thread in threads:
            thread.start()
        time.sleep(random.uniform(*LOAD_BEFORE))
        began = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=STOP_BOUND)
        except subprocess.TimeoutExpired:
            code = f"none within {STOP_BOUND:.0f} s (killed; thread stacks in {WORK}/hang-{number}.txt)"
            if shutil.which("gdb"):  # where it hangs, for whoever reads the failure
                with open(os.path.join(WORK, f"hang-{number}.txt"), "wb") as stacks:
                    subprocess.run(["gdb", "-p", str(process.pid), "-batch", "-ex", "thread apply all bt"],
                                   stdout=stacks, stderr=subprocess.STDOUT, timeout=60)
            process.kill()
            process.wait()
        seconds = time.monotonic() - began
        stop.set()
        for thread in threads:
            thread.join()
    tally["stop_seconds"].append(seconds)
    with open(log_path, "rb") as f:
        text = f.read().decode(errors="replace")
    if code != 0 or "Fatal error" in text:
        fail(f"round {number}: exit {code} after {seconds:.2f} s; log tail: {text[-400:]!r}")
    integrity = sqlite3.connect(DB).execute("PRAGMA integrity_check").fetchone()[0]
    if integrity != "ok":
        fail(f"round {number}: integrity_check {integrity}")


def timeline(session):
    entries, after = [], 0
    while True:
        status, raw = call("GET", f"/v1/sessions/{session}/timeline?after={after}&limit=1000")
        if status != 200:
            raise SystemExit(f"sigterm: the timeline of {session} answered {status}")
        page = json.loads(raw)
        entries += page["entries"]
        after = page["next"]
        if not page["more"]:
            return entries


def verify():
    """Every acknowledged input stored as answered; applied inputs within the bounds."""
    for number in range(WRITERS):
        session = f"sigterm-{number}"
        entries = timeline(session)
        by_seq = {entry["seq"]: entry for entry in entries}
        answered = {i: o for i, o in outcomes[number].items() if isinstance(o, dict)}
        refused = sum(1 for o in outcomes[number].values() if o == "refused")
        doubtful = sum(1 for o in outcomes[number].values() if o == "in doubt")
        unanswered = sum(1 for o in outcomes[number].values() if o == "unanswered")
        tally["answered"] += len(answered)
        tally["refused"] += refused
        tally["in doubt"] += doubtful
        tally["unanswered"] += unanswered
        applied = sum(1 for entry in entries if entry["kind"] == "input" and entry["type"] != "create")
        if not len(answered) <= applied <= len(answered) + unanswered + doubtful:
            fail(f"{session}: {applied} inputs applied, {len(answered)} answered 200, {unanswered} unanswered, "
                 f"{doubtful} in doubt ({refused} refused 503 must not be applied)")
        if [e["seq"] for e in entries] != list(range(1, len(entries) + 1)):
            fail(f"{session}: seq has gaps")
        lost = [i for i, answer in answered.items()
                if any(by_seq.get(entry["seq"]) != entry for entry in answer["entries"])]
        if lost:
            fail(f"{session}: {len(lost)} inputs answered 200 are not stored as answered, e.g. input {lost[0]}")


def main():
    with open(os.path.join(WORK, "setup.log"), "wb") as log:
        process = start(log)
        for session in [f"sigterm-{n}" for n in range(WRITERS)] + [QUIET]:
            status, data = call("POST", "/v1/sessions", {"uid": "sigterm", "id": session})
            if status != 201:
                raise SystemExit(f"sigterm: creating {session} answered {status}: {data[:200]!r}")
        quiet_after["seq"] = timeline(QUIET)[-1]["seq"]
        process.send_signal(signal.SIGTERM)
        process.wait()
    began = time.monotonic()
    for number in range(ROUNDS):
        one_round(number)
        if number % 10 == 9:
            print(f"  {number + 1} rounds, {len(failures)} failures, {time.monotonic() - began:.0f} s", flush=True)
    with open(os.path.join(WORK, "verify.log"), "wb") as log:
        process = start(log)
        verify()
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=STOP_BOUND)
        if code != 0:
            fail(f"the verifying server exited {code}")
    stops = sorted(tally["stop_seconds"])
    print(f"sigterm test (seed {SEED}): {ROUNDS} rounds of SIGTERM under load ({WRITERS} keep-alive writers, a long "
          f"poll, an event stream); exit 0 in {ROUNDS - sum(1 for f in failures if f.startswith('round') and ': exit ' in f)} of {ROUNDS}; "
          f"stop took median {stops[len(stops) // 2]:.2f} s, max {stops[-1]:.2f} s (bound {STOP_BOUND:.0f} s); "
          f"inputs: {tally['answered']} answered 200 and all stored as answered: "
          f"{'yes' if not any('stored' in f for f in failures) else 'NO'}, {tally['refused']} refused "
          f"503 shutting_down, {tally['in doubt']} in doubt (503 when the drain ran out), {tally['unanswered']} "
          f"unanswered (the connection closed under them); {tally['polls']} long polls, {tally['streams']} "
          f"event streams; integrity_check ok after every round: "
          f"{'yes' if not any('integrity' in f for f in failures) else 'NO'}; {time.monotonic() - began:.0f} s")
    print(f"{'passed' if not failures else f'{len(failures)} failures'}"
          + (f" (server logs and database in {WORK})" if failures else ""))
    if not failures:
        shutil.rmtree(WORK, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
