/**
 * todaysim for Playwright (`todaysim/playwright`): a real page on the session's clock, and
 * fixtures for Playwright Test's `test.extend(...)`.
 *
 * `BridgedPage` runs the page under test in a Playwright page with todaysim's `/bridge.js`
 * attached to a session, the page's own timers on Playwright's page clock (paused before the
 * page loads, at `EPOCH_MS` + the session's `nowMs`), so one call moves both clocks together
 * and a scenario that waits 12 s takes milliseconds and runs the same every time. It is the
 * TypeScript twin of python/'s `todaysim.page.BridgedPage`, and follows it step for step: the
 * same timer tracker (`virtual-time.js`, one file for both packages, shipped beside this module),
 * the same settle conditions, the same 2 s settle deadline, the same order of the two clocks.
 *
 * Playwright is not imported, at run time or for types: the few members of `Page` and
 * `BrowserContext` used are declared here (`PlaywrightPage`, ...), and any page of
 * `playwright-core`, `playwright` or `@playwright/test` has them, so this module works with
 * whichever a project installed (an optional peer dependency).
 *
 * Playwright cannot list a page's pending timers: the tracker, an init script added after the
 * clock's own, records the due time of every `setTimeout`, `setInterval` and
 * `requestAnimationFrame`, and `move()` steps both clocks through the merged due times (the
 * session's watchdogs and the page's timers), settling after each, so a page timer at 4,999 ms
 * acts at 4,999 ms of session time, before a session deadline at 5,000 ms.
 *
 * *Settled* (`settle()`): no bridge call in flight; every entry up to the session's
 * `counts.timeline` delivered to the page; the page's load is the session's and its stream is
 * open; no other page request in flight; no page timer due now. A miss within `settleTimeoutMs`
 * (2,000) of wall time is `SettleTimeout`: an error of the test or its environment (a page that
 * never stops working), never a breach of the contract.
 */
import { Client } from "./client.js";
import type { FieldValidation } from "./client.js";
import { TodaysimError } from "./errors.js";
import { TodaysimServer } from "./server.js";
import type { InputResponse, Operations, Report, SessionView, TimelineEntry } from "./generated/api.js";

/** Page time when the session's clock reads 0 (2026-01-01T00:00:00Z), as python/'s `EPOCH_MS`. */
export const EPOCH_MS = 1_767_225_600_000;

// -- the Playwright this module needs, declared structurally ---------------------------------

/** The members of Playwright's `Request` used here. */
export interface PlaywrightRequest {
  url(): string;
  method(): string;
}

/** The members of Playwright's `Clock` used here (times in ms). */
export interface PlaywrightClock {
  pauseAt(time: number): Promise<void>;
  runFor(ticks: number): Promise<void>;
}

/** The member of Playwright's `CDPSession` used here (Chromium only). */
export interface PlaywrightCDPSession {
  send(method: "Runtime.evaluate", params: { expression: string; returnByValue: boolean }): Promise<{
    result: { value?: unknown };
    exceptionDetails?: { text: string };
  }>;
}

/** The members of Playwright's `BrowserContext` used here. */
export interface PlaywrightContext {
  addInitScript(script: { content: string }): Promise<unknown>;
  /** Chromium's; a browser without it is looked at through `page.evaluate`. */
  newCDPSession?(page: object): Promise<PlaywrightCDPSession>;
  newPage(): Promise<PlaywrightPage>;
  close(): Promise<void>;
}

/** The members of Playwright's `Page` used here: any Playwright page has them. */
export interface PlaywrightPage {
  readonly clock: PlaywrightClock;
  context(): PlaywrightContext;
  goto(url: string, options?: { waitUntil?: "load" | "domcontentloaded" | "networkidle" | "commit" }): Promise<unknown>;
  evaluate(expression: string): Promise<unknown>;
  on(event: "pageerror", listener: (error: Error) => void): unknown;
  on(event: "request", listener: (request: PlaywrightRequest) => void): unknown;
  on(event: "requestfinished", listener: (request: PlaywrightRequest) => void): unknown;
  on(event: "requestfailed", listener: (request: PlaywrightRequest) => void): unknown;
}

