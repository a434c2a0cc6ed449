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
 */
(function () {
  "use strict";
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
  var token = setting("access_token", setting("token", null));
  var eventName = setting("event", "todayNativeEvent");
  var followLoads = setting("loads", "reload") === "reload";
  if (!session) throw new Error("todaysim bridge: no session (bridge.js?session=ID, or window.todaysimBridge.session)");
  var sessionUrl = base + "/v1/sessions/" + encodeURIComponent(session);
  function url(path, query) {
    var parts = [];
    if (query) parts.push(query);
    if (token) parts.push("access_token=" + encodeURIComponent(token));
    return sessionUrl + path + (parts.length ? "?" + parts.join("&") : "");
  }

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
  request.open("GET", url(""), false);
  try {
    request.send();
  } catch (error) {
    if (crossOrigin) throw refused();
    throw error;
  }
  if (request.status === 0 && crossOrigin) throw refused();
  if (request.status !== 200) {
    throw new Error("todaysim bridge: GET " + sessionUrl + " answered " + request.status + ": " + request.responseText);
  }
  var view = JSON.parse(request.responseText);
  window.__todayWebView = view.document.injected;

  var pendingCalls = {};   // nativeDialog callId -> resolve
  var settledCalls = {};   // callId -> value, when the settlement arrived before the answer
  var received = [];
  var lastSeq = view.counts.timeline;
  var delivered = view.counts.timeline;  // the last entry of any kind the stream brought
  var inFlight = 0;                      // bridge calls posted and not yet answered
  var open = false;

  // Web -> native: one call at a time, in call order, as the native bridge takes them.
  var queue = Promise.resolve();
  function emit(type, payload) {
    var message = {};
    var key;
    for (key in payload || {}) message[key] = payload[key];
    message.type = type;
    var isTodayPage = String(type).indexOf("todayPage.") === 0;
    inFlight += 1;
    var call = queue.then(function () {
      return fetch(url("/web-events"), {
        method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(message),
      }).then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error("todaysim bridge: " + type + " answered " + response.status + ": " + (body.detail || ""));
          return body;
        });
      });
    });
    call.then(function () { inFlight -= 1; }, function () { inFlight -= 1; });
    queue = call.catch(function () {});
    return call.then(function (answer) {
      if (isTodayPage) return undefined;
      var resolution = answer.resolution;
      if (resolution && resolution.pending) return settlement(resolution.pending);
      return resolution === null ? undefined : resolution;
    }, function (error) {
      if (isTodayPage) {
        console.warn(String(error));
        return undefined;
      }
      throw error;
    });
  }
  function settlement(callId) {
    if (callId in settledCalls) return Promise.resolve(settledCalls[callId]);
    return new Promise(function (resolve) { pendingCalls[callId] = resolve; });
  }

  // Native -> Web: the session's event stream from the entry the page loaded at on.
  var opened;
  var ready = new Promise(function (resolve) { opened = resolve; });
  var stream = new EventSource(url("/events", "after=" + lastSeq));
  stream.onopen = function () { open = true; opened(); };
  stream.addEventListener("error", function () { open = stream.readyState === EventSource.OPEN; });
  ["input", "bridge", "emit", "navigation", "request", "header", "pull", "overlay", "watchdog", "analytics", "resolution",
   "violation", "verdict"].forEach(function (kind) {
    stream.addEventListener(kind, function (event) {
      var seq = JSON.parse(event.data).seq;
      if (seq > delivered) delivered = seq;
    });
  });
  function entryOf(event) {
    var entry = JSON.parse(event.data);
    if (entry.seq <= lastSeq) return null;  // never twice, whatever a reconnect resends
    lastSeq = entry.seq;
    return entry;
  }
  stream.addEventListener("emit", function (event) {
    var entry = entryOf(event);
    if (!entry) return;
    received.push(entry.data.payload);
    window.dispatchEvent(new CustomEvent(eventName, {detail: entry.data.payload}));
  });
  // The host loaded the document again: so does the page (the new load's view, with the
  // requestId its URL carries, is read when the shim runs again).
  stream.addEventListener("navigation", function (event) {
    var entry = JSON.parse(event.data);
    if (!followLoads || entry.data.loadId <= view.document.loadId) return;
    stream.close();
    location.reload();
  });
  stream.addEventListener("resolution", function (event) {
    var entry = entryOf(event);
    if (!entry) return;
    var callId = entry.data.callId;
    if (pendingCalls[callId]) {
      pendingCalls[callId](entry.data.value);
      delete pendingCalls[callId];
    } else {
      settledCalls[callId] = entry.data.value;
    }
  });

  // today:// links are deeplinks for the native host, not pages the browser can open.
  document.addEventListener("click", function (event) {
    var link = event.target && event.target.closest ? event.target.closest("a[href]") : null;
    if (!link || !/^today:/i.test(link.getAttribute("href"))) return;
    event.preventDefault();
    emit("webView.navigationAction", {url: link.getAttribute("href")});
  }, true);

  window.todayWebViewBridge = {emit: emit};
  window.todaysimBridge = {
    base: base, session: session, event: eventName, ready: ready, received: received, document: view.document,
    close: function () { stream.close(); open = false; },
  };
  Object.defineProperty(window.todaysimBridge, "inFlight", {get: function () { return inFlight; }, enumerable: true});
  Object.defineProperty(window.todaysimBridge, "delivered", {get: function () { return delivered; }, enumerable: true});
  Object.defineProperty(window.todaysimBridge, "open", {get: function () { return open; }, enumerable: true});
})();
