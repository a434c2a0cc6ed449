// The fixtures object as Playwright Test calls it: each fixture function called with its
// fixtures and a `use` callback that runs the rest (the next fixture, then the test), the
// worker's server started from TODAYSIM_BIN or taken from TODAYSIM_URL, every session a test
// made purged at teardown (a failing test's too), and a page whose origin the server refuses
// failing at once, naming --allow-origin, before a session is made (issue 34, item 1).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Client, TodaysimError, TodaysimServer } from "../src/index.js";
import { checkOrigin, originOf, OriginRefused, refusedSentence, SettleTimeout, todaysimFixtures } from "../src/playwright.js";
import type { BridgedPage, BridgedPages, HostSessions } from "../src/playwright.js";
import { launchChromium, servePages } from "./browser.js";
import type { Pages, TestBrowser, TestContext, TestPage } from "./browser.js";
import { binary } from "./support.js";

let browser: TestBrowser;
let pages: Pages;
let strict: TodaysimServer; // as Scripts/run starts it: no --allow-origin
const contexts: TestContext[] = [];

before(async () => {
  [browser, pages, strict] = await Promise.all([launchChromium(), servePages(), TodaysimServer.start({ binary: binary(), allowOrigin: null })]);
}, { timeout: 120_000 });

after(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await pages?.close();
  await strict?.stop();
});

async function newPage(): Promise<TestPage> {
  const context = await browser.newContext();
  contexts.push(context);
  return context.newPage();
}

/** The three fixtures nested as Playwright Test nests them around one test, `baseURL` the pages' server. */
async function withFixtures(body: (fixtures: { todaysim: Client; hostSession: HostSessions; bridgedPage: BridgedPages; page: TestPage }) => Promise<void>,
                            outside: (todaysim: Client) => Promise<void>): Promise<void> {
  const [workerFixture, options] = todaysimFixtures.todaysim;
  assert.equal(options.scope, "worker");
  const page = await newPage();
  await workerFixture({}, async (todaysim) => {
    try {
      await todaysimFixtures.hostSession({ todaysim }, async (hostSession) => {
        await todaysimFixtures.bridgedPage({ todaysim, hostSession, page, browser, baseURL: pages.base }, async (bridgedPage) => {
          await body({ todaysim, hostSession, bridgedPage, page });
        });
      }, { title: "a test" });
    } finally {
      await outside(todaysim); // after the test's fixtures are torn down, before the worker's
    }
  });
}

async function gone(todaysim: Client, id: string): Promise<boolean> {
  try {
    await todaysim.readSession(id);
    return false;
  } catch (error) {
    if (error instanceof TodaysimError && error.status === 404) return true;
    throw error;
  }
}

test("the fixtures, called as Playwright Test calls them, give a bridged page and purge its sessions at teardown", async () => {
  const made: string[] = [];
  let second: BridgedPage | undefined;
  let serverUrl = "";
  await withFixtures(async ({ todaysim, hostSession, bridgedPage, page }) => {
    serverUrl = todaysim.baseUrl;
    assert.equal(todaysim.fieldValidation, "Strict");
    const plain = await hostSession({ platform: "android" });
    assert.deepEqual([plain.platform, plain.uid], ["android", "playwright-a-test"]);
    const bridged = await bridgedPage("/today/index.html", { id: "fixtures-s1" }); // resolved against baseURL
    assert.equal(bridged.page, page); // the test's own page first
    await bridged.step({ gesture: { type: "pull", requestId: "p1" } });
    await bridged.move(12_000);
    await bridged.expectConforms();
    second = await bridgedPage(pages.today); // a page of a new context
    assert.notEqual(second.page, page);
    made.push(plain.id, bridged.sessionId, second.sessionId);
    for (const id of made) assert.equal((await todaysim.readSession(id)).status, "active");
  }, async (todaysim) => {
    for (const id of made) assert.ok(await gone(todaysim, id), `session ${id} outlived its test`);
  });
  assert.deepEqual(made.slice(1, 2), ["fixtures-s1"]);
  assert.ok((second?.page as TestPage).isClosed(), "the second page's context outlived its test");
  // The worker's server (started from TODAYSIM_BIN) is stopped with the worker.
  await assert.rejects(new Client(serverUrl).health(), (error) => error instanceof TodaysimError && error.code === "unreachable");
});

test("a test that fails still has its sessions purged", async () => {
  let made = "";
  await assert.rejects(withFixtures(async ({ hostSession }) => {
    made = (await hostSession()).id;
    throw new Error("the test failed");
  }, async (todaysim) => {
    assert.ok(await gone(todaysim, made), "the failing test's session outlived it");
  }), (error) => error instanceof Error && error.message === "the test failed");
  assert.notEqual(made, "");
});

test("with TODAYSIM_URL the worker uses that server; a page origin it refuses fails at once naming --allow-origin", async () => {
  const before = process.env.TODAYSIM_URL;
  process.env.TODAYSIM_URL = strict.url;
  const origin = originOf(pages.today);
  try {
    await withFixtures(async ({ todaysim, bridgedPage }) => {
      assert.equal(todaysim.baseUrl, strict.url);
      await assert.rejects(bridgedPage(pages.today, { id: "refused-s1" }),
        (error) => error instanceof OriginRefused && error.message === refusedSentence(strict.url, origin)
          && error.message.includes(`start it with --allow-origin ${origin}`));
      // Looked at before the teardown (which would purge it): no session was made at all.
      assert.ok(await gone(todaysim, "refused-s1"), "a session was made for a page the server refuses");
    }, async () => undefined);
  } finally {
    if (before === undefined) delete process.env.TODAYSIM_URL;
    else process.env.TODAYSIM_URL = before;
  }
  assert.equal((await strict.client().health()).status, "ok"); // a server the worker did not start is left running
});

test("checkOrigin passes for a granted origin and for the server's own pages", async () => {
  const origin = originOf(pages.today);
  await checkOrigin(strict.client(), `${strict.url}/bridge.js`); // same origin: nothing to ask
  await assert.rejects(checkOrigin(strict.client(), pages.today), (error) => error instanceof OriginRefused);
  const allowing = await TodaysimServer.start({ binary: binary(), allowOrigin: origin });
  try {
    await checkOrigin(allowing.client(), pages.today);
    await assert.rejects(checkOrigin(allowing.client(), "http://127.0.0.1:1/page.html"), (error) => error instanceof OriginRefused);
  } finally {
    await allowing.stop();
  }
  assert.equal(originOf("HTTP://LocalHost:80/a?b=1"), "http://localhost");
});

test("bridgedPage takes the page's settleTimeoutMs (issue 45, item 7)", async () => {
  await withFixtures(async ({ bridgedPage }) => {
    const patient = await bridgedPage("/today/index.html", {}, { settleTimeoutMs: 5_000 });
    assert.equal(patient.settleTimeoutMs, 5_000);
    await assert.rejects(bridgedPage("/pages/no-bridge.html", {}, { settleTimeoutMs: 300 }),
      (error) => error instanceof SettleTimeout && /did not settle within 300 ms: the page never loaded \/bridge\.js/.test(error.message));
    await assert.rejects(bridgedPage("/today/index.html", {}, { settleTimeoutMs: -1 }),
      (error) => error instanceof RangeError && /settleTimeoutMs is -1/.test(error.message));
  }, async () => undefined);
});
