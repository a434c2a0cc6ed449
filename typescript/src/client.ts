/**
 * A typed client for the whole todaysim HTTP API (OpenAPI/todaysim.yaml, served at
 * /openapi.yaml), over the platform's `fetch`: no dependency, Node 20 or a browser.
 *
 * Every operation of the document is one method, named by `Client.operations`; the package's
 * contract test checks, against the document a real server serves, that each operation has
 * exactly one method and each method an operation (or is one of `Client.helpers`, which compose
 * operations). Bodies, queries and answers are typed from the document (`generated/api.ts`,
 * written by tools/generate_types.py, whose `--check` keeps it the document's). A problem
 * document is thrown as `TodaysimError`, carrying `status`, `code` and `field`. The requests go
 * through `http.ts`; event streams are `events.ts`, host traces' bodies `traces.ts`.
 */
import { EventStream } from "./events.js";
import { DEFAULT_URL, environment, Http, pathOf } from "./http.js";
import { fileStream, isStreamed, traceBody, tracePart } from "./traces.js";
import type { StreamOptions } from "./events.js";
import type { FieldValidation, Send } from "./http.js";
import type { HostTrace } from "./traces.js";
import type {
  ClockRequest, CommandRequest, CreateSessionRequest, Deleted, GestureRequest, Health, InputResponse,
  LifecycleRequest, OperationId, Operations, Readiness, Report, SessionList, SessionView, TimelineEntry,
  TimelineKind, TimelinePage, TraceComparison, Verdict, ViolationPage, Watchdog, WebEvent,
} from "./generated/api.js";

export { EventStream } from "./events.js";
export type { EntryEvent, StreamOptions } from "./events.js";
export type { FieldValidation } from "./http.js";
export type { HostTrace } from "./traces.js";

export interface ClientOptions {
  /** Default `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <token>` (a server started with `--token`). */
  token?: string;
  /** Sent with every control-plane body; tests are best written with `Strict`, so a typo fails at once. */
  fieldValidation?: FieldValidation;
  /** How long a request may take, in ms (default 30,000); a long poll gets its `waitMs` on top. Streams have none. */
  timeoutMs?: number;
  /** The `fetch` to use (default the global one): for a proxy, or to watch what is sent. */
  fetch?: typeof fetch;
}

/** `Idempotency-Key` and `If-Match` of an input. */
export interface InputOptions {
  idempotencyKey?: string;
  /** The session `version` the input expects (`412 precondition_failed` when it moved on). */
  ifMatch?: number;
}

type Query<K extends OperationId> = Operations[K]["query"];
type Body<K extends OperationId> = Operations[K]["body"];
type Answer<K extends OperationId> = Operations[K]["response"];
type ExportPage = Answer<"exportSession">;
/** A whole session as a script (every export page's steps), replayable with `replay`. */
export interface SessionScript {
  create: ExportPage["create"];
  steps: ExportPage["steps"];
}

export class Client {
  /** operationId → the method that calls it; the contract test checks it against the served document. */
  static readonly operations: { readonly [K in OperationId]: keyof Client } = {
    health: "health", readiness: "readiness", dashboard: "dashboard", metrics: "metrics",
    openAPIDocument: "openAPIDocument", rulesPage: "rulesPage", rulesMarkdown: "rulesMarkdown", bridgeScript: "bridgeScript",
    createSession: "createSession", listSessions: "listSessions", purgeLabel: "purgeLabel", reset: "reset",
    readSession: "readSession", deleteSession: "deleteSession",
    gesture: "gesture", lifecycle: "lifecycle", webEvent: "webEvent", command: "command", clock: "clock", steps: "steps",
    timeline: "timeline", watchdogs: "watchdogs", sessionEvents: "sessionEvents", accountEvents: "accountEvents",
    exportSession: "exportSession", forkSession: "forkSession", report: "report", reportJunit: "reportJunit",
    verifyHostTrace: "verifyHostTrace", compareTraces: "compareTraces", violations: "violations",
  };

