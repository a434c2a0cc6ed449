/**
 * todaysim for TypeScript test suites: a typed client for the simulated native host of the
 * Today Page (`Client`, refusals thrown as `TodaysimError`), a runner for a local server
 * (`TodaysimServer`, Node), and the OpenAPI document's types (`generated/api.ts`).
 */
export { Client, EventStream } from "./client.js";
export type { ClientOptions, EntryEvent, FieldValidation, HostTrace, InputOptions, SessionScript, StreamOptions } from "./client.js";
export { TodaysimError } from "./errors.js";
export { TodaysimServer } from "./server.js";
export type { ServerOptions } from "./server.js";
export * from "./generated/api.js";
