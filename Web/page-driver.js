/*
 * todaysim's page driver, an init script of python/'s BridgedPage on Chromium (added once a
 * context, after Playwright's page clock and virtual-time.js). One file: python/'s
 * todaysim/page_driver.js links here, the wheel carries a copy. A function of (epoch, probe):
 * `epoch`, the page time at session time 0; `probe`, a function returning settle-probe.js's look.
 * In every document it loads:
 *
 * - the clock sync: a document with the session in its query (`todaysim`, `session`,
 *   `access_token`, as BridgedPage.address gives them) sets the page clock to the session's time
 *   before any of its scripts run (the session's view read synchronously, as the shim reads it;
 *   the clock set to epoch + `clock.nowMs`). So the driver runs the page clock inside the page
 *   instead of through page.clock.runFor, which adds an init script to the context on every call
 *   to carry its time to the next document: a host reload's document takes the session's time
 *   from the session itself. Anything that fails leaves the clock as Playwright set it;
 * - `__todaysimLook()`: the probe's look, with `started` (requests this document's scripts have
 *   started, fetch and XHR) and `doc` (this document, a token of its own);
 * - `__todaysimWait(runTo, expect, closed, ms)`: one trip to the page where polling from outside
 *   makes a look per poll. It runs Playwright's page clock to `runTo` first (epoch ms, or null;
 *   due timers fire on the way, as page.clock.runFor fires them), fires a timer due now (a
 *   zero-length run, as the driver would) and polls the look (every millisecond or so, on the
 *   page's real timers, which the page clock does not hold) until the page is quiet — the shim has
 *   its document, no bridge call in flight, its stream open, every entry up to `expect` (a
 *   timeline count) delivered unless the session is `closed`, no request its scripts opened, no
 *   timer due now — or `ms` wall milliseconds have passed; its value is the last look. It decides
 *   nothing: the driver reads the session's view and looks again (BridgedPage.settle).
 */
((epoch, probe) => {
  const clock = globalThis.__pwClock;
  if (!clock || window.__todaysimLook) return;
  const query = new URLSearchParams(location.search);
  const server = query.get("todaysim"), session = query.get("session"), token = query.get("access_token");
  if (server && session) {
    try {
      const request = new XMLHttpRequest();
      request.open("GET", server.replace(/\/+$/, "") + "/v1/sessions/" + encodeURIComponent(session) +
        (token ? "?access_token=" + encodeURIComponent(token) : ""), false);
      request.send();
      if (request.status === 200) clock.controller.setSystemTime(epoch + JSON.parse(request.responseText).clock.nowMs);
    } catch (error) {
      // The clock stays where Playwright's own init scripts put it; the driver's settle sees that.
    }
  }

  let started = 0;
  const f = window.fetch, send = XMLHttpRequest.prototype.send;
  if (f) window.fetch = function (...args) { started += 1; return f.apply(this, args); };
  XMLHttpRequest.prototype.send = function (...args) { started += 1; return send.apply(this, args); };
  const doc = Math.random().toString(36).slice(2);
  const look = () => Object.assign(probe(), {started, doc});
  window.__todaysimLook = look;

  const real = clock.builtins;
  window.__todaysimWait = async (runTo, expect, closed, ms) => {
    const begun = real.performance.now();
    if (runTo !== null && runTo > Date.now()) await clock.controller.runFor(runTo - Date.now());
    // A pause of about a millisecond that no page clock holds; scheduled from a message, not from
    // a timer, so Chromium's 4 ms clamp of nested timers never applies.
    const channel = new MessageChannel();
    const pause = () => new Promise((resolve) => {
      channel.port1.onmessage = () => real.setTimeout(resolve, 1);
      channel.port2.postMessage(0);
    });
    for (;;) {
      const seen = look(), timers = seen.timers, late = real.performance.now() - begun >= ms;
      if (!late && timers && timers.next !== null && timers.next <= timers.now) {
        await clock.controller.runFor(0);
        continue;
      }
      const quiet = seen.bridge && seen.inFlight === 0 && seen.delivered !== null && !seen.requests &&
        (closed || (seen.open && seen.delivered >= expect));
      if (quiet || late) {
        channel.port1.close();
        return seen;
      }
      await pause();
    }
  };
})