/** The member of Playwright's `Browser` used here (a second bridged page in one test). */
export interface PlaywrightBrowser {
  newContext(): Promise<PlaywrightContext>;
}

// -- the timer tracker -------------------------------------------------------------------------

let tracker: Promise<string> | undefined;

/**
 * The timer tracker (`Web/virtual-time.js` in the repository, shipped as `virtual-time.js`
 * beside this module): one script for this package and python/'s `BridgedPage`.
 */
export function timersScript(): Promise<string> {
  tracker ??= (async () => {
    const { readFile } = await import("node:fs/promises");
    const { fileURLToPath } = await import("node:url");
    return readFile(fileURLToPath(new URL("./virtual-time.js", import.meta.url)), "utf8");
  })();
  return tracker;
}

// What the page says about settling, in one look (python/'s PROBE_JS).
const PROBE_JS = `(() => {
  const b = window.todaysimBridge, t = window.__todaysimTimers ? window.__todaysimTimers() : null;
  return {bridge: !!(b && b.document), inFlight: b ? b.inFlight : null, delivered: b ? b.delivered : null,
          open: b ? b.open : false, loadId: b && b.document ? b.document.loadId : null,
          timers: t, ready: document.readyState, requests: window.__todaysimRequests ? window.__todaysimRequests() : 0};
})()`;

interface Look {
  bridge: boolean;
  inFlight: number | null;
  delivered: number | null;
  open: boolean;
  loadId: number | null;
  timers: { now: number; next: number | null; count: number } | null;
  ready: string;
  requests: number;
}

/** One look at the page, as `settle()` compares two of them. */
interface Probe {
  page?: string;
  bridge?: boolean;
  inFlight?: number | null;
  delivered?: number | null;
  pageLoad?: number | null;
  open?: boolean;
  requests?: number;
  pageRequests?: number;
  timerDueNow: boolean;
  ready?: string;
  pageNow?: number | null;
  pageNext?: number | null;
  quiet: boolean;
}

/** What `settle()` saw: the session's view, and the page's clock and earliest timer (page time, ms since the epoch). */
export interface Settled {
  view: SessionView;
  pageNow: number;
  pageNext: number | null;
}

/** One host step in `/steps` element form: `{ gesture: {...} }`, `{ lifecycle: {...} }`, `{ clock: {...} }`, ... */
export type Step = Operations["steps"]["body"][number];

// -- errors ----------------------------------------------------------------------------------

/**
 * The page and the session did not settle within the wall deadline: an error of the test or
 * its environment (a page that never stops working), never a contract breach.
 */
/** What a settle's timeout says when the page has no bridge: the most common cause, said first. */
export const NO_BRIDGE = "the page never loaded /bridge.js (it must, from its `todaysim` and `session` query parameters: " +
  "<script src=\"${todaysim}/bridge.js?session=${session}\">, before its own scripts; typescript/README.md, \"The page's part\")";

export class SettleTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettleTimeout";
  }
}

/**
 * The server does not let pages of the page under test's origin call it (no CORS grant for
 * that `Origin`): every bridge call of the page would be refused. Thrown before anything
 * starts, naming the flag to add.
 */
export class OriginRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OriginRefused";
  }
}

/** The session broke the contract: `expectConforms()`'s failure, its message every violation with its rule and the timeline's tail. */
export class ConformanceError extends Error {
  readonly report: Report;
  constructor(message: string, report: Report) {
    super(message);
    this.name = "ConformanceError";
    this.report = report;
  }
}

// -- the page's origin -----------------------------------------------------------------------

/** `scheme://host[:port]` of `url`, as a browser sends it in `Origin` (default ports left out). */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/** What the helpers throw and `/bridge.js` logs when the server refuses the page's origin (python/'s `refused_sentence`). */
export function refusedSentence(server: string, origin: string): string {
  return `todaysim at ${server} does not allow pages of ${origin} to call it (cross-origin), so every bridge call ` +
    `of the page would be refused: start it with --allow-origin ${origin} (Scripts/run --allow-origin ${origin})`;
}

/**
 * Asks the server, as the browser will, whether a page at `pageUrl` may call it: a CORS
 * preflight with the page's `Origin`. Nothing to ask when the page is served by the server
 * itself; `OriginRefused` naming `--allow-origin` when the grant is missing.
 */
