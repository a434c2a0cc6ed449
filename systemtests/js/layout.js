// The dashboard's layout check, evaluated in the page by systemtests/test_dashboard_sizes.py at each
// window size. Returns {problems: [...], rowsInView, rowsInBox, mainShare}.
//
// A panel "clips" when its content is larger than its box and the rest is hidden or spills
// out. Two boxes are meant to scroll (the session list and the timeline); anything else that
// overflows is a problem, main included (it scrolls only as a fallback for windows shorter than
// the ones checked). One-line text cut with an ellipsis is fine only where the whole text is in
// a title (shown on hover) on it or an ancestor; timeline entries also open on a click.
(() => {
  const W = innerWidth, problems = [];
  const name = e => e.id ? "#" + e.id
    : e.tagName.toLowerCase() + (typeof e.className === "string" && e.className.trim() ? "." + e.className.trim().split(/\s+/).join(".") : "");
  // Inside a box that hides or scrolls its overflow, that box is the one judged (below).
  const insideClipping = e => { for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
    if (getComputedStyle(p).overflowX !== "visible") return true; return false; };
  const scrollers = new Set(document.querySelectorAll("#session-list, #timeline-scroll"));
  for (const e of document.querySelectorAll("body *")) {
    if (!e.getClientRects().length || e.closest("script, style, select, input, pre")) continue;
    const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
    if (r.width > 0 && (r.right > W + 1 || r.left < -1) && !insideClipping(e))
      problems.push(`${name(e)} reaches outside the viewport (x ${Math.round(r.left)}..${Math.round(r.right)} of ${W})`);
    const overX = e.scrollWidth > e.clientWidth + 1, overY = e.scrollHeight > e.clientHeight + 1;
    if (!(overX || overY) || (e.clientWidth === 0 && e.clientHeight === 0)) continue;  // inline boxes report 0
    const scrolls = /auto|scroll/.test(cs.overflowX + cs.overflowY);
    if (scrolls && scrollers.has(e)) continue;
    if (overX && !overY && cs.textOverflow === "ellipsis" && e.closest("[title]")?.title) continue;
    problems.push(`${name(e)} ${scrolls ? "scrolls" : "clips"} its content (${e.scrollWidth}x${e.scrollHeight} in ${e.clientWidth}x${e.clientHeight})`);
  }
  if (document.documentElement.scrollWidth > W) problems.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${W} px viewport`);
  // Timeline capacity in rows of its minimum height (grid-auto-rows: minmax(28px, auto)), below
  // the sticky lane titles: the part inside the window as loaded, and the scroll box itself.
  const ROW = 28, sc = document.querySelector("#timeline-scroll"), b = sc.getBoundingClientRect();
  const titles = document.querySelector("#lane-native .ltitle").getBoundingClientRect().height;
  const rowsInView = Math.floor(Math.max(0, Math.min(b.bottom, innerHeight) - Math.max(b.top, 0) - titles) / ROW);
  const rowsInBox = Math.floor((sc.clientHeight - titles) / ROW);
  const mainShare = document.querySelector("main").getBoundingClientRect().width / W;
  return {problems, rowsInView, rowsInBox, mainShare};
})()
