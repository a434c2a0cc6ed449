/**
 * A session's conformance as a test failure's text: each violation with its rule, its detail and
 * its own timeline entry (wherever it is in the timeline), then the timeline's last entries.
 */
import type { Client } from "./client.js";
import type { Report, TimelineEntry } from "./generated/api.js";

/** The session broke the contract: `expectConforms()`'s failure, its message `sessionSummary`'s. */
export class ConformanceError extends Error {
  readonly report: Report;
  constructor(message: string, report: Report) {
    super(message);
    this.name = "ConformanceError";
    this.report = report;
  }
}

/** How many of the timeline's last entries a failure shows (each violation's entry is shown besides). */
export const TIMELINE_TAIL = 20;

/** One timeline entry as a failure shows it: `#seq atMs ms kind type [requestId] [[rule]]`. */
export function entryLine(entry: TimelineEntry): string {
  const rule = entry.rule ? ` [${entry.rule}]` : "";
  const requestId = entry.requestId ? ` ${entry.requestId}` : "";
  return `#${entry.seq} ${entry.atMs} ms ${entry.kind} ${entry.type}${requestId}${rule}`;
}

/**
 * The session's report as text: each violation with its rule and detail, and under it its own
 * timeline entry; then the timeline's last entries. What `expectConforms()` fails with
 * (python/'s plugin adds the same to a failing test's output).
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
    lines.push(`    ${entryLine(violation)}`);
  }
  const total = (await client.readSession(sessionId)).counts.timeline;
  const tail = (await client.timeline(sessionId, { after: Math.max(0, total - TIMELINE_TAIL), limit: TIMELINE_TAIL })).entries;
  lines.push(`timeline (last ${tail.length} of ${total}):`);
  for (const entry of tail) lines.push(`  ${entryLine(entry)}`);
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
