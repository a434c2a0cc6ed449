/**
 * The bridge contract as types, and the bridge without a browser.
 *
 * Types: `TodayWebViewBridge` (what `window.todayWebViewBridge` is), whose `emit(type, payload)`
 * takes per `type` its payload (the message's schema without `type`) and resolves what the
 * contract says that type resolves to; `TodayNativeEvent`, the `todayNativeEvent` CustomEvent
 * whose `detail` is a `NativeToWebEvent`; `TodayWebView` (`window.__todayWebView`, from the
 * generated types). All of them index the lookups tools/generate_types.py generates from the
 * OpenAPI document's `WebToNativeEvent` and `NativeToWebEvent` (src/generated/bridge.ts), so a
 * change of the contract changes them. `todaysim/bridge-globals` puts them on `Window`, and
 * `BridgeWindow` is the one type a page's hook takes for `window` and for `bridgedTarget(target)`.
 *
 * Run time: `installBridge` and `attachBridge` are Web/bridge-core.mjs itself, shipped unchanged
 * beside this module (tools/ship-core.mjs copies it at build time) and typed by
 * bridge-core.d.mts: the one bridge that /bridge.js gives a page, here on any window-like
 * EventTarget (jsdom's or happy-dom's window, or a bare `new EventTarget()` in Node).
 */
import type { NativeToWebEvent, SessionView, TodayWebView } from "./generated/api.js";
import type { NativeToWebMessages, WebToNativeAnswers, WebToNativeMessages, WebToNativeReturns } from "./generated/bridge.js";

export { NATIVE_TO_WEB_TYPES, WEB_TO_NATIVE_TYPES } from "./generated/bridge.js";
export type { NativeToWebMessages, WebToNativeAnswers, WebToNativeMessages, WebToNativeReturns } from "./generated/bridge.js";
export { attachBridge, installBridge } from "./bridge-core.mjs";

/** A Web → native message type the bridge knows (`todayPage.refreshResult`, `nativeDialog.present`, …). */
export type WebToNativeType = keyof WebToNativeMessages;

/** A native → Web message type (`todayPage.refreshRequested`, `webView.visibilityChanged`, …). */
export type NativeToWebType = keyof NativeToWebMessages;

/** What `emit(type, payload)` takes as `payload`: the message's schema without `type` (the bridge adds it). */
export type PayloadOf<T extends WebToNativeType> = Omit<WebToNativeMessages[T], "type">;

/**
 * What `emit(type, …)`'s Promise resolves to: `undefined` for every `todayPage.*` call and the
 * other fire-and-forget messages, the host's answer for `liveWidgetCreation.present`, the
 * dialog's settlement (or its refusal) for `nativeDialog.present`. A message the host rejects
 * (one its schema cannot express, such as a dialog whose `actionId`s repeat) resolves
 * `undefined` at run time, as the contract says.
 */
export type ReturnOf<T extends WebToNativeType> = WebToNativeReturns[T];

/** The `resolution` of the HTTP answer to a message of this type at `/web-events`. */
export type AnswerOf<T extends WebToNativeType> = WebToNativeAnswers[T];

/** The types whose payload has no required field, so `emit(type)` may leave it out. */
export type PayloadOptionalType = { [T in WebToNativeType]: {} extends PayloadOf<T> ? T : never }[WebToNativeType];

/** `window.todayWebViewBridge`: the one way a page talks to its native host. */
export interface TodayWebViewBridge {
  /** Sends `{type, ...payload}` to the host; resolves what the contract says `type` resolves to. */
  emit<T extends WebToNativeType>(type: T, payload: PayloadOf<T>): Promise<ReturnOf<T>>;
  /** The same, for a type whose payload has no required field (`liveWidgetCreation.present`). */
  emit<T extends PayloadOptionalType>(type: T): Promise<ReturnOf<T>>;
}

/** The name of the event the bridge dispatches each native → Web message as. */
export const TODAY_NATIVE_EVENT = "todayNativeEvent";

/** What the bridge dispatches on the window for each native → Web message: its `detail` is the message. */
export type TodayNativeEvent = CustomEvent<NativeToWebEvent>;

/** Options of `installBridge` and `attachBridge` (Web/bridge-core.mjs says what each does). */
export interface BridgeOptions {
  /** The todaysim server's absolute base URL. */
  server: string;
  /** The session's id. */
  session: string;
  /** For a server started with `--token`. */
  accessToken?: string | null;
  /** The name of the event native → Web messages are dispatched as (default `todayNativeEvent`). */
  event?: string;
  /** Called, after the stream is closed, when the host loads the document again; without it nothing follows. */
  reload?: (() => void) | null;
  /** The fetch to use (default: the global one, looked up at each call). */
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  /** How to read the session's event stream (default: EventSource where the runtime has one, else fetch). */
  stream?: "fetch" | "eventsource";
}

/** What `installBridge` returns (also set as `target.todaysimBridge`): what a test waits on. */
export interface BridgeHandle {
  /** The server's base URL, without a trailing slash. */
  readonly base: string;
  readonly session: string;
  /** The name native → Web messages are dispatched as. */
  readonly event: string;
  /** Settled once the session's event stream is open. */
  readonly ready: Promise<void>;
  /** The native → Web messages dispatched so far, in order. */
  readonly received: readonly NativeToWebEvent[];
  /** The session's document as the bridge loaded it (`loadId`, `url`, `requestId`). */
  readonly document: SessionView["document"];
  /** Bridge calls posted and not yet answered. */
  readonly inFlight: number;
  /** The `seq` of the last timeline entry (of any kind) the stream brought. */
  readonly delivered: number;
  /** Whether the event stream is open now. */
  readonly open: boolean;
  /** Ends the event stream. */
  close(): void;
}

type ListenerOptions = boolean | AddEventListenerOptions;

/**
 * What a page's hook takes as its window, so that one hook serves the app and its tests: `window`
 * (under `todaysim/bridge-globals`, where the members are optional: the host injects them only
 * inside the app) and `bridgedTarget(target)` (a jsdom window or a bare EventTarget with the
 * bridge installed) both fit. `todaysimBridge` is there only under todaysim's shim (/bridge.js):
 * its `document.requestId` is the id of the host's reload that loaded the page.
 */
export interface BridgeWindow extends EventTarget {
  readonly todayWebViewBridge?: TodayWebViewBridge;
  readonly __todayWebView?: TodayWebView;
  readonly todaysimBridge?: BridgeHandle;
  addEventListener(type: "todayNativeEvent", listener: (event: TodayNativeEvent) => void, options?: ListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: ListenerOptions): void;
  removeEventListener(type: "todayNativeEvent", listener: (event: TodayNativeEvent) => void, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}

/** An EventTarget with a bridge installed: what `window` is in the app, typed for a test's use (a `BridgeWindow` whose members are there). */
export interface BridgedTarget extends BridgeWindow {
  readonly todayWebViewBridge: TodayWebViewBridge;
  readonly __todayWebView: TodayWebView;
  readonly todaysimBridge: BridgeHandle;
}

/**
 * `target` typed as `installBridge` left it (`todayWebViewBridge`, `__todayWebView`,
 * `todaysimBridge`, the `todayNativeEvent` listener); a TypeError when it has no bridge.
 */
export function bridgedTarget<T extends EventTarget>(target: T): T & BridgedTarget {
  const found = target as T & Partial<BridgedTarget>;
  if (!found.todaysimBridge || typeof found.todayWebViewBridge?.emit !== "function") {
    throw new TypeError("todaysim bridge: this target has no bridge: await installBridge(target, { server, session }) first");
  }
  return found as T & BridgedTarget;
}
