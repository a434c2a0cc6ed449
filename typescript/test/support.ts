// What the package's tests share: the repository's paths, a real todaysim (this build's binary,
// TODAYSIM_BIN, which systemtests/test_typescript.py sets), commands run to the end, and the OpenAPI
// document a server serves read as JSON (by tools/generate_types.py --to-json: Node has no YAML
// parser).
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, OPERATIONS, TodaysimServer } from "../src/index.js";
import type { OperationId } from "../src/index.js";

/** typescript/: TODAYSIM_TS_PACKAGE (systemtests/test_typescript.py compiles the tests elsewhere), else two up from build/test/. */
export const PACKAGE = process.env.TODAYSIM_TS_PACKAGE ?? join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ROOT = join(PACKAGE, "..");

export function binary(): string {
  const found = process.env.TODAYSIM_BIN;
  if (!found) throw new Error("TODAYSIM_BIN is not set: run the tests with Scripts/system-tests BIN test_typescript.py");
  return found;
}

export function startServer(options: { token?: string; args?: string[] } = {}): Promise<TodaysimServer> {
  return TodaysimServer.start({ binary: binary(), ...options });
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` to its end, `input` on its standard input. */
export function run(command: string, args: string[], input?: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: string[] = [];
    const err: string[] = [];
    const decoder = new TextDecoder();
    const errors = new TextDecoder();
    child.stdout?.on("data", (chunk) => out.push(decoder.decode(chunk, { stream: true })));
    child.stderr?.on("data", (chunk) => err.push(errors.decode(chunk, { stream: true })));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout: out.join("") + decoder.decode(), stderr: err.join("") + errors.decode() }));
    child.stdin?.end(input ?? "");
  });
}

export const PYTHON = process.env.TODAYSIM_PYTHON ?? "python3";
export const GENERATOR = join(PACKAGE, "tools", "generate_types.py");

export interface Document {
  info: { version: string };
  paths: { [path: string]: { [method: string]: { operationId?: string } } };
  components: { schemas: { [name: string]: unknown } };
}

/** The OpenAPI document `client`'s server serves, parsed. */
export async function servedDocument(client: Client): Promise<Document> {
  const converted = await run(PYTHON, [GENERATOR, "--to-json", "-"], await client.openAPIDocument());
  if (converted.code !== 0) throw new Error(`generate_types.py --to-json failed: ${converted.stderr}`);
  return JSON.parse(converted.stdout) as Document;
}

/**
 * A `fetch` that records which operation each request called (its method and the path template
 * it matches), so a test can show every operation was exercised for real.
 */
export function recordingFetch(called: Set<OperationId>): typeof fetch {
  const templates = (Object.keys(OPERATIONS) as OperationId[]).map((id) => ({
    id,
    method: OPERATIONS[id].method as string,
    pattern: new RegExp(`^${OPERATIONS[id].path.replace(/[.]/g, "\\.").replace(/\{\w+\}/g, "[^/]+")}$`),
  }));
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? "GET").toUpperCase();
    const found = templates.find((t) => t.method === method && t.pattern.test(url.pathname));
    if (found) called.add(found.id);
    return fetch(input, init);
  };
}
