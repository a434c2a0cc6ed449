"""docs/EXPLORE.md's Python examples run as written (the page's address swapped for the fixture
page this run serves): the three-line pytest example passes in a suite of its own, and the
explore() example finds the planted bug it names."""
import os
import re
import subprocess
import sys

pytest_plugins = ["pytester"]

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "EXPLORE.md")
EXAMPLE_PAGE = "http://127.0.0.1:5173/index.html"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", open(DOC, encoding="utf-8").read(), re.S)


def test_the_three_line_pytest_example_passes(pytester, monkeypatch, todaysim_server, today_page):
    example = python_blocks()[0]
    assert example.startswith("def test_a_pull_is_answered(bridged_page):") and EXAMPLE_PAGE in example
    monkeypatch.setenv("TODAYSIM_URL", todaysim_server.url)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_example=example.replace(EXAMPLE_PAGE, today_page))
    result = pytester.runpytest_subprocess("-p", "todaysim.plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_explore_example_finds_its_bug(today_page, tmp_path):
    example = python_blocks()[1]
    assert "explore(" in example and EXAMPLE_PAGE + "?bug=pull-header" in example
    # As a user runs it: a Python process of its own (Playwright's sync API wants its own
    # thread's loop), a Server started from TODAYSIM_BIN, Chromium at /usr/bin/chromium (here
    # TODAYSIM_BROWSER).
    script = tmp_path / "example.py"
    script.write_text(example.replace(EXAMPLE_PAGE, today_page).replace('"/usr/bin/chromium"', repr(os.environ["TODAYSIM_BROWSER"])))
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "the contract broken (M3)" in ran.stdout and '{"gesture": {"type": "pull"}}' in ran.stdout, ran.stdout


def test_todaysim_explore_exits_1_with_the_scenario_and_0_when_clean(today_page, tmp_path):
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
