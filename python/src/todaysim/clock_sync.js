/*
 * todaysim's page-clock sync, an init script of python/'s BridgedPage (added after Playwright's
 * page clock and virtual-time.js): a document that loads with the session in its query
 * (`todaysim`, `session`, `access_token`, as BridgedPage.address gives them) sets the page clock
 * to the session's time before any of its scripts run — the session's view read synchronously,
 * as the shim reads it, and the clock set to EPOCH + `clock.nowMs`. So the driver can run the
 * page clock inside the page (settle-wait.js) instead of through page.clock.runFor, which adds
 * an init script to the context on every call to carry its time to the next document: a host
 * reload's document takes the session's time from the session itself. A function of the epoch
 * (page time at session time 0); anything that fails leaves the clock as Playwright set it.
 */
((epoch) => {
  const clock = globalThis.__pwClock, query = new URLSearchParams(location.search);
  const server = query.get("todaysim"), session = query.get("session"), token = query.get("access_token");
  if (!clock || !server || !session) return;
  try {
    const request = new XMLHttpRequest();
    request.open("GET", server.replace(/\/+$/, "") + "/v1/sessions/" + encodeURIComponent(session) +
      (token ? "?access_token=" + encodeURIComponent(token) : ""), false);
    request.send();
    if (request.status !== 200) return;
    clock.controller.setSystemTime(epoch + JSON.parse(request.responseText).clock.nowMs);
  } catch (error) {
    // The clock stays where Playwright's own init scripts put it; the driver's settle sees that.
  }
})
