// The bridge without a browser (issue 36, item 6): Web/bridge-core.mjs's installBridge on a bare
// Node EventTarget, against this build's todaysim, as a Vitest test of a page's bridge hook would
// use it. Run by systemtests/test_bridge_core.py with Node's own runner (Node >= 20: fetch,
// EventTarget, CustomEvent and ReadableStream, no EventSource — so the core reads the stream over
// fetch), against a server that test started with a token:
//
//   TODAYSIM_URL=http://127.0.0.1:8080 TODAYSIM_TOKEN=... node --test systemtests/node/bridge-core.test.mjs
//
// Each test makes its own session.
import {test} from "node:test";
import assert from "node:assert/strict";
import {spawn} from "node:child_process";
import {fileURLToPath} from "node:url";
import path from "node:path";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const CORE = path.join(ROOT, "Web", "bridge-core.mjs");
const {installBridge} = await import(CORE);
const base = process.env.TODAYSIM_URL;
const TOKEN = process.env.TODAYSIM_TOKEN;
const DEADLINE_MS = 30000;
assert.ok(base && TOKEN, "TODAYSIM_URL and TODAYSIM_TOKEN must name the todaysim server to test and its token");

// Polls `probe` until it answers a true value (returned), failing after `ms` with what it last saw.
async function eventually(what, probe, ms = DEADLINE_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > end) throw new Error(`${what}: not true after ${ms} ms (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// `promise`'s value, or an error naming `what` once `ms` pass first.
async function within(promise, what, ms = DEADLINE_MS) {
  let timer;
  const late = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function api(method, route, body, expect = 200) {
  const response = await fetch(base + route, {
    method, headers: {"Content-Type": "application/json", Authorization: `Bearer ${TOKEN}`},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.equal(response.status, expect, `${method} ${route} answered ${response.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

let sessions = 0;
async function newSession(capabilities = []) {
  sessions += 1;
  const id = `core-${sessions}`;
  await api("POST", "/v1/sessions", {uid: "u1", id, capabilities}, 201);
  return id;
}

function bridgeOn(target, session) {
  return installBridge(target, {server: base, session, accessToken: TOKEN});
}

test("a hook-style test on a bare EventTarget: a pull's refreshRequested, and its refreshResult ends the spinner", async () => {
  const session = await newSession(["today_page_revalidate_feedback.v1"]);
  const target = new EventTarget();
  const bridge = await bridgeOn(target, session);
  try {
    const view = await api("GET", `/v1/sessions/${session}`);
    assert.deepEqual(target.__todayWebView, view.document.injected, "__todayWebView is the session's document.injected");
    assert.equal(target.todaysimBridge, bridge, "the handle is on the target, as window.todaysimBridge is on a page");
    await bridge.ready;
    assert.equal(bridge.open, true);

    // The hook under test: answers every refresh request, as a page's use-native-refresh hook does.
    const seen = [];
    target.addEventListener("todayNativeEvent", (event) => {
      seen.push(event.detail);
      if (event.detail.type !== "todayPage.refreshRequested") return;
      target.todayWebViewBridge.emit("todayPage.refreshResult", {
        schemaVersion: 1, requestId: event.detail.requestId, mode: "soft", status: "succeeded", elapsedMs: 0,
      }).then((value) => seen.push({resolved: value}));
    });
    await api("POST", `/v1/sessions/${session}/gestures`, {type: "pull", requestId: "p1"});
    await eventually("the pull's refreshResult ended the spinner",
      async () => (await api("GET", `/v1/sessions/${session}`)).pull.state === "idle");
    const spinner = (await api("GET", `/v1/sessions/${session}/timeline?kind=pull`)).entries;
    assert.deepEqual(spinner.map((entry) => [entry.requestId, entry.data.state]), [["p1", "refreshing"], ["p1", "idle"]],
      "the pull started the spinner and its answer ended it");
    const requested = seen.filter((message) => message.type === "todayPage.refreshRequested");
    assert.deepEqual(requested.map((message) => [message.requestId, message.reason]), [["p1", "user_pull"]]);
    await eventually("the refreshResult's emit resolved", () => seen.some((item) => "resolved" in item));
    assert.deepEqual(seen.find((item) => "resolved" in item), {resolved: undefined}, "a todayPage.* call resolves undefined");
    assert.deepEqual(bridge.received, seen.filter((item) => item.type), "received lists what was dispatched, in order");
    const report = await api("GET", `/v1/sessions/${session}/report`);
    assert.deepEqual([report.conforms, report.requests.map((request) => [request.requestId, request.outcome])],
      [true, [["p1", "succeeded"]]]);
    await eventually("every entry delivered and no call in flight", async () =>
      bridge.inFlight === 0 && bridge.delivered === (await api("GET", `/v1/sessions/${session}`)).counts.timeline);
  } finally {
    bridge.close();
  }
});

test("emit's return values: a sheet's answer, a dialog settled by the user's choice", async () => {
  const session = await newSession(["live_widget_creation.v1", "native_dialog.v1"]);
  const target = new EventTarget();
  const bridge = await bridgeOn(target, session);
  try {
    const emit = target.todayWebViewBridge.emit;
    assert.deepEqual(await emit("liveWidgetCreation.present"), {presented: true});
    const dialog = emit("nativeDialog.present", {title: "Delete?", actions: [
      {actionId: "delete", title: "Delete"}, {actionId: "keep", title: "Keep"}]});
    await eventually("the dialog is open on the host", async () => (await api("GET", `/v1/sessions/${session}`)).dialog !== null);
    await api("POST", `/v1/sessions/${session}/gestures`, {type: "dialog.choose", actionId: "delete"});
    const chosen = await dialog;
    assert.equal(chosen.type, "action");
    assert.equal(chosen.actionId, "delete");
  } finally {
    bridge.close();
  }
});

test("a refused event resolves as the host resolved it; an HTTP failure rejects only calls that are not todayPage.*", async () => {
  const session = await newSession();
  const target = new EventTarget();
  const bridge = await bridgeOn(target, session);
  try {
    const emit = target.todayWebViewBridge.emit;
    // No requestId: the bridge refuses it (H-rules), which is a 200 with outcome rejected, not an error.
    assert.equal(await emit("todayPage.refreshResult", {schemaVersion: 1, status: "succeeded"}), undefined);
    const refused = (await api("GET", `/v1/sessions/${session}/timeline?kind=bridge`)).entries.at(-1);
    assert.equal(refused.type, "todayPage.refreshResult");
    assert.equal(refused.data.outcome, "rejected", JSON.stringify(refused));
    assert.ok(refused.data.reason, "the refusal says why");

    // The session purged: every call now answers 404.
    await api("DELETE", `/v1/sessions/${session}`, undefined, 204);
    const warnings = [];
    const warn = console.warn;
    console.warn = (message) => warnings.push(String(message));
    try {
      assert.equal(await emit("todayPage.refreshStarted", {schemaVersion: 1, requestId: "x", presentation: "header"}), undefined);
    } finally {
      console.warn = warn;
    }
    assert.match(warnings.join("\n"), /todayPage\.refreshStarted answered 404/);
    await assert.rejects(emit("liveWidgetCreation.present"), /liveWidgetCreation\.present answered 404/);
  } finally {
    bridge.close();
  }
});

test("installBridge refuses what it cannot use, with the reason", async () => {
  await assert.rejects(installBridge({}, {server: base, session: "s"}), /must be an EventTarget/);
  await assert.rejects(installBridge(new EventTarget(), {server: base}), /no session/);
  await assert.rejects(installBridge(new EventTarget(), {server: "127.0.0.1:1", session: "s"}), /absolute URL/);
  await assert.rejects(bridgeOn(new EventTarget(), "no-such-session"), /answered 404: .*session_not_found/);
});

// A child Node process that installs the bridge on a bare EventTarget, says "ready" once the
// stream is open, then closes it or not: Node exits by itself only when nothing is left open.
function child(session, close) {
  const script = `
    const {installBridge} = await import(${JSON.stringify(CORE)});
    const bridge = await installBridge(new EventTarget(), {server: ${JSON.stringify(base)}, session: ${JSON.stringify(session)},
                                                           accessToken: ${JSON.stringify(TOKEN)}});
    await bridge.ready;
    ${close ? "bridge.close(); if (bridge.open) throw new Error('still open after close()');" : ""}
    console.log("ready");`;
  const process_ = spawn(process.execPath, ["--input-type=module", "-e", script], {stdio: ["ignore", "pipe", "inherit"]});
  let output = "";
  process_.stdout.on("data", (chunk) => { output += chunk; });
  const exited = new Promise((resolve) => process_.once("exit", (code) => resolve(code)));
  return {process: process_, exited, ready: () => output.includes("ready")};
}

test("close() ends the stream: a process whose bridge is closed exits by itself, one whose bridge is open does not", async () => {
  const session = await newSession();
  const open = child(session, false);
  const closed = child(session, true);
  try {
    await eventually("both children opened the stream", () => open.ready() && closed.ready());
    const code = await within(closed.exited, "the child whose bridge was closed exited");
    assert.equal(code, 0, "the child whose bridge was closed exits 0 by itself: no connection left open");
    // The control: the same child without close() is still running once the other has exited
    // (its open stream keeps Node's event loop alive), so the check above can fail.
    assert.equal(open.process.exitCode, null, "the child whose bridge stays open is still running");
    await api("POST", `/v1/sessions/${session}/gestures`, {type: "pull", requestId: "p1"});
    assert.equal(open.process.exitCode, null, "the child whose bridge stays open is still running after an entry came");
  } finally {
    open.process.kill("SIGTERM");
    closed.process.kill("SIGTERM");
    await Promise.all([open.exited, closed.exited]);
  }
});
