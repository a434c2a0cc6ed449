/**
 * todaysim's fixtures for Playwright Test's `test.extend(...)`: the worker's server, sessions
 * purged at teardown, bridged pages.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { BridgedPage } from "./bridged-page.js";
import type { BridgedPageOptions, OpenedBridgedPage } from "./page-types.js";
import { Client } from "./client.js";
import type { FieldValidation } from "./client.js";
import type { SessionView } from "./generated/api.js";
import { checkOrigin } from "./origin.js";
import { TodaysimServer } from "./server.js";

/** `hostSession(fields?)`: creates a session (its view returned); every one is purged at teardown. */
export type HostSessions = (fields?: Partial<Parameters<Client["createSession"]>[0]>) => Promise<SessionView>;

/**
 * `bridgedPage(url?, fields?, options?)`: an opened `BridgedPage` on a new session. `url` is the
 * page under test, resolved against Playwright's `baseURL`, default `TODAY_PAGE_URL`; `options`
 * the page's (`settleTimeoutMs`, default `TODAYSIM_SETTLE_TIMEOUT_MS`, else 2,000).
 */
export type BridgedPages = (url?: string, fields?: Partial<Parameters<Client["createSession"]>[0]>,
                            options?: BridgedPageOptions) => Promise<OpenedBridgedPage>;

export interface TodaysimWorkerFixtures {
  /** A client of the worker's server: `TODAYSIM_URL` (with `TODAYSIM_TOKEN`) when set, else one started from `TODAYSIM_BIN`. */
  todaysim: Client;
}

export interface TodaysimFixtures {
  hostSession: HostSessions;
  bridgedPage: BridgedPages;
}

type Use<T> = (value: T) => Promise<void>;

/** The fixture functions, as `test.extend()` takes them (`[function, { scope: "worker" }]` for the server). */
export interface TodaysimFixtureFunctions {
  todaysim: [(fixtures: {}, use: Use<Client>) => Promise<void>, { scope: "worker" }];
  hostSession: (fixtures: { todaysim: Client }, use: Use<HostSessions>, testInfo?: { title?: string }) => Promise<void>;
  bridgedPage: (
    fixtures: { todaysim: Client; hostSession: HostSessions; page: Page; browser?: Browser; baseURL?: string },
    use: Use<BridgedPages>,
  ) => Promise<void>;
}

function environment(name: string): string | undefined {
  return typeof process === "undefined" ? undefined : process.env[name] || undefined;
}

/** The field validation the fixtures' client sends: `TODAYSIM_FIELD_VALIDATION`, default `Strict` (a typo fails at once). */
function fieldValidation(): FieldValidation {
  const given = environment("TODAYSIM_FIELD_VALIDATION") ?? "Strict";
  if (given !== "Strict" && given !== "Warn" && given !== "Ignore") {
    throw new Error(`TODAYSIM_FIELD_VALIDATION is ${given}: say Strict, Warn or Ignore`);
  }
  return given;
}

/**
 * Fixtures for Playwright Test:
 *
 *     import { test as base } from "@playwright/test";
 *     import { todaysimFixtures } from "todaysim/playwright";
 *     import type { TodaysimFixtures, TodaysimWorkerFixtures } from "todaysim/playwright";
 *     export const test = base.extend<TodaysimFixtures, TodaysimWorkerFixtures>(todaysimFixtures);
 *
 * - `todaysim` (worker): a `Client` of `TODAYSIM_URL` when set (`TODAYSIM_TOKEN` its token),
 *   else of a todaysim started from `TODAYSIM_BIN` (or `todaysim` on PATH) on a free loopback
 *   port with `--db :memory:` (and any page origin allowed), stopped when the worker ends.
 * - `hostSession`: `await hostSession({ uid, platform, ... })` → the created session's view;
 *   every session it made is purged at teardown.
 * - `bridgedPage`: `await bridgedPage(url?, fields?, { settleTimeoutMs }?)` → an opened
 *   `BridgedPage` on a new session: Playwright's `page` for the first, a page of a new context
 *   for each further one.
 *   A server that does not let the page's origin call it fails at once with `OriginRefused`,
 *   naming `--allow-origin`, before a session is made.
 *
 * Playwright Test reads which fixtures a function needs from its first parameter, written as
 * an object pattern: each function below keeps that form.
 */
export const todaysimFixtures: TodaysimFixtureFunctions = {
  todaysim: [async ({}, use) => {
    const url = environment("TODAYSIM_URL");
    if (url) {
      await use(new Client({ baseUrl: url, token: environment("TODAYSIM_TOKEN"), fieldValidation: fieldValidation() }));
      return;
    }
    const server = await TodaysimServer.start();
    try {
      await use(server.client({ fieldValidation: fieldValidation() }));
    } finally {
      const code = await server.stop();
      if (code !== 0 && code !== null) console.error(`todaysim exited ${code}:\n${server.log.slice(-10).join("\n")}`);
    }
  }, { scope: "worker" }],

  hostSession: async ({ todaysim }, use, testInfo) => {
    const made: string[] = [];
    const uid = `playwright-${(testInfo?.title ?? "test").replace(/[^A-Za-z0-9_-]+/g, "-").slice(0, 60)}`;
    try {
      await use(async (fields = {}) => {
        const view = await todaysim.createSession({ ...fields, uid: fields.uid ?? uid });
        made.push(view.id);
        return view;
      });
    } finally {
      for (const id of made) {
        try {
          await todaysim.deleteSession(id);
        } catch {
          // already purged by the test: nothing left to clean
        }
      }
    }
  },

  bridgedPage: async ({ todaysim, hostSession, page, browser, baseURL }, use) => {
    const contexts: BrowserContext[] = [];
    let pageTaken = false;
    try {
      await use(async (url, fields, options) => {
        const given = url ?? environment("TODAY_PAGE_URL");
        if (!given) throw new Error("bridgedPage needs the page under test: bridgedPage(url) or TODAY_PAGE_URL");
        const target = new URL(given, baseURL).toString();
        await checkOrigin(todaysim, target); // OriginRefused, naming --allow-origin, before a session is made
        const view = await hostSession(fields);
        let under = page;
        if (pageTaken) {
          if (!browser) throw new Error("a second bridgedPage in one test needs Playwright's browser fixture");
          const context = await browser.newContext();
          contexts.push(context);
          under = await context.newPage();
        }
        pageTaken = true;
        return new BridgedPage(todaysim, view.id, under, target, options).open();
      });
    } finally {
      for (const context of contexts) await context.close();
    }
  },
};
