"""The pytest plugin as a test suite meets it: its fixtures in a test file of their own, run by
pytest in a subprocess against this run's server; a failing test's output carries the session's
report and the tail of its timeline; sessions are purged at teardown."""
import pytest

from todaysim import Client, TodaysimError
from todaysim.plugin import TodaysimServer

pytest_plugins = ["pytester"]

SUITE = '''
def test_a_session(host_session, todaysim):
    host_session(uid="plugin-u", id="plugin-s1")
    assert todaysim.read_session("plugin-s1")["status"] == "active"

def test_a_breach_fails_with_the_session_in_the_output(host_session, todaysim):
    host_session(uid="plugin-u", id="plugin-s2")
    todaysim.gesture("plugin-s2", "pull", requestId="p1")
    todaysim.clock("plugin-s2", advanceMs=5000)
    assert todaysim.report("plugin-s2")["conforms"]

def test_a_breach_far_back_is_listed_with_its_entry(host_session, todaysim):
    host_session(uid="plugin-u", id="plugin-s4")
    todaysim.gesture("plugin-s4", "pull", requestId="p1")
    todaysim.clock("plugin-s4", advanceMs=5000)
    for i in range(12):  # enough entries after the violation that it is out of the timeline's tail
        todaysim.lifecycle("plugin-s4", "background")
        todaysim.lifecycle("plugin-s4", "foreground")
    assert todaysim.report("plugin-s4")["conforms"]

def test_a_bridged_page(bridged_page, todaysim):
    page = bridged_page(PAGE, id="plugin-s3")
    page.step({"gesture": {"type": "pull", "requestId": "p1"}})
    page.step({"clock": {"advanceMs": 12000}})
    report = page.report()
    assert report["conforms"], report["violations"]
    assert [r["outcome"] for r in report["requests"] if r["requestId"] == "p1"] == ["succeeded"]
'''


def test_the_plugins_fixtures_in_a_suite_of_their_own(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                       todaysim_server: TodaysimServer, todaysim: Client,
                                                       today_page: str) -> None:
    monkeypatch.setenv("TODAYSIM_URL", str(todaysim_server.url))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_suite=SUITE.replace("PAGE", repr(today_page)))
    result = pytester.runpytest_subprocess("-p", "todaysim.plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "*todaysim session plugin-s2*",
        "conforms: False",
        "  M7 at 5000 ms: M7: *p1*",
        "    #* 5000 ms violation M7 p1 [[]M7[]]",
        "timeline (last * of *):",
        "  #* 5000 ms violation M7 p1 [[]M7[]]",
    ])
    # Issue 45, item 7: a violation out of the timeline's tail is still listed with its entry.
    far = result.stdout.str().split("todaysim session plugin-s4", 1)[1]
    listed, tail = far.split("timeline (last ", 1)
    assert "    #" in listed and " 5000 ms violation M7 p1 [M7]" in listed, far
    assert "violation M7" not in tail.split("\n\n", 1)[0], far
    for session_id in ("plugin-s1", "plugin-s2", "plugin-s3", "plugin-s4"):  # purged at teardown, the failing one too
        with pytest.raises(TodaysimError) as gone:
            todaysim.read_session(session_id)
        assert gone.value.status == 404


# pytest-playwright's fixtures as that plugin gives them (registered under its name, so the
# plugin takes its `page` and `browser`), on a real Chromium: the first bridged page is its `page`,
# a further one a page of a context of its own (it once got the same `page` again).
PLAYWRIGHT_CONFTEST = '''
import pytest
from playwright.sync_api import sync_playwright
from todaysim.plugin import browser_executable

class PytestPlaywright:
    @pytest.fixture(scope="session")
    def browser(self):
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=browser_executable(playwright))
            yield browser
            browser.close()

    @pytest.fixture
    def page(self, browser):
        context = browser.new_context()
        yield context.new_page()
        context.close()

def pytest_configure(config):
    config.pluginmanager.register(PytestPlaywright(), "playwright")
'''

PLAYWRIGHT_SUITE = '''
def test_two_bridged_pages(bridged_page, page):
    first = bridged_page(PAGE, id="plugin-pw1")
    second = bridged_page(PAGE, id="plugin-pw2")
    assert first.page is page
    assert second.page is not page and second.page.context is not page.context
    for bridged in (first, second):
        bridged.step({"gesture": {"type": "pull", "requestId": "p1"}})
        bridged.step({"clock": {"advanceMs": 12000}})
        assert bridged.report()["conforms"]
'''


def test_with_pytest_playwright_a_further_page_is_a_page_of_its_own(pytester: pytest.Pytester,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     todaysim_server: TodaysimServer, today_page: str) -> None:
    monkeypatch.setenv("TODAYSIM_URL", str(todaysim_server.url))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest(PLAYWRIGHT_CONFTEST)
    pytester.makepyfile(test_suite=PLAYWRIGHT_SUITE.replace("PAGE", repr(today_page)))
    result = pytester.runpytest_subprocess("-p", "todaysim.plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
