/**
 * todaysim for Playwright (`todaysim/playwright`): a real page on the session's clock
 * (`BridgedPage`), conformance as a test's failure (`expectConforms`), and fixtures for
 * Playwright Test's `test.extend(...)`. Needs Playwright (`playwright-core`, or
 * `@playwright/test`, which brings it): its types are imported from there; `todaysim` itself
 * does not.
 *
 * One module per concern: `bridged-page.ts` (the page driver's adapter: its in-page half is
 * Web/page-driver.js, python/'s too), `page-types.ts` (its steps, answers and settles as types), `page-scripts.ts` (the in-page
 * scripts as shipped),
 * `origin.ts` (may the page call the server), `conformance.ts` (a report as a failure's text),
 * `fixtures.ts` (Playwright Test).
 */
export { BridgedPage, defaultSettleTimeoutMs, NO_BRIDGE, SETTLE_TIMEOUT_VARIABLE, SettleTimeout } from "./bridged-page.js";
export type { BridgedPageOptions, ClockMove, OpenedBridgedPage, Settled, Step, StepAnswer } from "./page-types.js";
export { EPOCH_MS, initScript, timersScript } from "./page-scripts.js";
export { checkOrigin, originOf, OriginRefused, refusedSentence } from "./origin.js";
export { ConformanceError, entryLine, expectConforms, sessionSummary, TIMELINE_TAIL } from "./conformance.js";
export { todaysimFixtures } from "./fixtures.js";
export type { BridgedPages, HostSessions, TodaysimFixtureFunctions, TodaysimFixtures, TodaysimWorkerFixtures } from "./fixtures.js";
