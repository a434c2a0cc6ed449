// The client against a real server (this build's binary): every operation called for real at
// least once (the last test checks it), refusals as one error type carrying code, status and
// field, long polls, event streams resumed without loss or repeat, paging, reports, export,
// replay and fork, and host traces, one streamed from a file.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, OPERATIONS, TodaysimError, TodaysimServer } from "../src/index.js";
import type { EntryEvent, OperationId, RefreshResultEvent, TimelineEntry } from "../src/index.js";
import { recordingFetch, startServer } from "./support.js";

const called = new Set<OperationId>();
let server: TodaysimServer;
let todaysim: Client;
let scratch: string;

const RESULT = { type: "todayPage.refreshResult", schemaVersion: 1, mode: "soft", status: "succeeded" } as const;
function answer(requestId: string): RefreshResultEvent {
  return { ...RESULT, requestId };
}

before(async () => {
  server = await startServer();
  todaysim = server.client({ fieldValidation: "Strict", fetch: recordingFetch(called) });
  scratch = await mkdtemp(join(tmpdir(), "todaysim-ts-"));
});

after(async () => {
  await server?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const item of items) found.push(item);
  return found;
}

test("the service documents", async () => {
  assert.deepEqual(await todaysim.health(), { status: "ok" });
  assert.equal((await todaysim.readiness()).status, "ok");
  assert.match(await todaysim.dashboard(), /todaysim/);
  assert.match(await todaysim.metrics(), /todaysim_sessions/);
  assert.match(await todaysim.openAPIDocument(), /^openapi: 3\.1/);
  assert.match(await todaysim.rulesMarkdown(), /^# The rules todaysim implements/);
  assert.match(await todaysim.rulesPage(), /\/rules\.md/);
  assert.match(await todaysim.bridgeScript(), /todayWebViewBridge/);
});

test("sessions, inputs and views", async () => {
  const view = await todaysim.createSession({ uid: "ts-u1", id: "ts-s1", platform: "android", label: "ts-client" });
  assert.deepEqual([view.id, view.platform, view.header.state, view.pull.state], ["ts-s1", "android", "hidden", "idle"]);
  const pulled = await todaysim.gesture("ts-s1", { type: "pull", requestId: "p1" });
  assert.equal(pulled.outcome, "applied");
  const emitted = pulled.entries.filter((e) => e.kind === "emit").map((e) => (e.data as { payload: { requestId: string } }).payload.requestId);
  assert.deepEqual(emitted, ["p1"]);
  const answered = await todaysim.webEvent("ts-s1", answer("p1"));
  assert.deepEqual([answered.outcome, answered.session.pull.state], ["applied", "idle"]);
  assert.equal((await todaysim.lifecycle("ts-s1", { type: "background" })).outcome, "applied");
  assert.equal((await todaysim.clock("ts-s1", { advanceMs: 6000 })).session.clock.nowMs, 6000);
  const back = await todaysim.lifecycle("ts-s1", { type: "foreground", requestId: "fg-1" });
  assert.deepEqual((await todaysim.watchdogs("ts-s1")).map((w) => w.kind), ["softRefreshDeadline"]);
  assert.equal(back.session.refresh.pending[0]?.requestId, "fg-1");
  const scrolled = await todaysim.command("ts-s1", { type: "todayPage.scrollToSection", batchId: "b1" });
  const last = scrolled.entries[scrolled.entries.length - 1] as TimelineEntry;
  assert.equal((last.data as { payload: { batchId: string } }).payload.batchId, "b1");
  assert.equal((await todaysim.readSession("ts-s1")).version, scrolled.session.version);
  assert.deepEqual((await collect(todaysim.iterSessions({ label: "ts-client" }))).map((s) => s.id), ["ts-s1"]);
  // If-Match: an input that expects another version is refused and changes nothing.
  await assert.rejects(todaysim.gesture("ts-s1", { type: "pull" }, { ifMatch: scrolled.session.version - 1 }),
    (error) => error instanceof TodaysimError && error.status === 412 && error.code === "precondition_failed");
  // Idempotency-Key: a retry answers what the first did, without applying it again.
  const first = await todaysim.gesture("ts-s1", { type: "pull", requestId: "p2" }, { idempotencyKey: "k1" });
  const again = await todaysim.gesture("ts-s1", { type: "pull", requestId: "p2" }, { idempotencyKey: "k1" });
  assert.equal(again.session.version, first.session.version);
});

test("listing pages through every session", async () => {
  for (const id of ["ts-l1", "ts-l2", "ts-l3"]) await todaysim.createSession({ uid: "ts-lister", id, label: "ts-list" });
  const page = await todaysim.listSessions({ uid: "ts-lister", limit: 2 });
  assert.equal(page.sessions.length, 2);
  assert.ok(page.next, "a first page of two of three has a cursor");
  assert.deepEqual((await collect(todaysim.iterSessions({ uid: "ts-lister", limit: 1 }))).map((s) => s.id).sort(), ["ts-l1", "ts-l2", "ts-l3"]);
  assert.deepEqual(await todaysim.purgeLabel("ts-list"), { deleted: 3 });
  assert.deepEqual(await collect(todaysim.iterSessions({ label: "ts-list" })), []);
});

test("steps, timeline paging and the report", async () => {
  await todaysim.createSession({ uid: "ts-u2", id: "ts-s2" });
  const batch = await todaysim.steps("ts-s2", [{ gesture: { type: "pull", requestId: "p1" } }, { clock: { advanceMs: 5000 } }]);
  assert.deepEqual(batch.results.map((r) => r.outcome), ["applied", "applied"]);
  const whole = await todaysim.timeline("ts-s2", { limit: 1000 });
  assert.equal(whole.more, false);
  // Three entries a page: the iterator fetches every page, each entry once, in order.
  const paged = await collect(todaysim.timelineEntries("ts-s2", { limit: 3 }));
  assert.ok(whole.entries.length > 6, "several pages of three");
  assert.deepEqual(paged.map((e) => e.seq), whole.entries.map((e) => e.seq));
  assert.deepEqual(paged.map((e) => e.seq), Array.from({ length: paged.length }, (_, i) => i + 1));
  const page = await todaysim.timeline("ts-s2", { after: 2, limit: 3 });
  assert.deepEqual([page.entries.map((e) => e.seq), page.next, page.more], [[3, 4, 5], 5, true]);
  assert.deepEqual((await collect(todaysim.timelineEntries("ts-s2", { kind: "violation" }))).map((e) => e.type), ["M7"]);
  const report = await todaysim.report("ts-s2");
  assert.deepEqual([report.conforms, report.violations.map((v) => v.type)], [false, ["M7"]]);
  const junit = await todaysim.reportJunit("ts-s2");
  // One M7 on one request fails two test cases: the rule's and the request's.
  assert.match(junit, /<testsuites\b[^>]*\bfailures="2"/);
  assert.match(junit, /<failure\b[^>]*>[^<]*M7|<failure\b[^>]*M7/);
  const violations = await todaysim.violations({ uid: "ts-u2" });
  assert.ok(violations.violations.some((v) => v.sessionId === "ts-s2" && v.entry.type === "M7"));
  assert.deepEqual((await collect(todaysim.iterViolations({ uid: "ts-u2", limit: 1 }))).map((v) => v.entry.type), ["M7"]);
});

test("a long poll wakes on the entry", async () => {
  await todaysim.createSession({ uid: "ts-u3", id: "ts-s3" });
  const count = (await todaysim.readSession("ts-s3")).counts.timeline;
  const poll = todaysim.timeline("ts-s3", { after: count, waitMs: 20000 });
  // Whatever the poll's timing, the pull is an entry after `count`: it is answered with it.
  await todaysim.gesture("ts-s3", { type: "pull", requestId: "p1" });
  const answered = await poll;
  assert.equal(answered.entries[0]?.seq, count + 1);
});

test("the session stream resumes from Last-Event-ID without loss or repeat", async () => {
  await todaysim.createSession({ uid: "ts-u4", id: "ts-s4" });
  const first = await todaysim.sessionEvents("ts-s4");
  const seen: EntryEvent[] = [];
  for await (const event of first) {
    seen.push(event);
    if (seen.length === 2) break; // leaving the loop closes the connection
  }
  assert.equal(first.lastEventId, "2");
  // Entries recorded while no stream is open are sent on resuming, after the last one seen.
  await todaysim.gesture("ts-s4", { type: "pull", requestId: "p1" });
  await todaysim.webEvent("ts-s4", answer("p1"));
  await todaysim.lifecycle("ts-s4", { type: "teardown" });
  const resumed = await todaysim.sessionEvents("ts-s4", { lastEventId: first.lastEventId });
  seen.push(...(await collect(resumed))); // ends after the closed session's last entry
  const total = (await todaysim.readSession("ts-s4")).counts.timeline;
  assert.deepEqual(seen.map((e) => e.entry.seq), Array.from({ length: total }, (_, i) => i + 1));
  assert.deepEqual(seen.map((e) => e.id), seen.map((e) => String(e.entry.seq)));
  assert.ok(seen.every((e) => e.sessionId === "ts-s4" && e.event === e.entry.kind));
  assert.ok(seen.some((e) => e.entry.type === "teardown"));
  // `after` starts a stream after a seq too.
  assert.deepEqual((await collect(await todaysim.sessionEvents("ts-s4", { after: total - 1 }))).map((e) => e.entry.seq), [total]);
});

test("the account stream follows every session of the account", async () => {
  await todaysim.createSession({ uid: "ts-u5", id: "ts-s5a" });
  const stop = new AbortController();
  const stream = await todaysim.accountEvents("ts-u5", { signal: stop.signal });
  // Open: what either session records from now on is on the stream, a session created later too.
  await todaysim.gesture("ts-s5a", { type: "pull", requestId: "p1" });
  await todaysim.createSession({ uid: "ts-u5", id: "ts-s5b" });
  const seen: EntryEvent[] = [];
  for await (const event of stream) {
    seen.push(event);
    if (seen.some((e) => e.sessionId === "ts-s5b") && seen.some((e) => e.sessionId === "ts-s5a")) break;
  }
  const first = seen.find((e) => e.sessionId === "ts-s5a");
  assert.deepEqual([first?.id, first?.entry.type], [`ts-s5a/${first?.entry.seq}`, "pull"]);
  assert.equal(seen.find((e) => e.sessionId === "ts-s5b")?.entry.seq, 1);
  // Aborting the signal ends an open stream's iteration.
  const aborted = await todaysim.accountEvents("ts-u5", { signal: stop.signal });
  const ended = collect(aborted);
  stop.abort();
  assert.deepEqual(await ended, []);
});

test("export, replay and fork", async () => {
  await todaysim.createSession({ uid: "ts-u6", id: "ts-s6" });
  await todaysim.gesture("ts-s6", { type: "pull", requestId: "p1" });
  await todaysim.clock("ts-s6", { advanceMs: 5000 }); // M7, then a recovery reload
  // A page of one input at a time (the creation is the first, and not a step): exportAll pages on.
  const page = await todaysim.exportSession("ts-s6", { limit: 1 });
  assert.deepEqual([page.steps, page.next, page.more, page.create.id], [[], 1, true, "ts-s6"]);
  const script = await todaysim.exportAll("ts-s6");
  assert.deepEqual(script.steps, [{ gesture: { type: "pull", requestId: "p1" } }, { clock: { advanceMs: 5000 } }]);
  assert.deepEqual(await todaysim.exportAll("ts-s6", { pageSize: 1 }), script);
  const replayed = await todaysim.replay(script, "ts-s6-replayed");
  assert.deepEqual((await todaysim.report("ts-s6-replayed")).violations.map((v) => v.type), ["M7"]);
  assert.equal(replayed.version, (await todaysim.readSession("ts-s6")).version);
  await todaysim.deleteSession("ts-s6-replayed");
  const fork = await todaysim.forkSession("ts-s6", "ts-s6-fork");
  assert.equal(fork.version, (await todaysim.readSession("ts-s6")).version);
  await todaysim.deleteSession("ts-s6-fork");
  await assert.rejects(todaysim.readSession("ts-s6-fork"), (error) => error instanceof TodaysimError && error.code === "session_not_found");
  const unnamed = await todaysim.forkSession("ts-s6");
  assert.notEqual(unnamed.id, "ts-s6");
  await todaysim.deleteSession(unnamed.id);
});

test("host traces: text, lines, JUnit, a file streamed in chunks, and a bad one", async () => {
  await todaysim.createSession({ uid: "ts-u7", id: "ts-s7" });
  await todaysim.steps("ts-s7", [
    { gesture: { type: "pull", requestId: "p1" } }, { webEvent: answer("p1") }, { lifecycle: { type: "background" } },
    { clock: { advanceMs: 6000 } }, { lifecycle: { type: "foreground", requestId: "fg-1" } }, { clock: { advanceMs: 5000 } },
  ]);
  const trace = await todaysim.timelineTrace("ts-s7");
  assert.equal((await todaysim.verifyHostTrace(trace)).conforms, true);
  const lines = trace.split("\n").filter((line) => line).map((line) => JSON.parse(line) as object);
  const kept = await todaysim.verifyHostTrace(lines, { keep: "ts-s7-kept" });
  assert.deepEqual([kept.conforms, kept.session], [true, "ts-s7-kept"]);
  await todaysim.deleteSession("ts-s7-kept");
  assert.match(await todaysim.verifyHostTrace(trace, { format: "junit" }), /^<\?xml[^]*<testsuites\b/);

  // From a file: read a kilobyte at a time as the upload goes, never whole. The fetch below
  // sees the body the client hands it and counts its chunks on their way to the server.
  const file = join(scratch, "ts-s7.jsonl");
  await writeFile(file, trace);
  const size = (await stat(file)).size;
  assert.ok(size > 4 * 1024, `a trace of several chunks (${size} bytes)`);
  const chunks: number[] = [];
  let streamed = false;
  const watching = server.client({
    fetch: (input, init) => {
      const body = init?.body;
      streamed = body instanceof ReadableStream;
      if (!(body instanceof ReadableStream)) return fetch(input, init);
      const counted = body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          chunks.push(chunk.byteLength);
          controller.enqueue(chunk);
        },
      }));
      return fetch(input, { ...init, body: counted, duplex: "half" } as RequestInit);
    },
  });
  const verdict = await watching.verifyHostTraceFile(file, {}, { chunkBytes: 1024 });
  assert.equal(verdict.conforms, true);
  assert.ok(streamed, "the file is handed to fetch as a stream");
  assert.equal(chunks.reduce((sum, n) => sum + n, 0), size);
  assert.ok(chunks.length >= Math.ceil(size / 1024) && chunks.every((n) => n <= 1024), `chunks of at most 1 KiB: ${chunks.join(",")}`);
  assert.match(await todaysim.verifyHostTraceFile(file, { format: "junit" }), /<testsuites\b/);

  // A diverging trace names its rule; an unsound one is refused naming its line.
  const diverging = trace.replace('"requestId":"fg-1"', '"requestId":"fg-X"');
  assert.notEqual(diverging, trace);
  assert.equal((await todaysim.verifyHostTrace(diverging)).conforms, false);
  await assert.rejects(todaysim.verifyHostTrace("not a trace\n"),
    (error) => error instanceof TodaysimError && error.status === 400 && error.code === "invalid_trace" && error.field === "line 1");
});

