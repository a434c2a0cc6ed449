"""`Scripts/bench --fleet` (formerly `bench.d/fleet_bench.py` of Scripts/bench): the same workloads through
nginx to 1 and to 3 replicas, beside one replica direct, each fleet on a throwaway PostgreSQL of
its own (`support.fleet.started_fleet`, over Scripts/fleet; plain HTTP through nginx so the
figures show the proxy, not TLS). On one machine the fleet shares the cores with PostgreSQL,
nginx and wrk: it cannot be faster; this shows what nginx costs and what the replicas' commits
add up to, for the estimate in docs/FLEET.md. Goal: a GET through nginx to 1 replica at least
0.80 of direct."""
from __future__ import annotations

from typing import Any

import pytest

from support.bench import SESSION_ENV, SESSIONS, Record, Table, create_sessions, header, metric, wrk
from support.fleet import Fleet, started_fleet

pytestmark = pytest.mark.bench


def commits(fleet: Fleet) -> tuple[float, float]:
    """(inputs, commits) summed over the replicas' /metrics."""
    inputs = made = 0.0
    for replica in range(1, len(fleet.replicas) + 1):
        with fleet.client(replica) as client:
            inputs += metric(client, "todaysim_store_commit_inputs_sum")
            made += metric(client, "todaysim_store_commit_inputs_count")
    return inputs, made


def measure(target: str, fleet: Fleet) -> dict[str, Any]:
    """GET view, web-events and a timeline page against `target`; with the mean batch size."""
    view = wrk(target, "get-session.lua", env=SESSION_ENV)
    before = commits(fleet)
    writes = wrk(target, "web-events.lua", env=SESSION_ENV)
    after = commits(fleet)
    batch = (after[0] - before[0]) / max(1.0, after[1] - before[1])
    page = wrk(target + "/v1/sessions/bench-0/timeline?after=10&limit=100")
    return {"view": view, "web-events": writes, "timeline": page, "batch": batch, "commits/s": writes[0] / max(1.0, batch)}


def test_fleet_through_nginx(binary: str, table: Table, figure: Record) -> None:
    header(" --fleet")
    results = {}
    with started_fleet(binary, replicas=1, tls=False) as one:
        with one.client() as client:
            create_sessions(client, [f"bench-{i}" for i in range(SESSIONS)])
        results["direct"] = measure(one.url(1), one)
        results["nginx → 1"] = measure(one.url(), one)
    with started_fleet(binary, replicas=3, tls=False) as three:
        with three.client() as client:
            create_sessions(client, [f"bench-{i}" for i in range(SESSIONS)])
        results["nginx → 3"] = measure(three.url(), three)
    direct = results["direct"]
    for name, label in (("view", f"GET /v1/sessions/{{id}} ({SESSIONS} sessions)"), ("web-events", "POST …/web-events"),
                        ("timeline", "GET …/timeline?after=10&limit=100")):
        for target in ("direct", "nginx → 1", "nginx → 3"):
            result = results[target][name]
            if target == "direct":
                table.row(f"{label}, one replica direct", result)
            else:
                table.row(f"{label}, {target}", result, "direct", result[0] / direct[name][0],
                          0.80 if name == "view" and target == "nginx → 1" else None)
    table.print("fleet on one PostgreSQL (plain HTTP through nginx; every process on this machine's cores)")
    for target, result in results.items():
        figure(f"{target}: web-events inputs per commit", result["batch"])
        figure(f"{target}: commits over all replicas", result["commits/s"], "/s")
        print(f"  {target}: web-events {result['batch']:.1f} inputs per commit, "
              f"{result['commits/s']:,.0f} commits/s over all replicas")