  /** The methods that compose operations (paging, whole exports, replays, files) → the operation each calls. */
  static readonly helpers: { readonly [name: string]: OperationId } = {
    iterSessions: "listSessions", timelineEntries: "timeline", timelineTrace: "timeline",
    iterViolations: "violations", exportAll: "exportSession", replay: "steps", verifyHostTraceFile: "verifyHostTrace",
  };

  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly fieldValidation: FieldValidation | undefined;
  readonly timeoutMs: number;
  private readonly http: Http;

  constructor(options: ClientOptions | string = {}) {
    const given: ClientOptions = typeof options === "string" ? { baseUrl: options } : options;
    this.baseUrl = (given.baseUrl ?? DEFAULT_URL).replace(/\/+$/, "");
    this.token = given.token || undefined;
    this.fieldValidation = given.fieldValidation;
    this.timeoutMs = given.timeoutMs ?? 30_000;
    this.http = new Http(this.baseUrl, this.token, this.fieldValidation, this.timeoutMs, given.fetch ?? ((input, init) => fetch(input, init)));
  }

  /** A client of the server `TODAYSIM_URL` names (default http://127.0.0.1:8080), with `TODAYSIM_TOKEN`. */
  static fromEnv(options: Omit<ClientOptions, "baseUrl" | "token"> = {}): Client {
    return new Client({ ...options, baseUrl: environment("TODAYSIM_URL"), token: environment("TODAYSIM_TOKEN") });
  }

  // -- plumbing ---------------------------------------------------------------------------------

  private input(operation: OperationId, sessionId: string, body: unknown, options: InputOptions, validated = true): Promise<InputResponse> {
    return this.http.json("POST", pathOf(operation, { id: sessionId }), { json: body, headers: conditions(options), validated });
  }

  // -- the service ------------------------------------------------------------------------------

  health(): Promise<Health> {
    return this.http.json("GET", pathOf("health"));
  }

  /** `{status, storage}`: answered 200 or 503 (not ready), both returned. */
  readiness(): Promise<Readiness> {
    return this.http.json("GET", pathOf("readiness"), { expect: [200, 503] });
  }

  dashboard(): Promise<string> {
    return this.http.text("GET", pathOf("dashboard"));
  }

  metrics(): Promise<string> {
    return this.http.text("GET", pathOf("metrics"));
  }

  /** The OpenAPI document the server serves (YAML text). */
  openAPIDocument(): Promise<string> {
    return this.http.text("GET", pathOf("openAPIDocument"));
  }

  rulesPage(): Promise<string> {
    return this.http.text("GET", pathOf("rulesPage"));
  }

  rulesMarkdown(): Promise<string> {
    return this.http.text("GET", pathOf("rulesMarkdown"));
  }

  bridgeScript(): Promise<string> {
    return this.http.text("GET", pathOf("bridgeScript"));
  }

  // -- sessions ---------------------------------------------------------------------------------

  /** `createSession({ uid: "u1", id: "s1", platform: "android" })`: the new session's view (with `warnings` when a field was unknown). */
  createSession(body: CreateSessionRequest): Promise<SessionView> {
    return this.http.json("POST", pathOf("createSession"), { json: body, expect: [201], validated: true });
  }

  /** One page of sessions; `next` is the cursor for `after`. */
  listSessions(query: Query<"listSessions"> = {}): Promise<SessionList> {
    return this.http.json("GET", pathOf("listSessions"), { query });
  }

  /** Every session matching the filters, page after page. */
  async *iterSessions(query: Omit<Query<"listSessions">, "after"> = {}): AsyncGenerator<SessionView, void, undefined> {
    let after: string | undefined;
    do {
      const page = await this.listSessions({ ...query, after });
      yield* page.sessions;
      after = page.next ?? undefined;
    } while (after);
  }

  /** Purges every session labelled `label`. */
  purgeLabel(label: string): Promise<Deleted> {
    return this.http.json("DELETE", pathOf("purgeLabel"), { query: { label } });
  }

  /** Purges every session of the server. */
  reset(): Promise<Deleted> {
    return this.http.json("POST", pathOf("reset"));
  }

