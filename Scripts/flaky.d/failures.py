"""Reads Scripts/flaky's logs (.build/flaky/PASS-RUN.log and .status) and prints every test that
failed in any run: its name, the pass, how many runs it failed of how many, and its first
failure. A run that failed without naming a test (a crash, a sanitizer report, a time-out) is
listed as that run. Exit 1 when anything failed.

    python3 Scripts/flaky.d/failures.py DIR RUNS PASS...
"""
import os
import re
import sys

ISSUE = re.compile(r"^✘ Test (\S+?\(.*?\)) recorded an issue(?: with .*?)? at (\S+): (.*)$")
FAILED = re.compile(r"^✘ Test (\S+?\(.*?\)) failed")
SANITIZER = re.compile(r"(WARNING: ThreadSanitizer|ERROR: AddressSanitizer)[^\n]*")


def failures(log, status):
    """{test: first failure} of one run; a run that failed naming no test: {'(the run)': why}."""
    found = {}
    lines = log.splitlines()
    for index, line in enumerate(lines):
        issue = ISSUE.match(line)
        if issue:
            test, where, what = issue.groups()
            # The expectation's detail is on the lines below, indented.
            detail = [l.strip() for l in lines[index + 1:index + 3] if l.startswith((" ", "↳"))]
            found.setdefault(test, f"{where}: {' '.join([what] + detail)}"[:300])
            continue
        failed = FAILED.match(line)
        if failed:
            found.setdefault(failed.group(1), line[:300])
    report = SANITIZER.search(log)
    if report:
        found.setdefault("(sanitizer report)", report.group(0)[:300])
    # A run that ended otherwise than by its tests' verdicts (a crash, a signal, the time-out, no
    # closing line): listed as the run, with the tests that started and never ended.
    if status != 0 and (not found or status not in (0, 1) or "Test run with" not in log):
        started = set(re.findall(r"^◇ Test (\S+?\(.*?\)) started", log, re.M))
        ended = set(re.findall(r"^[✔✘] Test (\S+?\(.*?\))", log, re.M))
        unfinished = sorted(started - ended)
        tail = [l for l in lines if l.strip()][-3:]
        why = f"exit {status}: " + " | ".join(tail)
        if unfinished:
            why += f" (unfinished: {', '.join(unfinished[:5])}{' …' if len(unfinished) > 5 else ''})"
        found["(the run)"] = why[:400]
    return found


def main():
    folder, runs, passes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    table = {}  # (pass, test) -> [runs failed, first failure]
    passed = {name: 0 for name in passes}
    for name in passes:
        for run in range(1, runs + 1):
            path = os.path.join(folder, f"{name}-{run}.log")
            try:
                log = open(path, encoding="utf-8", errors="replace").read()
                status = int(open(path + ".status").read().strip() or "1")
            except (OSError, ValueError):
                log, status = "", 1
            found = failures(log, status)
            if not found:
                passed[name] += 1
            for test, why in found.items():
                entry = table.setdefault((name, test), [0, why])
                entry[0] += 1
    for name in passes:
        print(f"{name}: {passed[name]} of {runs} runs passed")
    if not table:
        print(f"no test failed in {runs} run(s) of {', '.join(passes)}")
        return 0
    print("| pass | test | failed | first failure |")
    print("|---|---|---|---|")
    for (name, test), (count, why) in sorted(table.items()):
        print(f"| {name} | {test} | {count}/{runs} | {why.replace('|', '/')} |")
    return 1


if __name__ == "__main__":
    sys.exit(main())
