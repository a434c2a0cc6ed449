"""The cluster test's checks of items 2–5 against a running fleet (Scripts/fleet's folder):
prints PASS/FAIL per check and exits 1 on any failure. Scripts/cluster-test starts the fleet,
runs item 1 itself (the curl scenarios through nginx), then this.

    python3 cluster.py FLEET_DIR [--fast] [--items 2,3,4,5]
"""
import sys
import time

import faults
import live
import serialize
import timers
from common import Fleet, Report

ITEMS = {2: serialize, 3: timers, 4: live, 5: faults}


def main():
    args = sys.argv[1:]
    fast = "--fast" in args
    chosen = sorted(ITEMS)
    if "--items" in args:
        chosen = [int(item) for item in args[args.index("--items") + 1].split(",")]
    fleet, report = Fleet(args[0]), Report(fast)
    for item in chosen:
        started = time.monotonic()
        try:
            ITEMS[item].run(fleet, report, fast)
        except Exception as error:  # noqa: BLE001 (a check that could not run is a failure)
            report.check(item, "ran to the end", False, repr(error)[:400])
        print(f"     item {item} took {time.monotonic() - started:.1f} s", flush=True)
    goals = (f"; latency goals met {report.goals_met} of {report.goals_met + report.goals_missed} (reported)"
             if fast else "")
    print(f"items {','.join(map(str, chosen))}: {report.passed} passed, {report.failed} failed{goals}")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
