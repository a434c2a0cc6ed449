"""One virtual time for the session and the page: the page's own timers act at their due time
on the session's clock, between the session's watchdogs; a page that never settles is the
explorer's error (SettleTimeout), not a breach; the page clock survives the reloads the shim
makes."""
import importlib.resources
import os
import pathlib
import re

import pytest

from todaysim import Client
from todaysim.models import TimelineEntry
from todaysim.page import PROBE_JS, TIMERS_JS, SettleTimeout
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


def test_a_page_that_never_settles_is_an_error_not_a_breach(pages: str, bridged_page: OpenBridgedPage) -> None:
    with pytest.raises(SettleTimeout) as missed:
        bridged_page(pages + "/pages/timer.html?hang=1")
    assert "did not settle within 2.0 s" in str(missed.value) and "'requests': 1" in str(missed.value)


def test_a_page_without_the_bridge_is_told_to_load_it(pages: str, bridged_page: OpenBridgedPage) -> None:
    """Issue 45, item 2: the most common mistake, said first in the timeout's message."""
    with pytest.raises(SettleTimeout) as missed:
        bridged_page(pages + "/pages/no-bridge.html")
    assert "did not settle within 2.0 s: the page never loaded /bridge.js (it must, from its `todaysim` and `session` " \
           "query parameters" in str(missed.value), str(missed.value)
    assert "'bridge': False" in str(missed.value)


def test_a_page_with_the_bridge_is_not_told_to_load_it(pages: str, bridged_page: OpenBridgedPage) -> None:
    with pytest.raises(SettleTimeout) as missed:
        bridged_page(pages + "/pages/timer.html?hang=1")
    assert "never loaded /bridge.js" not in str(missed.value)


def test_the_timer_tracker_is_the_one_shared_file() -> None:
    """The installed package carries Web/virtual-time.js itself (a file, not the repository's
    link), and BridgedPage adds exactly that script: one tracker for Python and TypeScript."""
    installed = importlib.resources.files("todaysim") / "virtual_time.js"
    shared = (REPOSITORY / "Web" / "virtual-time.js").read_text(encoding="utf-8")
    assert not os.path.islink(str(installed))
    assert installed.read_text(encoding="utf-8") == shared == TIMERS_JS
    assert "window.__todaysimTimers = " in shared


def test_the_settling_look_is_the_one_shared_file() -> None:
    """The installed package carries Web/settle-probe.js itself, BridgedPage looks with exactly
    that expression, and the TypeScript helper's inline copy (typescript/src/playwright.ts's
    PROBE_JS, kept inline: its package would need one more file copied at pack time) is the same
    expression, so the two settle alike."""
    installed = importlib.resources.files("todaysim") / "settle_probe.js"
    shared = (REPOSITORY / "Web" / "settle-probe.js").read_text(encoding="utf-8")
    assert not os.path.islink(str(installed))
    assert installed.read_text(encoding="utf-8") == shared == PROBE_JS
    expression = re.sub(r"^/\*.*?\*/\n", "", shared, flags=re.S).strip()
    assert expression.startswith("(() => {") and expression.endswith("})()")
    typescript = (REPOSITORY / "typescript" / "src" / "playwright.ts").read_text(encoding="utf-8")
    inline = re.search(r"const PROBE_JS = `(.*?)`;", typescript, re.S)
    assert inline is not None and inline.group(1).strip() == expression
