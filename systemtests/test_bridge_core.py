"""The bridge without a browser (issue 36): Web/bridge-core.mjs's installBridge on a bare
EventTarget, node/bridge-core.test.mjs run by Node's own test runner against a server started
here with a token. It needs Node >= 20 (fetch, EventTarget, ReadableStream): `node` on PATH when
it is one, else the Node that PyPI's playwright wheel ships (playwright/driver/node), where
Debian has only Node 18."""
from __future__ import annotations

import os
import re
import subprocess
from typing import Callable

from todaysim.server import Server

from support.tools import node_20

HERE = os.path.dirname(os.path.abspath(__file__))
CORE_TEST = os.path.join(HERE, "node", "bridge-core.test.mjs")
TOKEN = "core-test-token"
CORE_TESTS = 5  # the tests of bridge-core.test.mjs: a file that ran fewer lost some


def test_the_bridge_core_on_a_bare_event_target(start_server: Callable[..., Server]) -> None:
    node = node_20()
    assert node, "no Node >= 20 (node on PATH, or playwright/driver/node in the tests' venv)"
    server = start_server(token=TOKEN)
    assert server.url
    run = subprocess.run([node, "--test", CORE_TEST], env={**os.environ, "TODAYSIM_URL": server.url, "TODAYSIM_TOKEN": TOKEN},
                         capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    assert run.returncode == 0, f"the bridge core's Node tests failed ({node}):\n{output}"
    tally = {name: int(value) for name, value in re.findall(r"^# (tests|pass|fail) (\d+)$", output, re.M)}
    assert tally == {"tests": CORE_TESTS, "pass": CORE_TESTS, "fail": 0}, f"the Node tests' tally: {tally}\n{output}"
