// The Playwright helper on real pages: playwright-core (the copy PyPI's `playwright` wheel
// ships) driving Debian's Chromium against this build's binary. The fixture Today Page conforms
// through every scenario that shows one of its planted bugs; each planted bug (`?bug=NAME`,
// examples/today-page/index.html) fails expectConforms() with its code; a page timer
// at 4,999 ms answers before the 5 s deadline and one at 5,000 ms is late (python/tests/
// test_page.py, the same on one virtual time); a page that never settles is an error, not a
// breach.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { BridgedPage, ConformanceError, defaultSettleTimeoutMs, EPOCH_MS, SETTLE_TIMEOUT_VARIABLE, SettleTimeout, TIMELINE_TAIL } from "../src/playwright.js";
import type { OpenedBridgedPage, Step } from "../src/playwright.js";
import type { Client, InputResponse, SessionView, TimelineEntry, TodaysimServer } from "../src/index.js";
import { launchChromium, servePages } from "./browser.js";
import type { Pages, TestBrowser, TestContext } from "./browser.js";
import { startServer } from "./support.js";

let server: TodaysimServer;
let todaysim: Client;
let browser: TestBrowser;
let pages: Pages;
const contexts: TestContext[] = [];
let made = 0;

before(async () => {
  [server, browser, pages] = await Promise.all([startServer(), launchChromium(), servePages()]);
  todaysim = server.client({ fieldValidation: "Strict" });
}, { timeout: 120_000 });

after(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await pages?.close();
  await server?.stop();
});

/** A new session and a page of a new context showing `url` on the session's clock. */
async function bridged(url: string, settleTimeoutMs?: number): Promise<OpenedBridgedPage> {
  const view = await todaysim.createSession({ uid: "ts-playwright", id: `pw-${++made}` });
  const context = await browser.newContext();
  contexts.push(context);
  return new BridgedPage(todaysim, view.id, await context.newPage(), url, { settleTimeoutMs }).open();
}

async function run(page: BridgedPage, steps: Step[]): Promise<void> {
  for (const step of steps) await page.step(step);
}

// bug -> (the code it breaks, the shortest scenario known: python/tests/test_explore.py's PLANTED)
const PLANTED: { [bug: string]: [string, Step[]] } = {
  // A pull while the boot fetch runs is dropped instead of joining it; the 5 s deadline passes.
  "busy-drop": ["M7", [{ gesture: { type: "pull" } }, { clock: { advanceMs: 5000 } }]],
  // Header feedback for a user pull.
  "pull-header": ["M3", [{ gesture: { type: "pull" } }]],
  // The boot fetch (50 ms) answers its id twice.
  "double": ["M1", [{ clock: { advanceMs: 50 } }]],
  // The host reloads a terminated page; it renders before releasing the overlay.
  "render-first": ["M9", [{ lifecycle: { type: "webContentTerminated" } }]],
  // Away 5 s and back: the app_foreground request is never answered before its deadline.
  "background-drop": ["M7", [{ lifecycle: { type: "background" } }, { clock: { advanceMs: 5000 } },
    { lifecycle: { type: "foreground" } }, { clock: { advanceMs: 5000 } }]],
  // The reload after a termination is answered with the id the previous document answered.
  "stale-reload-id": ["M1", [{ clock: { advanceMs: 50 } }, { lifecycle: { type: "webContentTerminated" } },
    { clock: { advanceMs: 50 } }]],
  // Away 5 s and back, and a second request within the 16 ms the page waits before its fetch:
  // it replaces the app_foreground request, which is never answered.
  "foreground-replace": ["M7", [{ lifecycle: { type: "background" } }, { clock: { advanceMs: 5000 } },
    { lifecycle: { type: "foreground" } }, { lifecycle: { type: "tabActivated" } }, { clock: { advanceMs: 5000 } }]],
};

test("the fixture page conforms through every scenario that shows a planted bug", async () => {
  const page = await bridged(pages.today);
  // Each bug's scenario in turn (a pull during the boot fetch, the deadline, a background and
  // foreground round trip with a tab activation in the same millisecond, a termination and its
  // reload), on the page as written.
  await run(page, [
    { gesture: { type: "pull", requestId: "p1" } }, { clock: { advanceMs: 5000 } },
    { lifecycle: { type: "background" } }, { clock: { advanceMs: 5000 } },
    { lifecycle: { type: "foreground", requestId: "fg1" } }, { lifecycle: { type: "tabActivated", requestId: "tab1" } },
    { clock: { advanceMs: 5000 } },
    { lifecycle: { type: "webContentTerminated", requestId: "t1" } }, { clock: { advanceMs: 1000 } },
  ]);
  await page.expectConforms();
  const report = await page.report();
  const outcomes = Object.fromEntries(report.requests.map((r) => [r.requestId, r.outcome]));
  assert.deepEqual([outcomes.p1, outcomes.fg1, outcomes.tab1, outcomes.t1], ["succeeded", "succeeded", "succeeded", "succeeded"]);
  const view = await todaysim.readSession(page.sessionId);
  assert.deepEqual([view.clock.nowMs, view.document.loadId], [16_000, 2]);
  assert.equal(await page.pageNowMs(), 16_000);
});

