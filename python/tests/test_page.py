"""One virtual time for the session and the page: the page's own timers act at their due time
on the session's clock, between the session's watchdogs; a page that never settles is the
explorer's error (SettleTimeout), not a breach; the page clock survives the reloads the shim
makes."""
import pathlib
import re

import pytest

from todaysim import Client
from todaysim.models import TimelineEntry
from todaysim.page import (DRIVER_JS, EPOCH_MS, INIT_JS, PROBE_JS, SETTLE_TIMEOUT_VARIABLE, TIMERS_JS, SettleTimeout,
                           default_settle_timeout)
from todaysim.plugin import OpenBridgedPage

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]


def bridge_entries(todaysim: Client, session_id: str, request_id: str) -> list[TimelineEntry]:
    return [e for e in todaysim.entries(session_id, kind="bridge")
            if e["type"] == "todayPage.refreshResult" and e.get("requestId") == request_id]


def test_a_page_timer_at_4999_ms_acts_before_the_5_s_deadline(pages: str, todaysim: Client, bridged_page: OpenBridgedPage) -> None:
    page = bridged_page(pages + "/pages/timer.html?delay=4999")
    page.step({"gesture": {"type": "pull", "requestId": "p1"}})
    page.step({"clock": {"advanceMs": 12000}})
    assert [e["atMs"] for e in bridge_entries(todaysim, page.session_id, "p1")] == [4999]
    report = page.report()
    assert (report["conforms"], [r["outcome"] for r in report["requests"]]) == (True, ["succeeded"])
    assert page._page_now() == todaysim.read_session(page.session_id)["clock"]["nowMs"] == 12000


@pytest.mark.parametrize("delay", [5000, 5001])
def test_a_page_timer_at_or_after_the_deadline_is_late(pages: str, todaysim: Client, bridged_page: OpenBridgedPage,
                                                       delay: int) -> None:
    page = bridged_page(pages + f"/pages/timer.html?delay={delay}")
    page.step({"gesture": {"type": "pull", "requestId": "p1"}})
    page.step({"clock": {"advanceMs": 12000}})
    # The deadline fires at 5,000 ms first (the session's timers act before the page's at one
    # millisecond): the request times out (M7) and the document reloads (H9), taking the page's
    # pending answer with it.
    report = page.report()
    assert [(v["type"], v.get("requestId")) for v in report["violations"]][:1] == [("M7", "p1")]
    assert bridge_entries(todaysim, page.session_id, "p1") == []
    assert todaysim.read_session(page.session_id)["document"]["cause"] == "recovery"


def test_the_page_clock_survives_a_host_reload(pages: str, todaysim: Client, bridged_page: OpenBridgedPage) -> None:
    page = bridged_page(pages + "/pages/timer.html?delay=300")
    page.step({"clock": {"advanceMs": 1234}})
    page.step({"lifecycle": {"type": "webContentTerminated", "requestId": "t1"}})  # the page reloads
    assert todaysim.read_session(page.session_id)["document"]["loadId"] == 2
    page.step({"clock": {"advanceMs": 300}})
    assert [e["atMs"] for e in bridge_entries(todaysim, page.session_id, "t1")] == [1534]
    assert page._page_now() == 1534
    assert page.report()["conforms"] is True


# A page that can never settle gets a short deadline of its own, whatever the run's default
# (Scripts/python-package-test sets TODAYSIM_SETTLE_TIMEOUT_MS generous for the pages that do).
def test_a_page_that_never_settles_is_an_error_not_a_breach(pages: str, bridged_page: OpenBridgedPage) -> None:
    with pytest.raises(SettleTimeout) as missed:
        bridged_page(pages + "/pages/timer.html?hang=1", settle_timeout=0.5)
    assert "did not settle within 0.5 s" in str(missed.value) and "'requests': 1" in str(missed.value)


def test_a_page_without_the_bridge_is_told_to_load_it(pages: str, bridged_page: OpenBridgedPage) -> None:
    """Issue 45, item 2: the most common mistake, said first in the timeout's message."""
    with pytest.raises(SettleTimeout) as missed:
        bridged_page(pages + "/pages/no-bridge.html", settle_timeout=0.5)
    assert "did not settle within 0.5 s: the page never loaded /bridge.js (it must, from its `todaysim` and `session` " \
           "query parameters" in str(missed.value), str(missed.value)
    assert "'bridge': False" in str(missed.value)