  readSession(sessionId: string): Promise<SessionView> {
    return this.http.json("GET", pathOf("readSession", { id: sessionId }));
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this.http.send("DELETE", pathOf("deleteSession", { id: sessionId }), { expect: [204] });
  }

  // -- inputs -----------------------------------------------------------------------------------

  /** `gesture("s1", { type: "pull", requestId: "p1" })`, `gesture("s1", { type: "dialog.choose", actionId: "ok" })`. */
  gesture(sessionId: string, body: GestureRequest, options: InputOptions = {}): Promise<InputResponse> {
    return this.input("gesture", sessionId, body, options);
  }

  /** `lifecycle("s1", { type: "background" })`, `lifecycle("s1", { type: "foreground", requestId: "fg-1" })`. */
  lifecycle(sessionId: string, body: LifecycleRequest, options: InputOptions = {}): Promise<InputResponse> {
    return this.input("lifecycle", sessionId, body, options);
  }

  /** A bridge message exactly as Web emits it (its unknown fields are Web's own, H21: never validated). */
  webEvent(sessionId: string, message: WebEvent, options: InputOptions = {}): Promise<InputResponse> {
    return this.input("webEvent", sessionId, message, options, false);
  }

  /** `command("s1", { type: "todayPage.scrollToSection", batchId: "b1" })`. */
  command(sessionId: string, body: CommandRequest, options: InputOptions = {}): Promise<InputResponse> {
    return this.input("command", sessionId, body, options);
  }

  /** `clock("s1", { advanceMs: 6000 })`, `{ toMs }`, `{ toNextTimer: true }`, `{ runUntilIdle: true }`. */
  clock(sessionId: string, move: ClockRequest, options: InputOptions = {}): Promise<InputResponse> {
    return this.input("clock", sessionId, move, options);
  }

  /** A batch in one transaction: `[{ gesture: {...} }, { clock: {...} }]` → `{ results, session }`. */
  steps(sessionId: string, steps: Body<"steps">, options: InputOptions = {}): Promise<Answer<"steps">> {
    return this.http.json("POST", pathOf("steps", { id: sessionId }), { json: steps, headers: conditions(options), validated: true });
  }

  // -- reading back -----------------------------------------------------------------------------

  /**
   * One page `{ entries, next, more }`; with `waitMs` a long poll: held until an entry after
   * `after` exists or the wait runs out (the request's deadline grows by the wait).
   */
  timeline(sessionId: string, query: Omit<Query<"timeline">, "format"> & { format?: "json" } = {}): Promise<TimelinePage> {
    return this.http.json("GET", pathOf("timeline", { id: sessionId }), { query, extraMs: query.waitMs ?? 0 });
  }

  /** The session as a golden host trace (NDJSON text): `timeline?format=trace`. */
  timelineTrace(sessionId: string): Promise<string> {
    return this.http.text("GET", pathOf("timeline", { id: sessionId }), { query: { format: "trace" } });
  }

  /** Every entry after `after` (default 0), optionally of one kind, fetching page after page as it is iterated. */
  async *timelineEntries(sessionId: string, query: { after?: number; kind?: TimelineKind; limit?: number } = {}): AsyncGenerator<TimelineEntry, void, undefined> {
    let after = query.after ?? 0;
    for (;;) {
      const page = await this.timeline(sessionId, { after, kind: query.kind, limit: query.limit ?? 1000 });
      yield* page.entries;
      if (!page.more) return;
      after = page.next;
    }
  }

  watchdogs(sessionId: string): Promise<Watchdog[]> {
    return this.http.json<Answer<"watchdogs">>("GET", pathOf("watchdogs", { id: sessionId })).then((answer) => answer.watchdogs);
  }

  /**
   * The session's entries as they are recorded (Server-Sent Events): answered once the stream
   * is open, then iterated with `for await`. It ends when the session is closed and its last
   * entry sent, or purged; break out of the loop, `close()` it or abort `signal` to stop.
   * Resume a stream where it stopped, losing and repeating nothing, from its `lastEventId`:
   * `sessionEvents(id, { lastEventId: stopped.lastEventId })`.
   */
  sessionEvents(sessionId: string, options: StreamOptions & { after?: number; lastEventId?: string } = {}): Promise<EventStream> {
    const headers = { "Last-Event-ID": options.lastEventId };
    return this.events(pathOf("sessionEvents", { id: sessionId }), { after: options.after }, headers, options, sessionId);
  }

