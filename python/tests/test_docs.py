"""docs/EXPLORE.md's Python examples run as written (the page's address swapped for the fixture
page this run serves): the three-line pytest example passes in a suite of its own, and the
explore() example finds the planted bug it names, and the section on a running server runs as
written (on free ports), its refusal printed as shown."""
import os
import pathlib
import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from todaysim.plugin import TodaysimServer

pytest_plugins = ["pytester"]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "EXPLORE.md")
EXAMPLE_PAGE = "http://127.0.0.1:5173/index.html"


def python_block(starting: str) -> str:
    """The one ```python block of the document that starts with `starting`."""
    blocks: list[str] = re.findall(r"```python\n(.*?)```", open(DOC, encoding="utf-8").read(), re.S)
    found = [block for block in blocks if block.startswith(starting)]
    assert len(found) == 1, f"{len(found)} python blocks start with {starting!r}"
    return found[0]


def test_the_three_line_pytest_example_passes(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                              todaysim_server: TodaysimServer, today_page: str) -> None:
    """With the document's conftest.py as the only opt-in (plugin autoloading on, as in any
    project's run, and no `-p`)."""
    conftest = python_block("# conftest.py\n")
    example = python_block("def test_a_pull_is_answered(bridged_page):")
    assert EXAMPLE_PAGE in example
    monkeypatch.setenv("TODAYSIM_URL", str(todaysim_server.url))
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_example=example.replace(EXAMPLE_PAGE, today_page))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_explore_example_finds_its_bug(today_page: str, tmp_path: pathlib.Path) -> None:
    example = python_block("from todaysim import Server\n")
    assert "explore(" in example and EXAMPLE_PAGE + "?bug=pull-header" in example
    # As a user runs it: a Python process of its own (Playwright's sync API wants its own
    # thread's loop), a Server started from TODAYSIM_BIN, Chromium at /usr/bin/chromium (here
    # TODAYSIM_BROWSER).
    script = tmp_path / "example.py"
    script.write_text(example.replace(EXAMPLE_PAGE, today_page).replace('"/usr/bin/chromium"', repr(os.environ["TODAYSIM_BROWSER"])))
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "the contract broken (M3)" in ran.stdout and '{"gesture": {"type": "pull"}}' in ran.stdout, ran.stdout


def test_todaysim_explore_exits_1_with_the_scenario_and_0_when_clean(today_page: str, tmp_path: pathlib.Path) -> None:
    """The command as a CI job runs it (a server of its own from TODAYSIM_BIN): a planted bug is
    exit 1 with the scenario, JUnit and export written; the fixture page as written is exit 0."""
    command = [sys.executable, "-m", "todaysim.cli"]
    junit, export = tmp_path / "explore.xml", tmp_path / "breach.json"
    broken = subprocess.run(command + [today_page + "?bug=double", "--examples", "10", "--seed", "1",
                                       "--junit", str(junit), "--export", str(export)],
                            capture_output=True, text=True, timeout=900)
    assert broken.returncode == 1, broken.stderr[-2000:]
    assert "the contract broken (M1)" in broken.stdout and '{"clock": {"advanceMs": 50}}' in broken.stdout
    assert 'failures="1"' in junit.read_text() and '"steps"' in export.read_text()
    clean = subprocess.run(command + [today_page, "--examples", "3", "--seed", "1"], capture_output=True, text=True, timeout=900)
    assert clean.returncode == 0, clean.stdout[-2000:] + clean.stderr[-2000:]
    assert "no breach of the contract found" in clean.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(url: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            assert process.poll() is None, f"{url}: its process exited {process.returncode}"
            assert time.monotonic() < deadline, f"{url} never answered"
            time.sleep(0.05)


def test_against_a_running_server_as_written(tmp_path: pathlib.Path) -> None:
    """The section "Against a running server": its three lines as written, on free ports
    (`Scripts/run` is `todaysim serve` with the arguments it is given: the binary under test is
    started in its place, as it would be after its build), then the same explorer command against
    a server without `--allow-origin`, which must print the refusal the section shows."""
    text = open(DOC, encoding="utf-8").read()
    section = text.split("## Against a running server", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    refusal = re.search(r"```\n(todaysim-explore: could not explore .*?)\n```", section, re.S)
    assert block is not None and refusal is not None, "the section's commands and the refusal it shows"
    commands = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    shown = refusal.group(1)
    assert commands[0].startswith("Scripts/run --allow-origin http://127.0.0.1:5173") and len(commands) == 3
    server_port, page_port = free_port(), free_port()

    def ported(line: str) -> str:
        return line.replace("127.0.0.1:8080", f"127.0.0.1:{server_port}").replace("5173", str(page_port))

    binary = os.environ["TODAYSIM_BIN"]
    # A reader who ran `pip install ./python` has `todaysim-explore` on PATH: this venv's.
    reader = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    serve = ported(commands[0]).replace("Scripts/run", f"{binary} serve --port {server_port} --db {tmp_path / 'db.sqlite'}", 1)
    started = []
    try:
        for line in (serve, ported(commands[1])):
            started.append(subprocess.Popen(["bash", "-c", "exec " + line], cwd=ROOT, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))
        wait_for(f"http://127.0.0.1:{server_port}/healthz", started[0])
        wait_for(f"http://127.0.0.1:{page_port}/index.html", started[1])
        explored = subprocess.run(["bash", "-c", ported(commands[2])], cwd=ROOT, env=reader, capture_output=True, text=True,
                                  timeout=900)
        assert explored.returncode == 0, explored.stdout[-2000:] + explored.stderr[-2000:]
        assert explored.stdout.startswith("20 examples") and "no breach of the contract found" in explored.stdout, explored.stdout

        # The same server without the flag: the refusal, exactly as shown.
        started[0].terminate()
        started[0].wait(60)
        started[0] = subprocess.Popen([binary, "serve", "--port", str(server_port), "--db", str(tmp_path / "db.sqlite")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(f"http://127.0.0.1:{server_port}/healthz", started[0])
        refused = subprocess.run(["bash", "-c", ported(commands[2])], cwd=ROOT, env=reader, capture_output=True, text=True,
                                 timeout=900)
        assert refused.returncode == 2
        assert refused.stderr.strip() == ported(shown), refused.stderr
    finally:
        for process in started:
            process.terminate()
            process.wait(60)
