import type { Problem } from "./generated/api.js";

/**
 * A refusal by the server, its problem document (RFC 9457) as properties: `status` (the HTTP
 * status), `code` (the stable problem code, e.g. `invalid_field`), `field` (for
 * `invalid_field`, the field named), `detail`, `type`, and `problem` (the whole document).
 * A server that cannot be reached at all is status 0 and code `unreachable`; an answer that is
 * no problem document keeps its status with code `unexpected_status`.
 */
export class TodaysimError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly detail: string;
  readonly type: string | undefined;
  readonly problem: Partial<Problem>;
  /** `METHOD /path` of the request that was refused. */
  readonly request: string;

  constructor(status: number, code: string, detail: string, options: { field?: string; problem?: Partial<Problem>; request?: string } = {}) {
    const where = options.field ? ` (field ${options.field})` : "";
    const request = options.request ?? "";
    super(`${request ? `${request}: ` : ""}${status} ${code}${where}: ${detail}`);
    this.name = "TodaysimError";
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.field = options.field;
    this.problem = options.problem ?? {};
    this.type = this.problem.type;
    this.request = request;
  }

  /** The error an answer of an unexpected status stands for (its body read as a problem). */
  static async fromResponse(response: Response, request: string): Promise<TodaysimError> {
    const text = await response.text().catch(() => "");
    let problem: Partial<Problem> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) problem = parsed as Partial<Problem>;
    } catch {
      // Not JSON (a proxy's page, say): the status and the text are all there is.
    }
    return new TodaysimError(response.status, typeof problem.code === "string" ? problem.code : "unexpected_status",
      typeof problem.detail === "string" ? problem.detail : text.slice(0, 300),
      { field: typeof problem.field === "string" ? problem.field : undefined, problem, request });
  }
}
