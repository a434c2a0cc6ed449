"""The fixture Today Page (examples/today-page) in Playwright against todaysim sessions:
once as written (it must conform), once with `broken=1` (it must break the contract exactly
where it misbehaves). A Web team replaces the page and keeps the shape: drive the native side,
wait for the page's answers on the session's side, read the report.
"""
import pytest


def boot_request_id(today):
    """The page revalidates on boot under an id of its own: the first refreshResult's."""
    answered = []

    def probe():
        answered[:] = [entry["requestId"] for entry in today.timeline("bridge") if entry["type"] == "todayPage.refreshResult"]
        return answered

    today.eventually(probe, "the page answered its boot refresh")
    return answered[0]


def refresh_requests_seen_by_page(today):
    return today.page.evaluate("todaysimBridge.received.filter(m => m.type === 'todayPage.refreshRequested')"
                               ".map(m => [m.requestId, m.reason])")


@pytest.mark.todaysim_session(capabilities=["today_page_revalidate_feedback.v1", "live_widget_creation.v1"])
def test_a_conforming_page_keeps_the_contract(today):
    boot = boot_request_id(today)
    today.gesture("pull", requestId="p1")
    today.wait_for_results("p1")
    today.eventually(lambda: today.read()["pull"]["state"] == "idle", "the pull's result ended the spinner")
    today.lifecycle("background")
    today.clock(advanceMs=6000)
    today.lifecycle("foreground", requestId="fg-1")
    today.gesture("liveWidget.created", requestId="lw-1")
    today.wait_for_results("fg-1", "lw-1")

    assert refresh_requests_seen_by_page(today) == [["p1", "user_pull"], ["fg-1", "app_foreground"],
                                                    ["lw-1", "live_widget_created"]]
    report = today.assert_conforms()
    assert {r["requestId"]: r["outcome"] for r in report["requests"]} == {
        "p1": "succeeded", "fg-1": "succeeded", "lw-1": "succeeded"}
    assert [len(today.refresh_results(i)) for i in (boot, "p1", "fg-1", "lw-1")] == [1, 1, 1, 1]


@pytest.mark.today_page(broken="1")
def test_the_broken_page_breaks_it_exactly_where_it_misbehaves(today):
    # broken=1: every request is answered twice (M1) and a pull gets header feedback (M3).
    boot = boot_request_id(today)
    today.gesture("pull", requestId="p2")
    today.wait_for_results("p2")
    today.lifecycle("background")
    today.clock(advanceMs=6000)
    today.lifecycle("foreground", requestId="fg-2")
    today.wait_for_results(boot, "p2", "fg-2", count=2)

    report = today.report()
    twice = "M1: Web sent refreshResult number 2 for {}; the contract allows exactly one per requestId"
    assert report["conforms"] is False
    assert [(v["type"], v["requestId"], v["data"]["detail"]) for v in report["violations"]] == [
        ("M1", boot, twice.format(boot)),
        ("M3", "p2", "M3: Web started header feedback for the native request p2 with reason user_pull; "
                     "user pulls, tab activations and silent refreshes must show none"),
        ("M1", "p2", twice.format("p2")),
        ("M1", "fg-2", twice.format("fg-2")),
    ]
    assert {r["requestId"]: r["outcome"] for r in report["requests"]} == {"p2": "succeeded", "fg-2": "succeeded"}