test("two recordings of one scenario compared: identical, a planted difference by its rule, JUnit, a pair that is none", async () => {
  const traces: string[] = [];
  for (const platform of ["ios", "android"] as const) {
    await todaysim.createSession({ uid: "ts-u9", id: `ts-s9-${platform}`, platform });
    await todaysim.steps(`ts-s9-${platform}`, [
      { lifecycle: { type: "background" } }, { clock: { advanceMs: 6000 } }, { lifecycle: { type: "foreground" } }, { clock: { advanceMs: 6000 } },
    ]);
    traces.push(await todaysim.timelineTrace(`ts-s9-${platform}`));
  }
  const [ios, android] = traces;
  const same = await todaysim.compareTraces(ios, android);
  assert.deepEqual([same.identical, same.differenceCount, same.a.conforms, same.b.conforms], [true, 0, true, true]);
  // The Android host that never makes the recovery reload (H9): its own fault.
  const broken = android.split("\n").filter((line) => !line.includes('"type":"recovery"')).join("\n");
  const lines = ios.split("\n").filter((line) => line).map((line) => JSON.parse(line) as object);
  const found = await todaysim.compareTraces(lines, new TextEncoder().encode(broken), { toleranceMs: 100 });
  assert.equal(found.identical, false);
  assert.deepEqual(found.differences.map((d) => [d.problem, d.rule, d.side, d.kind]), [["onlyA", "H9", "b", "navigation"]]);
  assert.match(await todaysim.compareTraces(ios, broken, { format: "junit" }), /^<\?xml[^]*type="H9"/);
  await assert.rejects(todaysim.compareTraces(ios, "not a trace\n"),
    (error) => error instanceof TodaysimError && error.status === 400 && error.code === "invalid_trace" && error.field === "b: line 1");
  const noInputs = ios.split("\n").filter((line) => !line.includes('"kind":"input","type":"background"')).join("\n");
  await assert.rejects(todaysim.compareTraces(ios, noInputs),
    (error) => error instanceof TodaysimError && error.status === 400 && error.code === "traces_not_comparable");
});

