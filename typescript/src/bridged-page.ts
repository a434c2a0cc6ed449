/**
 * `BridgedPage`: the page under test in a Playwright page with todaysim's `/bridge.js` attached
 * to a session, its own timers on todaysim's virtual clock (Web/virtual-time.js: paused, set to
 * `EPOCH_MS` + the session's `nowMs` as each document loads), so one call moves both clocks
 * together and a scenario that waits 12 s takes milliseconds and runs the same every time.
 *
 * The TypeScript half of the one page driver: the in-page half, Web/page-driver.js (look, wait,
 * settle, the timer merge of a clock move), is python/'s `todaysim.page.BridgedPage`'s too, and
 * this class does what python/'s does with it, trip for trip (a contract test compares the two
 * sessions' timelines). Playwright's public API only (an init script, page evaluations, a CDP
 * session on Chromium, the page's events), its types imported from the peer.
 *
 * *Settled* (`settle()`): no bridge call in flight; every entry up to the session's
 * `counts.timeline` delivered to the page; the page's load is the session's and its stream is
 * open; no other page request in flight; nothing of the page's due now. A miss within
 * `settleTimeoutMs` of wall time (`defaultSettleTimeoutMs()` when not given: the environment's
 * `TODAYSIM_SETTLE_TIMEOUT_MS`, else 2,000) is `SettleTimeout`: an error of the test or its
 * environment (a page that never stops working), never a breach of the contract.
 */
import type { CDPSession, Page, Request } from "playwright-core";
import type { Client } from "./client.js";
import { expectConforms } from "./conformance.js";
import type { InputResponse, Report, SessionView } from "./generated/api.js";
import { EPOCH_MS, initScript } from "./page-scripts.js";
import type { BridgedPageOptions, OpenedBridgedPage, Settled, Step, StepAnswer } from "./page-types.js";

/** What a settle's timeout says when the page has no bridge: the most common cause, said first. */
export const NO_BRIDGE = "the page never loaded /bridge.js (it must, from its `todaysim` and `session` query parameters: " +
  "<script src=\"${todaysim}/bridge.js?session=${session}\">, before its own scripts; typescript/README.md, \"The page's part\")";

/**
 * The variable that sets a settle's deadline where the caller gives none: ms of wall time, as
 * python/'s `TODAYSIM_SETTLE_TIMEOUT_MS`. A suite on a loaded machine (a CI runner beside builds)
 * sets it generous rather than racing 2,000 ms; a page that never settles then fails only that late.
 */
export const SETTLE_TIMEOUT_VARIABLE = "TODAYSIM_SETTLE_TIMEOUT_MS";

/**
 * The ms of wall time a settle may take when the caller gives none: `TODAYSIM_SETTLE_TIMEOUT_MS`
 * (a whole number of ms, more than 0 and less than an hour), else 2,000. A value that is not one
 * is a `RangeError` naming the variable, at once.
 */
export function defaultSettleTimeoutMs(): number {
  const given = (typeof process === "undefined" ? undefined : process.env[SETTLE_TIMEOUT_VARIABLE]) ?? "";
  if (given === "") return 2_000;
  const ms = /^[0-9]+$/.test(given) ? Number(given) : 0;
  if (!(ms > 0 && ms < 3_600_000)) {
    throw new RangeError(`${SETTLE_TIMEOUT_VARIABLE} is ${JSON.stringify(given)}: say the ms of wall time a settle may take, ` +
      "a whole number more than 0 and less than 3600000");
  }
  return ms;
}

/**
 * The page and the session did not settle within the wall deadline: an error of the test or
 * its environment (a page that never stops working), never a contract breach.
 */
export class SettleTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettleTimeout";
  }
}

/** settle-probe.js's look, with the page driver's `started` and `doc`. */
interface Look {
  bridge: boolean;
  inFlight: number | null;
  delivered: number | null;
  open: boolean;
  loadId: number | null;
  timers: { now: number; next: number | null; count: number } | null;
  ready: string;
  requests: number;
  started: number;
  doc: string;
}

/** One look at the page as `settle()` compares two of them (python/'s `_state`), or why there was none (`page`). */
interface State {
  page?: string;
  bridge?: boolean;
  inFlight?: number | null;
  delivered?: number | null;
  pageLoad?: number | null;
  open?: boolean;
  requests?: number;
  pageRequests?: number;
  ready?: string;
  pageNow?: number | null;
  pageNext?: number | null;
  started?: number;
  doc?: string;
  quiet: boolean;
}

