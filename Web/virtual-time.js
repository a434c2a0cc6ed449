/*
 * todaysim's virtual clock, an init script of both languages' BridgedPage (before
 * page-driver.js): the page's time is a number this script owns, paused, and moved only by its
 * driver. It replaces Date (a Date made with no argument, Date.now(), Date()), performance.now(),
 * setTimeout/setInterval and their clears, requestAnimationFrame and requestIdleCallback (and
 * their cancels) for every script of the document, and counts the requests those scripts have
 * open (fetch until it settles, XHR until loadend). Playwright's own page clock is not used: it
 * has no public way to list pending timers, and moving it from outside costs a trip per move.
 *
 * The driver reads and moves it through `window.__todaysimClock`:
 *   set(t)            the time, epoch ms (the driver sets the session's time as a document loads)
 *   now(), next()     the time; the earliest due time (or null)
 *   runTo(t, until)   a promise: fires every timer due up to `t` in due order, each in a task of
 *                     its own (the page's microtasks run between them, as in a browser), the clock
 *                     reading each timer's due time as it fires, then stands at `t`; it stops early
 *                     (false) when the real clock passes `until` (performance ms; a page that never
 *                     stops working), else true
 *   started()         how many requests the document's scripts have started
 *   real              the browser's own setTimeout, performance.now and MessageChannel
 * and `window.__todaysimTimers()` -> {now, next, count}, `window.__todaysimRequests()` -> open
 * requests, as settle-probe.js reads them.
 *
 * Frames: a requestAnimationFrame asked for when no frame has run at the current time is due
 * now (a render gated on it happens in the driver's next settle, with no clock move); one asked
 * for from a frame at this time is due 16 ms later (an animation advances as the clock moves).
 * Idle callbacks are due now. Timers nest as Chromium's: a timer set by the fifth timer of a
 * chain (or a later one) waits at least 4 ms, so a chain of zero-delay timers advances the clock
 * instead of holding it.
 * A document without the session in its query keeps the time it loaded at (an iframe takes its
 * same-origin parent's), paused.
 * One file for both packages: python/'s todaysim/virtual_time.js links here, the TypeScript
 * package ships it as dist/virtual-time.js.
 */