test("refusals are one error with code, status and field", async () => {
  await todaysim.createSession({ uid: "ts-u8", id: "ts-s8" });
  // A bad body: a misspelt field, refused by Strict validation with the field named.
  const typo = await todaysim.gesture("ts-s8", { type: "pull", requestID: "p1" } as never).catch((error: unknown) => error);
  assert.ok(typo instanceof TodaysimError);
  assert.deepEqual([typo.status, typo.code, typo.field, typo.type], [400, "invalid_field", "requestID", "/problems/invalid_field"]);
  assert.match(typo.detail, /did you mean requestId\?/);
  assert.equal(typo.request, "POST /v1/sessions/ts-s8/gestures");
  // Under Warn the same body is applied as if the field were absent, and warned about.
  const warned = await server.client({ fieldValidation: "Warn" }).gesture("ts-s8", { type: "pull", requestID: "p2" } as never);
  assert.deepEqual(warned.warnings, [{ field: "requestID", detail: "unknown field; did you mean requestId?" }]);
  const outOfRange = await todaysim.createSession({ uid: "ts-u8", timing: { pullWatchdogMs: 0 } }).catch((error: unknown) => error);
  assert.ok(outOfRange instanceof TodaysimError);
  assert.deepEqual([outOfRange.status, outOfRange.code, outOfRange.field], [400, "invalid_field", "timing.pullWatchdogMs"]);
  const missing = await todaysim.readSession("ts-no-such-session").catch((error: unknown) => error);
  assert.ok(missing instanceof TodaysimError);
  assert.deepEqual([missing.status, missing.code, missing.field], [404, "session_not_found", undefined]);
  await todaysim.lifecycle("ts-s8", { type: "teardown" });
  await assert.rejects(todaysim.gesture("ts-s8", { type: "pull" }),
    (error) => error instanceof TodaysimError && error.status === 409 && error.code === "session_closed");
  const unreachable = await new Client({ baseUrl: "http://127.0.0.1:9", timeoutMs: 5000 }).health().catch((error: unknown) => error);
  assert.ok(unreachable instanceof TodaysimError);
  assert.deepEqual([unreachable.status, unreachable.code], [0, "unreachable"]);
});