for (const [bug, [code, steps]] of Object.entries(PLANTED)) {
  test(`the planted bug ${bug} fails expectConforms() with ${code}`, async () => {
    const page = await bridged(`${pages.today}?bug=${bug}`);
    await run(page, steps);
    let failure: unknown;
    await page.expectConforms().catch((error: unknown) => { failure = error; });
    assert.ok(failure instanceof ConformanceError, `${bug}: expectConforms() passed`);
    const violations = failure.report.violations;
    assert.ok(violations.some((v) => v.type === code), `${bug}: ${failure.message}`);
    // The message lists every violation with its rule and its own entry, then the timeline's tail.
    const [listed, tail] = failure.message.split("\ntimeline (last ");
    for (const v of violations) {
      assert.match(listed, new RegExp(`^  ${v.rule ?? v.type} at ${v.atMs} ms.*\\n    #${v.seq} ${v.atMs} ms violation ${v.type}\\b`, "m"));
    }
    assert.match(tail, new RegExp(`^\\d+ of \\d+\\):\\n(  #\\d+ \\d+ ms \\w+ .*\\n?)+$`));
  });
}

function answersOf(entries: TimelineEntry[], requestId: string): number[] {
  return entries.filter((e) => e.kind === "bridge" && e.type === "todayPage.refreshResult" && e.requestId === requestId)
    .map((e) => e.atMs);
}

async function entries(sessionId: string): Promise<TimelineEntry[]> {
  const found: TimelineEntry[] = [];
  for await (const entry of todaysim.timelineEntries(sessionId)) found.push(entry);
  return found;
}

test("a page timer at 4,999 ms answers before the 5 s deadline", async () => {
  const page = await bridged(`${pages.base}/pages/timer.html?delay=4999`);
  await page.step({ gesture: { type: "pull", requestId: "p1" } });
  await page.step({ clock: { advanceMs: 12_000 } });
  assert.deepEqual(answersOf(await entries(page.sessionId), "p1"), [4999]);
  const report = await page.report();
  assert.deepEqual([report.conforms, report.requests.map((r) => r.outcome)], [true, ["succeeded"]]);
  assert.equal(await page.pageNowMs(), 12_000);
  assert.equal((await todaysim.readSession(page.sessionId)).clock.nowMs, 12_000);
});

test("a page timer at 5,000 ms is late", async () => {
  const page = await bridged(`${pages.base}/pages/timer.html?delay=5000`);
  await page.step({ gesture: { type: "pull", requestId: "p1" } });
  await page.step({ clock: { advanceMs: 12_000 } });
  // The deadline fires at 5,000 ms first (the session's timers act before the page's at one
  // millisecond): the request times out (M7) and the document reloads (H9), taking the page's
  // pending answer with it.
  const report = await page.report();
  assert.deepEqual(report.violations.slice(0, 1).map((v) => [v.type, v.requestId, v.atMs]), [["M7", "p1", 5000]]);
  assert.deepEqual(answersOf(await entries(page.sessionId), "p1"), []);
  assert.equal((await todaysim.readSession(page.sessionId)).document.cause, "recovery");
  await assert.rejects(page.expectConforms(), (error) => error instanceof ConformanceError && /^ {2}M7 at 5000 ms \(p1\): /m.test(error.message));
});

test("a settle's deadline, when the caller gives none, is TODAYSIM_SETTLE_TIMEOUT_MS's, else 2,000 ms", async () => {
  const before = process.env[SETTLE_TIMEOUT_VARIABLE];
  try {
    delete process.env[SETTLE_TIMEOUT_VARIABLE];
    assert.equal(defaultSettleTimeoutMs(), 2_000);
    process.env[SETTLE_TIMEOUT_VARIABLE] = "";
    assert.equal(defaultSettleTimeoutMs(), 2_000);
    process.env[SETTLE_TIMEOUT_VARIABLE] = "45000";
    assert.equal(defaultSettleTimeoutMs(), 45_000);
    assert.equal((await bridged(`${pages.base}/pages/timer.html?delay=10`)).settleTimeoutMs, 45_000);
    assert.equal((await bridged(`${pages.base}/pages/timer.html?delay=10`, 700)).settleTimeoutMs, 700, "the caller's wins");
    for (const bad of ["0", "-5", "2s", "1.5", " 9", "3600000"]) {
      process.env[SETTLE_TIMEOUT_VARIABLE] = bad;
      assert.throws(() => defaultSettleTimeoutMs(),
        (error) => error instanceof RangeError && error.message.startsWith(`TODAYSIM_SETTLE_TIMEOUT_MS is ${JSON.stringify(bad)}: say the ms`));
    }
  } finally {
    if (before === undefined) delete process.env[SETTLE_TIMEOUT_VARIABLE];
    else process.env[SETTLE_TIMEOUT_VARIABLE] = before;
  }
});

