"""Scripts/bench --compare: this build against another, in alternating rounds on one machine.

    compare_bench.py THIS_BIN_DIR OTHER_BIN_DIR [ROUNDS]

A figure measured once on a busy 2-core machine moves by a third from one minute to the next;
a refactor's figures are "within noise" only beside the other build measured in the same
minutes. Each round starts a fresh server of each build (which goes first alternates), makes
the 64 sessions and runs one wrk per case; the table gives each case's median over the rounds,
the ratio this/other, and every round's figure, so the spread is there to read.
"""
import statistics
import sys
import tempfile

import harness
from harness import SESSION_ENV, SESSIONS, Server, create_sessions, wrk_once

CASES = [("GET /healthz (HTTP ceiling)", "/healthz", None, None),
         ("GET /v1/sessions/{id}", "", "get-session.lua", SESSION_ENV),
         ("POST …/web-events", "", "web-events.lua", SESSION_ENV),
         ("POST …/lifecycle", "", "lifecycle.lua", SESSION_ENV)]


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit("usage: compare_bench.py THIS_BIN_DIR OTHER_BIN_DIR [ROUNDS]")
    builds = [("this", sys.argv[1]), ("other", sys.argv[2])]
    rounds = int(sys.argv[3]) if len(sys.argv) == 4 else 6
    figures = {(build, case[0]): [] for build, _ in builds for case in CASES}
    for round_ in range(rounds):
        for build, bin_dir in (builds if round_ % 2 == 0 else builds[::-1]):
            harness.BIN_DIR = bin_dir
            with tempfile.TemporaryDirectory() as workdir:
                server = Server(workdir, "normal")
                try:
                    create_sessions(server, [f"bench-{i}" for i in range(SESSIONS)])
                    for name, path, script, env in CASES:
                        figures[(build, name)].append(wrk_once(server.base + path, script, env=env)[0])
                finally:
                    server.stop()
    print(f"this {sys.argv[1]} against other {sys.argv[2]}: {rounds} alternating rounds, req/s, median")
    print(f"{'case':30s} {'other':>9s} {'this':>9s} {'this/other':>10s}  rounds (other | this)")
    for name, *_ in CASES:
        other, this = figures[("other", name)], figures[("this", name)]
        print(f"{name:30s} {statistics.median(other):9,.0f} {statistics.median(this):9,.0f} "
              f"{statistics.median(this) / statistics.median(other):10.2f}  "
              f"{' '.join(f'{x:,.0f}' for x in other)} | {' '.join(f'{x:,.0f}' for x in this)}")


if __name__ == "__main__":
    main()
