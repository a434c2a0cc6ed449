/*
 * todaysim bridge core: the simulated native host's bridge, on any window-like EventTarget — a
 * page's window (Web/bridge.js is this file wrapped for pages, by Scripts/make-bridge), the
 * window of jsdom or happy-dom, or a bare `new EventTarget()` in Node >= 20 — so a unit test of a
 * page's bridge hook runs against a real todaysim session:
 *
 *   import {installBridge} from "./bridge-core.mjs";
 *   const target = new EventTarget();
 *   const bridge = await installBridge(target, {server: "http://127.0.0.1:8080", session: id});
 *   target.addEventListener("todayNativeEvent", (event) => { ... event.detail ... });
 *   await target.todayWebViewBridge.emit("todayPage.refreshResult", {...});
 *   bridge.close();
 *
 * It gives `target` what /bridge.js gives a page's window:
 *   - target.__todayWebView: the session's document.injected {platform, surface, capabilities};
 *   - target.todayWebViewBridge.emit(type, payload): posts {type, ...payload} to the session's
 *     /web-events, in call order, and returns a Promise of the bridge call's resolution:
 *     undefined for todayPage.* (never rejected, H21), the host's answer for the others (a
 *     pending nativeDialog.present resolves when the dialog settles); an HTTP failure rejects
 *     only calls that are not todayPage.*;
 *   - every native -> Web message (an `emit` timeline entry) dispatched on `target` as a
 *     CustomEvent(event, {detail: message}), in order and exactly once, resuming after a
 *     reconnect of the session's event stream;
 *   - where `target.document` takes listeners, a click on a link to today://... becomes
 *     webView.navigationAction {url} instead of a navigation nothing can follow;
 *   - target.todaysimBridge: the handle installBridge returns (see attachBridge).
 *
 * The event stream: EventSource where the runtime has one (a browser: it reconnects by itself,
 * sending Last-Event-ID, on no page timer), else a reader of the same stream over fetch (Node 20
 * has fetch and ReadableStream but no EventSource), which reconnects after the server's `retry:`
 * (3 s unless it says) with `?after=` the last id it read: a query parameter, not the
 * Last-Event-ID header, so a page on another origin makes no preflight request for it. Its wait
 * uses the setTimeout of when this module was loaded, so fake timers installed later by a test
 * (Vitest's, Playwright's page clock) neither hold nor count it.
 *
 * ES module and classic script at once: this file has no `import`, and its only exports are the
 * `export function` declarations below, which Scripts/make-bridge turns into local functions of
 * /bridge.js's closure.
 */

const wallSetTimeout = globalThis.setTimeout.bind(globalThis);

// Every kind of timeline entry the stream sends: any of them moves `delivered`.
const ENTRY_KINDS = ["input", "bridge", "emit", "navigation", "request", "header", "pull", "overlay", "watchdog", "analytics",
  "resolution", "violation", "verdict"];

/**
 * Reads the session's view over fetch, then attaches the bridge to `target` (attachBridge).
 * `options`: `server` (the todaysim base URL, required), `session` (required), `accessToken`
 * (for a server started with --token), `event` (default "todayNativeEvent"), `reload`, `fetch`,
 * `stream` (as attachBridge). Rejects with an Error naming the status and the problem when the
 * server refuses the read (an unknown session: 404).
 */
export async function installBridge(target, options) {
  const settings = bridgeSettings(target, options);
  const response = await settings.fetch(settings.url(""), {headers: {Accept: "application/json"}});
  const text = await response.text();
  if (response.status !== 200) {
    throw new Error("todaysim bridge: GET " + settings.sessionUrl + " answered " + response.status + ": " + text);
  }
  return attachBridge(target, JSON.parse(text), options);
}

/**
 * Attaches the bridge to `target` from `view`, the session's view already read (GET
 * /v1/sessions/{id}: /bridge.js reads it synchronously while the page parses, so that
 * __todayWebView is there before the page's scripts run). Returns the handle, also set as
 * `target.todaysimBridge`: `base`, `session`, `event`, `ready` (a Promise settled once the
 * event stream is open), `received` (the native -> Web messages dispatched so far), `document`
 * (the session's document as loaded: `loadId`, `url`, `requestId` of a host reload), `close()`
 * (ends the stream), and what a test driver waits on before its next step: `inFlight` (bridge
 * calls posted and not yet answered), `delivered` (the `seq` of the last entry the stream
 * brought, of any kind), `open` (whether the stream is open now).
 * Further options: `reload`, a function called (after the stream is closed) when the host loads
 * the document again (a recovery reload, a termination, an account switch): /bridge.js reloads
 * the page there; without it nothing follows the host's reload. `fetch`: the fetch to use
 * (default: the global one, looked up at each call). `stream`: "eventsource" or "fetch" (default:
 * EventSource where the runtime has one, else fetch).
 */
