"""The browser bridge end to end (issue 8): the fixture Today Page (Scripts/examples/today-page)
with /bridge.js, in headless Chromium, against a live todaysim session, the page served from
another origin (so CORS is exercised), the server
started with a token (so the shim's access_token is exercised). Drives the session over HTTP and checks both sides.

    python3 bridge_test.py TODAYSIM_BINARY

Conforming run (session s1): the page boots from cache and answers its own refresh; then a pull,
a background/foreground return, a live widget sheet (liveWidgetCreation.present resolving
{presented: true}) and its creation, a native dialog whose promise resolves when the user
chooses, a server restart with a request made before the page's stream reconnects, a today://
link click; the page must have seen exactly the native -> Web messages of
the timeline, in order, and the session's report must say conforms: true. A todayPage.* call
never rejects, even when the HTTP call fails; another call does. Broken run (session s2, the
same page with broken=1, loading the repository's Web/bridge.js from the page's own origin, set
up by window.todaysimBridge with another event name): the report must list exactly M1 for every
request it answered twice and M3 for the pull it showed header feedback for.
Prints "PASS|FAIL\tname\tdetail" lines and "N passed, M failed" last; exits 1 on any failure.
"""
import http.client, json, os, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Scripts", "lib"))
from chromium import Chromium  # noqa: E402
from testkit import Checks, free_port  # noqa: E402

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/debug/todaysim"))
checks = Checks()
report = checks.check
check = checks.equal


