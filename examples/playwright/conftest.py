"""pytest fixtures that run a Today Page in Playwright against a todaysim session.

A test asks for `today`: a fresh todaysim session (the simulated native host) and a Playwright
page showing the page under test with the todaysim shim (/bridge.js) loaded, so the page's
bridge calls reach the session and the session's native -> Web messages reach the page. The
test drives the native side with `today.gesture`, `today.lifecycle`, `today.clock`, ... and
reads the verdict with `today.report()`.

Settings (environment):
  TODAYSIM_URL      the todaysim server (default http://127.0.0.1:8080); it must allow the
                    page's origin (`todaysim serve --allow-origin http://127.0.0.1:5173`)
  TODAYSIM_TOKEN    the server's token, when it was started with one (also handed to the shim)
  TODAY_PAGE_URL    the page under test (default http://127.0.0.1:5173/index.html, the fixture
                    page examples/today-page served by `python3 -m http.server 5173`);
                    it is opened with `todaysim`, `session` and `access_token` added to its
                    query, from which it loads `<todaysim>/bridge.js?session=…` before its own
                    scripts
  TODAYSIM_BROWSER  a Chromium executable (default: Playwright's own Chromium when installed,
                    else `chromium` on PATH, e.g. Debian's)

Markers: `@pytest.mark.todaysim_session(**fields)` adds fields to the session's creation body
(capabilities, platform, ...); `@pytest.mark.today_page(**query)` adds query parameters to the
page's URL.
"""
import json
import os
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from playwright.sync_api import sync_playwright

SERVER = os.environ.get("TODAYSIM_URL", "http://127.0.0.1:8080").rstrip("/")
TOKEN = os.environ.get("TODAYSIM_TOKEN") or None
PAGE_URL = os.environ.get("TODAY_PAGE_URL", "http://127.0.0.1:5173/index.html")
DEADLINE_S = 30


class TodaysimError(AssertionError):
    """An answer other than the one expected; carries the problem document's text."""


def call(method, path, body=None, expect=(200,)):
    """One HTTP call to the server; the JSON answer (None for an empty body)."""
    request = urllib.request.Request(SERVER + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    if TOKEN:
        request.add_header("Authorization", f"Bearer {TOKEN}")
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE_S) as answer:
            status, data = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        status, data = error.code, error.read()
    except urllib.error.URLError as error:
        raise TodaysimError(f"cannot reach todaysim at {SERVER} ({error.reason}): start it, e.g. "
                            f"`Scripts/run --allow-origin <the page's origin>`, or set TODAYSIM_URL") from None
    if status not in expect:
        raise TodaysimError(f"{method} {path} answered {status}, expected {expect}: {data[:400].decode(errors='replace')}")
    return json.loads(data) if data else None