export function attachBridge(target, view, options) {
  const settings = bridgeSettings(target, options);
  if (!view || !view.document || !view.counts) throw new TypeError("todaysim bridge: the session view has no document or counts");
  const url = settings.url;
  target.__todayWebView = view.document.injected;

  const pendingCalls = {};   // nativeDialog callId -> resolve
  const settledCalls = {};   // callId -> value, when the settlement arrived before the answer
  const received = [];
  let lastSeq = view.counts.timeline;
  let delivered = view.counts.timeline;  // the last entry of any kind the stream brought
  let inFlight = 0;                      // bridge calls posted and not yet answered
  let open = false;

  // Web -> native: one call at a time, in call order, as the native bridge takes them.
  let queue = Promise.resolve();
  function emit(type, payload) {
    const message = {};
    for (const key in payload || {}) message[key] = payload[key];
    message.type = type;
    const isTodayPage = String(type).indexOf("todayPage.") === 0;
    inFlight += 1;
    const call = queue.then(function () {
      return settings.fetch(url("/web-events"), {
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
      const resolution = answer.resolution;
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
  let opened;
  const ready = new Promise(function (resolve) { opened = resolve; });
  const EventType = target.CustomEvent || globalThis.CustomEvent;
  function entryOf(data) {
    const entry = JSON.parse(data);
    if (entry.seq <= lastSeq) return null;  // never twice, whatever a reconnect resends
    lastSeq = entry.seq;
    return entry;
  }
  const handlers = {
    emit: function (data) {
      const entry = entryOf(data);
      if (!entry) return;
      received.push(entry.data.payload);
      target.dispatchEvent(new EventType(settings.event, {detail: entry.data.payload}));
    },
    // The host loaded the document again: so does the page (the new load's view, with the
    // requestId its URL carries, is read when the shim runs again).
    navigation: function (data) {
      const entry = JSON.parse(data);
      if (!settings.reload || entry.data.loadId <= view.document.loadId) return;
      stream.close();
      open = false;
      settings.reload();
    },
    resolution: function (data) {
      const entry = entryOf(data);
      if (!entry) return;
      const callId = entry.data.callId;
      if (pendingCalls[callId]) {
        pendingCalls[callId](entry.data.value);
        delete pendingCalls[callId];
      } else {
        settledCalls[callId] = entry.data.value;
      }
    },
  };
  const openStream = settings.stream === "fetch" ? fetchEventStream : eventSourceStream;
  const stream = openStream(url, "after=" + lastSeq, settings.fetch, {
    open: function () { open = true; opened(); },
    state: function (isOpen) { open = isOpen; },
    entry: function (kind, data) {
      const seq = JSON.parse(data).seq;
      if (seq > delivered) delivered = seq;
      if (handlers[kind]) handlers[kind](data);
    },
  });

  // today:// links are deeplinks for the native host, not pages the browser can open.
  const document = target.document;
  if (document && typeof document.addEventListener === "function") {
    document.addEventListener("click", function (event) {
      const link = event.target && event.target.closest ? event.target.closest("a[href]") : null;
      if (!link || !/^today:/i.test(link.getAttribute("href"))) return;
      event.preventDefault();
      emit("webView.navigationAction", {url: link.getAttribute("href")});
    }, true);
  }

  target.todayWebViewBridge = {emit: emit};
  const handle = {
    base: settings.base, session: settings.session, event: settings.event, ready: ready, received: received, document: view.document,
    close: function () { stream.close(); open = false; },
  };
  Object.defineProperty(handle, "inFlight", {get: function () { return inFlight; }, enumerable: true});
  Object.defineProperty(handle, "delivered", {get: function () { return delivered; }, enumerable: true});
  Object.defineProperty(handle, "open", {get: function () { return open; }, enumerable: true});
  target.todaysimBridge = handle;
  return handle;
}

// The options checked, with what both entry points derive from them.
function bridgeSettings(target, options) {
  if (!target || typeof target.addEventListener !== "function" || typeof target.dispatchEvent !== "function") {
    throw new TypeError("todaysim bridge: the target must be an EventTarget (a window, or new EventTarget())");
  }
  options = options || {};
  if (typeof options.session !== "string" || options.session === "") {
    throw new TypeError("todaysim bridge: no session (options.session: the session id)");
  }
  let base;
  try {
    base = new URL(String(options.server)).href.replace(/\/+$/, "");
  } catch (error) {
    throw new TypeError("todaysim bridge: options.server must be the todaysim server's absolute URL, not " + JSON.stringify(options.server));
  }
  if (options.reload != null && typeof options.reload !== "function") throw new TypeError("todaysim bridge: options.reload must be a function");
  if (options.stream != null && options.stream !== "fetch" && options.stream !== "eventsource") {
    throw new TypeError("todaysim bridge: options.stream must be \"fetch\" or \"eventsource\", not " + JSON.stringify(options.stream));
  }
  const token = options.accessToken || null;
  const sessionUrl = base + "/v1/sessions/" + encodeURIComponent(options.session);
  const fetchCall = options.fetch || function (input, init) { return globalThis.fetch(input, init); };
  return {
    base: base, session: options.session, sessionUrl: sessionUrl, event: options.event || "todayNativeEvent",
    reload: options.reload || null, fetch: fetchCall,
    stream: options.stream || (typeof globalThis.EventSource === "function" ? "eventsource" : "fetch"),
    url: function (path, query) {
      const parts = [];
      if (query) parts.push(query);
      if (token) parts.push("access_token=" + encodeURIComponent(token));
      return sessionUrl + path + (parts.length ? "?" + parts.join("&") : "");
    },
  };
}

// The stream through the browser's EventSource; `on`: open(), state(isOpen), entry(kind, data).
function eventSourceStream(url, query, fetchCall, on) {
  const source = new EventSource(url("/events", query));
  source.onopen = on.open;
  source.addEventListener("error", function () { on.state(source.readyState === EventSource.OPEN); });
  ENTRY_KINDS.forEach(function (kind) {
    source.addEventListener(kind, function (event) { on.entry(kind, event.data); });
  });
  return {close: function () { source.close(); }};
}

// The same stream read over fetch, as EventSource reads it (the WHATWG event stream format):
// reconnects when the stream ends or the connection fails, gives up on a status other than 200
// or a body that is not an event stream, as EventSource does.
function fetchEventStream(url, query, fetchCall, on) {
  let closed = false;
  let controller = null;
  let lastId = null;
  let retryMs = 3000;
  async function run() {
    while (!closed) {
      controller = new AbortController();
      let response = null;
      try {
        response = await fetchCall(url("/events", lastId === null ? query : "after=" + encodeURIComponent(lastId)),
          {headers: {Accept: "text/event-stream"}, cache: "no-store", signal: controller.signal});
        const type = response.headers.get("Content-Type") || "";
        if (response.status !== 200 || type.split(";")[0].trim() !== "text/event-stream" || !response.body) {
          console.error("todaysim bridge: the event stream answered " + response.status + " (" + type + "): not following it");
          closed = true;
          if (response.body) response.body.cancel().catch(function () {});
          on.state(false);
          return;
        }
        on.open();
        await read(response.body);
      } catch (error) {
        if (closed) return;
      }
      if (closed) return;
      on.state(false);
      await new Promise(function (resolve) { wallSetTimeout(resolve, retryMs); });
    }
  }
  async function read(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let kind = "";
    let data = [];
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, {stream: true});
      let end;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A CR at the end of the buffer may be half of a CRLF: wait for the next byte.
        if (buffer[end] === "\r" && end === buffer.length - 1) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (closed) return;
        if (line === "") {
          // An entry the bridge reads; a listener's error is the console's, as under EventSource,
          // and the stream goes on.
          if (data.length && ENTRY_KINDS.indexOf(kind) >= 0) {
            try { on.entry(kind, data.join("\n")); } catch (error) { console.error(error); }
          }
          kind = "";
          data = [];
          continue;
        }
        if (line[0] === ":") continue;  // a comment: the server's heartbeat
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value[0] === " ") value = value.slice(1);
        if (field === "event") kind = value;
        else if (field === "data") data.push(value);
        else if (field === "id" && value.indexOf("\u0000") < 0) lastId = value;
        else if (field === "retry" && /^[0-9]+$/.test(value)) retryMs = Number(value);
      }
    }
  }
  run();
  return {close: function () { closed = true; if (controller) controller.abort(); }};
}
