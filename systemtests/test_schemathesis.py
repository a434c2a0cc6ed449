"""Schema-driven API testing (issue 7): schemathesis (PyPI, `SCHEMATHESIS_PIN` in
Scripts/lib/deps.sh, in the tests' venv) generates requests from the served OpenAPI document and
runs every check — server errors, status codes, content types, headers, response schemas,
negative and positive data, stateful links — against a server of the test's own; zero failures.
Its configuration, schemathesis.toml beside this file, says what it expects beyond the defaults,
and why.

Both versions run every phase (examples, coverage, fuzzing, stateful: create, use, delete, use
after delete) with one worker and a fixed seed. The fast one (Scripts/test) has 3 examples per
operation and long polls that answer at once (`waitMs` fixed to 0); `--long` has 20 examples per
operation and long polls as generated. docs/RELIABILITY.md tells what it found."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any, Callable

import pytest
from todaysim.server import Server

HERE = os.path.dirname(os.path.abspath(__file__))
SAVED = os.path.join(os.path.dirname(HERE), ".build", "schemathesis")  # a failed run's output and server log
CONFIG = os.path.join(HERE, "schemathesis.toml")
NO_LONG_POLLS = '\n[[operations]]\ninclude-path = "/v1/sessions/{id}/timeline"\nparameters = { "query.waitMs" = 0 }\n'


def schemathesis(start_server: Callable[..., Server], work: Any, examples: int, budget: float, fast: bool) -> None:
    # The field-validation mode is pinned to the default, Warn: the request schemas are open, so
    # a generated body may hold fields the server does not know, which Warn applies (with
    # warnings) and Strict would refuse; requests that send ?fieldValidation= get theirs.
    server = start_server(db=str(work / "db.sqlite"), allow_origin=None,
                          args=["--heartbeat-seconds", "1", "--field-validation", "warn"])
    config = CONFIG
    if fast:
        config = str(work / "fast.toml")
        with open(CONFIG, encoding="utf-8") as base, open(config, "w", encoding="utf-8") as copy:
            copy.write(base.read() + NO_LONG_POLLS)
    command = [os.path.join(os.path.dirname(sys.executable), "schemathesis"), "--config-file", config, "run",
               f"{server.url}/openapi.yaml", "--url", str(server.url), "--checks", "all",
               "--max-examples", str(examples), "--phases", "examples,coverage,fuzzing,stateful",
               "--workers", "1", "--seed", "7", "--no-color", "--report", "junit", "--report-dir", str(work / "report")]
    try:
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=budget)
        output, status = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as late:
        output, status = str(late.stdout or "") + str(late.stderr or ""), -1
    summary = output[output.find("SUMMARY"):] if "SUMMARY" in output else output[-3000:]
    print("\n".join(summary.splitlines()[-30:]))
    if status != 0:
        os.makedirs(SAVED, exist_ok=True)
        with open(os.path.join(SAVED, "out.txt"), "w", encoding="utf-8") as saved:
            saved.write(output)
        with open(os.path.join(SAVED, "server.log"), "w", encoding="utf-8") as saved:
            saved.write("\n".join(server.log_lines) + "\n")
    assert status == 0, (f"schemathesis found failures (exit {status}; -1: not done within {budget:g} s); "
                         f"the whole output in {SAVED}/out.txt:\n" + "\n".join(summary.splitlines()[-40:]))
    # Beyond the exit code, what the summary says it did: every operation, every phase.
    selected = re.search(r"Selected: (\d+)/(\d+)", summary)
    tested = re.search(r"Tested: (\d+)", summary)
    assert selected and tested and int(selected.group(1)) == int(selected.group(2)) == int(tested.group(1)) > 0, \
        f"not every operation was tested:\n{summary}"
    phases = re.findall(r"✅ (\w+)", summary)
    assert phases == ["Examples", "Coverage", "Fuzzing", "Stateful"], f"phases passed: {phases}\n{summary}"
    cases = re.search(r"Test cases:\s+(\d+) generated, (\d+) passed(.*)", summary)
    assert cases and int(cases.group(2)) > 0 and not re.search(r"fail|error", cases.group(3)), f"test cases:\n{summary}"


def test_the_served_document_holds_fast(start_server: Callable[..., Server], tmp_path: Any) -> None:
    schemathesis(start_server, tmp_path, examples=3, budget=600, fast=True)


@pytest.mark.long
def test_the_served_document_holds(start_server: Callable[..., Server], tmp_path: Any) -> None:
    schemathesis(start_server, tmp_path, examples=20, budget=1500, fast=False)
