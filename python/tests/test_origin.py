"""A page on another origin than the server, against a server that does not allow it (issue 34,
item 1): the server keeps its default (nothing cross-origin unless `--allow-origin` says so), and
each helper says exactly what to do. The explorer (`todaysim-explore`) and the plugin's
`bridged_page` ask the server with a preflight carrying the page's `Origin` before they start and
fail at once naming the flag; `/bridge.js`, refused, logs the same sentence to the page's console;
and an explorer run that fails leaves none of its sessions behind."""
import os
import subprocess
import sys
import time
from typing import Iterator

import pytest
from playwright.sync_api import Browser

from todaysim import Client, Server
from todaysim.explore import explore
from todaysim.page import BridgedPage, OriginRefused, SettleTimeout, check_origin, origin_of, refused_sentence

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def strict_server() -> Iterator[Server]:
    """A server as `Scripts/run` starts it: no `--allow-origin`."""
    with Server(allow_origin=None) as server:
        yield server


def explorer_sessions(client: Client) -> list[str]:
    return [s["id"] for s in client.list_sessions(uid="explorer")["sessions"]]


def test_origin_of_is_what_a_browser_sends() -> None:
    assert origin_of("http://127.0.0.1:5173/index.html?x=1") == "http://127.0.0.1:5173"
    assert origin_of("HTTP://LocalHost:80/a") == "http://localhost"
    assert origin_of("https://example.test:443/") == "https://example.test"
    assert origin_of("http://[::1]:8080/p") == "http://[::1]:8080"


def test_the_check_passes_where_the_origin_is_allowed_and_names_the_flag_where_it_is_not(strict_server: Server, todaysim: Client,
                                                                                          today_page: str) -> None:
    assert strict_server.url is not None
    check_origin(todaysim, today_page)  # the tests' server allows any origin
    origin = origin_of(today_page)
    with strict_server.client() as client:
        check_origin(client, strict_server.url + "/bridge.js")  # served by the server itself: same origin
        with pytest.raises(OriginRefused) as refused:
            check_origin(client, today_page)
    assert f"start it with --allow-origin {origin}" in str(refused.value)
    assert str(refused.value) == refused_sentence(strict_server.url, origin)
    with Server(allow_origin=origin) as allowing, allowing.client() as client:
        check_origin(client, today_page)


def test_the_explorer_fails_at_once_naming_the_flag(strict_server: Server, today_page: str) -> None:
    assert strict_server.url is not None
    environment = dict(os.environ, TODAYSIM_URL=strict_server.url)
    run = subprocess.run([sys.executable, "-m", "todaysim.cli", today_page, "--examples", "3", "--seed", "1"],
                         env=environment, capture_output=True, text=True, timeout=600)
    assert run.returncode == 2, run.stdout + run.stderr
    origin = origin_of(today_page)
    assert f"could not explore {today_page}: " + refused_sentence(strict_server.url, origin) in run.stderr
    assert "XMLHttpRequest" not in run.stderr
    with strict_server.client() as client:
        assert explorer_sessions(client) == []


def test_the_plugin_fails_the_test_naming_the_flag_before_making_a_session(pytester: pytest.Pytester,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           strict_server: Server, today_page: str) -> None:
    monkeypatch.setenv("TODAYSIM_URL", str(strict_server.url))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_suite=f'''
def test_a_bridged_page(bridged_page):
    bridged_page({today_page!r}, id="origin-s1")
''')
    result = pytester.runpytest_subprocess("-p", "todaysim.plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*OriginRefused: todaysim at * start it with --allow-origin {origin_of(today_page)} *"])
    with strict_server.client() as client, pytest.raises(Exception) as gone:
        client.read_session("origin-s1")
    assert getattr(gone.value, "status", None) == 404


def test_bridge_js_logs_the_same_sentence_to_the_console(strict_server: Server, todaysim_browser: Browser,
                                                         today_page: str) -> None:
    assert strict_server.url is not None
    origin = origin_of(today_page)
    with strict_server.client() as client:
        session = client.create_session("origin-u", id="origin-console")["id"]
        context = todaysim_browser.new_context()
        try:
            page = context.new_page()
            console: list[tuple[str, str]] = []
            page.on("console", lambda message: console.append((message.type, message.text)))
            page.goto(BridgedPage(client, session, page, today_page).address, wait_until="load")
            expected = ("error", refused_sentence(strict_server.url, origin))
            deadline = time.monotonic() + 30
            while expected not in console and time.monotonic() < deadline:
                page.wait_for_timeout(20)  # lets Playwright deliver the page's console events
            assert expected in console, console
        finally:
            context.close()
            client.delete_session(session)


def test_an_explorer_run_that_fails_purges_its_sessions(todaysim: Client, todaysim_browser: Browser, pages: str) -> None:
    before = explorer_sessions(todaysim)
    with pytest.raises(SettleTimeout):
        explore(pages + "/pages/timer.html?hang=1", todaysim, todaysim_browser, examples=2, seed=1, settle_timeout=0.5)
    assert explorer_sessions(todaysim) == before
