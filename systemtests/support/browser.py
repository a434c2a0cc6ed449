"""The browser of the system tests: one headless Chromium for the run (Playwright's sync API
driving `TODAYSIM_BROWSER`, else Playwright's own Chromium when installed, else Debian's
`chromium` on PATH: the package's `browser_executable`), a page server for this clone's files,
and `Tab`, a page whose waits say what they last saw. Registered as a plugin by conftest.py.

Every wait is for a condition with a generous deadline (`DEADLINE`), never for a fixed time."""
from __future__ import annotations

import functools
import http.server
import json
import os
import threading
from typing import Any, Callable, Iterator, Optional

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from todaysim.plugin import browser_executable

from support import ROOT
SCRIPTS = os.path.join(ROOT, "systemtests", "js")
SCREENSHOTS = os.path.join(ROOT, ".build", "dashboard")  # docs/DASHBOARDS.md shows some of them
DEADLINE = 60.0  # seconds a wait in the page may take on a loaded machine
DEFAULT_SIZE = (1400, 900)


def script(name: str) -> str:
    """The source of the file NAME in systemtests/js/ (what a test evaluates in a page)."""
    with open(os.path.join(SCRIPTS, name), encoding="utf-8") as source:
        return source.read()


def q(selector: str) -> str:
    """JavaScript for the first element matching `selector`."""
    return f"document.querySelector({json.dumps(selector)})"


def count(selector: str) -> str:
    return f"document.querySelectorAll({json.dumps(selector)}).length"


def text(selector: str) -> str:
    return f"({q(selector)}.textContent.trim())"


class Tab:
    """A Playwright page with the tests' vocabulary: `js` evaluates (awaiting a Promise), `wait`
    polls a condition and fails naming it and what `show` last evaluated to."""

    def __init__(self, page: Page):
        self.page = page

    def js(self, expression: str, arg: Any = None) -> Any:
        return self.page.evaluate(expression, arg)

    def goto(self, url: str) -> None:
        self.page.goto(url, wait_until="commit")

    def wait(self, what: str, expression: str, show: str = "null", seconds: float = DEADLINE) -> None:
        probe = f"() => {{ try {{ return !!({expression}); }} catch (e) {{ return false; }} }}"
        try:
            self.page.wait_for_function(probe, polling=50, timeout=seconds * 1000)
        except PlaywrightTimeout:
            try:
                seen = self.js(f"() => {{ try {{ return {show}; }} catch (e) {{ return String(e); }} }}")
            except Exception as error:  # the page itself is gone: say so
                seen = f"({type(error).__name__}: {error})"
            raise AssertionError(f"{what}: still false after {seconds:g} s: {expression} (seen: {seen!r})") from None

    def click(self, selector: str) -> None:
        self.js(f"{q(selector)}.click()")

    def fill(self, selector: str, value: str) -> None:
        """Sets a field's value as typing would end (its input and change events)."""
        self.js(f"(e => {{ e.value = {json.dumps(value)}; e.dispatchEvent(new Event('input')); "
                f"e.dispatchEvent(new Event('change')); }})({q(selector)})")

    def shot(self, name: str, full_page: bool = False) -> str:
        """Saves a PNG of the page as .build/dashboard/NAME; fails when it is not a real picture."""
        os.makedirs(SCREENSHOTS, exist_ok=True)
        path = os.path.join(SCREENSHOTS, name)
        if os.path.exists(path):
            os.remove(path)  # no stale picture left behind by a failed capture
        self.page.screenshot(path=path, full_page=full_page)
        assert os.path.getsize(path) > 10000, f"the screenshot {path} is {os.path.getsize(path)} bytes"
        return path


def launch() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_executable(playwright))
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the run."""
    yield from launch()


@pytest.fixture
def new_tab(browser: Browser) -> Iterator[Callable[..., Tab]]:
    """`new_tab(size=(w, h))`: a page in a context of its own (cookies, storage, permissions),
    a phone's (`is_mobile`) below 600 px; every context a test opened is closed after it."""
    contexts: list[BrowserContext] = []

    def open_tab(size: tuple[int, int] = DEFAULT_SIZE, init_script: Optional[str] = None) -> Tab:
        context = browser.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=size[0] < 600)
        contexts.append(context)
        if init_script:
            context.add_init_script(init_script)
        return Tab(context.new_page())

    yield open_tab
    for context in contexts:
        context.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def page_server() -> Iterator[str]:
    """The base URL of an HTTP server of this clone's files (the fixture Today Page, Web/), on
    a loopback port of the kernel's pick: another origin than any todaysim server."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=ROOT))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="page-server", daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