export async function checkOrigin(client: Client, pageUrl: string): Promise<void> {
  const origin = originOf(pageUrl);
  if (origin === originOf(client.baseUrl)) return;
  const headers: { [name: string]: string } = { Origin: origin, "Access-Control-Request-Method": "POST" };
  if (client.token) headers.Authorization = `Bearer ${client.token}`;
  let response: Response;
  try {
    response = await fetch(`${client.baseUrl}/v1/sessions`, { method: "OPTIONS", headers });
  } catch (error) {
    throw new Error(`cannot reach todaysim at ${client.baseUrl} to ask whether ${origin} may call it: ${String(error)}`);
  }
  if (response.status !== 200 && response.status !== 204) throw await TodaysimError.fromResponse(response, "OPTIONS /v1/sessions");
  const granted = response.headers.get("Access-Control-Allow-Origin");
  if (granted !== origin && granted !== "*") throw new OriginRefused(refusedSentence(client.baseUrl, origin));
}

// -- the page ----------------------------------------------------------------------------------

export interface BridgedPageOptions {
  /** How long `settle()` waits, in ms of wall time (default 2,000, as python/'s `settle_timeout`). */
  settleTimeoutMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One session and the Playwright page that runs the page under test against it.
 *
 * `page` is a Playwright page of a context whose clock this object owns; `url` is the page
 * under test (its query gets `todaysim`, `session` and `access_token`, as the fixture page and
 * docs/TESTING-A-PAGE.md expect). Call `open()` once.
 */
export class BridgedPage {
  readonly client: Client;
  readonly sessionId: string;
  readonly page: PlaywrightPage;
  readonly url: string;
  readonly settleTimeoutMs: number;
  /** The session's view as last seen settled, and what `settle()` last returned. */
  view: SessionView | undefined;
  lastSettle: Settled | undefined;
  /** The page's uncaught errors, for a failure's message. */
  readonly errors: string[] = [];
  private readonly requests = new Set<PlaywrightRequest>();
  private cdp: PlaywrightCDPSession | undefined;

  constructor(client: Client, sessionId: string, page: PlaywrightPage, url: string, options: BridgedPageOptions = {}) {
    this.client = client;
    this.sessionId = sessionId;
    this.page = page;
    this.url = url;
    this.settleTimeoutMs = options.settleTimeoutMs ?? 2_000;
    page.on("pageerror", (error) => this.errors.push(String(error)));
    page.on("request", (request) => this.started(request));
    page.on("requestfinished", (request) => this.requests.delete(request));
    page.on("requestfailed", (request) => this.requests.delete(request));
  }

  private get viewPath(): string {
    return `${this.client.baseUrl}/v1/sessions/${encodeURIComponent(this.sessionId)}`;
  }

  // Requests the page makes other than its event stream (which never ends) and the reads of
  // the session's view (the settling round's own, and the shim's when the page loads).
  private started(request: PlaywrightRequest): void {
    const path = request.url().split("?")[0];
    if (!path.endsWith("/events") && !(request.method() === "GET" && path === this.viewPath)) this.requests.add(request);
  }

  /** The page under test's URL with the session in its query (`todaysim`, `session`, `access_token`). */
  get address(): string {
    const settings = new URLSearchParams({ todaysim: this.client.baseUrl, session: this.sessionId });
    if (this.client.token) settings.set("access_token", this.client.token);
    const address = new URL(this.url);
    address.search = address.search ? `${address.search}&${settings}` : `?${settings}`;
    return address.toString();
  }

  async nowMs(): Promise<number> {
    return (await this.client.readSession(this.sessionId)).clock.nowMs;
  }

  /** The page's clock, in session time. */
  async pageNowMs(): Promise<number> {
    return Number(await this.page.evaluate("Date.now()")) - EPOCH_MS;
  }

