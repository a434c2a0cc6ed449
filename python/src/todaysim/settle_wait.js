/*
 * todaysim's settling wait, for python/'s BridgedPage on Chromium (a CDP Runtime.evaluate that
 * awaits it): one trip to the page where a driver polling from outside makes a look per poll.
 * A function of (look, runTo, expect, closed, ms):
 *   look    a function returning settle-probe.js's look;
 *   runTo   null, or the page-clock time (epoch ms) to run Playwright's page clock to first (its
 *           due timers fire on the way, as page.clock.runFor fires them);
 *   expect  the session's timeline count the page must have had delivered (0: none asked);
 *   closed  whether the session is closed (its stream ends: nothing more is delivered);
 *   ms      the longest wait, in wall milliseconds.
 * It fires a page timer due now (a zero-length clock run, as the driver would), and polls the
 * look (every millisecond or so, on the page's real timers, which the page clock does not hold)
 * until the page is quiet — the shim has its document, no bridge call in flight, its stream
 * open, every entry up to `expect` delivered, no request its scripts opened, no timer due now —
 * or `ms` have passed; its value is the last look. It decides nothing: the driver still reads
 * the session's view and looks again (BridgedPage.settle).
 */
(async (look, runTo, expect, closed, ms) => {
  const clock = globalThis.__pwClock;
  if (!clock || !clock.builtins) return look();  // no page clock of Playwright's: the driver polls
  const real = clock.builtins, started = real.performance.now();
  if (runTo !== null && runTo > Date.now()) await clock.controller.runFor(runTo - Date.now());
  // A pause of about a millisecond that no page clock holds; scheduled from a message, not from
  // a timer, so Chromium's 4 ms clamp of nested timers never applies.
  const channel = new MessageChannel();
  const pause = () => new Promise((resolve) => {
    channel.port1.onmessage = () => real.setTimeout(resolve, 1);
    channel.port2.postMessage(0);
  });
  for (;;) {
    const seen = look(), timers = seen.timers, late = real.performance.now() - started >= ms;
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
})
