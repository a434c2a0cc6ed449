// The bridge without a browser through the package (issue 36, items 4 and 6): `installBridge`,
// which is Web/bridge-core.mjs shipped unchanged, on a bare Node EventTarget, against this
// build's todaysim, written as a Vitest test of a page's bridge hook would be, with the
// contract's types: a pull's refreshRequested reaches the hook and its answer ends the spinner,
// and emit()'s typed return values are what the host answers.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { bridgedTarget, installBridge, NATIVE_TO_WEB_TYPES, TODAY_NATIVE_EVENT, WEB_TO_NATIVE_TYPES } from "../src/index.js";
import type { BridgedTarget, Client, ReturnOf, TodaysimServer, TodayNativeEvent } from "../src/index.js";
import { servedDocument, startServer } from "./support.js";

const TOKEN = "ts-bridge-token";
const DEADLINE_MS = 30_000;
let server: TodaysimServer;
let todaysim: Client;
let sessions = 0;

before(async () => {
  server = await startServer({ token: TOKEN });
  todaysim = server.client();
});

after(async () => {
  await server?.stop();
});

/** Polls `probe` until it is true, failing after the deadline with what it last saw. */
async function eventually(what: string, probe: () => Promise<boolean> | boolean): Promise<void> {
  const end = Date.now() + DEADLINE_MS;
  let last: unknown;
  for (;;) {
    try {
      if (await probe()) return;
      last = false;
    } catch (error) {
      last = error;
    }
    if (Date.now() > end) throw new Error(`${what}: not true after ${DEADLINE_MS} ms (last: ${last instanceof Error ? last.message : String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A new session and a bare EventTarget with the bridge on it, as a hook test's window. */
async function bridged(capabilities: string[]): Promise<{ session: string; page: EventTarget & BridgedTarget }> {
  sessions += 1;
  const session = `ts-bridge-${sessions}`;
  await todaysim.createSession({ uid: "u-bridge", id: session, capabilities });
  const target = new EventTarget();
  const handle = await installBridge(target, { server: server.url, session, accessToken: TOKEN });
  await handle.ready;
  return { session, page: bridgedTarget(target) };
}

/**
 * The hook under test, as a page's use-native-refresh-feedback hook is written: each native
 * refresh request shows the header's refreshing state where the host advertises it and the
 * reason allows it (a foreground return or a created Live Widget; never a pull, M3), reloads,
 * and answers with the request's id. Returns its unsubscribe, as a React effect's cleanup would.
 */
function useNativeRefreshFeedback(window: BridgedTarget, reload: () => Promise<boolean>, answered: unknown[]): () => void {
  const listener = (event: TodayNativeEvent): void => {
    const message = event.detail;
    if (message.type !== "todayPage.refreshRequested") return;
    const bridge = window.todayWebViewBridge;
    const started = Date.now();
    const showsHeader = (message.reason === "app_foreground" || message.reason === "live_widget_created")
      && window.__todayWebView.capabilities.includes("today_page_revalidate_feedback.v1");
    const feedback = showsHeader
      ? bridge.emit("todayPage.refreshStarted", { schemaVersion: 1, requestId: message.requestId, presentation: "header" })
      : Promise.resolve(undefined);
    void feedback.then(reload).then((ok) => bridge.emit("todayPage.refreshResult", {
      schemaVersion: 1, requestId: message.requestId, mode: "soft", status: ok ? "succeeded" : "failed", elapsedMs: Date.now() - started,
    })).then((value) => answered.push(value));
  };
  window.addEventListener(TODAY_NATIVE_EVENT, listener);
  return () => window.removeEventListener(TODAY_NATIVE_EVENT, listener);
}

test("a hook-style test on a bare EventTarget: a pull's refreshRequested reaches the hook, and its answer ends the spinner", async () => {
  const { session, page } = await bridged(["today_page_revalidate_feedback.v1"]);
  const answered: unknown[] = [];
  const unsubscribe = useNativeRefreshFeedback(page, async () => true, answered);
  try {
    assert.deepEqual(page.__todayWebView, (await todaysim.readSession(session)).document.injected, "__todayWebView is document.injected");
    const pulled = await todaysim.gesture(session, { type: "pull", requestId: "p1" });
    assert.equal(pulled.session.pull.state, "refreshing", "the pull started the spinner");
    await eventually("the hook's refreshResult ended the spinner", async () => (await todaysim.readSession(session)).pull.state === "idle");
    await eventually("the hook's emit resolved", () => answered.length === 1);
    assert.deepEqual(answered, [undefined], "a todayPage.* call resolves undefined");
    const spinner = (await todaysim.timeline(session, { kind: "pull" })).entries.map((entry) => [entry.requestId, (entry.data as { state: string }).state]);
    assert.deepEqual(spinner, [["p1", "refreshing"], ["p1", "idle"]]);

    // A foreground return: the same hook shows the header's feedback for it, then answers.
    await todaysim.lifecycle(session, { type: "background" });
    await todaysim.clock(session, { advanceMs: 6000 });
    await todaysim.lifecycle(session, { type: "foreground", requestId: "fg-1" });
    await eventually("the hook answered the foreground's request", async () =>
      answered.length === 2 && (await todaysim.readSession(session)).refresh.pending.length === 0);
    const requests = page.todaysimBridge.received.filter((message) => message.type === "todayPage.refreshRequested");
    assert.deepEqual(requests, [
      { type: "todayPage.refreshRequested", schemaVersion: 1, requestId: "p1", reason: "user_pull" },
      { type: "todayPage.refreshRequested", schemaVersion: 1, requestId: "fg-1", reason: "app_foreground" },
    ]);
    const bridgeCalls = (await todaysim.timeline(session, { kind: "bridge" })).entries
      .map((entry) => [entry.type, entry.requestId, (entry.data as { outcome: string }).outcome]);
    assert.deepEqual(bridgeCalls, [["todayPage.refreshResult", "p1", "applied"], ["todayPage.refreshStarted", "fg-1", "applied"],
      ["todayPage.refreshResult", "fg-1", "applied"]]);
    const report = await todaysim.report(session);
    assert.deepEqual([report.conforms, report.requests.map((request) => [request.requestId, request.outcome])],
      [true, [["p1", "succeeded"], ["fg-1", "succeeded"]]], JSON.stringify(report.violations));
  } finally {
    unsubscribe();
    page.todaysimBridge.close();
  }
});

test("a typed emit resolves what the contract says: the sheet's answer, the dialog's settlement", async () => {
  const { session, page } = await bridged(["live_widget_creation.v1", "native_dialog.v1"]);
  try {
    const emit = page.todayWebViewBridge.emit;
    const shown: ReturnOf<"liveWidgetCreation.present"> = await emit("liveWidgetCreation.present");
    assert.deepEqual(shown, { presented: true }, "the host advertises live_widget_creation.v1: the sheet is presented");
    assert.equal((await emit("liveWidgetCreation.present", {})).presented, false, "the sheet is up already");

    const dialog = emit("nativeDialog.present", { title: "Delete?", actions: [{ actionId: "delete", title: "Delete" }, { actionId: "keep", title: "Keep" }] });
    await eventually("the dialog is open on the host", async () => (await todaysim.readSession(session)).dialog !== null);
    await todaysim.gesture(session, { type: "dialog.choose", actionId: "delete" });
    const settled = await dialog;
    assert.equal(settled.type, "action");
    if (settled.type === "action") assert.equal(settled.actionId, "delete");
  } finally {
    page.todaysimBridge.close();
  }
});

test("without the capabilities, the sheet is not presented and the dialog is unavailable", async () => {
  const { page } = await bridged([]);
  try {
    const emit = page.todayWebViewBridge.emit;
    assert.deepEqual(await emit("liveWidgetCreation.present"), { presented: false });
    assert.deepEqual(await emit("nativeDialog.present", { title: "Delete?", actions: [{ actionId: "delete", title: "Delete" }] }),
      { type: "unavailable" });
  } finally {
    page.todaysimBridge.close();
  }
});

test("bridgedTarget and installBridge refuse what they cannot use, with the reason", async () => {
  assert.throws(() => bridgedTarget(new EventTarget()), /this target has no bridge: await installBridge/);
  await assert.rejects(installBridge(new EventTarget(), { server: server.url, session: "no-such-session", accessToken: TOKEN }),
    /answered 404: .*session_not_found/);
  await assert.rejects(installBridge(new EventTarget(), { server: "127.0.0.1:1", session: "s" }), /absolute URL/);
});

test("the contract's message types are the served document's", async () => {
  const schemas = (await servedDocument(todaysim)).components.schemas as {
    [name: string]: { discriminator: { mapping: { [type: string]: string } }; "x-todaysim-bridge"?: { [type: string]: unknown } };
  };
  const web = schemas.WebToNativeEvent;
  const native = schemas.NativeToWebEvent;
  assert.ok(web && native, "the served document has WebToNativeEvent and NativeToWebEvent");
  assert.deepEqual([...WEB_TO_NATIVE_TYPES], Object.keys(web.discriminator.mapping));
  assert.deepEqual([...WEB_TO_NATIVE_TYPES], Object.keys(web["x-todaysim-bridge"] ?? {}));
  assert.deepEqual([...NATIVE_TO_WEB_TYPES], Object.keys(native.discriminator.mapping));
});
