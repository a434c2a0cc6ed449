/**
 * The client's HTTP half: the base URL, the token, the field validation and the deadline, and
 * `send` / `json` / `text`, which turn every failure into `TodaysimError`. Over the platform's
 * `fetch` only.
 */
import { TodaysimError } from "./errors.js";
import { OPERATIONS } from "./generated/api.js";
import type { OperationId } from "./generated/api.js";

/** How unknown fields of a control-plane body are met (the API's `?fieldValidation=`). */
export type FieldValidation = "Warn" | "Strict" | "Ignore";

/** What one request sends and expects. */
export interface Send {
  query?: { [name: string]: string | number | boolean | null | undefined };
  headers?: { [name: string]: string | undefined };
  json?: unknown;
  body?: BodyInit | ReadableStream<Uint8Array>;
  expect?: readonly number[];
  /** Sends `?fieldValidation=` when the client has one (control-plane bodies). */
  validated?: boolean;
  /** No deadline (a stream); else `timeoutMs` plus this many ms. */
  stream?: boolean;
  extraMs?: number;
  signal?: AbortSignal;
}

export const DEFAULT_URL = "http://127.0.0.1:8080";

/** An environment variable (Node's), undefined when unset, empty, or where there is no process (a browser). */
export function environment(name: string): string | undefined {
  const found = (globalThis as { process?: { env?: { [name: string]: string | undefined } } }).process?.env?.[name];
  return found ? found : undefined;
}

/** The path of `operation` with its parameters filled in (each percent-encoded). */
export function pathOf(operation: OperationId, parameters: { [name: string]: string } = {}): string {
  return OPERATIONS[operation].path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = parameters[name];
    if (value === undefined) throw new TypeError(`${operation}: no value for the path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** Requests to one server: what `Client` sends everything through. */
export class Http {
  constructor(readonly baseUrl: string, readonly token: string | undefined, readonly fieldValidation: FieldValidation | undefined,
    readonly timeoutMs: number, private readonly fetcher: typeof fetch) {}

  async send(method: string, path: string, options: Send = {}): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    if (options.validated && this.fieldValidation && !url.searchParams.has("fieldValidation")) {
      url.searchParams.set("fieldValidation", this.fieldValidation);
    }
    const headers: { [name: string]: string } = {};
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    for (const [name, value] of Object.entries(options.headers ?? {})) if (value !== undefined) headers[name] = value;
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["Content-Type"] = "application/json";
    }
    const signals: AbortSignal[] = [];
    if (options.signal) signals.push(options.signal);
    if (!options.stream) signals.push(timeoutSignal(this.timeoutMs + (options.extraMs ?? 0)));
    const request = `${method} ${path}`;
    // `duplex` (not in TypeScript 4.8's RequestInit) is what Node's fetch needs to send a stream.
    const init = { method, headers, body, signal: anySignal(signals), duplex: "half" } as RequestInit;
    let response: Response;
    try {
      response = await this.fetcher(url, init);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const cause = error instanceof Error ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ""}` : String(error);
      throw new TodaysimError(0, "unreachable", `cannot reach todaysim at ${this.baseUrl}: ${cause}`, { request });
    }
    if (!(options.expect ?? [200]).includes(response.status)) throw await TodaysimError.fromResponse(response, request);
    return response;
  }

  async json<T>(method: string, path: string, options: Send = {}): Promise<T> {
    const response = await this.send(method, path, options);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async text(method: string, path: string, options: Send = {}): Promise<string> {
    return (await this.send(method, path, options)).text();
  }
}

/** A signal that aborts after `ms` (Node's and browsers' `AbortSignal.timeout`, newer than TypeScript 4.8's types; its timer keeps no process alive). */
function timeoutSignal(ms: number): AbortSignal {
  return (AbortSignal as unknown as { timeout(ms: number): AbortSignal }).timeout(ms);
}

/** One signal that aborts when any of `signals` does (AbortSignal.any is Node 20.3+). */
function anySignal(signals: AbortSignal[]): AbortSignal | undefined {
  if (signals.length <= 1) return signals[0];
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}
