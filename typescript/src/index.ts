/**
 * todaysim for TypeScript test suites: a typed client for the simulated native host of the
 * Today Page (`Client`, refusals thrown as `TodaysimError`), a runner for a local server
 * (`TodaysimServer`, Node), the OpenAPI document's types (`generated/api.ts`), and the bridge
 * contract as types with the bridge without a browser (`installBridge`, `bridge.ts`).
 */
export { Client, EventStream } from "./client.js";
export type { ClientOptions, EntryEvent, FieldValidation, HostTrace, InputOptions, SessionScript, StreamOptions } from "./client.js";
export { TodaysimError } from "./errors.js";
export { TodaysimServer } from "./server.js";
export type { ServerOptions } from "./server.js";
export * from "./generated/api.js";
export { attachBridge, bridgedTarget, installBridge, NATIVE_TO_WEB_TYPES, TODAY_NATIVE_EVENT, WEB_TO_NATIVE_TYPES } from "./bridge.js";
export type {
  AnswerOf, BridgedTarget, BridgeHandle, BridgeOptions, BridgeWindow, NativeToWebMessages, NativeToWebType, PayloadOf, PayloadOptionalType, ReturnOf,
  TodayNativeEvent, TodayWebViewBridge, WebToNativeAnswers, WebToNativeMessages, WebToNativeReturns, WebToNativeType,
} from "./bridge.js";
