"""Crash consistency: clients drive sessions while the server is killed with SIGKILL at random
moments and restarted. Every input carries an Idempotency-Key and is retried until answered
(a 503 too: the database may be out of reach). Afterwards: every session applied each input
exactly once, every answered input's timeline entries are stored exactly as answered, the
database is consistent (SQLite: PRAGMA integrity_check; PostgreSQL: every session's timeline
gapless and its version one per stored input, no orphan rows), sessions continue.

With --postgres (issue 14, item 5) the server stores in a throwaway PostgreSQL (Scripts/postgres),
and after the SIGKILL rounds PostgreSQL itself is restarted DB_RESTARTS times under load while
the server runs.

    python3 crash.py TODAYSIM_BINARY KILLS [CLIENTS] [SEED] [--postgres [DB_RESTARTS]]
"""
import glob
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
from testkit import free_port, healthy, start_server, wait_until  # noqa: E402

ARGS = sys.argv[1:]
POSTGRES = "--postgres" in ARGS
DB_RESTARTS = 0
if POSTGRES:
    at = ARGS.index("--postgres")
    rest = ARGS[at + 1:]
    DB_RESTARTS = int(rest[0]) if rest else 3
    ARGS = ARGS[:at]
BINARY, KILLS = ARGS[0], int(ARGS[1])
CLIENTS = int(ARGS[2]) if len(ARGS) > 2 else 4
SEED = int(ARGS[3]) if len(ARGS) > 3 else int(time.time())
random.seed(SEED)
WORK = tempfile.mkdtemp(prefix="todaysim-crash-")
POSTGRES_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "postgres")
# Its own folder under the temporary directory (as root the server runs as another user, who
# must be let into the folder's parent).
PGDIR = tempfile.mkdtemp(prefix="todaysim-crash-pg-") if POSTGRES else None


def postgres(command):
    """Scripts/postgres start|stop on this test's cluster; start prints the URI (same port each time)."""
    extra = ["--until-exit-of", str(os.getpid())] if command == "start" else []
    done = subprocess.run([POSTGRES_SCRIPT, command, PGDIR] + extra, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"crash: Scripts/postgres {command} failed: {done.stderr.strip()[-500:]}")
    return done.stdout.strip().splitlines()[-1] if command == "start" else None


DB = postgres("start") if POSTGRES else os.path.join(WORK, "crash.sqlite")


PORT = free_port()
state = {"process": None, "stop": False}


def start():
    state["process"] = start_server(BINARY, PORT, "--db", DB, "--quiet")


# The checks after the kills wait this long for an answer (the load phase retries after 3 s).
CHECK_SECONDS = 30


def wait_ready():
    """Until /readyz says the storage takes writes again (the server reconnects by itself)."""
    if wait_until(lambda: healthy(PORT, path="/readyz"), CHECK_SECONDS, step=0.05):
        return
    raise SystemExit(f"crash: /readyz not 200 {CHECK_SECONDS} s after PostgreSQL came back")


