"""Scripts/bench: drives todaysim with wrk and prints one table per run. See Scripts/bench.

    bench.py BIN_DIR [--db postgres|postgres://…]
    bench.py BIN_DIR --fleet
"""
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import harness
from harness import RUNS, SECONDS, SESSIONS, SESSION_ENV, Server, create_sessions, post_all, print_table, row, wrk


def with_waiters(server, count, measure):
    """Runs `measure` while `count` timeline requests wait (waitMs=30000) on a quiet session."""
    post_all(server, [("/v1/sessions", {"uid": "waiter", "id": "waited-on"})])
    status, body = server.get("/v1/sessions/waited-on")
    last = json.loads(body)["counts"]["timeline"]
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(f"GET /v1/sessions/waited-on/timeline?after={last}&waitMs=30000 HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        sockets.append(sock)
    try:
        time.sleep(0.5)
        return measure()
    finally:
        for sock in sockets:
            sock.close()


def storage_ceiling(synchronous):
    runs = []
    for _ in range(RUNS):
        output = subprocess.run([os.path.join(harness.BIN_DIR, "todaysim-bench"), "storage", "--seconds", str(SECONDS),
                                 "--synchronous", synchronous], capture_output=True, text=True, check=True).stdout
        runs.append(float(output.split()[2]))
    return statistics.median(runs)


def sqlite_runs(workdir):
    """The SQLite store with synchronous NORMAL and FULL; returns {(synchronous, case): result}."""
    results = {}
    for synchronous in ("normal", "full"):
        server = Server(workdir, synchronous)
        try:
            create_sessions(server, [f"bench-{i}" for i in range(SESSIONS)])
            ceiling = storage_ceiling(synchronous)
            if synchronous == "normal":
                health = wrk(server.base + "/healthz")
                row("GET /healthz (HTTP ceiling)", health)
                view = results[(synchronous, "view")] = wrk(server.base, "get-session.lua", env=SESSION_ENV)
                row(f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)", view, "/healthz", view[0] / health[0], 0.60)
            writes = results[(synchronous, "web-events")] = wrk(server.base, "web-events.lua", env=SESSION_ENV)
            row("POST …/web-events (pull→render→result)", writes, "storage", writes[0] / ceiling,
                0.50 if synchronous == "normal" else None)
            lifecycle = results[(synchronous, "lifecycle")] = wrk(server.base, "lifecycle.lua", env=SESSION_ENV)
            row("POST …/lifecycle", lifecycle, "storage", lifecycle[0] / ceiling)
            if synchronous == "normal":
                page = results[(synchronous, "timeline")] = wrk(server.base + "/v1/sessions/bench-0/timeline?after=10&limit=100")
                row("GET …/timeline?after=10&limit=100", page)
                waiting = with_waiters(server, 200, lambda: wrk(server.base, "get-session.lua", env=SESSION_ENV))
                row("GET /v1/sessions/{id} beside 200 parked waitMs requests", waiting, "without",
                    waiting[0] / view[0])
            harness.ROWS.append(("storage ceiling: SQLite alone, 1 row + 3 entries per tx", f"{ceiling:,.0f}", "", "", "tx/s"))
            print_table(f"synchronous={synchronous.upper()} (WAL)" + (" — the shipped setting" if synchronous == "normal" else ""))
        finally:
            server.stop()
    return results


def main():
    harness.BIN_DIR = sys.argv[1]
    database = None
    arguments = sys.argv[2:]
    if arguments == ["--fleet"]:
        import fleet_bench
        print(f"todaysim bench --fleet: nproc {os.cpu_count()}, wrk -t{harness.THREADS} -c{harness.CONNECTIONS} "
              f"-d{SECONDS}s, {RUNS} runs each (median), loopback")
        fleet_bench.run()
        return
    if arguments[:1] == ["--db"] and len(arguments) == 2:
        database = arguments[1]
    elif arguments:
        raise SystemExit("usage: Scripts/bench [--db postgres|postgres://…] | Scripts/bench --fleet")
    workdir = tempfile.mkdtemp(prefix="todaysim-bench-")
    print(f"todaysim bench: nproc {os.cpu_count()}, wrk -t{harness.THREADS} -c{harness.CONNECTIONS} -d{SECONDS}s, "
          f"{RUNS} runs each (median), loopback")
    try:
        sqlite = sqlite_runs(workdir)
        if database:
            import postgres_bench
            postgres_bench.run(database, sqlite)
        if os.environ.get("BENCH_SKIP_HISTORY") != "1":
            history(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def history(workdir):
    server = Server(workdir)
    try:
        started = time.time()
        create_sessions(server, [f"h-{i}" for i in range(10_000)])
        create_sessions(server, ["fresh", "big"])
        # 100,000 timeline entries on one session: background/foreground pairs, 4 entries each.
        post_all(server, [("/v1/sessions/big/lifecycle", {"type": "background" if i % 2 == 0 else "foreground"})
                          for i in range(25_000)])
        status, body = server.get("/v1/sessions/big")
        entries = json.loads(body)["counts"]["timeline"]
        seeded = time.time() - started
        results = {}
        for name in ("fresh", "big"):
            results[("write", name)] = wrk(server.base, "lifecycle-one.lua", env={"BENCH_SESSION": name})
            results[("read", name)] = wrk(f"{server.base}/v1/sessions/{name}")
        for kind, label in (("write", "POST …/lifecycle on"), ("read", "GET /v1/sessions/")):
            fresh, big = results[(kind, "fresh")], results[(kind, "big")]
            row(f"{label} fresh", fresh)
            ratio = big[0] / fresh[0]
            row(f"{label} big", big, "fresh", ratio, 0.80)
        deep = wrk(f"{server.base}/v1/sessions/big/timeline?after={entries // 2}&limit=100", connections=4)
        row(f"GET big timeline?after={entries // 2}&limit=100 (-c4)", deep)
        print_table(f"history: 10,002 sessions, 'big' has {entries:,} timeline entries (seeded in {seeded:.0f} s)")
        print(f"deep timeline page p50 {deep[1]:.2f} ms (target < 2 ms: {'met' if deep[1] < 2 else 'MISSED'})")
        rss = server.rss_mib()
        print(f"server resident memory: {rss:.1f} MiB (target < 100 MiB: {'met' if rss < 100 else 'MISSED'})")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
