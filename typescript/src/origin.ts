/**
 * Whether the server lets the page under test call it: the page's `Origin` and the CORS
 * preflight a browser makes, asked before anything starts (as python/'s `todaysim.origin`).
 */
import type { Client } from "./client.js";
import { TodaysimError } from "./errors.js";

/**
 * The server does not let pages of the page under test's origin call it (no CORS grant for
 * that `Origin`): every bridge call of the page would be refused. Thrown before anything
 * starts, naming the flag to add.
 */
export class OriginRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OriginRefused";
  }
}

/** `scheme://host[:port]` of `url`, as a browser sends it in `Origin` (default ports left out). */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/** What the helpers throw and `/bridge.js` logs when the server refuses the page's origin (python/'s `refused_sentence`). */
export function refusedSentence(server: string, origin: string): string {
  return `todaysim at ${server} does not allow pages of ${origin} to call it (cross-origin), so every bridge call ` +
    `of the page would be refused: start it with --allow-origin ${origin} (Scripts/run --allow-origin ${origin})`;
}

/**
 * Asks the server, as the browser will, whether a page at `pageUrl` may call it: a CORS
 * preflight with the page's `Origin`. Nothing to ask when the page is served by the server
 * itself; `OriginRefused` naming `--allow-origin` when the grant is missing.
 */
export async function checkOrigin(client: Client, pageUrl: string): Promise<void> {
  const origin = originOf(pageUrl);
  if (origin === originOf(client.baseUrl)) return;
  const headers: { [name: string]: string } = { Origin: origin, "Access-Control-Request-Method": "POST" };
  if (client.token) headers.Authorization = `Bearer ${client.token}`;
  let response: Response;
  try {
    response = await fetch(`${client.baseUrl}/v1/sessions`, { method: "OPTIONS", headers });
  } catch (error) {
    throw new Error(`cannot reach todaysim at ${client.baseUrl} to ask whether ${origin} may call it: ${String(error)}`);
  }
  if (response.status !== 200 && response.status !== 204) throw await TodaysimError.fromResponse(response, "OPTIONS /v1/sessions");
  const granted = response.headers.get("Access-Control-Allow-Origin");
  if (granted !== origin && granted !== "*") throw new OriginRefused(refusedSentence(client.baseUrl, origin));
}