  /**
   * Every session of one account as one stream (ids `<session>/<seq>`), with every entry
   * recorded once it is answered (the stream is open then); it runs until stopped.
   */
  accountEvents(uid: string, options: StreamOptions = {}): Promise<EventStream> {
    return this.events(pathOf("accountEvents"), { uid }, {}, options, undefined);
  }

  private async events(path: string, query: Send["query"], headers: Send["headers"], options: StreamOptions & { lastEventId?: string },
    sessionId: string | undefined): Promise<EventStream> {
    // Its own controller, so that closing the stream (or leaving the loop early) closes the connection.
    const stop = new AbortController();
    const stopWith = () => stop.abort();
    options.signal?.addEventListener("abort", stopWith);
    try {
      const response = await this.http.send("GET", path, { query, headers: { Accept: "text/event-stream", ...headers }, stream: true, signal: stop.signal });
      return new EventStream(path, response, stop, sessionId, options.lastEventId, () => options.signal?.removeEventListener("abort", stopWith));
    } catch (error) {
      options.signal?.removeEventListener("abort", stopWith);
      throw error;
    }
  }

  /** One page of the session as a script: `{ create, steps, closed, next, more }`. */
  exportSession(sessionId: string, query: Query<"exportSession"> = {}): Promise<ExportPage> {
    return this.http.json("GET", pathOf("exportSession", { id: sessionId }), { query });
  }

  /** The whole script (every page, of `pageSize` inputs: default 1,000), replayable with `replay`. */
  async exportAll(sessionId: string, options: { pageSize?: number } = {}): Promise<SessionScript> {
    let page = await this.exportSession(sessionId, { limit: options.pageSize });
    const script: SessionScript = { create: page.create, steps: [...page.steps] };
    while (page.more) {
      page = await this.exportSession(sessionId, { after: page.next, limit: options.pageSize });
      script.steps.push(...page.steps);
    }
    return script;
  }

  /**
   * Creates a session from an export (`exportAll`) and applies its steps, 1,000 a batch. It
   * keeps the export's session id unless given another: request ids the server made derive
   * from the session's id, so under another id Web's recorded answers name other requests.
   */
  async replay(script: SessionScript, sessionId?: string): Promise<SessionView> {
    const create = sessionId === undefined ? script.create : { ...script.create, id: sessionId };
    // The export's own creation body, sent without fieldValidation: it is the server's, not a caller's typo.
    let view = await this.http.json<SessionView>("POST", pathOf("createSession"), { json: create, expect: [201] });
    for (let start = 0; start < script.steps.length; start += 1000) {
      // An export's steps are what `steps` takes; the document types them only as one-key objects.
      const batch = script.steps.slice(start, start + 1000) as unknown as Body<"steps">;
      view = (await this.steps(view.id, batch)).session;
    }
    return view;
  }

  /** A copy of the session at its current state, under `newId` (server-made when absent). */
  forkSession(sessionId: string, newId?: string): Promise<SessionView> {
    return this.http.json("POST", pathOf("forkSession", { id: sessionId }), { json: newId === undefined ? undefined : { id: newId }, expect: [201], validated: true });
  }

  /** `{ conforms, violations, requests }`: the contract monitor's verdict on Web (M1–M9). */
  report(sessionId: string): Promise<Report> {
    return this.http.json("GET", pathOf("report", { id: sessionId }));
  }

  /** The same verdict as JUnit XML, for a CI system. */
  reportJunit(sessionId: string): Promise<string> {
    return this.http.text("GET", pathOf("reportJunit", { id: sessionId }));
  }

  /** One page of violations across sessions, optionally of one account or rule; `next` is the cursor. */
  violations(query: Query<"violations"> = {}): Promise<ViolationPage> {
    return this.http.json("GET", pathOf("violations"), { query });
  }

