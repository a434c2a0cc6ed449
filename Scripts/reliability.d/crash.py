"""Crash consistency: clients drive sessions while the server is killed with SIGKILL at random
moments and restarted. Every input carries an Idempotency-Key and is retried until answered.
Afterwards: every session applied each input exactly once, every answered input's timeline
entries are stored exactly as answered, PRAGMA integrity_check is ok, sessions continue.

    python3 crash.py TODAYSIM_BINARY KILLS [CLIENTS] [SEED]
"""
import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

BINARY, KILLS = sys.argv[1], int(sys.argv[2])
CLIENTS = int(sys.argv[3]) if len(sys.argv) > 3 else 4
SEED = int(sys.argv[4]) if len(sys.argv) > 4 else int(time.time())
random.seed(SEED)
WORK = tempfile.mkdtemp(prefix="todaysim-crash-")
DB = os.path.join(WORK, "crash.sqlite")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PORT = free_port()
state = {"process": None, "stop": False}


def start():
    state["process"] = subprocess.Popen([BINARY, "serve", "--port", str(PORT), "--db", DB, "--quiet"],
                                        stderr=subprocess.DEVNULL)
    deadline = time.time() + 30  # a loaded machine restarts it slowly
    while time.time() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.02)
    raise SystemExit("crash: the server did not come back")


counts = {"retried": 0, "replayed": 0}


# The checks after the kills wait this long for an answer (the load phase retries after 3 s).
CHECK_SECONDS = 30


def request(method, path, body=None, key=None, timeout=3):
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Idempotency-Key"] = key
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    if response.getheader("Idempotent-Replayed") == "true":
        counts["replayed"] += 1
    return response.status, response.read()


def until_answered(method, path, body, key):
    """Retries through kills until the server answers; returns (status, bytes)."""
    attempts = 0
    while True:
        attempts += 1
        try:
            answer = request(method, path, body, key)
            if attempts > 1:
                counts["retried"] += 1
            return answer
        except (OSError, http.client.HTTPException):
            time.sleep(0.02)


INPUTS_PER_CLIENT = 10_000
answers = {}  # client -> list of (inputIndex, status, json)
lock = threading.Lock()


def client(number):
    session = f"crash-{number}"
    until_answered("POST", "/v1/sessions", {"uid": f"u{number}", "id": session}, None)
    answers[number] = []
    index = 0
    while not state["stop"] and index < INPUTS_PER_CLIENT:
        kind = index % 3
        if kind == 0:
            path, body = f"/v1/sessions/{session}/lifecycle", {"type": "tabActivated", "requestId": f"c{number}-{index}"}
        elif kind == 1:
            path, body = f"/v1/sessions/{session}/web-events", {
                "type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": f"c{number}-{index - 1}",
                "mode": "soft", "status": "succeeded"}
        else:
            path, body = f"/v1/sessions/{session}/clock", {"advanceMs": 700}
        status, raw = until_answered("POST", path, body, f"c{number}-{index}")
        if status != 200:
            raise SystemExit(f"crash: input {index} of client {number} answered {status}: {raw[:200]!r}")
        with lock:
            answers[number].append((index, json.loads(raw)))
        index += 1


def main():
    start()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for _ in range(KILLS):
        time.sleep(random.uniform(0.05, 0.4))
        state["process"].send_signal(signal.SIGKILL)
        state["process"].wait()
        start()
    # A second server on the same file is refused while this one runs (issue 12, item 3).
    second = subprocess.run([BINARY, "serve", "--port", "0", "--db", DB], capture_output=True, text=True, timeout=30)
    refused = second.returncode == 2 and "in use by another todaysim" in second.stderr
    if not refused:
        print(f"FAIL a second server on the database: exit {second.returncode}, {second.stderr.strip()[:200]}")
    time.sleep(0.3)
    state["stop"] = True
    for thread in threads:
        thread.join()

    failures = 0 if refused else 1
    inputs = 0
    for number in range(CLIENTS):
        session = f"crash-{number}"
        status, raw = request("GET", f"/v1/sessions/{session}/timeline?limit=1000", timeout=CHECK_SECONDS)
        entries = []
        after = 0
        while True:
            status, raw = request("GET", f"/v1/sessions/{session}/timeline?after={after}&limit=1000", timeout=CHECK_SECONDS)
            page = json.loads(raw)
            entries += page["entries"]
            after = page["next"]
            if not page["more"]:
                break
        by_seq = {entry["seq"]: entry for entry in entries}
        applied = [entry for entry in entries if entry["kind"] == "input" and entry["type"] != "create"]
        sent = answers[number]
        inputs += len(sent)
        if len(applied) != len(sent):
            print(f"FAIL {session}: {len(sent)} inputs answered, {len(applied)} applied")
            failures += 1
        if [e["seq"] for e in entries] != list(range(1, len(entries) + 1)):
            print(f"FAIL {session}: seq has gaps")
            failures += 1
        for index, answer in sent:
            for entry in answer["entries"]:
                if by_seq.get(entry["seq"]) != entry:
                    print(f"FAIL {session}: input {index}'s entry {entry['seq']} is not stored as answered")
                    failures += 1
                    break
        view = json.loads(request("GET", f"/v1/sessions/{session}", timeout=CHECK_SECONDS)[1])
        if view["version"] != 1 + len(sent):
            print(f"FAIL {session}: version {view['version']} after {len(sent)} inputs")
            failures += 1
        status, _ = request("POST", f"/v1/sessions/{session}/lifecycle", {"type": "background"}, timeout=CHECK_SECONDS)
        if status != 200:
            print(f"FAIL {session}: does not continue ({status})")
            failures += 1
    state["process"].send_signal(signal.SIGTERM)
    state["process"].wait()
    integrity = sqlite3.connect(DB).execute("PRAGMA integrity_check").fetchone()[0]
    if integrity != "ok":
        print(f"FAIL integrity_check: {integrity}")
        failures += 1
    print(f"crash test (seed {SEED}): {KILLS} SIGKILLs, {CLIENTS} clients, {inputs} inputs answered, "
          f"{counts['retried']} of them retried after a kill ({counts['replayed']} answered from their stored key), "
          f"each applied exactly once and stored as answered: {'yes' if failures == 0 else 'NO'}; integrity_check {integrity}")
    checks = 3 + 5 * CLIENTS
    print(f"{checks - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        if state["process"] and state["process"].poll() is None:
            state["process"].kill()
