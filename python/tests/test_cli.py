"""`todaysim-explore` as a newcomer meets it (issue 34, item 3): `--help` names the environment
it reads, a machine without Chromium is told what to install (not Playwright's `playwright
install`, which cannot work where only package registries are reachable), and the count it
prints is exact: `--examples N` is N examples Hypothesis counts, with the ones it stopped mid-way
said apart."""
import os
import pathlib
import subprocess
import sys

from playwright.sync_api import Browser

from todaysim import Client
from todaysim.explore import explore

EXPLORE = [sys.executable, "-m", "todaysim.cli"]


def run(args: list[str], **environment: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **environment)
    return subprocess.run(EXPLORE + args, env=env, capture_output=True, text=True, timeout=600)


def test_help_names_the_environment_it_reads() -> None:
    shown = run(["--help"])
    assert shown.returncode == 0
    for name in ("TODAYSIM_URL", "TODAYSIM_TOKEN", "TODAYSIM_BIN", "TODAYSIM_BROWSER", "--allow-origin", "exit status"):
        assert name in shown.stdout, (name, shown.stdout)


def test_no_chromium_is_told_what_to_install(today_page: str, tmp_path: pathlib.Path) -> None:
    named = run([today_page, "--examples", "1"], TODAYSIM_BROWSER=str(tmp_path / "no-such-chromium"))
    assert named.returncode == 2
    assert f"TODAYSIM_BROWSER={tmp_path / 'no-such-chromium'} is not an executable Chromium" in named.stderr
    # No TODAYSIM_BROWSER and no chromium on PATH (only this Python's folder; Playwright's own
    # Chromium is pointed at an empty folder).
    env = {k: v for k, v in os.environ.items() if k != "TODAYSIM_BROWSER"}
    env["PATH"] = os.path.dirname(sys.executable)
    env["PLAYWRIGHT_BROWSERS_PATH"] = str(tmp_path / "no-browsers")  # Playwright's own Chromium: none
    bare = subprocess.run(EXPLORE + [today_page, "--examples", "1"], env=env, capture_output=True, text=True, timeout=600)
    assert bare.returncode == 2
    assert "install chromium (apt-get install chromium) or set TODAYSIM_BROWSER" in bare.stderr, bare.stderr
    assert "playwright install" not in bare.stderr


def test_the_count_is_the_examples_asked_for(todaysim: Client, todaysim_browser: Browser, today_page: str) -> None:
    found = explore(today_page, todaysim, todaysim_browser, examples=5, seed=1)
    assert found.breach is None, found.describe()
    stopped = sum(found.discarded.values())
    assert found.examples - stopped == 5, (found.examples, found.discarded)
    expected = "5 examples" + (f" (+{stopped} Hypothesis stopped mid-way, which it does not count)" if stopped else "")
    assert found.tally == expected
    assert found.describe() == f"{expected} against {today_page}: no breach of the contract found"


def test_timings_say_where_the_time_went(today_page: str) -> None:
    """`--timings` prints, after the outcome, each part of an example with the requests and CDP
    commands made in it (issue 45, item 8)."""
    shown = run([today_page, "--examples", "2", "--seed", "1", "--timings"])
    assert shown.returncode == 0, shown.stdout[-2000:] + shown.stderr[-2000:]
    table = shown.stdout.split("where the time goes: ", 1)[1]
    for part in ("example start: page cleared, session, page load, first settle", "steps: inputs", "example end: page left",
                 "HTTP create_session", "CDP Runtime.evaluate", "Hypothesis (drawing rules and values)", "an example in all"):
        assert part in table, (part, table)