counts = {"retried": 0, "replayed": 0, "unavailable": 0}


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
    """Retries through kills and database outages until the server answers other than 503;
    returns (status, bytes)."""
    attempts = 0
    while True:
        attempts += 1
        try:
            answer = request(method, path, body, key)
        except (OSError, http.client.HTTPException):
            time.sleep(0.02)
            continue
        if answer[0] == 503:
            # The database is out of reach (or a COMMIT lost its answer): nothing acknowledged.
            # A real client waits Retry-After; this one comes back sooner to keep the test short.
            counts["unavailable"] += 1
            time.sleep(0.1)
            continue
        if attempts > 1:
            counts["retried"] += 1
        return answer


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
    started = time.time()
    for _ in range(KILLS):
        time.sleep(random.uniform(0.05, 0.4))
        state["process"].send_signal(signal.SIGKILL)
        state["process"].wait()
        start()
    # PostgreSQL itself stopped and started again under load, the server running throughout.
    for _ in range(DB_RESTARTS):
        time.sleep(random.uniform(0.05, 0.4))
        postgres("stop")
        time.sleep(random.uniform(0.05, 0.3))
        postgres("start")
    if POSTGRES:
        wait_ready()
    refused = True
    if not POSTGRES:
        # A second server on the same file is refused while this one runs (issue 12, item 3).
        # (Servers share a PostgreSQL database by design.)
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
    integrity = postgres_consistency() if POSTGRES else sqlite3.connect(DB).execute("PRAGMA integrity_check").fetchone()[0]
    if integrity != "ok":
        print(f"FAIL {'consistency' if POSTGRES else 'integrity_check'}: {integrity}")
        failures += 1
    where = f"PostgreSQL, restarted {DB_RESTARTS} times under load" if POSTGRES else "SQLite"
    print(f"crash test (seed {SEED}, {where}): {KILLS} SIGKILLs, {CLIENTS} clients, {inputs} inputs answered "
          f"in {time.time() - started:.1f} s, {counts['retried']} of them retried after a kill or a 503 "
          f"({counts['replayed']} answered from their stored key), {counts['unavailable']} answers 503, "
          f"each applied exactly once and stored as answered: {'yes' if failures == 0 else 'NO'}; "
          f"{'consistency' if POSTGRES else 'integrity_check'} {integrity}")
    checks = 3 + 5 * CLIENTS
    print(f"{checks - failures} passed, {failures} failed")
    return 1 if failures else 0


# Rows PostgreSQL holds that no todaysim could have written: a session whose timeline is not
# 1..n without gaps, whose version is not one per stored input (the creation included), and
# timeline, violation, request or key rows of no session. Each row names one problem.
CONSISTENCY_SQL = """
SELECT 'session ' || s.id || ': seqs ' || coalesce(min(t.seq), 0) || '..' || coalesce(max(t.seq), 0)
       || ' in ' || count(t.seq) || ' rows, version ' || s.version || ', '
       || count(t.seq) FILTER (WHERE t.kind = 'input') || ' inputs'
  FROM sessions s LEFT JOIN timeline t ON t.session = s.ord
 WHERE s.closed < 2
 GROUP BY s.ord, s.id, s.version
HAVING coalesce(min(t.seq), 1) <> 1 OR coalesce(max(t.seq), 0) <> count(t.seq)
    OR s.version <> count(t.seq) FILTER (WHERE t.kind = 'input')
UNION ALL SELECT 'timeline rows of no session: ' || count(*) FROM timeline t
 WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.ord = t.session) HAVING count(*) > 0
UNION ALL SELECT 'violations of no timeline entry: ' || count(*) FROM violations v
 WHERE NOT EXISTS (SELECT 1 FROM timeline t WHERE t.session = v.session AND t.seq = v.seq) HAVING count(*) > 0
UNION ALL SELECT 'request records of no session: ' || count(*) FROM requests r
 WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.ord = r.session) HAVING count(*) > 0
UNION ALL SELECT 'idempotency keys of no session: ' || count(*) FROM idempotency i
 WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.ord = i.session) HAVING count(*) > 0
"""


def psql():
    found = shutil.which("psql") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1:]), None)
    if not found:
        raise SystemExit("crash: psql not found (Scripts/postgres installs postgresql)")
    return found


def postgres_consistency():
    """'ok', or what is inconsistent in the database the server left."""
    done = subprocess.run([psql(), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", DB, "-c", CONSISTENCY_SQL],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return f"psql failed: {done.stderr.strip()[:300]}"
    problems = [line for line in done.stdout.splitlines() if line.strip()]
    return "ok" if not problems else "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        if state["process"] and state["process"].poll() is None:
            state["process"].kill()
        if POSTGRES:
            subprocess.run([POSTGRES_SCRIPT, "stop", PGDIR], capture_output=True, timeout=120)
            shutil.rmtree(PGDIR, ignore_errors=True)

