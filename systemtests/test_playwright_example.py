"""The Playwright example a Web team copies (examples/playwright, issue 13) run as that team runs
it: its own pytest, in a process of its own, with PyPI's playwright driving the system tests'
Chromium, against a todaysim with a token that allows the page's origin, the fixture Today Page
(examples/today-page) served from another origin. Both of its tests pass; and the example can
fail: its conforming test against the broken page (`?broken=1`) fails, naming the page's M1 and
M3 (rules M1: one refreshResult per request; M3: no header feedback for a user pull)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from todaysim.server import Server

from support import ROOT

EXAMPLE = os.path.join(ROOT, "examples", "playwright")
PAGE = "/examples/today-page/index.html"
TOKEN = "playwright-example-token"


@dataclass
class Run:
    returncode: int
    output: str


@pytest.fixture
def example(start_server: Callable[..., Server], page_server: str, tmp_path: Any) -> Callable[..., Run]:
    """`example(*pytest_args, page_query="")`: the example's pytest run against a server of
    the test's own (a token, the page server's origin allowed, a file database)."""
    server = start_server(token=TOKEN, allow_origin=page_server, db=str(tmp_path / "db.sqlite"))
    assert server.url

    def run(*args: str, page_query: str = "") -> Run:
        # No third-party pytest plugins (schemathesis shares the venv), no cache or bytecode in the tree.
        env = {**os.environ, "TODAYSIM_URL": server.url or "", "TODAYSIM_TOKEN": TOKEN,
               "TODAY_PAGE_URL": page_server + PAGE + page_query,
               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", EXAMPLE, *args],
                              cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=240)
        print(done.stdout[-4000:], done.stderr[-2000:])
        return Run(done.returncode, done.stdout + done.stderr)
    return run


def test_both_tests_of_the_example_pass(example: Callable[..., Run]) -> None:
    run = example()
    assert run.returncode == 0, f"the example failed (exit {run.returncode}):\n{run.output[-4000:]}"
    assert re.search(r"^2 passed\b", run.output, re.MULTILINE), run.output[-2000:]


def test_its_conforming_test_fails_on_the_broken_page_naming_m1_and_m3(example: Callable[..., Run]) -> None:
    run = example("-k", "conforming", page_query="?broken=1")
    assert run.returncode == 1, f"exit {run.returncode}, expected 1 (one failed test):\n{run.output[-4000:]}"
    assert re.search(r"^1 failed, 1 deselected\b", run.output, re.MULTILINE), run.output[-2000:]
    assert re.search(r"^E +M3: Web started header feedback for the native request p1", run.output,
                     re.MULTILINE), run.output[-4000:]
    assert re.search(r"^E +M1: Web sent refreshResult number 2 for p1;", run.output, re.MULTILINE), run.output[-4000:]
