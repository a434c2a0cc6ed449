"""The explorer on pages with real bugs: the fixture Today Page as written stays clean over the
default budget, and each planted bug (`?bug=NAME`, Scripts/examples/today-page/index.html) is
found within it and shrunk to a scenario at most two steps longer than the shortest one known;
the printed scenario, replayed step by step on a fresh page, and the failing session's export,
replayed without a page, show the same violation code. Fixed seeds keep CI deterministic; the
unseeded runs are in Scripts/bench --explore."""
import pytest

from todaysim.explore import explore

BUDGET = 100  # the explorer's default --examples
SEED = 20261203
# Hypothesis' own shrinking, per bug (the explorer's minimize() goes on from where it stops).
SHRINK_SECONDS = 30

# bug -> (the code it breaks, the shortest scenario known)
PLANTED = {
    # A pull while the boot fetch runs is dropped instead of joining it; the 5 s deadline passes.
    "busy-drop": ("M7", [{"gesture": {"type": "pull"}}, {"clock": {"advanceMs": 5000}}]),
    # Header feedback for a user pull.
    "pull-header": ("M3", [{"gesture": {"type": "pull"}}]),
    # The boot fetch (50 ms) answers its id twice.
    "double": ("M1", [{"clock": {"advanceMs": 50}}]),
    # The host reloads a terminated page; it renders before releasing the overlay.
    "render-first": ("M9", [{"lifecycle": {"type": "webContentTerminated"}}]),
    # Away 5 s and back: the app_foreground request is never answered before its deadline.
    "background-drop": ("M7", [{"lifecycle": {"type": "background"}}, {"clock": {"advanceMs": 5000}},
                               {"lifecycle": {"type": "foreground"}}, {"clock": {"advanceMs": 5000}}]),
    # The reload after a termination is answered with the id the previous document answered
    # (the boot's, after its 50 ms fetch): M1 for that id. This page shows M1, not M7: the
    # reload's own id is never answered, and a reload has no soft deadline to time it out.
    "stale-reload-id": ("M1", [{"clock": {"advanceMs": 50}}, {"lifecycle": {"type": "webContentTerminated"}},
                               {"clock": {"advanceMs": 50}}]),
}


@pytest.fixture(scope="module")
def browser(todaysim_browser):
    return todaysim_browser


def test_the_conforming_page_stays_clean_over_the_default_budget(todaysim, browser, today_page):
    found = explore(today_page, todaysim, browser, examples=BUDGET, seed=SEED)
    assert found.breach is None, found.describe()
    assert found.examples >= BUDGET


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_each_planted_bug_is_found_and_shrunk(bug, todaysim, browser, today_page, bridged_page):
    code, shortest = PLANTED[bug]
    url = f"{today_page}?bug={bug}"
    found = explore(url, todaysim, browser, examples=BUDGET, seed=SEED, shrink_seconds=SHRINK_SECONDS)
    assert found.breach is not None, f"{bug}: not found in {found.examples} examples"
    assert found.found_after <= BUDGET
    assert code in found.codes, found.describe()
    assert len(found.steps) <= len(shortest) + 2, found.describe()
    print(f"{bug}: found in example {found.found_after}, {found.examples} examples in all; shrunk to "
          f"{len(found.steps)} steps (shortest known {len(shortest)}): {found.steps}")

    # The printed pytest test, run as pasted: the same steps one per call on a fresh page, and
    # it fails naming the same code.
    source = found.pytest_source()
    namespace = {}
    exec(compile(source, f"<the {bug} scenario>", "exec"), namespace)
    with pytest.raises(AssertionError) as reproduced:
        namespace["test_breach_found_by_the_explorer"](bridged_page, todaysim)
    assert f"'{code}: " in str(reproduced.value), str(reproduced.value)

    # The failing session's export, replayed without a page under its own id (server-made
    # request ids derive from the session's id; the explorer purged the original): the same code.
    replayed = todaysim.replay(found.export)
    try:
        assert code in [v["type"] for v in todaysim.report(replayed["id"])["violations"]]
    finally:
        todaysim.delete_session(replayed["id"])
