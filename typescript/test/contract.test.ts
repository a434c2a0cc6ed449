// The client never drifts from the document a real server serves: every operation has exactly
// one method, with the document's HTTP method and path; no method of the client is without an
// operation (or a helper composing one); every schema is a type of generated/api.ts, which
// tools/generate_types.py --check proves is what the document makes; and one version
// everywhere: package.json's, the package's VERSION, the repository's VERSION file, the
// binary's and the served document's.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Client, OPERATIONS, SCHEMAS, VERSION } from "../src/index.js";
import type { TodaysimServer } from "../src/index.js";
import { binary, GENERATOR, PACKAGE, PYTHON, ROOT, run, servedDocument, startServer } from "./support.js";
import type { Document } from "./support.js";

const HTTP_METHODS = ["get", "put", "post", "delete", "patch"];
let server: TodaysimServer;
let served: Document;

before(async () => {
  server = await startServer();
  served = await servedDocument(server.client());
});

after(async () => {
  await server?.stop();
});

test("every served operation has one method, with its method and path; every method an operation", () => {
  const operations: { [id: string]: [string, string] } = {};
  for (const [path, item] of Object.entries(served.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (HTTP_METHODS.includes(method) && operation.operationId) operations[operation.operationId] = [method.toUpperCase(), path];
    }
  }
  assert.deepEqual(Object.keys(Client.operations).sort(), Object.keys(operations).sort(), "operations without a method, or methods without an operation");
  for (const [id, [method, path]] of Object.entries(operations)) {
    assert.deepEqual([OPERATIONS[id as keyof typeof OPERATIONS].method, OPERATIONS[id as keyof typeof OPERATIONS].path], [method, path], id);
  }
  const methods = new Set(Object.values(Client.operations));
  assert.equal(methods.size, Object.keys(operations).length, "one method per operation, never one for two");
  const publicMethods = Object.getOwnPropertyNames(Client.prototype)
    .filter((name) => name !== "constructor" && typeof (Client.prototype as unknown as { [name: string]: unknown })[name] === "function")
    // TypeScript's `private` is not private at run time: the plumbing is named here.
    .filter((name) => !["send", "json", "text", "input", "events"].includes(name));
  for (const name of publicMethods) {
    const calls = Client.helpers[name];
    assert.ok(methods.has(name as keyof Client) || (calls !== undefined && calls in operations), `Client.${name} calls no operation`);
  }
  for (const name of methods) assert.ok(publicMethods.includes(name), `Client.${name} is named for an operation but not defined`);
});

test("every served schema is a type of the package", () => {
  assert.deepEqual([...SCHEMAS], Object.keys(served.components.schemas));
});

test("the generated types and package.json are what the sources make", async () => {
  const checked = await run(PYTHON, [GENERATOR, "--check"]);
  assert.equal(checked.code, 0, checked.stderr + checked.stdout);
});

test("one version: package.json, VERSION, the binary and the served document", async () => {
  const written = (await readFile(join(ROOT, "VERSION"), "utf8")).trim();
  const manifest = JSON.parse(await readFile(join(PACKAGE, "package.json"), "utf8")) as { version: string };
  const first = (await run(binary(), ["--version"])).stdout.split("\n")[0];
  assert.deepEqual([manifest.version, VERSION, first, served.info.version], [written, written, `todaysim ${written}`, written]);
});