  /**
   * Pauses the page clock at the session's time, adds the timer tracker, loads the page and
   * waits until it is settled.
   */
  async open(): Promise<this> {
    const now = await this.nowMs();
    // Playwright for JavaScript takes a number as milliseconds: the session's exact
    // millisecond at once (python/ pauses at the whole second and runs on to it, the same
    // time reached with no page loaded).
    await this.page.clock.pauseAt(EPOCH_MS + now);
    await this.page.context().addInitScript({ content: await timersScript() });
    // The settling looks go straight to Chromium (Runtime.evaluate on a CDP session, about
    // half the time of page.evaluate); another browser uses page.evaluate.
    const context = this.page.context();
    if (context.newCDPSession) {
      try {
        this.cdp = await context.newCDPSession(this.page);
      } catch {
        this.cdp = undefined;
      }
    }
    await this.page.goto(this.address, { waitUntil: "domcontentloaded" });
    await this.settle();
    return this;
  }

  // -- settling ----------------------------------------------------------------------------

  private state(look: Look): Probe {
    const timers = look.timers;
    const dueNow = timers !== null && timers.next !== null && timers.next <= timers.now;
    return {
      bridge: look.bridge, inFlight: look.inFlight, delivered: look.delivered,
      pageLoad: look.loadId, open: look.open, requests: this.requests.size,
      pageRequests: look.requests ?? 0,
      timerDueNow: dueNow, ready: look.ready, pageNow: timers?.now ?? null, pageNext: timers?.next ?? null,
      // What the page alone can tell: no bridge call in flight, no other request, no timer due.
      quiet: Boolean(look.bridge && look.inFlight === 0 && look.delivered !== null
                     && !look.requests && this.requests.size === 0 && !dueNow),
    };
  }

  private async look(): Promise<Look> {
    if (!this.cdp) return (await this.page.evaluate(PROBE_JS)) as Look;
    const answer = await this.cdp.send("Runtime.evaluate", { expression: PROBE_JS, returnByValue: true });
    if (answer.exceptionDetails) throw new Error(answer.exceptionDetails.text || "the look failed");
    return answer.result.value as Look;
  }

  /** One look at the page. */
  private async probe(): Promise<Probe> {
    try {
      return this.state(await this.look());
    } catch (error) { // a page navigating (the shim reloads it on a host reload)
      return { page: String(error).slice(0, 200), quiet: false, timerDueNow: false };
    }
  }

  /**
   * What needs the session too: every entry delivered, the session's load, the stream open (a
   * closed session's stream ends, and it has nothing more to deliver).
   */
  private static agrees(probe: Probe, view: SessionView): boolean {
    const closed = view.status === "closed";
    return ((probe.delivered ?? -1) >= view.counts.timeline || closed)
      && probe.pageLoad === view.document.loadId && (Boolean(probe.open) || closed);
  }

  /**
   * Waits (never a fixed pause: it looks again until two looks agree) for the page and the
   * session to be settled; `SettleTimeout` after `settleTimeoutMs` of wall time. Returns the
   * session's view and the page's timers as last seen.
   *
   * One round: a look at the page; if it is quiet, the session's view; then a second look at
   * the page, which must equal the first. The view is read between two equal quiet looks, so
   * nothing the page did can fall between them unseen: the page acts only on a timer (none is
   * due), a delivered entry (all are), a request's answer (none is in flight) or a bridge answer
   * (none is in flight). A timer due now is fired by a zero-length clock run and the round
   * starts again; with none due such a run fires nothing, so it is not made.
   */
  async settle(): Promise<Settled> {
    const end = performance.now() + this.settleTimeoutMs;
    let first = await this.probe();
    for (;;) {
      if (performance.now() > end) await this.timedOut(first);
      if (first.quiet) {
        const view = await this.client.readSession(this.sessionId);
        const second = await this.probe();
        const same = JSON.stringify(second) === JSON.stringify(first);
        if (same && BridgedPage.agrees(first, view)) {
          this.view = view;
          this.lastSettle = { view, pageNow: first.pageNow as number, pageNext: first.pageNext ?? null };
          return this.lastSettle;
        }
        if (!same) { // the page moved between the looks: look again at once
          first = second;
          continue;
        }
      } else if (first.timerDueNow) {
        await this.page.clock.runFor(0);
        first = await this.probe();
        continue;
      }
      await sleep(2); // a request, a bridge call or the event stream is under way
      first = await this.probe();
    }
  }

