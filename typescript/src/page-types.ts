/** What a bridged page takes and answers, as types: its steps, their answers, its settles. */
import type { BridgedPage } from "./bridged-page.js";
import type { InputResponse, Operations, SessionView } from "./generated/api.js";

/** One host step in `/steps` element form: `{ gesture: {...} }`, `{ lifecycle: {...} }`, `{ clock: {...} }`, ... */
export type Step = Operations["steps"]["body"][number];

/** A step `step()` makes a move of both clocks (`move()`): a clock step by `advanceMs` or to `toMs`. */
export type ClockMove = { clock: { advanceMs: number } } | { clock: { toMs: number } };

/** What `step(s)` answers: a clock move, the session's answers to its clock inputs; any other step, the one-step batch's answer. */
export type StepAnswer<S extends Step = Step> = S extends ClockMove ? InputResponse[] : Operations["steps"]["response"];

/** What `settle()` saw: the session's view, and the page's clock and earliest timer (page time, ms since the epoch). */
export interface Settled {
  view: SessionView;
  pageNow: number;
  pageNext: number | null;
}

/** A `BridgedPage` after `open()`: its session's view and last settle are there. */
export type OpenedBridgedPage<P extends BridgedPage = BridgedPage> = P & { view: SessionView; lastSettle: Settled };

export interface BridgedPageOptions {
  /** How long `settle()` waits, in ms of wall time (default `TODAYSIM_SETTLE_TIMEOUT_MS`, else 2,000, as python/'s `settle_timeout`). */
  settleTimeoutMs?: number;
}