test("a token: sent as Bearer, read from TODAYSIM_TOKEN by fromEnv", async () => {
  const guarded = await startServer({ token: "ts-secret" });
  try {
    const refused = await new Client({ baseUrl: guarded.url }).listSessions().catch((error: unknown) => error);
    assert.ok(refused instanceof TodaysimError);
    assert.deepEqual([refused.status, refused.code], [401, "unauthorized"]);
    assert.deepEqual((await guarded.client().listSessions()).sessions, []);
    const saved = { url: process.env.TODAYSIM_URL, token: process.env.TODAYSIM_TOKEN };
    process.env.TODAYSIM_URL = guarded.url;
    process.env.TODAYSIM_TOKEN = "ts-secret";
    try {
      const fromEnv = Client.fromEnv();
      assert.deepEqual([fromEnv.baseUrl, fromEnv.token], [guarded.url, "ts-secret"]);
      assert.equal((await fromEnv.createSession({ uid: "ts-u9", id: "ts-s9" })).id, "ts-s9");
    } finally {
      // Assigning undefined would set the text "undefined": a variable that was not set is deleted.
      if (saved.url === undefined) delete process.env.TODAYSIM_URL;
      else process.env.TODAYSIM_URL = saved.url;
      if (saved.token === undefined) delete process.env.TODAYSIM_TOKEN;
      else process.env.TODAYSIM_TOKEN = saved.token;
    }
  } finally {
    await guarded.stop();
  }
});

test("reset purges every session (on a server of its own)", async () => {
  const own = await startServer();
  try {
    const client = own.client({ fetch: recordingFetch(called) });
    await client.createSession({ uid: "u1", id: "r1" });
    await client.createSession({ uid: "u1", id: "r2" });
    assert.deepEqual(await client.reset(), { deleted: 2 });
    assert.deepEqual((await client.listSessions()).sessions, []);
  } finally {
    await own.stop();
  }
});

test("every operation was called for real by the tests above", async () => {
  const missed = (Object.keys(OPERATIONS) as OperationId[]).filter((id) => !called.has(id));
  assert.deepEqual(missed, []);
});
