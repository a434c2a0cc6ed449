"""The dashboard's Teardown and Delete actions, for Scripts/dashboard-test's browser driver.

Teardown (POST …/lifecycle {"type":"teardown"}) closes the open session, which stays readable;
Delete (DELETE …, 204) asks in the page first, then the session is gone: its view is left, its
row dropped, and the server answers 404 for it. A session purged by someone else while open is
left the same way.
"""
import json, urllib.error, urllib.request


def status_of(base_url, sid):
    try:
        with urllib.request.urlopen(f"{base_url}/v1/sessions/{sid}", timeout=30) as r: return r.status, json.load(r)["status"]
    except urllib.error.HTTPError as e: return e.code, None


def check_actions(chrome, api, report, base_url, sid, other):
    q = lambda sel: f"document.querySelector({json.dumps(sel)})"
    row = lambda i: q(f'#session-list [data-session-id="{i}"]')
    js, wait = chrome.js, chrome.wait
    js(f"location.hash = 'session={sid}'")
    wait(f"{sid} open and active", f"{q('#session-id')}.textContent === '{sid}' && {q('#session-status')}.dataset.state === 'active'")

    js(f"{q('#btn-teardown')}.click()")
    wait(f"Teardown: {sid} shows closed, its input buttons and Teardown disabled, Delete still enabled",
         f"{q('#session-status')}.dataset.state === 'closed' && {q('#btn-pull')}.disabled && {q('#btn-teardown')}.disabled && "
         f"!{q('#btn-delete')}.disabled && {row(sid)}?.dataset.status === 'closed'", show=f"{q('#session-status')}.dataset.state")
    report(status_of(base_url, sid) == (200, "closed"), f"after Teardown GET /v1/sessions/{sid} is 200, closed", status_of(base_url, sid))

    js(f"{q('#btn-delete')}.click()")
    wait("Delete asks first, in the page, naming the session",
         f"!{q('#delete-confirm')}.hidden && {q('#delete-id')}.textContent === '{sid}'")
    js(f"{q('#btn-delete-cancel')}.click()")
    wait("Cancel keeps it: the question goes, the session stays open", f"{q('#delete-confirm')}.hidden && {q('#session-id')}.textContent === '{sid}'")
    report(status_of(base_url, sid)[0] == 200, f"after Cancel GET /v1/sessions/{sid} is still 200", status_of(base_url, sid))

    js(f"{q('#btn-delete')}.click()"); js(f"{q('#btn-delete-confirm')}.click()")
    wait(f"Delete confirmed: the page leaves {sid}, says it was deleted, drops its row",
         f"!location.hash.includes('session=') && {q('#detail')}.style.display === 'none' && !{q('#empty')}.hidden && "
         f"{q('#notice')}.textContent.includes('{sid} deleted') && !{row(sid)}", show=f"[location.hash, {q('#notice')}.textContent]")
    report(status_of(base_url, sid)[0] == 404, f"after Delete GET /v1/sessions/{sid} is 404", status_of(base_url, sid))
    wait(f"the list, reloaded, does not bring {sid} back", f"!{row(sid)} && {row(other)}")

    # Purged by someone else while open: the stream ends and the page leaves the session.
    api("POST", "/v1/sessions", {"uid": "u5", "id": "s5"})
    js("location.hash = 'session=s5'")
    wait("s5 open, stream live", f"{q('#session-id')}.textContent === 's5' && {q('#live')}.textContent === 'live'")
    urllib.request.urlopen(urllib.request.Request(f"{base_url}/v1/sessions/s5", method="DELETE"), timeout=30).close()
    wait("s5 deleted by another client: the page leaves it, says so, drops its row",
         f"{q('#detail')}.style.display === 'none' && {q('#notice')}.textContent.includes('s5 no longer exists') && !{row('s5')}",
         show=f"[{q('#live')}.textContent, {q('#notice')}.textContent]")
