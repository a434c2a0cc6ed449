"""The dashboard's Teardown and Delete actions, for Scripts/dashboard-test's browser driver.

Teardown (POST …/lifecycle {"type":"teardown"}) closes the open session, which stays readable;
Delete (DELETE …, 204) asks in the page first, then the session is gone: its view is left, its
row dropped, and the server answers 404 for it. A session purged by someone else while open is
left the same way, also when its first view comes back only after the 404 (held here in the page).
"""
import json, urllib.error, urllib.request

# Holds, in the page, the first fetch whose URL (without its query) is `path` and whose query has
# `has`, until `window.__held()` is called; its answer is then read, and once the page's own code
# after that read has run (a task queued behind it), `window.__heldSeen` is what `probe` returned.
HOLD = """((path, has, probe) => { const real = window.__realFetch = window.__realFetch || window.fetch;
  window.__held = null; window.__heldSeen = undefined;
  window.fetch = (url, init) => {
    const [p, query] = String(url).split('?');
    if (window.__held === null && p === path && (query || '').includes(has) && (!init || init.method === 'GET'))
      return new Promise(go => { window.__held = async () => {
        const r = await real(url, init), t = await r.text();
        const late = new Response(t, {status: r.status, headers: r.headers}), text = late.text.bind(late);
        late.text = async () => { const v = await text(); setTimeout(() => { window.__heldSeen = probe(); }); return v; };
        go(late); }; });
    return real(url, init); }; })"""


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

    # Purged by someone else while open: the stream ends and the page leaves the session. For s6
    # its first view is held in the page until after the delete, so the 404 of a later view comes
    # first: the page still leaves s6 (its stream told it s6 existed), and the held answer, let
    # through afterwards, brings nothing back.
    leftS6 = f"{q('#detail')}.style.display === 'none' && !location.hash.includes('session=') && !{row('s6')}"
    js(f"{HOLD}('/v1/sessions/s6', '', () => {leftS6})")
    for s, how in (("s5", ""), ("s6", " (its first view held)")):
        api("POST", "/v1/sessions", {"uid": "u-" + s, "id": s})
        js(f"location.hash = 'session={s}'")
        wait(f"{s} open, stream live{how}", f"{q('#session-id')}.textContent === '{s}' && {q('#live')}.textContent === 'live'"
             + (" && !!window.__held" if s == "s6" else ""))
        urllib.request.urlopen(urllib.request.Request(f"{base_url}/v1/sessions/{s}", method="DELETE"), timeout=30).close()
        wait(f"{s} deleted by another client{how}: the page leaves it, says so, drops its row",
             f"{q('#detail')}.style.display === 'none' && {q('#notice')}.textContent.includes('{s} no longer exists') && !{row(s)}",
             show=f"[{q('#live')}.textContent, {q('#notice')}.textContent, {q('#input-error')}.textContent]")
    js("window.__held()")
    wait("the held first view of s6, read after the 404, leaves the page where it was",
         "window.__heldSeen === true", show="window.__heldSeen")

    # A list asked for with a filter, answered only after the list without it: the late answer
    # (no session matches) does not replace the newer one.
    rows = "[...document.querySelectorAll('#session-list [data-session-id]')].map(r => r.dataset.sessionId).join(',')"
    filter_label = lambda v: js(f"(e => {{ e.value = {json.dumps(v)}; e.dispatchEvent(new Event('input')); }})({q('#filter-label')})")
    js(f"{HOLD}('/v1/sessions', 'label=no-such-label', () => {rows})")
    filter_label("no-such-label")
    wait("a list for label 'no-such-label' is asked for and held", "!!window.__held")
    held = js("listAsked")  # the page's own count of lists asked for
    filter_label("")
    wait(f"the list without a filter, asked for after it, is shown and lists {other}",
         f"listShown > {held} && {rows}.split(',').includes('{other}')", show=f"[listShown, {rows}]")
    js("window.__held()")
    wait(f"the held list, read after it, leaves {other} listed",
         f"window.__heldSeen !== undefined && window.__heldSeen.split(',').includes('{other}')", show="window.__heldSeen")
    js("window.fetch = window.__realFetch")
