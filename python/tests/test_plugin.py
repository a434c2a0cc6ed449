"""The pytest plugin as a test suite meets it: its fixtures in a test file of their own, run by
pytest in a subprocess against this run's server; a failing test's output carries the session's
report and the tail of its timeline; sessions are purged at teardown."""
import pytest

from todaysim import TodaysimError

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

def test_a_bridged_page(bridged_page, todaysim):
    page = bridged_page(PAGE, id="plugin-s3")
    page.step({"gesture": {"type": "pull", "requestId": "p1"}})
    page.step({"clock": {"advanceMs": 12000}})
    report = page.report()
    assert report["conforms"], report["violations"]
    assert [r["outcome"] for r in report["requests"] if r["requestId"] == "p1"] == ["succeeded"]
'''


def test_the_plugins_fixtures_in_a_suite_of_their_own(pytester, monkeypatch, todaysim_server, todaysim, today_page):
    monkeypatch.setenv("TODAYSIM_URL", todaysim_server.url)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_suite=SUITE.replace("PAGE", repr(today_page)))
    result = pytester.runpytest_subprocess("-p", "todaysim.plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*todaysim session plugin-s2*",
        "conforms: False",
        "  M7 at 5000 ms: M7: *p1*",
        "timeline (last * of *):",
        "  #* 5000 ms violation M7 p1 [[]M7[]]",
    ])
    for session_id in ("plugin-s1", "plugin-s2", "plugin-s3"):  # purged at teardown, the failing one too
        with pytest.raises(TodaysimError) as gone:
            todaysim.read_session(session_id)
        assert gone.value.status == 404
