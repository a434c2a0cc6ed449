/*
 * todaysim's page timer tracker, for a page whose clock a test owns (Playwright's page clock,
 * paused before the page loads at the session's time): Playwright cannot list a page's pending
 * timers, so this init script, added after the clock's own, records the due time of every
 * setTimeout, setInterval and requestAnimationFrame, and counts the requests the page's scripts
 * have open (fetch until it settles, XHR until loadend). A driver reads
 *   window.__todaysimTimers()   -> {now, next, count}: the page clock, the earliest due time, how many
 *   window.__todaysimRequests() -> the requests open
 * to step both clocks through the merged due times and to know when the page is settled.
 * One file for every driver: python/'s BridgedPage (todaysim/virtual_time.js links here) and
 * the TypeScript Playwright helper read it as it is.
 */
(() => {
  if (window.__todaysimTimers) return;
  const pending = new Map();  // key -> due time (page clock, ms)
  const st = window.setTimeout, ct = window.clearTimeout, si = window.setInterval, ci = window.clearInterval;
  const raf = window.requestAnimationFrame, caf = window.cancelAnimationFrame;
  const run = (fn, args) => (typeof fn === "function" ? fn.apply(window, args) : (0, eval)(String(fn)));
  window.setTimeout = function (fn, ms, ...args) {
    const at = Date.now() + Math.max(0, Number(ms) || 0);
    const id = st.call(window, () => { pending.delete("t" + id); return run(fn, args); }, ms);
    pending.set("t" + id, at);
    return id;
  };
  window.clearTimeout = function (id) { pending.delete("t" + id); return ct.call(window, id); };
  window.setInterval = function (fn, ms, ...args) {
    const every = Math.max(0, Number(ms) || 0);
    const id = si.call(window, () => { pending.set("t" + id, Date.now() + every); return run(fn, args); }, ms);
    pending.set("t" + id, Date.now() + every);
    return id;
  };
  window.clearInterval = function (id) { pending.delete("t" + id); return ci.call(window, id); };
  if (raf) {
    window.requestAnimationFrame = function (fn) {
      const id = raf.call(window, (t) => { pending.delete("r" + id); return fn(t); });
      pending.set("r" + id, Date.now() + 16);
      return id;
    };
    window.cancelAnimationFrame = function (id) { pending.delete("r" + id); return caf.call(window, id); };
  }
  // Requests the page's scripts have open (fetch until it settles, XHR until loadend): seen
  // here at once, where Playwright's request events reach Python a moment later.
  let requests = 0;
  const f = window.fetch, send = XMLHttpRequest.prototype.send;
  if (f) {
    window.fetch = function (...args) {
      requests += 1;
      const done = () => { requests -= 1; };
      const call = f.apply(this, args);
      call.then(done, done);
      return call;
    };
  }
  XMLHttpRequest.prototype.send = function (...args) {
    requests += 1;
    this.addEventListener("loadend", () => { requests -= 1; }, {once: true});
    try { return send.apply(this, args); } catch (e) { requests -= 1; throw e; }
  };
  window.__todaysimRequests = () => requests;
  window.__todaysimTimers = () => {
    let next = null;
    for (const at of pending.values()) if (next === null || at < next) next = at;
    return {now: Date.now(), next, count: pending.size};
  };
})();
