/*
 * todaysim's settling look: what a page on a test's clock says about settling, in one trip to
 * the page (an expression; its value is the look). `bridge` (the shim has the page's document),
 * `inFlight` (bridge calls unanswered), `delivered` (timeline entries the page has had), `open`
 * (its event stream), `loadId` (the page's load as the shim knows it), `timers` (virtual-time.js's
 * {now, next, count}, or null), `ready` (document.readyState) and `requests` (what the page's
 * scripts have open, virtual-time.js's count). A driver looks twice around a read of the
 * session's view and calls the page settled when both looks agree and are quiet.
 * One file for every driver: python/'s BridgedPage reads it (todaysim/settle_probe.js links here).
 */
(() => {
  const b = window.todaysimBridge, t = window.__todaysimTimers ? window.__todaysimTimers() : null;
  return {bridge: !!(b && b.document), inFlight: b ? b.inFlight : null, delivered: b ? b.delivered : null,
          open: b ? b.open : false, loadId: b && b.document ? b.document.loadId : null,
          timers: t, ready: document.readyState, requests: window.__todaysimRequests ? window.__todaysimRequests() : 0};
})()
