"""The todaysim pytest plugin (`pip install todaysim[pytest]`), active only where a project asks
for it: `pytest_plugins = ["todaysim.plugin"]` in a conftest.py, or `pytest -p todaysim.plugin`
(installing the package registers no `pytest11` entry point, so no other run loads it).

Fixtures:
- `todaysim_server` (session): the server under test: `TODAYSIM_URL` when set (a running
  server; `TODAYSIM_TOKEN` its token), else the binary from `TODAYSIM_BIN` or PATH started on a
  free loopback port with `--db :memory:` (and any page origin allowed), stopped at the end.
- `todaysim` (session): a `Client` for it (`--todaysim-field-validation`, default `Strict`:
  a typo in a test's body fails at once instead of passing for the wrong reason).
- `host_session`: a factory, `host_session(uid="u1", **fields)` → the created session's view;
  every session it made is purged at teardown.
- `bridged_page`: a factory, `bridged_page(url=None, **fields)` → a `BridgedPage`: a new
  session and a Playwright page (pytest-playwright's `page` when that plugin is installed, else
  a page of a new context of one Chromium per run) showing the page under test (`url`, else
  `--todaysim-page` / `TODAY_PAGE_URL`) with `/bridge.js` attached to the session, its timers on
  the session's clock (`BridgedPage.move`). A server that does not let the page's origin call
  it (no `--allow-origin` for it) fails the test at once with `OriginRefused`, naming the flag.

On a failing test the failure output gains, for each session the test made, the session's
report (its violations with their details and each one's timeline entry) and the tail of its
timeline.

Chromium: `TODAYSIM_BROWSER`, else Playwright's own when installed, else `chromium` on PATH
(Debian's; Playwright cannot download its browsers everywhere). With pytest-playwright, say
`--browser-channel` or set `browser_type_launch_args` to `{"executable_path": "/usr/bin/chromium"}`.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterator, Optional, Union

import pytest

from . import models as m
from .browser import browser_executable as browser_executable  # (re-exported: its home until issue 45)
from .client import Client
from .page import BridgedPage, check_origin
from .server import Server

if TYPE_CHECKING:  # Playwright is imported when a browser is needed, not when the plugin loads
    from playwright.sync_api import Browser, BrowserContext, Page

TIMELINE_TAIL = 20


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("todaysim")
    group.addoption("--todaysim-page", default=None, help="the page under test for bridged_page (else TODAY_PAGE_URL)")
    group.addoption("--todaysim-field-validation", default="Strict",
                    help="fieldValidation the todaysim client sends with control-plane bodies (Strict, Warn, Ignore)")


class RunningServer:
    """A server the run did not start (`TODAYSIM_URL`)."""

    def __init__(self, url: str, token: Optional[str]):
        self.url, self.token = url.rstrip("/"), token

    def client(self, **options: Any) -> Client:
        return Client(self.url, token=self.token, **options)


#: What `todaysim_server` gives: a server it started, or the one `TODAYSIM_URL` names.
TodaysimServer = Union[Server, RunningServer]


@pytest.fixture(scope="session")
def todaysim_server() -> Iterator[TodaysimServer]:
    url = os.environ.get("TODAYSIM_URL")
    if url:
        yield RunningServer(url, os.environ.get("TODAYSIM_TOKEN") or None)
        return
    server = Server().start()
    try:
        yield server
    finally:
        code = server.stop()
        if code not in (0, None):
            print(f"todaysim exited {code}: " + "\n".join(list(server.log_lines)[-10:]))


@pytest.fixture(scope="session")
def todaysim(todaysim_server: TodaysimServer, pytestconfig: pytest.Config) -> Iterator[Client]:
    client = todaysim_server.client(field_validation=pytestconfig.getoption("todaysim_field_validation"))
    yield client
    client.close()


def _sessions_of(request: pytest.FixtureRequest) -> list[str]:
    made: Optional[list[str]] = getattr(request.node, "_todaysim_sessions", None)
    if made is None:
        made = []
        setattr(request.node, "_todaysim_sessions", made)
    return made


#: `host_session(uid=None, **fields)` → the created session's view.
HostSession = Callable[..., m.SessionView]


@pytest.fixture
def host_session(request: pytest.FixtureRequest, todaysim: Client) -> Iterator[HostSession]:
    """`host_session(uid="u1", **fields)` creates a session (the view is returned); all are purged at teardown."""
    made = _sessions_of(request)
    setattr(request.node, "_todaysim_client", todaysim)

    def create(uid: Optional[str] = None, **fields: Any) -> m.SessionView:
        view = todaysim.create_session(uid or "pytest-" + request.node.name[:60], **fields)
        made.append(view["id"])
        return view

    yield create
    for session_id in made:
        try:
            todaysim.delete_session(session_id)
        except Exception:  # already purged by the test: nothing left to clean
            pass


@pytest.fixture(scope="session")
def todaysim_browser(request: pytest.FixtureRequest) -> Iterator[Optional[Browser]]:
    """One Chromium for the run (used when pytest-playwright is not installed)."""
    if request.config.pluginmanager.hasplugin("playwright"):
        yield None
        return
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_executable(playwright))
        yield browser
        browser.close()


#: `bridged_page(url=None, settle_timeout=None, **session_fields)` → an opened `BridgedPage`.
OpenBridgedPage = Callable[..., BridgedPage]


@pytest.fixture
def bridged_page(request: pytest.FixtureRequest, todaysim: Client, host_session: HostSession,
                 todaysim_browser: Optional[Browser]) -> Iterator[OpenBridgedPage]:
    """`bridged_page(url=None, settle_timeout=None, **session_fields)` → an opened `BridgedPage`
    (`settle_timeout`: seconds of wall time a settle may take; when not given,
    `TODAYSIM_SETTLE_TIMEOUT_MS` or 2.0: `todaysim.page.default_settle_timeout`)."""
    contexts: list[BrowserContext] = []
    opened: list[Page] = []

    def open_page(url: Optional[str] = None, settle_timeout: Optional[float] = None, **fields: Any) -> BridgedPage:
        if settle_timeout is not None and not (isinstance(settle_timeout, (int, float)) and 0 < settle_timeout < 3600):
            raise ValueError(f"settle_timeout is {settle_timeout!r}: seconds of wall time, more than 0 and less than 3600")
        target: Optional[str] = url or request.config.getoption("todaysim_page") or os.environ.get("TODAY_PAGE_URL")
        if not target:
            raise pytest.UsageError("bridged_page needs the page under test: bridged_page(url), --todaysim-page URL or TODAY_PAGE_URL")
        check_origin(todaysim, target)  # OriginRefused, naming --allow-origin, before a session is made
        view = host_session(**fields)
        page: Page
        if todaysim_browser is None and not opened:
            page = request.getfixturevalue("page")  # pytest-playwright's: its context per test
        else:  # a further page gets a context of its own, never pytest-playwright's page again
            browser: Browser = todaysim_browser or request.getfixturevalue("browser")
            context = browser.new_context()
            contexts.append(context)
            page = context.new_page()
        opened.append(page)
        return BridgedPage(todaysim, view["id"], page, target,
                           settle_timeout=None if settle_timeout is None else float(settle_timeout)).open()

    yield open_page
    for context in contexts:
        context.close()


def entry_line(entry: m.TimelineEntry) -> str:
    """One timeline entry as a failure shows it: `#seq atMs ms kind type [requestId] [[rule]]`."""
    rule = f" [{entry['rule']}]" if entry.get("rule") else ""
    request_id = f" {entry['requestId']}" if entry.get("requestId") else ""
    return f"#{entry['seq']} {entry['atMs']} ms {entry['kind']} {entry['type']}{request_id}{rule}"


def session_summary(client: Client, session_id: str) -> str:
    """The session's report (each violation with its detail and, under it, its own timeline
    entry, however far back) and its timeline's last entries."""
    lines = []
    try:
        report = client.report(session_id)
        lines.append(f"conforms: {report['conforms']}")
        for violation in report["violations"]:
            lines.append(f"  {violation['type']} at {violation['atMs']} ms: {violation['data'].get('detail', '')}")
            lines.append(f"    {entry_line(violation)}")
        total = client.read_session(session_id)["counts"]["timeline"]
        entries = client.entries(session_id, after=max(0, total - TIMELINE_TAIL))
        lines.append(f"timeline (last {len(entries)} of {total}):")
        lines.extend(f"  {entry_line(entry)}" for entry in entries)
    except Exception as error:  # the failure output must not hide the test's own failure
        lines.append(f"(could not read the session: {error})")
    return "\n".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" and report.failed:
        client = getattr(item, "_todaysim_client", None)
        for session_id in getattr(item, "_todaysim_sessions", []):
            if client is not None:
                report.sections.append((f"todaysim session {session_id}", session_summary(client, session_id)))
    return report

