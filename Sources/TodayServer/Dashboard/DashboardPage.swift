/// The built-in dashboard served at `GET /`: one self-contained HTML document (inline CSS and
/// JS, system fonts, no external resources, works offline). It lists sessions (filtered by uid,
/// label and status), shows one session's header, pull and overlay states, its pending
/// watchdogs on the session clock, and its timeline as three lanes (native, Web, timers) fed
/// live by `GET /v1/sessions/{id}/events`, with violations marked; buttons inject the common
/// inputs. A session opens by click or by the URL hash `#session=<id>`.
enum DashboardPage {
    static let html: String = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>todaysim dashboard</title>
<link rel="icon" href="data:,">
<style>
:root{--bg:#f4f5f7;--panel:#fff;--line:#e2e5ea;--text:#1b2230;--muted:#6a7282;
 --native:#2563eb;--web:#7c3aed;--timers:#d97706;--bad:#d92d20;--ok:#15803d;
 --mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace}
*{box-sizing:border-box}
html,body{margin:0;height:100%}
body{font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--text);
 background:var(--bg);display:grid;grid-template-columns:300px minmax(0,1fr);grid-template-rows:46px minmax(0,1fr);height:100vh}
.top{grid-column:1/3;background:#151a24;color:#e8ebf0;display:flex;align-items:center;gap:14px;padding:0 18px}
.top b{font-size:15px;letter-spacing:.2px}.top .sub{color:#8e97a8}.top .sp{flex:1}
.mono{font-family:var(--mono);font-size:12px}
aside{background:var(--panel);border-right:1px solid var(--line);display:flex;flex-direction:column;min-height:0}
.filters{padding:12px;border-bottom:1px solid var(--line);display:grid;grid-template-columns:1fr 1fr;gap:8px}
.filters label{display:flex;flex-direction:column;gap:3px;font-size:11px;color:var(--muted);text-transform:uppercase;letter-spacing:.4px}
.filters .wide{grid-column:1/3}
input,select,button{font:inherit;color:inherit}
input,select{border:1px solid #cfd4dc;border-radius:6px;padding:5px 8px;background:#fff;min-width:0;width:100%}
#session-list{list-style:none;margin:0;padding:6px;overflow:auto;flex:1}
.srow{padding:8px 10px;border-radius:8px;cursor:pointer;border:1px solid transparent;margin-bottom:2px}
.srow:hover{background:#f3f5f9}.srow.sel{background:#eaf1ff;border-color:#bcd0fb}
.srow .l1{display:flex;align-items:center;gap:6px}.srow .sid{font-weight:600;flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.srow .l2{color:var(--muted);font-size:12px;margin-top:2px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.listfoot{padding:8px 12px;border-top:1px solid var(--line);color:var(--muted);font-size:12px;display:flex;justify-content:space-between}
main{min-height:0;display:flex;flex-direction:column;padding:14px 16px;gap:12px;overflow:hidden}
.empty{margin:auto;color:var(--muted);font-size:15px;text-align:center}
.card{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.hrow{display:flex;align-items:center;gap:10px;flex-wrap:wrap}
.head h1{font-size:19px;margin:0 4px 0 0}
.head .meta{color:var(--muted)}.head .sp{flex:1}
.clock{font-family:var(--mono);font-size:16px;font-weight:600;background:#151a24;color:#fff;border-radius:8px;padding:3px 10px}
.clock small{font-weight:400;color:#9aa3b4;font-size:11px;margin-left:4px}
.upper{display:grid;grid-template-columns:minmax(0,1.6fr) minmax(300px,1fr);gap:12px}
.states{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:8px}
.st{border:1px solid var(--line);border-radius:8px;padding:7px 10px;background:#fbfcfd}
.st .t{font-size:11px;color:var(--muted);text-transform:uppercase;letter-spacing:.4px}
.st .v{margin-top:3px;display:flex;align-items:center;gap:6px;flex-wrap:wrap}
.st .x{color:var(--muted);font-size:11px;font-family:var(--mono);overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:100%}
.badge{display:inline-block;border-radius:999px;padding:1px 9px;font-size:12px;font-weight:600;background:#eceef2;color:#4a5263;border:1px solid #dde1e7;white-space:nowrap}
.st-refreshing,.st-loading{background:#e6efff;color:#1d4ed8;border-color:#bcd0fb}
.st-refreshing::before{content:"";display:inline-block;width:7px;height:7px;border-radius:50%;background:currentColor;margin-right:5px;vertical-align:1px;animation:pulse 1s infinite}
.st-updated,.st-rendered,.st-active,.st-foreground,.st-applied,.st-live{background:#e7f6ec;color:var(--ok);border-color:#b9e3c6}
.st-failed,.st-terminated,.st-rejected,.st-bad{background:#fdecea;color:var(--bad);border-color:#f6c3bd}
.st-visible,.st-presented,.st-background,.st-reconnecting,.st-ignored{background:#fff4e0;color:#b45309;border-color:#f6d9a8}
.st-virtual{background:#f1eaff;color:#6d28d9;border-color:#dac8fb}.st-wall{background:#e0f5f5;color:#0f766e;border-color:#b2e2e0}
@keyframes pulse{50%{opacity:.25}}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin-top:10px;padding-top:10px;border-top:1px solid var(--line)}
button{border:1px solid #cfd4dc;background:#fff;border-radius:7px;padding:5px 12px;cursor:pointer;font-weight:500}
button:hover:not(:disabled){background:#f1f4f9;border-color:#aeb6c3}button:disabled{opacity:.45;cursor:default}
button.primary{background:var(--native);border-color:var(--native);color:#fff}button.primary:hover:not(:disabled){background:#1d4ed8}
.adv{display:inline-flex;align-items:center;border:1px solid #cfd4dc;border-radius:7px;overflow:hidden}
.adv input{border:0;width:80px;border-radius:0;text-align:right;padding-right:2px}.adv span{padding:0 6px;color:var(--muted)}
.adv button{border:0;border-left:1px solid #cfd4dc;border-radius:0}
#input-result{color:var(--muted)}
#input-error{color:var(--bad);background:#fdecea;border:1px solid #f6c3bd;border-radius:7px;padding:4px 10px;font-weight:500}
.card h2{font-size:12px;text-transform:uppercase;letter-spacing:.5px;color:var(--muted);margin:0 0 8px;display:flex;gap:8px;align-items:center}
#watchdogs{display:flex;flex-direction:column;gap:6px;max-height:150px;overflow:auto}
.wd{display:grid;grid-template-columns:1fr auto;gap:2px 10px;border:1px solid #f3dcb4;border-left:4px solid var(--timers);background:#fffaf1;border-radius:8px;padding:6px 10px}
.wd .k{font-weight:600}.wd .due{font-family:var(--mono);font-weight:600;text-align:right}
.wd .rid,.wd .in{font-size:11px;color:var(--muted);font-family:var(--mono)}.wd .in{text-align:right}
.wd .bar{grid-column:1/3;height:3px;background:#f3e2c4;border-radius:2px;overflow:hidden}.wd .bar i{display:block;height:100%;background:var(--timers)}
.none{color:var(--muted);font-style:italic}
.tlcard{flex:1;min-height:0;display:flex;flex-direction:column;padding:0;overflow:hidden}
.tlhead{display:flex;align-items:center;gap:12px;padding:10px 14px;border-bottom:1px solid var(--line)}
.tlhead h2{margin:0}.legend{display:flex;gap:10px;flex-wrap:wrap;color:var(--muted);font-size:11px}
.legend span::before{content:"";display:inline-block;width:8px;height:8px;border-radius:2px;background:var(--c);margin-right:4px}
#timeline-scroll{overflow:auto;flex:1;min-height:0}
#timeline{display:grid;grid-template-columns:92px minmax(0,1.25fr) minmax(0,1.2fr) minmax(0,1fr);grid-auto-rows:minmax(28px,auto);position:relative}
.lane{display:contents}
.lbg{grid-row:1/2;z-index:0}.lbg.native{grid-column:2;background:#f5f8ff}.lbg.web{grid-column:3;background:#f9f5ff}.lbg.timers{grid-column:4;background:#fffaf0}
.lbg+.lbg{border-left:1px solid var(--line)}
.ltitle{grid-row:1;position:sticky;top:0;z-index:5;padding:7px 12px;font-weight:700;font-size:12px;text-transform:uppercase;letter-spacing:.5px;
 background:#fff;border-bottom:2px solid var(--c);color:var(--c);display:flex;justify-content:space-between}
.ltitle em{font-style:normal;color:var(--muted);font-weight:500}
.gutter .ltitle{grid-column:1;--c:#98a1b2}
#lane-native .ltitle{grid-column:2;--c:var(--native)}#lane-web .ltitle{grid-column:3;--c:var(--web)}#lane-timers .ltitle{grid-column:4;--c:var(--timers)}
.tcell{grid-column:1;z-index:2;padding:5px 8px 0 12px;font-family:var(--mono);font-size:11px;color:var(--muted);display:flex;gap:6px}
.tcell .at{color:var(--text);font-weight:600}
.tick{grid-column:1/5;z-index:1;border-top:1px dashed #c9ced8}
.entry{z-index:2;margin:2px 8px;padding:3px 8px;border-radius:6px;background:#fff;border:1px solid var(--line);border-left:3px solid var(--c,#98a1b2);
 white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font-size:12px;cursor:pointer;align-self:start}
#lane-native .entry{grid-column:2}#lane-web .entry{grid-column:3}#lane-timers .entry{grid-column:4}
.entry .kind{font-size:10px;font-weight:700;text-transform:uppercase;letter-spacing:.4px;color:var(--c);margin-right:6px}
.entry .rid{font-family:var(--mono);font-size:11px;color:var(--muted);margin-left:6px}
.entry.fresh{animation:flash 1.2s}@keyframes flash{from{background:#fff6bf}}
.entry.open{white-space:normal}.entry pre{margin:4px 0 2px;font-size:11px;white-space:pre-wrap;word-break:break-all;color:#3b4352}
.k-input{--c:#475467}.k-bridge{--c:#7c3aed}.k-emit{--c:#2563eb}.k-navigation{--c:#0891b2}.k-request{--c:#0d9488}.k-header{--c:#db2777}
.k-pull{--c:#4f46e5}.k-overlay{--c:#ca8a04}.k-watchdog{--c:#d97706}.k-analytics{--c:#94a3b8}.k-resolution{--c:#059669}.k-violation{--c:var(--bad)}
.entry.violation{background:#fdecea;border-color:#f3b2ab;border-left-width:5px;white-space:normal;box-shadow:0 0 0 1px #f3b2ab}
.entry.violation .vd{color:#9b1c14;font-size:11.5px;margin-top:2px}
.vcount{background:var(--bad);color:#fff;border-radius:999px;padding:0 7px;font-size:11px;font-weight:700}
</style>
</head>
<body>
<div class="top"><b>todaysim</b><span class="sub">simulated native hosts of the Today Page</span><span class="sp"></span>
 <span class="sub">stream</span><span id="live" class="badge">idle</span></div>
<aside>
 <div class="filters">
  <label>uid<input id="filter-uid" placeholder="any" autocomplete="off"></label>
  <label>label<input id="filter-label" placeholder="any" autocomplete="off"></label>
  <label class="wide">status<select id="filter-status"><option value="">any</option><option value="active">active</option><option value="closed">closed</option></select></label>
 </div>
 <ul id="session-list"></ul>
 <div class="listfoot"><span id="list-count">…</span><span id="list-error" class="st-bad"></span></div>
</aside>
<main>
 <div id="empty" class="empty">Select a session on the left<br><small>or open <span class="mono">/#session=&lt;id&gt;</span></small></div>
 <div id="detail" style="display:none">
  <div class="card head">
   <div class="hrow">
    <h1 id="session-id" class="mono"></h1><span id="session-status" class="badge"></span>
    <span class="meta" id="session-meta"></span><span class="sp"></span>
    <span id="violation-count" class="badge" title="click: next violation on the timeline" style="cursor:pointer"></span>
    <span class="clock">t = <span id="clock-now">0</span> ms<small id="clock-mode"></small></span>
   </div>
   <div class="controls">
    <button id="btn-pull" class="primary" title="POST …/gestures {type: pull}">⟳ Pull to refresh</button>
    <button id="btn-background" title="POST …/lifecycle {type: background}">Background</button>
    <button id="btn-foreground" title="POST …/lifecycle {type: foreground}">Foreground</button>
    <span class="adv"><input id="advance-ms" type="number" min="1" step="500" value="1000"><span>ms</span><button id="btn-advance" title="POST …/clock {advanceMs}">Advance clock</button></span>
    <button id="btn-next-timer" title="POST …/clock {toNextTimer: true}">Run to next timer »</button>
    <span id="input-result"></span><span id="input-error" hidden></span>
   </div>
  </div>
  <div class="upper">
   <div class="card states">
    <div class="st"><div class="t">Header</div><div class="v"><span id="header-state" class="badge"></span></div><div class="x" id="header-rid"></div></div>
    <div class="st"><div class="t">Pull spinner</div><div class="v"><span id="pull-state" class="badge"></span></div><div class="x" id="pull-rid"></div></div>
    <div class="st"><div class="t">Loading overlay</div><div class="v"><span id="overlay-state" class="badge"></span></div><div class="x" id="overlay-x"></div></div>
    <div class="st"><div class="t">Document</div><div class="v"><span id="document-state" class="badge"></span></div><div class="x" id="document-x"></div></div>
    <div class="st"><div class="t">App</div><div class="v"><span id="app-state" class="badge"></span></div><div class="x" id="app-x"></div></div>
    <div class="st"><div class="t">Refresh requests</div><div class="v"><span id="refresh-state" class="badge"></span></div><div class="x" id="refresh-x"></div></div>
   </div>
   <div class="card"><h2>Pending watchdogs <span class="mono" id="watchdog-count"></span><span class="sp" style="flex:1"></span><span style="text-transform:none;letter-spacing:0">on the session clock</span></h2><div id="watchdogs"></div></div>
  </div>
  <div class="card tlcard">
   <div class="tlhead"><h2>Timeline</h2><span class="legend">
    <span style="--c:#475467">input</span><span style="--c:#7c3aed">bridge</span><span style="--c:#2563eb">emit</span><span style="--c:#0891b2">navigation</span>
    <span style="--c:#0d9488">request</span><span style="--c:#db2777">header</span><span style="--c:#4f46e5">pull</span><span style="--c:#ca8a04">overlay</span>
    <span style="--c:#d97706">watchdog</span><span style="--c:#94a3b8">analytics</span><span style="--c:#059669">resolution</span><span style="--c:#d92d20">violation</span></span>
    <span class="sp" style="flex:1"></span><span class="mono" id="timeline-count"></span></div>
   <div id="timeline-scroll"><div id="timeline">
    <div class="lbg native"></div><div class="lbg web"></div><div class="lbg timers"></div>
    <div class="lane gutter" id="lane-clock"><div class="ltitle">seq · ms</div></div>
    <div class="lane" id="lane-native" data-lane="native"><div class="ltitle">Native <em id="n-native">0</em></div></div>
    <div class="lane" id="lane-web" data-lane="web"><div class="ltitle">Web <em id="n-web">0</em></div></div>
    <div class="lane" id="lane-timers" data-lane="timers"><div class="ltitle">Timers <em id="n-timers">0</em></div></div>
   </div></div>
  </div>
 </div>
</main>
<script>
"use strict";
const $ = s => document.querySelector(s);
const KINDS = ["input","bridge","emit","navigation","request","header","pull","overlay","watchdog","analytics","resolution","violation"];
let follow = true, current = null, view = null, source = null, seen = new Set(), lastAt = null, maxSeq = 0, counts = {}, viewTimer = null, listTimer = null;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const c of kids) if (c != null && c !== "") e.append(c);
  return e;
}
const short = id => id && id.length > 12 ? id.slice(0, 8) + "…" : id;
const path = id => "/v1/sessions/" + encodeURIComponent(id);
function setBadge(sel, state) {
  const b = $(sel); const s = state == null ? "none" : String(state);
  b.textContent = s; b.dataset.state = s; b.className = "badge st-" + s;
}
// A server started with --token: the page was opened with ?access_token=…, and passes it on.
const accessToken = new URLSearchParams(location.search).get("access_token");
const withToken = url => accessToken ? url + (url.includes("?") ? "&" : "?") + "access_token=" + encodeURIComponent(accessToken) : url;
async function api(method, url, body) {
  const headers = body ? {"Content-Type": "application/json"} : {};
  if (accessToken) headers["Authorization"] = "Bearer " + accessToken;
  const r = await fetch(url, {method, cache: "no-cache", headers,
                              body: body ? JSON.stringify(body) : undefined});
  const text = await r.text(); let json = null;
  try { json = JSON.parse(text); } catch (_) {}
  if (!r.ok) {
    const p = json || {};
    const err = new Error((p.code ? p.code + (p.detail ? ": " + p.detail : "") : "HTTP " + r.status));
    err.status = r.status; err.problem = p; throw err;
  }
  return json;
}

// ---- session list ----------------------------------------------------------------------
async function loadList() {
  const q = new URLSearchParams({limit: "200"});
  for (const [k, sel] of [["uid", "#filter-uid"], ["label", "#filter-label"], ["status", "#filter-status"]]) {
    const v = $(sel).value.trim(); if (v) q.set(k, v);
  }
  try {
    const res = await api("GET", "/v1/sessions?" + q);
    renderList(res.sessions, res.next); $("#list-error").textContent = "";
  } catch (e) { $("#list-error").textContent = e.message; }
}
const sessionRow = s => el("li",
  {class: "srow" + (s.id === current ? " sel" : ""), "data-session-id": s.id, "data-status": s.status, onclick: () => select(s.id)},
  el("div", {class: "l1"}, el("span", {class: "sid mono", text: s.id}),
     s.counts.violations ? el("span", {class: "vcount", title: "violations", text: "⚠ " + s.counts.violations}) : null,
     el("span", {class: "badge st-" + s.status, text: s.status})),
  el("div", {class: "l2"}, [s.uid, s.label ? "#" + s.label : null, s.platform, "t=" + s.clock.nowMs + " ms", s.counts.timeline + " entries"]
     .filter(Boolean).join(" · ")));
function renderList(sessions, next) {
  $("#session-list").replaceChildren(...sessions.map(sessionRow));
  if (!sessions.length) $("#session-list").append(el("li", {class: "none", style: "padding:10px", text: "no sessions match"}));
  $("#list-count").textContent = sessions.length + (next ? "+" : "") + " session" + (sessions.length === 1 ? "" : "s");
}
function scheduleList(ms) { clearTimeout(listTimer); listTimer = setTimeout(loadList, ms); }

// ---- selection -----------------------------------------------------------------------------
function select(id) {
  const h = "#session=" + encodeURIComponent(id);
  if (location.hash !== h) location.hash = h; else openSession(id);
}
function route() { const m = /(?:^#|&)session=([^&]+)/.exec(location.hash); openSession(m ? decodeURIComponent(m[1]) : null); }
function openSession(id) {
  if (id === current) return;
  current = id; view = null;
  if (source) { source.close(); source = null; }
  seen = new Set(); lastAt = null; maxSeq = 0; counts = {native: 0, web: 0, timers: 0}; follow = true;
  document.querySelectorAll("#timeline .entry, #timeline .tcell, #timeline .tick").forEach(n => n.remove());
  updateLaneCounts();
  document.querySelectorAll(".srow").forEach(r => r.classList.toggle("sel", r.dataset.sessionId === id));
  $("#input-result").textContent = ""; $("#input-error").hidden = true;
  $("#empty").hidden = !!id; $("#detail").style.display = id ? "contents" : "none";
  if (!id) { setLive("idle"); return; }
  $("#session-id").textContent = id;
  refreshView(); connect(id);
}

// ---- live timeline over Server-Sent Events ------------------------------------------------
function setLive(s) { setBadge("#live", s); }
function connect(id) {
  setLive("connecting");
  const es = new EventSource(withToken(path(id) + "/events")); source = es;
  const on = ev => {
    if (id !== current) return;
    let entry; try { entry = JSON.parse(ev.data); } catch (_) { return; }
    addEntry(entry); scheduleView();
  };
  KINDS.forEach(k => es.addEventListener(k, on)); es.onmessage = on;
  es.onopen = () => setLive("live");
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED || (view && view.status === "closed")) { es.close(); setLive("ended"); }
    else setLive("reconnecting");
  };
}
const laneOf = e => e.kind === "watchdog" ? "timers"
  : (e.kind === "bridge" || e.kind === "violation" || (e.kind === "input" && e.data && e.data.via === "webEvent")) ? "web" : "native";
function summary(e) {
  const d = e.data || {};
  switch (e.kind) {
    case "input": {
      const i = d.input || {};
      const what = d.via === "clock" ? "clock " + Object.entries(i).map(([k, v]) => k + " " + v).join(", ")
        : d.via === "create" ? "create session (" + (i.platform || "") + ")" : (d.via || "") + " " + e.type;
      return what + (i.requestId ? " [" + i.requestId + "]" : "") + (d.outcome && d.outcome !== "applied" ? " → " + d.outcome + (d.reason ? " (" + d.reason + ")" : "") : "");
    }
    case "bridge": return e.type + " → " + d.outcome + (d.reason ? " (" + d.reason + ")" : "");
    case "emit": { const p = d.payload || {}; return "→ Web " + p.type + (p.reason ? " · " + p.reason : ""); }
    case "navigation": return "load #" + d.loadId + " · " + d.cause;
    case "request": return "request " + d.outcome + (d.reason ? " · " + d.reason : "");
    case "header": case "overlay": return e.kind + " " + d.from + " → " + d.to;
    case "pull": return "spinner " + d.state + (d.outcome ? " · " + d.outcome : "");
    case "watchdog": return d.kind + " fired";
    case "analytics": return "analytics " + d.event;
    case "resolution": return "call " + d.callId + " → " + JSON.stringify(d.value);
    case "violation": return d.code || e.type;
    default: return e.type || "";
  }
}
function addEntry(e) {
  if (seen.has(e.seq)) return; seen.add(e.seq);
  const row = e.seq + 1, lane = laneOf(e), same = lastAt === e.atMs;
  const gutter = $("#lane-clock");
  if (!same && lastAt !== null) gutter.append(el("div", {class: "tick", style: "grid-row:" + row}));
  gutter.append(el("div", {class: "tcell", style: "grid-row:" + row}, el("span", {text: "#" + e.seq}),
    same ? null : el("span", {class: "at", text: e.atMs + ""})));
  lastAt = e.atMs; maxSeq = Math.max(maxSeq, e.seq);
  const node = el("div", {class: "entry k-" + e.kind + (e.kind === "violation" ? " violation" : "") + (view ? " fresh" : ""),
      "data-seq": e.seq, "data-kind": e.kind, "data-type": e.type, "data-at-ms": e.atMs, style: "grid-row:" + row,
      title: "#" + e.seq + " at " + e.atMs + " ms — click for the entry"},
    el("span", {class: "kind", text: e.kind}), el("span", {class: "txt", text: summary(e)}),
    e.requestId ? el("span", {class: "rid", title: e.requestId, text: short(e.requestId)}) : null);
  if (e.kind === "violation") node.append(el("div", {class: "vd", text: (e.data && e.data.detail) || ""}));
  node.addEventListener("click", () => {
    const pre = node.querySelector("pre");
    if (pre) { pre.remove(); node.classList.remove("open"); }
    else { node.classList.add("open"); node.append(el("pre", {text: JSON.stringify(e, null, 2)})); }
  });
  $("#lane-" + lane).append(node);
  counts[lane]++; updateLaneCounts();
  document.querySelectorAll(".lbg").forEach(b => b.style.gridRow = "1 / " + (maxSeq + 2));
  keepBottom();
}
function keepBottom() { if (follow) { const sc = $("#timeline-scroll"); sc.scrollTop = sc.scrollHeight; } }
function updateLaneCounts() {
  for (const l of ["native", "web", "timers"]) $("#n-" + l).textContent = counts[l] || 0;
  $("#timeline-count").textContent = seen.size + " entries";
}

// ---- session view ----------------------------------------------------------------------
function scheduleView() { clearTimeout(viewTimer); viewTimer = setTimeout(refreshView, 80); }
async function refreshView() {
  const id = current; if (!id) return;
  try { const v = await api("GET", path(id)); if (id === current) renderView(v); }
  catch (e) { if (id === current) showError(e.status === 404 ? "session " + id + " not found" : e.message); }
}
function renderView(v) {
  view = v;
  const now = v.clock.nowMs;
  $("#session-id").textContent = v.id; setBadge("#session-status", v.status);
  $("#session-meta").textContent = [v.uid && "uid " + v.uid, v.label && "label " + v.label, v.platform, v.language, v.route, "v" + v.version].filter(Boolean).join(" · ");
  const vc = $("#violation-count"); vc.textContent = v.counts.violations + " violation" + (v.counts.violations === 1 ? "" : "s");
  vc.dataset.count = v.counts.violations; vc.className = "badge " + (v.counts.violations ? "st-bad" : "st-applied");
  $("#clock-now").textContent = now; $("#clock-now").dataset.ms = now; $("#clock-mode").textContent = v.clock.mode;
  setBadge("#header-state", v.header.state); $("#header-rid").textContent = v.header.requestId ? "request " + short(v.header.requestId) : "";
  setBadge("#pull-state", v.pull.state);
  $("#pull-rid").textContent = v.pull.requestId ? "request " + short(v.pull.requestId) : (v.pull.lastOutcome ? "last: " + v.pull.lastOutcome : "");
  setBadge("#overlay-state", v.document.overlay); $("#overlay-x").textContent = "gate " + v.loadingGate;
  setBadge("#document-state", v.document.state); $("#document-x").textContent = "load #" + v.document.loadId + " · " + v.document.cause;
  setBadge("#app-state", v.app.state);
  $("#app-x").textContent = v.app.backgroundedAtMs != null ? "since " + v.app.backgroundedAtMs + " ms" : (v.liveWidgetSheet === "presented" ? "widget sheet up" : v.dialog ? "dialog " + v.dialog.callId : "");
  const pend = v.refresh.pending || [];
  setBadge("#refresh-state", pend.length ? pend.length + " pending" : "none");
  if (pend.length) $("#refresh-state").className = "badge st-refreshing";
  $("#refresh-x").textContent = pend.length ? pend.map(p => p.reason).join(", ") + (v.refresh.deadlineAtMs != null ? " · deadline " + v.refresh.deadlineAtMs : "") : "";
  const wds = [...v.watchdogs].sort((a, b) => a.dueAtMs - b.dueAtMs);
  $("#watchdog-count").textContent = wds.length ? "(" + wds.length + ")" : "";
  const t = v.timing || {}, span = {pullWatchdog: t.pullWatchdogMs, headerWatchdog: t.headerWatchdogMs, softRefreshDeadline: t.softRefreshDeadlineMs, headerHide: t.headerSettleMs};
  const longest = Math.max(1, ...wds.map(w => w.dueAtMs - now));
  $("#watchdogs").replaceChildren(...(wds.length ? wds.map(w => el("div",
      {class: "wd", "data-kind": w.kind, "data-due-ms": w.dueAtMs, "data-request-id": w.requestId || ""},
      el("span", {class: "k", text: w.kind}), el("span", {class: "due", text: "due " + w.dueAtMs + " ms"}),
      el("span", {class: "rid", title: w.requestId || "", text: w.requestId ? "request " + short(w.requestId) : "no request"}),
      el("span", {class: "in", text: "in " + (w.dueAtMs - now) + " ms"}),
      el("span", {class: "bar"}, el("i", {style: "width:" + Math.min(100, Math.max(2, 100 * (w.dueAtMs - now) / (span[w.kind] || longest))) + "%"}))))
    : [el("div", {class: "none", text: "no timer pending"})]));
  const closed = v.status === "closed";
  for (const b of ["#btn-pull", "#btn-background", "#btn-foreground", "#btn-advance", "#btn-next-timer"]) $(b).disabled = closed;
  $("#btn-background").disabled = closed || v.app.state === "background";
  $("#btn-foreground").disabled = closed || v.app.state === "foreground";
  const row = document.querySelector('.srow[data-session-id="' + CSS.escape(v.id) + '"]');
  if (row) row.replaceWith(sessionRow(v));
}

// ---- inputs -----------------------------------------------------------------------------------
function showError(msg) { const e = $("#input-error"); e.textContent = msg; e.hidden = false; }
async function send(suffix, body, label) {
  const id = current; if (!id) return;
  $("#input-error").hidden = true; $("#input-result").textContent = label + "…";
  try {
    const r = await api("POST", path(id) + suffix, body);
    if (id !== current) return;
    renderView(r.session);
    const res = $("#input-result"); res.textContent = label + ": " + r.outcome + (r.reason ? " (" + r.reason + ")" : "");
    res.dataset.outcome = r.outcome; scheduleList(300);
  } catch (e) { $("#input-result").textContent = ""; showError(label + " failed — " + e.message); }
}
$("#btn-pull").onclick = () => send("/gestures", {type: "pull"}, "pull");
$("#btn-background").onclick = () => send("/lifecycle", {type: "background"}, "background");
$("#btn-foreground").onclick = () => send("/lifecycle", {type: "foreground"}, "foreground");
$("#btn-advance").onclick = () => {
  const n = Number($("#advance-ms").value);
  if (!Number.isInteger(n) || n < 1) return showError("advance: enter a whole number of milliseconds ≥ 1");
  send("/clock", {advanceMs: n}, "advance " + n + " ms");
};
$("#advance-ms").addEventListener("keydown", e => { if (e.key === "Enter") $("#btn-advance").click(); });
$("#violation-count").onclick = () => {
  const vs = [...document.querySelectorAll("#timeline .violation")]; if (!vs.length) return;
  const sc = $("#timeline-scroll"), top = sc.getBoundingClientRect().top + 40;
  const next = vs.find(v => v.getBoundingClientRect().top > top + 5) || vs[0];
  follow = false; sc.scrollTop += next.getBoundingClientRect().top - top;
};
$("#btn-next-timer").onclick = () => send("/clock", {toNextTimer: true}, "next timer");
for (const f of ["#filter-uid", "#filter-label"]) $(f).addEventListener("input", () => scheduleList(250));
$("#filter-status").addEventListener("change", () => scheduleList(0));

$("#timeline-scroll").addEventListener("scroll", () => { const sc = $("#timeline-scroll"); follow = sc.scrollTop + sc.clientHeight >= sc.scrollHeight - 30; });
new ResizeObserver(keepBottom).observe($("#timeline-scroll"));
window.addEventListener("hashchange", route);
setInterval(() => { if (!document.hidden) loadList(); }, 4000);
setInterval(() => { if (!document.hidden && view && view.clock.mode === "wall" && view.status === "active") refreshView(); }, 1000);
loadList(); route();
</script>
</body>
</html>
"""#
}
