"""One page driver for both languages (issue 45, item 4): the same scenarios driven through
python/'s `todaysim.page.BridgedPage` and typescript/'s `todaysim/playwright` BridgedPage (its
test build's typescript/test/contract-driver.ts), each on a session of its own against one
server, with pages served from another origin, on Debian's Chromium; what each step left — the
entries it added to the session's timeline and the page's clock — is the same, step by step.
Both add the same init script (the virtual clock, the page driver, the look: Web/'s files), and
the scenarios cover what the driver decides: a page timer just before and at a session deadline,
a host reload mid-run, the fixture Today Page's conforming run and a planted bug, a page's
animation frames."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

import playwright
import pytest
from playwright.sync_api import sync_playwright
from todaysim import Client
from todaysim.page import INIT_JS, BridgedPage
from todaysim.server import Server

from support import ROOT
from support.browser import page_server  # noqa: F401  (a fixture)
from support.tools import node_20, require_commands

PACKAGE = os.path.join(ROOT, "typescript")
TODAY = "/examples/today-page/index.html"
PAGES = "/python/tests/pages/"
#: One Chromium for both languages (the headless shell when installed, as the package picks it).
BROWSER = os.environ.get("TODAYSIM_BROWSER") or shutil.which("chromium-headless-shell") or "/usr/bin/chromium"

# name -> (the page, below the page server, and the steps)
SCENARIOS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "timer-4999": (PAGES + "timer.html?delay=4999", [{"gesture": {"type": "pull", "requestId": "p1"}},
                                                       {"clock": {"advanceMs": 12000}}]),
    "timer-5000": (PAGES + "timer.html?delay=5000", [{"gesture": {"type": "pull", "requestId": "p1"}},
                                                       {"clock": {"advanceMs": 12000}}]),
    "host-reload": (PAGES + "timer.html?delay=300", [{"clock": {"advanceMs": 1234}},
                                                       {"lifecycle": {"type": "webContentTerminated", "requestId": "t1"}},
                                                       {"clock": {"advanceMs": 300}}]),
    "today": (TODAY, [{"gesture": {"type": "pull", "requestId": "p1"}}, {"clock": {"advanceMs": 5000}},
                      {"lifecycle": {"type": "background"}}, {"clock": {"advanceMs": 5000}},
                      {"lifecycle": {"type": "foreground", "requestId": "fg1"}},
                      {"lifecycle": {"type": "tabActivated", "requestId": "tab1"}}, {"clock": {"toMs": 15000}},
                      {"lifecycle": {"type": "webContentTerminated", "requestId": "t1"}}, {"clock": {"advanceMs": 1000}}]),
    "foreground-replace": (TODAY + "?bug=foreground-replace",
                           [{"lifecycle": {"type": "background"}}, {"clock": {"advanceMs": 5000}},
                            {"lifecycle": {"type": "foreground"}}, {"lifecycle": {"type": "tabActivated"}},
                            {"clock": {"advanceMs": 5000}}]),
    "frames": (PAGES + "frame.html", [{"clock": {"advanceMs": 15}}, {"clock": {"advanceMs": 1}}]),
}


@pytest.fixture(scope="module")
def server(binary: str) -> Iterator[Server]:
    started = Server(binary=binary).start()  # any page origin allowed
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def typescript_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package and its tests compiled (as test_typescript.py compiles them), the Web/ scripts beside."""
    node = node_20()
    assert node, "no Node >= 20"
    require_commands(tsc="node-typescript", chromium="chromium")
    core = os.path.join(os.path.dirname(playwright.__file__), "driver", "package")
    subprocess.run(["python3", os.path.join(PACKAGE, "tools", "link_playwright_core.py"), core], check=True)
    out = tmp_path_factory.mktemp("contract") / "build"
    for command in (["/usr/bin/env", "tsc", "-p", os.path.join(PACKAGE, "tsconfig.test.json"), "--outDir", str(out)],
                    [node, os.path.join(PACKAGE, "tools", "ship-core.mjs"), str(out / "src")]):
        done = subprocess.run(command, cwd=PACKAGE, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return out


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def as_left(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A scenario's record as both drivers must have left it: the ids the host mints (made from
    the session's id, so each session has its own) named by the order they first appear in."""
    minted: dict[str, str] = {}
    text = UUID.sub(lambda found: minted.setdefault(found.group(0), f"minted-{len(minted) + 1}"), json.dumps(steps))
    return json.loads(text)  # type: ignore[no-any-return]


def run_python(client: Client, base: str) -> dict[str, list[dict[str, Any]]]:
    recorded: dict[str, list[dict[str, Any]]] = {}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=BROWSER)
        try:
            for name, (path, steps) in SCENARIOS.items():
                client.create_session("contract", id=f"py-{name}")
                context = browser.new_context()
                page = BridgedPage(client, f"py-{name}", context.new_page(), base + path).open()
                done = [{"entries": client.entries(page.session_id), "pageNowMs": page._page_now()}]
                for step in steps:
                    before = page.view["counts"]["timeline"]
                    page.step(step)
                    done.append({"entries": client.entries(page.session_id, after=before), "pageNowMs": page._page_now()})
                recorded[name] = done
                context.close()
        finally:
            browser.close()
    return recorded


def run_typescript(build: Path, server: Server, base: str, scratch: Path) -> dict[str, list[dict[str, Any]]]:
    scenarios = [{"name": name, "session": f"ts-{name}", "url": base + path, "steps": steps}
                 for name, (path, steps) in SCENARIOS.items()]
    (scratch / "scenarios.json").write_text(json.dumps(scenarios))
    core = os.path.join(os.path.dirname(playwright.__file__), "driver", "package")
    done = subprocess.run([str(node_20()), str(build / "test" / "contract-driver.js")], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "TODAYSIM_URL": str(server.url),
                                            "TODAYSIM_CONTRACT_SCENARIOS": str(scratch / "scenarios.json"),
                                            "TODAYSIM_PLAYWRIGHT_CORE": core, "TODAYSIM_BROWSER": BROWSER})
    assert done.returncode == 0, f"contract-driver.js exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_both_languages_init_scripts_are_one(typescript_build: Path) -> None:
    """The TypeScript helper adds, byte for byte, python/'s INIT_JS."""
    compiled = (typescript_build / "src" / "page-scripts.js").as_uri()
    script = f"import {{ initScript }} from {json.dumps(compiled)}; process.stdout.write(await initScript());"
    done = subprocess.run([str(node_20()), "--input-type=module", "-e", script], cwd=typescript_build,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == INIT_JS


def test_both_languages_drive_the_same_scenarios_alike(typescript_build: Path, server: Server, page_server: str,
                                                       tmp_path: Path) -> None:
    client = server.client(field_validation="Strict")
    python = run_python(client, page_server)
    typescript = run_typescript(typescript_build, server, page_server, tmp_path)
    assert set(typescript) == set(python) == set(SCENARIOS)
    for name, (_, steps) in SCENARIOS.items():
        for number, (ours, theirs) in enumerate(zip(as_left(python[name]), as_left(typescript[name]), strict=True)):
            what = "the load" if number == 0 else f"step {number} {steps[number - 1]}"
            assert theirs["entries"] == ours["entries"], f"{name}, {what}: TypeScript's entries differ from Python's"
            assert theirs["pageNowMs"] == ours["pageNowMs"], f"{name}, {what}: the page clocks differ"
    # The scenarios show what they are for (a check that the runs drove anything at all).
    answers = [e["atMs"] for step in python["timer-4999"] for e in step["entries"]
               if e["type"] == "todayPage.refreshResult" and e.get("requestId") == "p1"]
    assert answers == [4999]
    assert [e["type"] for step in python["foreground-replace"] for e in step["entries"] if e["kind"] == "violation"][:1] == ["M7"]