test("a page without the bridge is told to load it (issue 45, item 2)", async () => {
  let failure: unknown;
  // A page that can never settle: a short deadline of its own, whatever the run's default.
  await bridged(`${pages.base}/pages/no-bridge.html`, 500).catch((error: unknown) => { failure = error; });
  assert.ok(failure instanceof SettleTimeout, String(failure));
  assert.match(failure.message, /did not settle within 500 ms: the page never loaded \/bridge\.js \(it must, from its `todaysim` and `session` query parameters: /);
  assert.match(failure.message, /"bridge":false/);
});

test("a page that never settles is an error, not a breach", async () => {
  let failure: unknown;
  await bridged(`${pages.base}/pages/timer.html?hang=1`, 500).catch((error: unknown) => { failure = error; });
  assert.ok(failure instanceof SettleTimeout, String(failure));
  assert.match(failure.message, /did not settle within 500 ms: .*"requests":1/);
  assert.doesNotMatch(failure.message, /never loaded \/bridge\.js/, "the page has its bridge: that is not the cause");
  const id = `pw-${made}`;
  assert.deepEqual([(await todaysim.report(id)).conforms, (await todaysim.readSession(id)).counts.violations], [true, 0]);
});

test("a conformance failure lists every violation's entry, however far back (issue 45, item 7)", async () => {
  const page = await bridged(`${pages.today}?bug=double`);
  await page.step({ clock: { advanceMs: 50 } }); // M1: the boot fetch answers its id twice
  // Enough pulls after it that the violation is far from the timeline's last entries.
  for (let i = 1; i <= 8; i += 1) await run(page, [{ gesture: { type: "pull", requestId: `q${i}` } }, { clock: { advanceMs: 1000 } }]);
  const report = await page.report();
  const total = (await todaysim.readSession(page.sessionId)).counts.timeline;
  const first = report.violations[0];
  assert.ok(first !== undefined && first.seq <= total - TIMELINE_TAIL, `the violation #${first?.seq} is among the last ${TIMELINE_TAIL} of ${total}`);
  await assert.rejects(page.expectConforms(), (error) => error instanceof ConformanceError &&
    report.violations.every((v) => error.message.includes(`\n    #${v.seq} ${v.atMs} ms violation ${v.type}`)));
});

test("a render gated on an animation frame happens in open()'s settle; the next frame 16 ms later (issue 45, item 7)", async () => {
  const page = await bridged(`${pages.base}/pages/frame.html`);
  assert.deepEqual([await page.page.textContent("#rendered"), await page.page.textContent("#again")], [`rendered at ${EPOCH_MS}`, ""]);
  assert.equal(await page.page.evaluate("typeof __pwClock"), "undefined", "Playwright's own clock is not installed");
  await page.move(15);
  assert.equal(await page.page.textContent("#again"), "");
  await page.move(1);
  assert.equal(await page.page.textContent("#again"), `again at ${EPOCH_MS + 16}`);
});

test("step() answers what the step was: a clock move's inputs, a batch's answer; view is there after open() (issue 45, item 3)", async () => {
  const page = await bridged(pages.today);
  const view: SessionView = page.view; // typed after open(): no undefined to rule out
  assert.equal(view.id, page.sessionId);
  const moved: InputResponse[] = await page.step({ clock: { advanceMs: 100 } });
  assert.ok(moved.length >= 1 && moved.every((answer) => answer.session.id === page.sessionId));
  const batch = await page.step({ gesture: { type: "pull", requestId: "typed1" } });
  assert.equal(batch.results.length, 1);
  // @ts-expect-error: a gesture's answer is the batch's, not a list of clock inputs
  const wrong: InputResponse[] = await page.step({ gesture: { type: "pull" } });
  void wrong;
  // @ts-expect-error: a clock move's answer has no `results`
  void (await page.step({ clock: { advanceMs: 1 } })).results;
});