def api(method, path, body=None, expect=200):
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    connection.request(method, path, json.dumps(body) if body is not None else None,
                       {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    answer = connection.getresponse()
    data = answer.read()
    connection.close()
    if answer.status != expect:
        raise RuntimeError(f"{method} {path} answered {answer.status}, expected {expect}: {data[:300]!r}")
    return json.loads(data) if data else None


def entries(session, kind=None):
    return api("GET", f"/v1/sessions/{session}/timeline?limit=1000" + (f"&kind={kind}" if kind else ""))["entries"]


def eventually(name, probe, timeout=30):
    """Reports `name` passed once `probe()` is true (polled), else failed."""
    end = time.time() + timeout
    while time.time() < end:
        if probe():
            report(True, name)
            return True
        time.sleep(0.05)
    report(False, name, f"not true after {timeout} s")
    return False


def results_for(session, request_id):
    return [e for e in entries(session, "bridge")
            if e["type"] == "todayPage.refreshResult" and e.get("requestId") == request_id]


def open_page(session, broken=False):
    page = f"{PAGE}/Scripts/examples/today-page/index.html?todaysim={BASE}&session={session}&access_token={TOKEN}"
    if broken:  # and with the bundled copy, set up by a global with another event name
        page += "&broken=1&bundled=/Web/bridge.js"
    chrome.call("Page.navigate", {"url": page})
    chrome.wait(f"{session}: the page loads the shim and boots (its own refresh answered)",
                "window.fixture && fixture.booted && fixture.answered.length === 1 && window.todaysimBridge", timeout=30,
                show="document.body ? document.body.innerText.slice(0, 200) : null")
    chrome.js("todaysimBridge.ready")


def native_request(session, path, body, request_id):
    # Answered: the page called emit for it and the bridge has no call in flight, so the answer
    # reached the host before the test's next input (a clock advance past its deadline, say).
    api("POST", f"/v1/sessions/{session}/{path}", body)
    chrome.wait(f"{session}: the page got {request_id} and answered it",
                f"fixture.answered.indexOf({json.dumps(request_id)}) >= 0 && todaysimBridge.inFlight === 0",
                show="JSON.stringify(fixture.received)")


def conforming_run():
    api("POST", "/v1/sessions", {"uid": "u1", "id": "s1", "capabilities": [
        "today_page_revalidate_feedback.v1", "live_widget_creation.v1", "native_dialog.v1"]}, expect=201)
    loaded_at = api("GET", "/v1/sessions/s1")["counts"]["timeline"]
    open_page("s1")
    injected = api("GET", "/v1/sessions/s1")["document"]["injected"]
    check("window.__todayWebView is the session's document.injected (H2)", chrome.js("window.__todayWebView"), injected)
    boot_id = chrome.js("fixture.answered[0]")
    eventually("the boot refresh: refreshStarted and one refreshResult under the page's own id reached the session",
               lambda: len(results_for("s1", boot_id)) == 1
               and any(e["type"] == "todayPage.refreshStarted" and e.get("requestId") == boot_id for e in entries("s1", "bridge")))
    check("the overlay was released by webView.loadingPresentation", api("GET", "/v1/sessions/s1")["document"]["overlay"], "hidden")

    native_request("s1", "gestures", {"type": "pull", "requestId": "p1"}, "p1")
    eventually("the pull's result ended the spinner", lambda: api("GET", "/v1/sessions/s1")["pull"]["state"] == "idle")
    api("POST", "/v1/sessions/s1/lifecycle", {"type": "background"})
    api("POST", "/v1/sessions/s1/clock", {"advanceMs": 6000})
    native_request("s1", "lifecycle", {"type": "foreground", "requestId": "fg-1"}, "fg-1")
    presented = chrome.js("todayWebViewBridge.emit('liveWidgetCreation.present')")
    check("liveWidgetCreation.present resolves the host's answer", presented, {"presented": True})
    native_request("s1", "gestures", {"type": "liveWidget.created", "requestId": "lw-1"}, "lw-1")
    chrome.js("window.dialogResult = null; todayWebViewBridge.emit('nativeDialog.present', {title: 'Delete?', actions: "
              "[{actionId: 'delete', title: 'Delete'}, {actionId: 'keep', title: 'Keep'}]}).then(v => { window.dialogResult = v; }); 0")
    eventually("nativeDialog.present opened the native dialog", lambda: api("GET", "/v1/sessions/s1")["dialog"] is not None)
    api("POST", "/v1/sessions/s1/gestures", {"type": "dialog.choose", "actionId": "delete"})
    chrome.wait("the dialog's promise resolves when the user chooses (a resolution entry on the stream)",
                "window.dialogResult && dialogResult.type === 'action' && dialogResult.actionId === 'delete'",
                show="JSON.stringify(window.dialogResult)")
    # A restart drops the page's event stream; a request made before it reconnects must still
    # arrive (Last-Event-ID resume), once.
    restart_server()
    native_request("s1", "lifecycle", {"type": "tabActivated", "requestId": "tab-1"}, "tab-1")
    chrome.js("document.getElementById('chat-link').click()")
    eventually("a today:// link click reached the host as webView.navigationAction",
               lambda: any(e["type"] == "webView.navigationAction" for e in entries("s1", "bridge")))
    check("the page did not navigate away", chrome.js("location.pathname"), "/Scripts/examples/today-page/index.html")
    api("POST", "/v1/sessions/s1/clock", {"advanceMs": 2000})
    eventually("every answer reached the session", lambda: all(len(results_for("s1", i)) == 1 for i in ["p1", "fg-1", "lw-1", "tab-1"]))

    emitted = [{"type": e["type"], "requestId": e.get("requestId")} for e in entries("s1", "emit") if e["seq"] > loaded_at]
    seen = chrome.js("fixture.received.map(m => ({type: m.type, requestId: m.requestId}))")
    check("the page saw exactly the native -> Web messages of the timeline, in order, once each", seen, emitted)
    requests = [(m["requestId"], m["reason"]) for m in chrome.js("fixture.received") if m["type"] == "todayPage.refreshRequested"]
    check("the refresh requests arrived with their reasons, in order", requests,
          [("p1", "user_pull"), ("fg-1", "app_foreground"), ("lw-1", "live_widget_created"), ("tab-1", "tab_activated")])
    result = api("GET", "/v1/sessions/s1/report")
    check("the session's report: conforms", (result["conforms"], [v["type"] for v in result["violations"]]), (True, []))
    answered = {r["requestId"]: r["outcome"] for r in result["requests"]}
    check("the report's native requests all succeeded", answered,
          {"p1": "succeeded", "fg-1": "succeeded", "lw-1": "succeeded", "tab-1": "succeeded"})

    # Two pulls within 10 s: the host reloads the document (manualRepeat), so the page reloads
    # and answers the reload's request (mode hard).
    api("POST", "/v1/sessions/s1/clock", {"advanceMs": 11000})
    native_request("s1", "gestures", {"type": "pull", "requestId": "p3"}, "p3")
    api("POST", "/v1/sessions/s1/gestures", {"type": "pull", "requestId": "p4"})
    reload = api("GET", "/v1/sessions/s1")["document"]
    check("a second pull within 10 s made the host reload the document", (reload["loadId"], reload["cause"]), (2, "manualRepeat"))
    chrome.wait("the page reloaded with the host and answered the reload's request",
                f"window.fixture && fixture.load.loadId === 2 && fixture.answered.indexOf({json.dumps(reload['requestId'])}) >= 0",
                show="window.fixture && JSON.stringify(fixture.load)")
    eventually("the reload's hard refreshResult reached the session", lambda: len(results_for("s1", reload["requestId"])) == 1)
    result = api("GET", "/v1/sessions/s1/report")
    outcomes = {r["requestId"]: (r["kind"], r["outcome"]) for r in result["requests"] if r["requestId"] in ("p3", reload["requestId"])}
    check("after the reload the report still conforms, the reload succeeded",
          (result["conforms"], outcomes[reload["requestId"]]), (True, ("reload", "succeeded")))

    # The bridge rule: todayPage.* resolves undefined, never rejects, even when HTTP fails.
    check("an unknown todayPage.* event resolves undefined",
          chrome.js("todayWebViewBridge.emit('todayPage.somethingNew', {schemaVersion: 1}).then(v => v === undefined ? 'undefined' : v)"),
          "undefined")
    api("POST", "/v1/sessions/s1/lifecycle", {"type": "teardown"})
    check("after the session closed (409), a todayPage.* call still resolves undefined",
          chrome.js("todayWebViewBridge.emit('todayPage.refreshStarted', {schemaVersion: 1, requestId: 'x', presentation: 'header'})"
                    ".then(v => v === undefined ? 'undefined' : 'resolved ' + v, e => 'rejected')"), "undefined")
    check("and any other call rejects",
          chrome.js("todayWebViewBridge.emit('track', {event: 'x'}).then(() => 'resolved', e => 'rejected: ' + e.message)")[:17],
          "rejected: todaysi")


def broken_run():
    api("POST", "/v1/sessions", {"uid": "u2", "id": "s2"}, expect=201)
    open_page("s2", broken=True)
    check("the bundled shim took its settings from window.todaysimBridge",
          chrome.js("[todaysimBridge.base, todaysimBridge.session, todaysimBridge.event, document.scripts[1].src]"),
          [BASE, "s2", "todaysim:native", PAGE + "/Web/bridge.js"])
    boot_id = chrome.js("fixture.answered[0]")
    native_request("s2", "gestures", {"type": "pull", "requestId": "p2"}, "p2")
    api("POST", "/v1/sessions/s2/lifecycle", {"type": "background"})
    api("POST", "/v1/sessions/s2/clock", {"advanceMs": 6000})
    native_request("s2", "lifecycle", {"type": "foreground", "requestId": "fg-2"}, "fg-2")
    eventually("the broken page answered every request twice",
               lambda: all(len(results_for("s2", i)) == 2 for i in [boot_id, "p2", "fg-2"]))
    result = api("GET", "/v1/sessions/s2/report")
    found = sorted((v["type"], v.get("requestId")) for v in result["violations"])
    check("the broken page's report lists exactly its violations (M1 per doubled result, M3 for the pull)",
          (result["conforms"], found), (False, sorted([("M1", boot_id), ("M1", "p2"), ("M1", "fg-2"), ("M3", "p2")])))


def open_page_run():
    """Scripts/open-page keeps the page open while the native side is driven: the page boots,
    answers a pull made after it opened, and closes at SIGTERM with exit 0."""
    api("POST", "/v1/sessions", {"uid": "u3", "id": "s3"}, expect=201)
    page = f"{PAGE}/Scripts/examples/today-page/index.html?todaysim={BASE}&session=s3&access_token={TOKEN}"
    opener = subprocess.Popen([os.path.join(ROOT, "Scripts", "open-page"), page], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        eventually("open-page: the page booted and answered its own load",
                   lambda: api("GET", "/v1/sessions/s3")["document"]["state"] == "rendered")
        api("POST", "/v1/sessions/s3/gestures", {"type": "pull", "requestId": "p3"})
        eventually("open-page: the open page answered a pull made after it opened", lambda: len(results_for("s3", "p3")) == 1)
        opener.send_signal(15)
        check("open-page: closes at SIGTERM with exit 0", opener.wait(30), 0)
        output = opener.stdout.read()
        check("open-page: said where the page is open, and that it closed",
              (f"open-page: {page} is open" in output, "open-page: closed" in output), (True, True))
    finally:
        if opener.poll() is None:
            opener.kill()
            opener.wait()
    result = api("GET", "/v1/sessions/s3/report")
    check("open-page: the session's report conforms", (result["conforms"], result["violations"]), (True, []))


def await_url(address, timeout=30):
    """Returns once `address` answers; fails the run when it does not within `timeout` s."""
    end = time.time() + timeout
    while True:
        try:
            urllib.request.urlopen(address, timeout=5).read()
            return
        except OSError as error:
            if time.time() > end:
                raise SystemExit(f"bridge-test: {address} did not answer in {timeout} s ({error})")
            time.sleep(0.1)


def start_server():
    process = subprocess.Popen([BIN, "serve", "--port", str(PORT), "--db", f"{tmp}/db.sqlite", "--allow-origin", PAGE,
                                "--token", TOKEN, "--quiet"], stderr=open(f"{tmp}/server.log", "a"))
    await_url(BASE + "/healthz")
    return process


def restart_server():
    global server
    server.terminate()
    server.wait(10)
    server = start_server()


tmp = tempfile.mkdtemp(prefix="todaysim-bridge-")
PORT, PAGE_PORT, TOKEN = free_port(), free_port(), "bridge-test-token"
BASE, PAGE = f"http://127.0.0.1:{PORT}", f"http://127.0.0.1:{PAGE_PORT}"
server = start_server()
pages = subprocess.Popen([sys.executable, "-m", "http.server", str(PAGE_PORT), "--bind", "127.0.0.1",
                          "--directory", ROOT],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
chrome = None
try:
    await_url(PAGE + "/Scripts/examples/today-page/index.html")
    chrome = Chromium(tmp, report)
    for run in (conforming_run, broken_run, open_page_run):
        try:
            run()
        except Exception as error:  # noqa: BLE001 — any failure is reported, then the next run
            report(False, run.__name__, f"{type(error).__name__}: {error}")
finally:
    if chrome:
        chrome.close()
    for process in (pages, server):
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
sys.exit(checks.summary())