def test_a_settle_deadline_not_given_is_the_environments_else_2_s(pages: str, bridged_page: OpenBridgedPage,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """TODAYSIM_SETTLE_TIMEOUT_MS (ms, as typescript/'s) sets every settle's deadline a caller
    leaves out: a suite on a loaded CI runner sets it generous rather than racing 2 s."""
    monkeypatch.delenv(SETTLE_TIMEOUT_VARIABLE, raising=False)
    assert default_settle_timeout() == 2.0
    monkeypatch.setenv(SETTLE_TIMEOUT_VARIABLE, "")
    assert default_settle_timeout() == 2.0
    monkeypatch.setenv(SETTLE_TIMEOUT_VARIABLE, "45000")
    assert default_settle_timeout() == 45.0
    assert bridged_page(pages + "/pages/timer.html?delay=10").settle_timeout == 45.0
    assert bridged_page(pages + "/pages/timer.html?delay=10", settle_timeout=0.7).settle_timeout == 0.7, "the caller's wins"
    for bad in ("0", "-5", "2s", "1.5", " 9", "3600000", "٣"):
        monkeypatch.setenv(SETTLE_TIMEOUT_VARIABLE, bad)
        with pytest.raises(ValueError) as refused:
            default_settle_timeout()
        assert str(refused.value).startswith(f"TODAYSIM_SETTLE_TIMEOUT_MS is {bad!r}: say the ms"), str(refused.value)


def test_bridged_page_takes_the_pages_settle_timeout(pages: str, bridged_page: OpenBridgedPage) -> None:
    """Issue 45, item 7 (as typescript/'s bridgedPage takes settleTimeoutMs)."""
    patient = bridged_page(pages + "/today/index.html", settle_timeout=5)
    assert patient.settle_timeout == 5.0
    with pytest.raises(SettleTimeout) as missed:
        bridged_page(pages + "/pages/no-bridge.html", settle_timeout=0.3)
    assert "did not settle within 0.3 s" in str(missed.value), str(missed.value)
    with pytest.raises(ValueError, match="settle_timeout is -1"):
        bridged_page(pages + "/today/index.html", settle_timeout=-1)


def test_a_page_with_the_bridge_is_not_told_to_load_it(pages: str, bridged_page: OpenBridgedPage) -> None:
    with pytest.raises(SettleTimeout) as missed:
        bridged_page(pages + "/pages/timer.html?hang=1", settle_timeout=0.5)
    assert "never loaded /bridge.js" not in str(missed.value)


def test_the_page_driver_is_the_one_shared_set_of_files() -> None:
    """Issue 45, item 4: BridgedPage adds Web/virtual-time.js, Web/page-driver.js and
    Web/settle-probe.js as they are (the package carries them as virtual_time.js, page_driver.js
    and settle_probe.js; tests/test_packaging.py checks the wheel's are copies), the same init
    script the TypeScript helper builds from its dist/ copies (tests/test_driver_contract.py
    compares the two); the TypeScript source holds no copy of the look."""
    web = {name: (REPOSITORY / "Web" / name).read_text(encoding="utf-8")
           for name in ("virtual-time.js", "page-driver.js", "settle-probe.js")}
    assert (TIMERS_JS, DRIVER_JS, PROBE_JS) == (web["virtual-time.js"], web["page-driver.js"].strip(), web["settle-probe.js"])
    assert INIT_JS.startswith(TIMERS_JS) and f"({DRIVER_JS})({EPOCH_MS}, () => " in INIT_JS
    typescript = "".join(path.read_text(encoding="utf-8") for path in (REPOSITORY / "typescript" / "src").glob("*.ts"))
    assert "inFlight: b ? b.inFlight" not in typescript


def test_no_private_playwright_clock() -> None:
    """Issue 45, item 5: nothing of either package drives Playwright's private clock
    (`__pwClock`) or its public one (`page.clock`): the page's time is virtual-time.js's."""
    sources = [*(REPOSITORY / "Web").glob("*.js"), *(REPOSITORY / "python" / "src" / "todaysim").glob("*.py"),
               *(REPOSITORY / "typescript" / "src").glob("*.ts")]
    users = [path.name for path in sources if re.search(r"__pwClock|\.clock\.(run_for|runFor|pause_at|pauseAt|install|set_system_time)",
                                                        path.read_text(encoding="utf-8"))]
    assert users == []


def test_a_render_gated_on_an_animation_frame_happens_without_a_move(pages: str, bridged_page: OpenBridgedPage) -> None:
    """Issue 45, item 7: the page's first frame is due at once (open() settles through it); a
    frame asked for from a frame is 16 ms of the page's clock later."""
    page = bridged_page(pages + "/pages/frame.html")
    assert (page.page.text_content("#rendered"), page.page.text_content("#again")) == (f"rendered at {EPOCH_MS}", "")
    page.move(15)
    assert page.page.text_content("#again") == ""
    page.move(1)
    assert page.page.text_content("#again") == f"again at {EPOCH_MS + 16}"


def test_the_virtual_clock_holds_the_page_time(pages: str, bridged_page: OpenBridgedPage) -> None:
    """Issue 45, item 5: the page's time is virtual-time.js's alone (Playwright's clock is not
    installed): Date, performance.now, intervals, cleared timers, zero-delay chains (from the
    sixth nested call on 4 ms apart, as in Chromium) and a timer that throws (the page's
    uncaught error; the clock goes on)."""
    page = bridged_page(pages + "/pages/timer.html?delay=0")
    assert page.page.evaluate("typeof __pwClock") == "undefined"
    page.page.evaluate("""() => {
      window.seen = {interval: [], chain: [], started: performance.now(), cleared: false};
      const every = setInterval(() => seen.interval.push(Date.now() - 1767225600000), 30);
      setTimeout(() => clearInterval(every), 100);
      setTimeout(() => { seen.cleared = true; }, 50) && clearTimeout(setTimeout(() => { seen.cleared = true; }, 10));
      const chain = () => { seen.chain.push(Date.now() - 1767225600000); if (seen.chain.length < 8) setTimeout(chain, 0); };
      setTimeout(chain, 0);
      setTimeout(() => { throw new Error("the page's own error"); }, 40);
    }""")
    page.move(200)
    seen = page.page.evaluate("({...seen, elapsed: performance.now() - seen.started, date: new Date().getTime(), now: Date.now()})")
    assert seen["interval"] == [30, 60, 90]
    assert seen["chain"] == [0, 0, 0, 0, 0, 4, 8, 12]  # the sixth nested call on, 4 ms apart
    assert seen["cleared"] is True and seen["elapsed"] == 200
    assert seen["date"] == seen["now"] == EPOCH_MS + 200 == EPOCH_MS + page.now_ms()
    assert any("the page's own error" in error for error in page.errors), page.errors
