/*
 * todaysim browser bridge: runs a real Today Page in a real browser against a simulated native
 * host (a todaysim session). Load it before the page's own scripts:
 *
 *   <script src="http://127.0.0.1:8080/bridge.js?session=SESSION_ID"></script>
 *
 * or, bundled from the repository (Web/bridge.js), after setting
 *
 *   window.todaysimBridge = {base: "http://127.0.0.1:8080", session: "SESSION_ID"};
 *
 * Settings (script URL query parameter, or the same key on window.todaysimBridge):
 *   session       the session id (required)
 *   base          the todaysim server (default: where this script came from)
 *   access_token  a token for a server started with --token / --token-file
 *   event         the DOM event native -> Web messages arrive as (default "todayNativeEvent")
 *   loads         "reload" (default): when the host loads the document again (a recovery or
 *                 manual-repeat reload, a termination, an account switch), the page reloads
 *                 too, as a WebView would; "ignore": the page stays
 *
 * What it does:
 *   - window.__todayWebView = the session's document.injected {platform, surface,
 *     capabilities}, set before the page's scripts run (H2);
 *   - window.todayWebViewBridge.emit(type, payload) posts {type, ...payload} to the session's
 *     /web-events, in call order, and returns a Promise of the bridge call's resolution:
 *     undefined for todayPage.* (never rejected, H21), the host's answer for the others (a
 *     pending nativeDialog.present resolves when the dialog settles); an HTTP failure rejects
 *     only calls that are not todayPage.*;
 *   - every native -> Web message (an `emit` timeline entry) is dispatched on window as a
 *     CustomEvent(event, {detail: message}), in order and exactly once, resuming after a
 *     reconnect of the session's event stream (Last-Event-ID);
 *   - a click on a link to today://... becomes webView.navigationAction {url} instead of a
 *     navigation the browser cannot follow.
 * window.todaysimBridge (filled in) also carries `ready`, a Promise settled once the event
 * stream is open, `received`, the native -> Web messages dispatched so far, and `document`,
 * the session's document as the page loaded (`loadId`, `url`, `requestId` of a host reload).
 * What a test driver waits on before its next step (the explorer's "settled"): `inFlight`, the
 * bridge calls posted and not yet answered; `delivered`, the `seq` of the last entry the stream
 * brought (of any kind: every entry up to it has been dispatched); `open`, whether the stream
 * is open now.
 * A page on another origin than the server needs the server started with
 * --allow-origin <the page's origin>.
 *
 * The bridge itself is Web/bridge-core.mjs (installBridge: the same bridge on any EventTarget,
 * for tests without a browser); this file is that core wrapped for pages by Scripts/make-bridge
 * from Web/bridge-page.js: edit those two, then run Scripts/make-bridge (Scripts/test checks
 * that this file is what they make).
 */
(function () {
  "use strict";
  // @todaysim-bridge-core: Scripts/make-bridge puts Web/bridge-core.mjs here.

  var script = document.currentScript;
  var scriptUrl = script && script.src ? new URL(script.src, location.href) : null;
  var preset = window.todaysimBridge || {};
  function setting(name, fallback) {
    if (preset[name] != null && preset[name] !== "") return String(preset[name]);
    var value = scriptUrl && scriptUrl.searchParams.get(name);
    return value != null && value !== "" ? value : fallback;
  }
  var base = setting("base", scriptUrl ? scriptUrl.origin : location.origin).replace(/\/+$/, "");
  var session = setting("session", null);
  if (!session) throw new Error("todaysim bridge: no session (bridge.js?session=ID, or window.todaysimBridge.session)");
  var options = {
    server: base, session: session, accessToken: setting("access_token", setting("token", null)),
    event: setting("event", "todayNativeEvent"),
    // A WebView loads the document again when its host does: so does the page.
    reload: setting("loads", "reload") === "reload" ? function () { location.reload(); } : null,
  };
  var sessionUrl = bridgeSettings(window, options).url("");

  // H2: the injected object exists before the page's scripts read it, so it is read
  // synchronously, once, while the page is still parsing.
  // A page on another origin is refused unless the server grants that origin (--allow-origin):
  // the browser then fails the call with no status, and the page's console says what to do.
  var crossOrigin = new URL(base).origin !== location.origin;
  function refused() {
    var sentence = "todaysim at " + base + " does not allow pages of " + location.origin + " to call it (cross-origin), " +
      "so every bridge call of the page would be refused: start it with --allow-origin " + location.origin +
      " (Scripts/run --allow-origin " + location.origin + ")";
    console.error(sentence);
    return new Error(sentence);
  }
  var request = new XMLHttpRequest();
  request.open("GET", sessionUrl, false);
  try {
    request.send();
  } catch (error) {
    if (crossOrigin) throw refused();
    throw error;
  }
  if (request.status === 0 && crossOrigin) throw refused();
  if (request.status !== 200) {
    throw new Error("todaysim bridge: GET " + sessionUrl.split("?")[0] + " answered " + request.status + ": " + request.responseText);
  }
  attachBridge(window, JSON.parse(request.responseText), options);
})();