(() => {
  if (window.__todaysimClock) return;
  const RealDate = Date, realNow = RealDate.now, realPerformance = performance.now.bind(performance);
  const real = {setTimeout: window.setTimeout.bind(window), now: realPerformance, MessageChannel: window.MessageChannel};
  let now = realNow();
  try {
    const parent = window.parent !== window && window.parent.__todaysimClock;
    if (parent) now = parent.now();
  } catch (error) {
    // another origin's frame: this document keeps its own time
  }
  let origin = now, performanceOrigin = realPerformance();

  // Pending callbacks: key ("t" timers, "r" frames, "i" idle callbacks, + id) -> due time, order.
  const pending = new Map();
  let ids = 0, order = 0, depth = 0, frame = null;
  const run = (fn, args) => (typeof fn === "function" ? fn.apply(window, args) : (0, eval)(String(fn)));
  const delayOf = (ms) => {
    const given = Math.max(0, Math.trunc(Number(ms)) || 0);
    const delay = given > 2147483647 ? 1 : given;
    return depth >= 5 ? Math.max(4, delay) : delay;
  };
  const add = (kind, at, call, every) => {
    const id = ++ids;
    pending.set(kind + id, {kind, id, at, order: ++order, call, every, depth: depth + 1});
    return id;
  };

  function VirtualDate(...args) {
    if (!new.target) return new RealDate(now).toString();
    return args.length ? new RealDate(...args) : new RealDate(now);
  }
  Object.defineProperty(VirtualDate, "name", {value: "Date"});
  Object.defineProperty(VirtualDate, "length", {value: 7});
  VirtualDate.prototype = RealDate.prototype;
  RealDate.prototype.constructor = VirtualDate;
  VirtualDate.now = () => now;
  VirtualDate.parse = RealDate.parse;
  VirtualDate.UTC = RealDate.UTC;
  window.Date = VirtualDate;
  performance.now = () => performanceOrigin + (now - origin);

  window.setTimeout = function (fn, ms, ...args) {
    return add("t", now + delayOf(ms), () => run(fn, args), null);
  };
  window.setInterval = function (fn, ms, ...args) {
    const every = Math.max(1, delayOf(ms));
    return add("t", now + every, () => run(fn, args), every);
  };
  window.clearTimeout = window.clearInterval = function (id) { pending.delete("t" + id); };
  window.requestAnimationFrame = function (fn) {
    return add("r", frame === now ? now + 16 : now, (at) => fn(performanceOrigin + (at - origin)), null);
  };
  window.cancelAnimationFrame = function (id) { pending.delete("r" + id); };
  window.requestIdleCallback = function (fn) {
    return add("i", now, () => fn({didTimeout: false, timeRemaining: () => 50}), null);
  };
  window.cancelIdleCallback = function (id) { pending.delete("i" + id); };

  const earliest = () => {
    let first = null;
    for (const timer of pending.values()) {
      if (first === null || timer.at < first.at || (timer.at === first.at && timer.order < first.order)) first = timer;
    }
    return first;
  };
  // Fires the earliest callback due by `turn.to` (every frame callback of that frame together),
  // in this task; `turn.fired` says whether one was due.
  const fire = (turn) => {
    const first = earliest();
    if (first === null || first.at > turn.to) return;
    turn.fired = true;
    now = first.at;
    const due = first.kind === "r" ? [...pending.values()].filter((t) => t.kind === "r" && t.at === first.at) : [first];
    if (first.kind === "r") frame = now;
    for (const timer of due) {
      if (timer.every === null) pending.delete(timer.kind + timer.id);
      else Object.assign(timer, {at: timer.at + timer.every, order: ++order});
    }
    for (const timer of due) {
      depth = timer.depth;
      try {
        timer.call(now);
      } catch (error) {
        real.setTimeout(() => { throw error; });  // the page's uncaught error, in a task of its own
      } finally {
        depth = 0;
      }
    }
  };

  // Each firing is a task of its own, after the microtasks of the one before.
  const channel = new real.MessageChannel();
  let turn = null;
  channel.port1.onmessage = () => {
    const done = turn;
    turn = null;
    if (done === null) return;
    fire(done);
    done.resolve();
  };
  window.__todaysimClock = {
    real,
    now: () => now,
    set(time) {
      origin += time - now;
      now = time;
    },
    next: () => {
      const first = earliest();
      return first === null ? null : first.at;
    },
    async runTo(to, until) {
      for (;;) {
        if (until !== undefined && real.now() > until) return false;
        const asked = {to, resolve: null, fired: false};
        await new Promise((resolve) => {
          asked.resolve = resolve;
          turn = asked;
          channel.port2.postMessage(0);
        });
        if (!asked.fired) break;
      }
      if (to > now) now = to;
      return true;
    },
  };

  // Requests the page's scripts have started and have open (fetch until it settles, XHR until
  // loadend): seen here at once, where a driver outside hears of them a moment later.
  let open = 0, started = 0;
  const f = window.fetch, send = XMLHttpRequest.prototype.send;
  if (f) {
    window.fetch = function (...args) {
      open += 1;
      started += 1;
      const done = () => { open -= 1; };
      const call = f.apply(this, args);
      call.then(done, done);
      return call;
    };
  }
  XMLHttpRequest.prototype.send = function (...args) {
    open += 1;
    started += 1;
    this.addEventListener("loadend", () => { open -= 1; }, {once: true});
    try { return send.apply(this, args); } catch (e) { open -= 1; throw e; }
  };
  window.__todaysimClock.started = () => started;
  window.__todaysimRequests = () => open;
  window.__todaysimTimers = () => {
    const first = earliest();
    return {now, next: first === null ? null : first.at, count: pending.size};
  };
})();