  private async timedOut(probe: Probe): Promise<never> {
    const state: { [key: string]: unknown } = { ...probe };
    try {
      const view = await this.client.readSession(this.sessionId);
      Object.assign(state, { timeline: view.counts.timeline, sessionLoad: view.document.loadId, status: view.status });
    } catch (error) {
      state.session = String(error).slice(0, 200);
    }
    const errors = this.errors.length ? JSON.stringify(this.errors.slice(-3)) : "none";
    const cause = probe.bridge ? "" : `${NO_BRIDGE}; `;
    throw new SettleTimeout(`session ${this.sessionId} and its page did not settle within ${this.settleTimeoutMs} ms: ` +
      `${cause}${JSON.stringify(state)}; page errors: ${errors}`);
  }

  // -- one time for both -------------------------------------------------------------------

  /**
   * Moves both clocks `ms` forward through every due time in between (the session's watchdogs
   * and the page's timers, earliest first); returns the session's answers to the clock inputs
   * it sent. At each due time the clock that has nothing due there moves first (so a page
   * timer's bridge calls are recorded at its own time on the session clock, and the session's
   * emits reach a page whose clock already reads their time); where both have something due at
   * one millisecond, the session's timers act first and the page's right after. A side with
   * something due is settled after it acts.
   *
   * `settled = true` says nothing has touched the page or the session since the last settle (a
   * driver that only steps through this object), so the move starts from `lastSettle` instead
   * of settling first.
   */
  async move(ms: number, settled = false): Promise<InputResponse[]> {
    if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`a clock moves forward only, by whole ms: ${ms}`);
    let seen = settled && this.lastSettle ? this.lastSettle : await this.settle();
    let now = seen.view.clock.nowMs;
    let pageNow = seen.pageNow - EPOCH_MS;
    const target = now + ms;
    const answers: InputResponse[] = [];
    const clock = this.page.clock;
    const sessionTo = async (toMs: number) => { answers.push(await this.client.clock(this.sessionId, { toMs })); };
    while (now < target) {
      const dues = seen.view.watchdogs.map((w) => w.dueAtMs).filter((at) => now < at && at <= target);
      const sessionNext = dues.length ? Math.min(...dues) : null;
      let pageNext = seen.pageNext !== null ? seen.pageNext - EPOCH_MS : null;
      pageNext = pageNext !== null && now < pageNext && pageNext <= target ? pageNext : null;
      const candidates = [sessionNext, pageNext].filter((t): t is number => t !== null);
      const stepTo = candidates.length ? Math.min(...candidates) : target;
      const sessionActs = sessionNext === stepTo, pageActs = pageNext === stepTo;
      if (pageActs && !sessionActs) {
        await sessionTo(stepTo);
        await clock.runFor(stepTo - pageNow);
      } else if (sessionActs && !pageActs) {
        if (stepTo > pageNow) await clock.runFor(stepTo - pageNow);
        await sessionTo(stepTo);
      } else if (sessionActs && pageActs) {
        if (stepTo - 1 > pageNow) await clock.runFor(stepTo - 1 - pageNow);
        await sessionTo(stepTo);
        await this.settle();
        await clock.runFor(1);
      } else { // nothing due up to the target: both clocks simply move there
        if (stepTo > pageNow) await clock.runFor(stepTo - pageNow);
        await sessionTo(stepTo);
      }
      now = pageNow = stepTo;
      if (sessionActs || pageActs || now >= target) {
        seen = await this.settle();
        now = seen.view.clock.nowMs;
        pageNow = seen.pageNow - EPOCH_MS;
      }
    }
    return answers;
  }

  /**
   * Applies one host step in `/steps` element form and settles: a clock move (`advanceMs` or
   * `toMs`) goes through `move` (both clocks, every due time in between); anything else is a
   * one-step batch. One step per call, a settle after each: a `/steps` batch is one
   * transaction, in which the page could not react between its steps.
   */
  async step(element: Step, settled = false): Promise<unknown> {
    const keys = Object.keys(element);
    if (keys.length !== 1) throw new TypeError(`a step holds exactly one input: ${JSON.stringify(element)}`);
    if ("clock" in element) {
      const body: { [key: string]: unknown } = element.clock;
      const fields = Object.keys(body);
      if (fields.length === 1 && fields[0] === "advanceMs") return this.move(Number(body.advanceMs), settled);
      if (fields.length === 1 && fields[0] === "toMs") {
        const now = settled && this.lastSettle ? this.lastSettle.view.clock.nowMs : await this.nowMs();
        return this.move(Math.max(0, Number(body.toMs) - now), settled);
      }
    }
    const answer = await this.client.steps(this.sessionId, [element]);
    await this.settle();
    return answer;
  }

