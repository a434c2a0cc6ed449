/*
 * todaysim's page driver: the in-page half of both languages' BridgedPage (python/'s
 * todaysim.page, typescript/'s todaysim/playwright), an init script added once a context after
 * virtual-time.js. A function of (epoch, probe): `epoch`, the page time at session time 0;
 * `probe`, a function returning settle-probe.js's look. Each BridgedPage adds exactly
 *   virtual-time.js, then `(page-driver.js)(EPOCH_MS, () => settle-probe.js)`
 * and is left with the session's side (its inputs and reads, over HTTP) and the loop that joins
 * the two. python/'s todaysim/page_driver.js links here; the wheel and the npm package carry copies.
 * In every document it loads:
 *
 * - the clock sync: a document with the session in its query (`todaysim`, `session`,
 *   `access_token`, as BridgedPage.address gives them) sets the virtual clock to the session's
 *   time before any of its scripts run (the session's view read synchronously, as the shim reads
 *   it; the clock set to epoch + `clock.nowMs`): a host reload's document takes the session's
 *   time from the session itself. Anything that fails leaves the clock at the time it loaded at;
 *   the driver's settle sees that.
 * - `__todaysimDriver.look()`: the probe's look, with `started` (requests this document's
 *   scripts have started, fetch and XHR) and `doc` (this document, a token of its own).
 * - `__todaysimDriver.wait(runTo, expect, closed, ms)`: one trip to the page where polling
 *   from outside makes a trip per look. It runs the clock to `runTo` first (epoch ms, or null;
 *   due timers fire on the way), fires what is due now, and polls the look (every millisecond
 *   or so, on the browser's own timers) until the page is quiet — the shim has its document, no
 *   bridge call in flight, its stream open, every entry up to `expect` (a timeline count)
 *   delivered unless the session is `closed`, no request its scripts opened, nothing due now —
 *   or `ms` wall milliseconds have passed; its value is the last look. It decides nothing: the
 *   driver reads the session's view and looks again (BridgedPage.settle).
 * - `__todaysimDriver.advance(now, target, watchdogs)`: the timer merge of a clock move, one
 *   stop of it. From session time `now` towards `target`, given the session's timers' due times
 *   (`watchdogs`, session ms), the next stop is the earliest due time of either clock within
 *   (now, target], else the target; its value is {at, session, page} (which side has something
 *   due there). The side with nothing due there moves first, so the page clock is run here
 *   (firing nothing: nothing of the page's is due before `at`) to `at` when only the session acts
 *   or neither does, to `at - 1` when both act (the session's timers act first at one
 *   millisecond, the page's right after), and not at all when only the page acts: the session's
 *   clock goes first and the page's runs in the settle's wait. BridgedPage then moves the
 *   session's clock to `at` and settles (with the page clock's run to `at`, where it is left).
 */
((epoch, probe) => {
  const clock = window.__todaysimClock;
  if (!clock || window.__todaysimDriver) return;
  const query = new URLSearchParams(location.search);
  const server = query.get("todaysim"), session = query.get("session"), token = query.get("access_token");
  if (server && session) {
    try {
      const request = new XMLHttpRequest();
      request.open("GET", server.replace(/\/+$/, "") + "/v1/sessions/" + encodeURIComponent(session) +
        (token ? "?access_token=" + encodeURIComponent(token) : ""), false);
      request.send();
      if (request.status === 200) clock.set(epoch + JSON.parse(request.responseText).clock.nowMs);
    } catch (error) {
      // The clock stays where the document loaded; the driver's settle sees that.
    }
  }

  const doc = Math.random().toString(36).slice(2);
  const look = () => Object.assign(probe(), {started: clock.started(), doc});
  const dueNow = (seen) => seen.timers !== null && seen.timers.next !== null && seen.timers.next <= seen.timers.now;
  const quiet = (seen, expect, closed) => seen.bridge && seen.inFlight === 0 && seen.delivered !== null &&
    !seen.requests && (closed || (seen.open && seen.delivered >= expect));

  // A pause of about a millisecond on the browser's own timers; scheduled from a message, not
  // from a timer, so Chromium's 4 ms clamp of nested timers never applies.
  const channel = new clock.real.MessageChannel();
  const pause = () => new Promise((resolve) => {
    channel.port1.onmessage = () => clock.real.setTimeout(resolve, 1);
    channel.port2.postMessage(0);
  });

  window.__todaysimDriver = {
    look,
    async advance(now, target, watchdogs) {
      const within = (at) => now < at && at <= target;
      const session = Math.min(...watchdogs.filter(within)), next = clock.next();
      const page = next !== null && within(next - epoch) ? next - epoch : Infinity;
      const at = Math.min(session, page, target);
      const stop = {at, session: session === at, page: page === at};
      const first = stop.page ? (stop.session ? at - 1 : null) : at;
      if (first !== null && epoch + first > clock.now()) await clock.runTo(epoch + first);
      return stop;
    },
    async wait(runTo, expect, closed, ms) {
      const until = clock.real.now() + ms;
      if (runTo !== null) await clock.runTo(runTo, until);
      for (;;) {
        const seen = look(), late = clock.real.now() >= until;
        if (!late && dueNow(seen)) {
          await clock.runTo(seen.timers.now, until);
          continue;
        }
        if (late || quiet(seen, expect, closed)) return seen;
        await pause();
      }
    },
  };
})
