// The dashboard's DOM as facts, for systemtests/test_dashboard_session.py to hold against the
// session view: the session list, the state cards, the watchdogs, every timeline entry by lane,
// the violations. Texts are textContent with runs of white space made one space.
() => {
  const one = (s) => s.replace(/\s+/g, " ").trim();
  const byId = (id) => document.getElementById(id);
  const under = (id, selector) => { const root = byId(id); return root ? [...root.querySelectorAll(selector)] : []; };
  const texts = {};
  for (const key of ["header-state", "pull-state", "overlay-state", "document-state", "clock-now", "session-id", "live"])
    if (byId(key)) texts[key] = one(byId(key).textContent);
  return {
    rows: under("session-list", "[data-session-id]").map((row) =>
      ({id: row.dataset.sessionId, status: row.dataset.status || "", selected: row.classList.contains("sel")})),
    texts,
    clockMs: byId("clock-now")?.dataset.ms ?? null,
    violationCount: byId("violation-count")?.dataset.count ?? null,
    watchdogs: under("watchdogs", "[data-kind]").map((w) => ({
      kind: w.dataset.kind, due: w.dataset.dueMs ?? "",
      requests: (w.matches("[data-requests]") ? w : w.querySelector("[data-requests]"))?.dataset.requests ?? null,
      text: one(w.textContent)})),
    entries: ["native", "web", "timers"].flatMap((lane) => under("lane-" + lane, "[data-seq]").map((e) =>
      ({lane, seq: Number(e.dataset.seq), kind: e.dataset.kind || "", type: e.dataset.type || ""}))),
    violations: [...document.querySelectorAll(".violation")].map((v) => ({seq: v.dataset.seq ?? "", text: one(v.textContent)})),
  };
}