class TodaySession:
    """One todaysim session and the Playwright page that runs the Today Page against it."""

    def __init__(self, view, page):
        self.id, self.view, self.page = view["id"], view, page
        self.page_errors = []
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        self.path = "/v1/sessions/" + urllib.parse.quote(self.id, safe="")

    # The native side: each answers the session view or the input's result, as the API does.
    def gesture(self, type, **fields):
        return call("POST", self.path + "/gestures", {"type": type, **fields})

    def lifecycle(self, type, **fields):
        return call("POST", self.path + "/lifecycle", {"type": type, **fields})

    def command(self, type, **fields):
        return call("POST", self.path + "/commands", {"type": type, **fields})

    def clock(self, **move):
        """`clock(advanceMs=6000)`, `clock(toNextTimer=True)`, `clock(runUntilIdle=True)`."""
        return call("POST", self.path + "/clock", move)

    # Reading it back.
    def read(self):
        return call("GET", self.path)

    def report(self):
        """{conforms, violations: [entry…], requests: [{requestId, kind, reason, outcome…}]}."""
        return call("GET", self.path + "/report")

    def timeline(self, kind=None):
        """Every entry, oldest first (all pages), optionally of one kind."""
        entries, after = [], 0
        while True:
            query = urllib.parse.urlencode({"after": after, "limit": 1000, **({"kind": kind} if kind else {})})
            page = call("GET", f"{self.path}/timeline?{query}")
            entries += page["entries"]
            if not page["more"]:
                return entries
            after = page["next"]

    def refresh_results(self, request_id):
        """The page's todayPage.refreshResult messages for `request_id` the session received."""
        return [entry for entry in self.timeline("bridge")
                if entry["type"] == "todayPage.refreshResult" and entry.get("requestId") == request_id]

    def eventually(self, probe, what, timeout=DEADLINE_S):
        """Polls `probe()` until it is true; fails the test with `what` after `timeout` s."""
        end = time.monotonic() + timeout
        while not probe():
            if time.monotonic() > end:
                raise AssertionError(f"not within {timeout} s: {what}")
            time.sleep(0.05)

    def wait_for_results(self, *request_ids, count=1):
        """Waits until the page has answered each request `count` times (session side)."""
        self.eventually(lambda: all(len(self.refresh_results(i)) >= count for i in request_ids),
                        f"{count} refreshResult(s) for each of {request_ids}")

    def assert_conforms(self):
        report = self.report()
        found = [violation["data"]["detail"] for violation in report["violations"]]
        assert report["conforms"] and not found, "the page broke the contract:\n" + "\n".join(found)
        return report

    # The page.
    def open(self, **query):
        """Opens the page under test for this session and waits until the shim's event stream is open."""
        settings = {"todaysim": SERVER, "session": self.id, **({"access_token": TOKEN} if TOKEN else {}), **query}
        parts = urllib.parse.urlsplit(PAGE_URL)
        address = parts._replace(query="&".join(filter(None, [parts.query, urllib.parse.urlencode(settings)]))).geturl()
        self.page.goto(address)
        try:
            self.page.wait_for_function("window.todaysimBridge && window.todaysimBridge.ready", timeout=DEADLINE_S * 1000)
            self.page.evaluate("window.todaysimBridge.ready")
        except Exception as error:
            raise AssertionError(f"the page at {address} did not start the todaysim shim ({error}); page errors: "
                                 f"{self.page_errors or 'none'}; is the server started with --allow-origin "
                                 f"{parts.scheme}://{parts.netloc}?") from None


def browser_executable(playwright):
    """TODAYSIM_BROWSER, else Playwright's own Chromium when installed (None), else `chromium` on PATH."""
    if os.environ.get("TODAYSIM_BROWSER"):
        return os.environ["TODAYSIM_BROWSER"]
    if os.path.exists(playwright.chromium.executable_path):
        return None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def pytest_configure(config):
    config.addinivalue_line("markers", "todaysim_session(**fields): fields added to the session's creation body")
    config.addinivalue_line("markers", "today_page(**query): query parameters added to the page's URL")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item):
    report = yield
    if report.when == "call":
        item.test_failed = report.failed
    return report


@pytest.fixture(scope="session")
def chromium_browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_executable(playwright))
        yield browser
        browser.close()


@pytest.fixture
def today(request, chromium_browser):
    call("GET", "/healthz")
    marker = request.node.get_closest_marker("todaysim_session")
    body = {"uid": "playwright-" + request.node.name[:40], **(marker.kwargs if marker else {})}
    view = call("POST", "/v1/sessions", body, expect=(201,))
    context = chromium_browser.new_context()
    page = context.new_page()
    session = TodaySession(view, page)
    try:
        marker = request.node.get_closest_marker("today_page")
        session.open(**(marker.kwargs if marker else {}))
        yield session
        if getattr(request.node, "test_failed", False):  # what the session saw, beside pytest's failure
            report = session.report()
            print(f"todaysim session {session.id}: conforms {report['conforms']}")
            print("\n".join(violation["data"]["detail"] for violation in report["violations"]))
            print("requests: " + json.dumps(report["requests"]))
    finally:
        context.close()
        call("DELETE", session.path, expect=(200, 204))  # 204 purged; 200 from a todaysim whose DELETE kept it