  report(): Promise<Report> {
    return this.client.report(this.sessionId);
  }

  /** Throws `ConformanceError` unless the session conforms: each violation with its rule, and the timeline's tail. */
  async expectConforms(): Promise<void> {
    await expectConforms(this.client, this.sessionId);
  }
}

// -- reports -----------------------------------------------------------------------------------

/** How many of the timeline's last entries a failure shows. */
export const TIMELINE_TAIL = 20;

function line(entry: TimelineEntry): string {
  const rule = entry.rule ? ` [${entry.rule}]` : "";
  const requestId = entry.requestId ? ` ${entry.requestId}` : "";
  return `  #${entry.seq} ${entry.atMs} ms ${entry.kind} ${entry.type}${requestId}${rule}`;
}

/**
 * The session's report (each violation with its rule and detail) and its timeline's last
 * entries, as text: what `expectConforms()` fails with (python/'s plugin adds the same to a
 * failing test's output).
 */
export async function sessionSummary(client: Client, sessionId: string, report?: Report): Promise<string> {
  const lines: string[] = [];
  const judged = report ?? await client.report(sessionId);
  lines.push(`session ${sessionId} conforms: ${judged.conforms}`);
  for (const violation of judged.violations) {
    const rule = violation.rule ?? violation.type;
    const detail = typeof violation.data.detail === "string" ? violation.data.detail : "";
    const requestId = violation.requestId ? ` (${violation.requestId})` : "";
    // A violation's detail starts with its code already ("M7: Web never answered ..."): said once.
    lines.push(`  ${rule} at ${violation.atMs} ms${requestId}: ${detail.startsWith(`${rule}: `) ? detail.slice(rule.length + 2) : detail}`);
  }
  const total = (await client.readSession(sessionId)).counts.timeline;
  const tail = (await client.timeline(sessionId, { after: Math.max(0, total - TIMELINE_TAIL), limit: TIMELINE_TAIL })).entries;
  lines.push(`timeline (last ${tail.length} of ${total}):`);
  for (const entry of tail) lines.push(line(entry));
  return lines.join("\n");
}

/** Throws `ConformanceError` unless session `sessionId` conforms; its message is `sessionSummary`'s. */
export async function expectConforms(client: Client, sessionId: string): Promise<void> {
  const report = await client.report(sessionId);
  if (report.conforms) return;
  const count = report.violations.length;
  const summary = await sessionSummary(client, sessionId, report);
  throw new ConformanceError(`expected session ${sessionId} to conform, but it has ${count} violation${count === 1 ? "" : "s"}:\n${summary}`, report);
}

// -- Playwright Test fixtures ------------------------------------------------------------------

/** `hostSession(fields?)`: creates a session (its view returned); every one is purged at teardown. */
export type HostSessions = (fields?: Partial<Parameters<Client["createSession"]>[0]>) => Promise<SessionView>;

/**
 * `bridgedPage(url?, fields?)`: an opened `BridgedPage` on a new session. `url` is the page
 * under test, resolved against Playwright's `baseURL`; default `TODAY_PAGE_URL`.
 */
export type BridgedPages = (url?: string, fields?: Partial<Parameters<Client["createSession"]>[0]>) => Promise<BridgedPage>;

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
    fixtures: { todaysim: Client; hostSession: HostSessions; page: PlaywrightPage; browser?: PlaywrightBrowser; baseURL?: string },
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
 * - `bridgedPage`: `await bridgedPage(url?, fields?)` → an opened `BridgedPage` on a new
 *   session: Playwright's `page` for the first, a page of a new context for each further one.
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
    const contexts: PlaywrightContext[] = [];
    let pageTaken = false;
    try {
      await use(async (url, fields) => {
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
        return new BridgedPage(todaysim, view.id, under, target).open();
      });
    } finally {
      for (const context of contexts) await context.close();
    }
  },
};