  /** Every violation matching the filters, page after page. */
  async *iterViolations(query: Omit<Query<"violations">, "after"> = {}): AsyncGenerator<ViolationPage["violations"][number], void, undefined> {
    let after: string | undefined;
    do {
      const page = await this.violations({ ...query, after });
      yield* page.violations;
      after = page.next ?? undefined;
    } while (after);
  }

  // -- host traces ------------------------------------------------------------------------------

  /**
   * Judges a native host's recorded trace: the verdict (`conforms`, `divergences`, …), or with
   * `format: "junit"` JUnit XML. A stream or async iterable is sent as it is read (never held
   * whole). An unsound trace is `TodaysimError` `invalid_trace` naming its line in `field`.
   */
  verifyHostTrace(trace: HostTrace, query: Query<"verifyHostTrace"> & { format: "junit" }): Promise<string>;
  verifyHostTrace(trace: HostTrace, query?: Query<"verifyHostTrace"> & { format?: "json" }): Promise<Verdict>;
  async verifyHostTrace(trace: HostTrace, query: Query<"verifyHostTrace"> = {}): Promise<Verdict | string> {
    const response = await this.http.send("POST", pathOf("verifyHostTrace"), {
      query, body: traceBody(trace), headers: { "Content-Type": "application/x-ndjson" }, stream: isStreamed(trace),
    });
    const text = await response.text();
    return query.format === "junit" ? text : (JSON.parse(text) as Verdict);
  }

  /**
   * Compares two recordings of one scenario (iOS against Android, or two builds): `identical`,
   * every output that differs with each side's line and time and its rule, and each trace's own
   * verdict (`a`, `b`); with `format: "junit"` JUnit XML. Traces are sent as the parts `a` and
   * `b` of a multipart body (both are held while compared: 32 MiB together at most). Traces that
   * cannot be compared are `TodaysimError` `invalid_trace` (`field` `a: line N`) or
   * `traces_not_comparable` (their inputs do not align).
   */
  compareTraces(a: HostTrace, b: HostTrace, query: Query<"compareTraces"> & { format: "junit" }): Promise<string>;
  compareTraces(a: HostTrace, b: HostTrace, query?: Query<"compareTraces"> & { format?: "json" }): Promise<TraceComparison>;
  async compareTraces(a: HostTrace, b: HostTrace, query: Query<"compareTraces"> = {}): Promise<TraceComparison | string> {
    const form = new FormData();
    form.append("a", await tracePart(a), "a.jsonl");
    form.append("b", await tracePart(b), "b.jsonl");
    const response = await this.http.send("POST", pathOf("compareTraces"), { query, body: form });
    const text = await response.text();
    return query.format === "junit" ? text : (JSON.parse(text) as TraceComparison);
  }

  /**
   * Judges the trace in the file at `path` (Node), read in chunks of `chunkBytes` (64 KiB by
   * default) as the upload goes: a trace of any size (up to the server's 256 MiB) is never held
   * in memory.
   */
  verifyHostTraceFile(path: string, query: Query<"verifyHostTrace"> & { format: "junit" }, options?: { chunkBytes?: number }): Promise<string>;
  verifyHostTraceFile(path: string, query?: Query<"verifyHostTrace"> & { format?: "json" }, options?: { chunkBytes?: number }): Promise<Verdict>;
  async verifyHostTraceFile(path: string, query: Query<"verifyHostTrace"> = {}, options: { chunkBytes?: number } = {}): Promise<Verdict | string> {
    const stream = await fileStream(path, options.chunkBytes ?? 65536);
    return this.verifyHostTrace(stream, query as Query<"verifyHostTrace"> & { format?: "json" });
  }
}

/** An input's `Idempotency-Key` and `If-Match` headers. */
function conditions(options: InputOptions): { [name: string]: string | undefined } {
  return { "Idempotency-Key": options.idempotencyKey, "If-Match": options.ifMatch === undefined ? undefined : String(options.ifMatch) };
}
