"""The dashboard's Teardown and Delete, and answers that arrive late.

Teardown (POST …/lifecycle {"type":"teardown"}) closes the open session, which stays readable;
Delete (DELETE …, 204) asks in the page first, then the session is gone: its view is left, its
row dropped, and the server answers 404 for it. A session purged by someone else while open is
left the same way, also when its first view comes back only after the 404 (held in the page). A
list asked for with a filter and answered after a newer one does not replace it."""
from __future__ import annotations

import json
from typing import Callable

from support.browser import Tab, q, script
from support.dashboard import Dashboard

SID, OTHER = "s3", "s1"
ROWS = "[...document.querySelectorAll('#session-list [data-session-id]')].map(r => r.dataset.sessionId).join(',')"


def row(session: str) -> str:
    return q(f'#session-list [data-session-id="{session}"]')


def test_teardown_closes_and_delete_asks_then_removes(dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    api, tab = dashboard.api, new_tab()
    api.create_session("u1", id=OTHER)
    api.create_session("u3", id=SID, clock="wall")
    dashboard.open(tab, SID)
    tab.wait(f"{SID} open and active", f"{q('#session-id')}.textContent === '{SID}' && {q('#session-status')}.dataset.state === 'active'")

    tab.click("#btn-teardown")
    tab.wait(f"Teardown: {SID} shows closed, its input buttons and Teardown disabled, Delete still enabled",
             f"{q('#session-status')}.dataset.state === 'closed' && {q('#btn-pull')}.disabled && {q('#btn-teardown')}.disabled && "
             f"!{q('#btn-delete')}.disabled && {row(SID)}?.dataset.status === 'closed'", show=f"{q('#session-status')}.dataset.state")
    assert dashboard.status_of(SID) == (200, "closed"), f"after Teardown GET /v1/sessions/{SID} is 200, closed"

    tab.click("#btn-delete")
    tab.wait("Delete asks first, in the page, naming the session", f"!{q('#delete-confirm')}.hidden && {q('#delete-id')}.textContent === '{SID}'")
    tab.click("#btn-delete-cancel")
    tab.wait("Cancel keeps it: the question goes, the session stays open",
             f"{q('#delete-confirm')}.hidden && {q('#session-id')}.textContent === '{SID}'")
    assert dashboard.status_of(SID)[0] == 200, f"after Cancel GET /v1/sessions/{SID} is still 200"

    tab.click("#btn-delete")
    tab.click("#btn-delete-confirm")
    tab.wait(f"Delete confirmed: the page leaves {SID}, says it was deleted, drops its row",
             f"!location.hash.includes('session=') && {q('#detail')}.style.display === 'none' && !{q('#empty')}.hidden && "
             f"{q('#notice')}.textContent.includes('{SID} deleted') && !{row(SID)}", show=f"[location.hash, {q('#notice')}.textContent]")
    assert dashboard.status_of(SID)[0] == 404, f"after Delete GET /v1/sessions/{SID} is 404"
    tab.wait(f"the list, reloaded, does not bring {SID} back", f"!{row(SID)} && {row(OTHER)}")


def test_a_session_purged_by_another_client_is_left(dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    """The stream ends and the page leaves the session. For s6 its first view is held in the page
    until after the delete, so the 404 of a later view comes first: the page still leaves s6 (its
    stream told it s6 existed), and the held answer, let through afterwards, brings nothing back."""
    api, tab = dashboard.api, new_tab()
    api.create_session("u1", id=OTHER)
    dashboard.open(tab, OTHER)
    tab.wait(f"{OTHER} open", f"{q('#session-id')}.textContent === '{OTHER}'")
    left_s6 = f"{q('#detail')}.style.display === 'none' && !location.hash.includes('session=') && !{row('s6')}"
    tab.js(f"({script('hold-fetch.js')})('/v1/sessions/s6', '', () => {left_s6})")
    for session, how in (("s5", ""), ("s6", " (its first view held)")):
        api.create_session("u-" + session, id=session)
        tab.js(f"location.hash = 'session={session}'")
        tab.wait(f"{session} open, stream live{how}", f"{q('#session-id')}.textContent === '{session}' && {q('#live')}.textContent === 'live'"
                 + (" && !!window.__held" if session == "s6" else ""))
        api.delete_session(session)
        tab.wait(f"{session} deleted by another client{how}: the page leaves it, says so, drops its row",
                 f"{q('#detail')}.style.display === 'none' && {q('#notice')}.textContent.includes('{session} no longer exists') && !{row(session)}",
                 show=f"[{q('#live')}.textContent, {q('#notice')}.textContent, {q('#input-error')}.textContent]")
    tab.js("window.__held()")
    tab.wait("the held first view of s6, read after the 404, leaves the page where it was", "window.__heldSeen === true",
             show="window.__heldSeen")


def test_a_late_list_does_not_replace_a_newer_one(dashboard: Dashboard, new_tab: Callable[..., Tab]) -> None:
    """A list asked for with a filter, answered only after the list without it: the late answer
    (no session matches) does not replace the newer one."""
    api, tab = dashboard.api, new_tab()
    api.create_session("u1", id=OTHER)
    dashboard.open(tab, OTHER)
    tab.wait(f"{OTHER} open and listed", f"{q('#session-id')}.textContent === '{OTHER}' && !!{row(OTHER)}")

    def filter_label(value: str) -> None:
        tab.js(f"(e => {{ e.value = {json.dumps(value)}; e.dispatchEvent(new Event('input')); }})({q('#filter-label')})")

    tab.js(f"({script('hold-fetch.js')})('/v1/sessions', 'label=no-such-label', () => {ROWS})")
    filter_label("no-such-label")
    tab.wait("a list for label 'no-such-label' is asked for and held", "!!window.__held")
    held = tab.js("listAsked")  # the page's own count of lists asked for
    filter_label("")
    tab.wait(f"the list without a filter, asked for after it, is shown and lists {OTHER}",
             f"listShown > {held} && {ROWS}.split(',').includes('{OTHER}')", show=f"[listShown, {ROWS}]")
    tab.js("window.__held()")
    tab.wait(f"the held list, read after it, leaves {OTHER} listed",
             f"window.__heldSeen !== undefined && window.__heldSeen.split(',').includes('{OTHER}')", show="window.__heldSeen")