/** One stop of a clock move (the page driver's `advance`): where both clocks go next (session ms) and which side has something due there. */
interface Stop {
  at: number;
  session: boolean;
  page: boolean;
}

/** A moment between two trips where the page cannot wait itself (between two documents, or a request only Playwright sees). */
const moment = () => new Promise<void>((resolve) => setTimeout(resolve, 2));

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
  readonly page: Page;
  readonly url: string;
  readonly settleTimeoutMs: number;
  /** The session's view as last seen settled, and what `settle()` last returned (both there after `open()`). */
  view: SessionView | undefined;
  lastSettle: Settled | undefined;
  /** The page's uncaught errors, for a failure's message. */
  readonly errors: string[] = [];
  private readonly requests = new Set<Request>();
  private started = 0; // requests Playwright has seen the page start (as `requests` counts them)
  private settledLook: State | undefined; // the look the last settle ended on
  private settledStarted = 0; // `started` then
  private cdp: CDPSession | undefined;

  constructor(client: Client, sessionId: string, page: Page, url: string, options: BridgedPageOptions = {}) {
    const timeout = options.settleTimeoutMs ?? defaultSettleTimeoutMs();
    if (!Number.isFinite(timeout) || timeout <= 0) throw new RangeError(`settleTimeoutMs is ${timeout}: say a positive number of ms`);
    this.client = client;
    this.sessionId = sessionId;
    this.page = page;
    this.url = url;
    this.settleTimeoutMs = timeout;
    page.on("pageerror", (error) => this.errors.push(String(error)));
    page.on("request", (request) => this.requestStarted(request));
    page.on("requestfinished", (request) => this.requests.delete(request));
    page.on("requestfailed", (request) => this.requests.delete(request));
  }

  private get viewPath(): string {
    return `${this.client.baseUrl}/v1/sessions/${encodeURIComponent(this.sessionId)}`;
  }

  // Requests the page makes other than its event stream (which never ends) and the reads of
  // the session's view (the settling round's own, and the driver's when a document loads).
  private requestStarted(request: Request): void {
    const path = request.url().split("?")[0];
    if (path.endsWith("/events") || (request.method() === "GET" && path === this.viewPath)) return;
    this.requests.add(request);
    this.started += 1;
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
    return Number(await this.evaluate("Date.now()")) - EPOCH_MS;
  }

  /**
   * Adds the virtual clock and the page driver to the page's context (once a context), loads
   * the page, whose document takes the session's time as it loads, and waits until it is settled.
   */
  async open(): Promise<OpenedBridgedPage<this>> {
    const context = this.page.context();
    if (!driven.has(context)) {
      driven.add(context);
      await context.addInitScript({ content: await initScript() });
    }
    // The driver's calls go straight to Chromium (Runtime.evaluate on a CDP session, about half
    // the time of page.evaluate); another browser uses page.evaluate.
    try {
      this.cdp = await context.newCDPSession(this.page);
    } catch {
      this.cdp = undefined;
    }
    await this.page.goto(this.address, { waitUntil: "domcontentloaded" });
    const seen = await this.settle();
    if (seen.pageNow !== EPOCH_MS + seen.view.clock.nowMs) {
      throw new Error(`the page clock reads ${seen.pageNow - EPOCH_MS} ms, not the session's ${seen.view.clock.nowMs}: ` +
        `the page's document could not read ${this.viewPath}`);
    }
    return this as OpenedBridgedPage<this>;
  }

  // -- the page driver ---------------------------------------------------------------------

  private async evaluate(expression: string): Promise<unknown> {
    if (!this.cdp) return this.page.evaluate(expression);
    const answer = await this.cdp.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
    if (answer.exceptionDetails) throw new Error(answer.exceptionDetails.text || "the evaluation failed");
    return answer.result.value;
  }

  private state(look: Look): State {
    const timers = look.timers;
    return {
      bridge: look.bridge, inFlight: look.inFlight, delivered: look.delivered,
      pageLoad: look.loadId, open: look.open, requests: this.requests.size,
      pageRequests: look.requests ?? 0, ready: look.ready,
      pageNow: timers?.now ?? null, pageNext: timers?.next ?? null,
      started: look.started, doc: look.doc,
      // What the page alone can tell: no bridge call in flight, no other request, nothing due.
      quiet: Boolean(look.bridge && look.inFlight === 0 && look.delivered !== null && !look.requests
        && this.requests.size === 0 && (timers === null || timers.next === null || timers.next > timers.now)),
    };
  }

  /** The state after a call of the page driver that answers a look. */
  private async call(expression: string): Promise<State> {
    try {
      return this.state(await this.evaluate(expression) as Look);
    } catch (error) { // a page navigating (the shim reloads it on a host reload)
      return { page: String(error).slice(0, 200), quiet: false };
    }
  }

  /** One look at the page. */
  private probe(): Promise<State> {
    return this.call("__todaysimDriver.look()");
  }

  /**
   * A look at the page once it is quiet (page-driver.js's `wait`: one trip that first runs the
   * page clock to `runTo`, session ms, when given; fires what is due now; waits for every entry
   * up to `expect` delivered), or when `end` (performance.now()) comes.
   */
  private wait(end: number, expect = 0, closed = false, runTo: number | null = null): Promise<State> {
    const target = runTo === null ? "null" : String(EPOCH_MS + runTo);
    const ms = Math.max(0, Math.floor(end - performance.now()));
    return this.call(`__todaysimDriver.wait(${target}, ${expect}, ${closed}, ${ms})`);
  }

  /** The next stop of a clock move from `now` to `target` (session ms), the page clock run to where it goes first (page-driver.js's `advance`). */
  private async advance(now: number, target: number, view: SessionView): Promise<Stop> {
    const watchdogs = JSON.stringify(view.watchdogs.map((w) => w.dueAtMs));
    return await this.evaluate(`__todaysimDriver.advance(${now}, ${target}, ${watchdogs})`) as Stop;
  }

  // -- settling ----------------------------------------------------------------------------

  /**
   * What needs the session too: every entry delivered, the session's load, the stream open (a
   * closed session's stream ends, and it has nothing more to deliver).
   */
  private static agrees(look: State, view: SessionView): boolean {
    const closed = view.status === "closed";
    return ((look.delivered ?? -1) >= view.counts.timeline || closed)
      && look.pageLoad === view.document.loadId && (Boolean(look.open) || closed);
  }

  /**
   * Waits (never a fixed pause: it looks again until two looks agree) for the page and the
   * session to be settled; `SettleTimeout` after `settleTimeoutMs` of wall time. Returns the
   * session's view and the page's timers as last seen. `expect` and `closed` say what the caller
   * knows the page must have had delivered, `runTo` a time (session ms) to run the page clock
   * to first, in the same trip, and `answer` the session's view as the server answered the
   * driver's last request.
   *
   * One round, as python/'s `settle` (whose comment says why it holds): a wait in the page until
   * it is quiet; the session's view; a second look, which must equal the first. Where nothing but
   * the driver's step can have changed the session since the last settle, the step's `answer`
   * stands for the read and the second look.
   */
  async settle(expect = 0, closed = false, runTo: number | null = null, answer?: SessionView): Promise<Settled> {
    const end = performance.now() + this.settleTimeoutMs;
    let first = await this.wait(end, expect, closed, runTo);
    let given = answer;
    for (;;) {
      if (performance.now() > end) return this.timedOut(first);
      if (given !== undefined && this.unchanged(first, given)) return this.settled(given, first);
      given = undefined; // one chance: after a wait of its own the page may have acted
      if (first.quiet) {
        const view = await this.client.readSession(this.sessionId);
        const second = await this.probe();
        const same = JSON.stringify(second) === JSON.stringify(first);
        if (same && BridgedPage.agrees(first, view)) return this.settled(view, first);
        if (!same) { // the page moved between the looks: look again at once
          first = second;
          continue;
        }
        // Quiet, but the session has entries the page has not had yet: wait for them.
        expect = view.counts.timeline;
        closed = view.status === "closed";
      } else if (first.page !== undefined || this.requests.size > 0) {
        await moment(); // the next trip would answer at once
      }
      first = await this.wait(end, expect, closed);
    }
  }

  /** Whether `answer`, the session's view after the driver's last request, is the session's view now (python/'s `_unchanged`). */
  private unchanged(look: State, answer: SessionView): boolean {
    const before = this.settledLook;
    return look.quiet && before !== undefined && look.doc !== undefined && look.doc === before.doc
      && look.started === before.started && this.started === this.settledStarted
      && look.delivered === answer.counts.timeline && BridgedPage.agrees(look, answer);
  }

  private settled(view: SessionView, look: State): Settled {
    this.view = view;
    this.settledLook = look;
    this.settledStarted = this.started;
    this.lastSettle = { view, pageNow: look.pageNow as number, pageNext: look.pageNext ?? null };
    return this.lastSettle;
  }

  private async timedOut(look: State): Promise<never> {
    const state: { [key: string]: unknown } = { ...look };
    try {
      const view = await this.client.readSession(this.sessionId);
      Object.assign(state, { timeline: view.counts.timeline, sessionLoad: view.document.loadId, status: view.status });
    } catch (error) {
      state.session = String(error).slice(0, 200);
    }
    const errors = this.errors.length ? JSON.stringify(this.errors.slice(-3)) : "none";
    const cause = look.bridge ? "" : `${NO_BRIDGE}; `;
    throw new SettleTimeout(`session ${this.sessionId} and its page did not settle within ${this.settleTimeoutMs} ms: ` +
      `${cause}${JSON.stringify(state)}; page errors: ${errors}`);
  }

  // -- one time for both -------------------------------------------------------------------

  /**
   * Moves both clocks `ms` forward through every due time in between (the session's watchdogs
   * and the page's timers, earliest first: the page driver's `advance`); returns the session's
   * answers to the clock inputs it sent. At each due time the clock that has nothing due there
   * moves first; where both have something due at one millisecond, the session's timers act
   * first and the page's right after. Both are settled after each stop.
   *
   * `settled = true` says nothing has touched the page or the session since the last settle (a
   * driver that only steps through this object), so the move starts from `lastSettle`.
   */
  async move(ms: number, settled = false): Promise<InputResponse[]> {
    if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`a clock moves forward only, by whole ms: ${ms}`);
    let seen = settled && this.lastSettle ? this.lastSettle : await this.settle();
    let now = seen.view.clock.nowMs;
    const target = now + ms;
    if (!Number.isSafeInteger(target)) throw new RangeError(`the session's ${now} ms and ${ms} ms more is past what a clock reads`);
    const answers: InputResponse[] = [];
    while (now < target) {
      const stop = await this.advance(now, target, seen.view);
      const answer = await this.client.clock(this.sessionId, { toMs: stop.at });
      answers.push(answer);
      const view = answer.session, closed = view.status === "closed";
      if (stop.session && stop.page) await this.settle(view.counts.timeline, closed, null, view); // the session's timers first
      seen = await this.settle(view.counts.timeline, closed, stop.page ? stop.at : null, view);
      now = seen.view.clock.nowMs;
    }
    return answers;
  }

  /**
   * Applies one host step in `/steps` element form and settles: a clock move (`advanceMs` or
   * `toMs`) goes through `move` (both clocks, every due time in between) and answers the clock
   * inputs' answers; anything else is a one-step batch, answered as `/steps` answers it. One step
   * per call, a settle after each: a `/steps` batch is one transaction, in which the page could
   * not react between its steps.
   */
  async step<S extends Step>(element: S, settled = false): Promise<StepAnswer<S>> {
    const keys = Object.keys(element);
    if (keys.length !== 1) throw new TypeError(`a step holds exactly one input: ${JSON.stringify(element)}`);
    if ("clock" in element) {
      const body: { [key: string]: unknown } = element.clock;
      const fields = Object.keys(body);
      if (fields.length === 1 && fields[0] === "advanceMs") return await this.move(Number(body.advanceMs), settled) as StepAnswer<S>;
      if (fields.length === 1 && fields[0] === "toMs") {
        const now = settled && this.lastSettle ? this.lastSettle.view.clock.nowMs : await this.nowMs();
        return await this.move(Math.max(0, Number(body.toMs) - now), settled) as StepAnswer<S>;
      }
    }
    const answer = await this.client.steps(this.sessionId, [element]);
    await this.settle(answer.session.counts.timeline, answer.session.status === "closed", null, answer.session);
    return answer as StepAnswer<S>;
  }

  report(): Promise<Report> {
    return this.client.report(this.sessionId);
  }

  /** Throws `ConformanceError` unless the session conforms: each violation with its rule and entry, and the timeline's tail. */
  async expectConforms(): Promise<void> {
    await expectConforms(this.client, this.sessionId);
  }
}

/** The contexts the driver's init script was added to (once each). */
const driven = new WeakSet<object>();
