// The bridge contract's types constrain a page (issue 36, item 4): bridge-page.ts, a page's own
// bridge code importing the packed package, compiles with --strict, and each mistake below —
// the page with one edit — fails tsc with the error that names it. Run by systemtests/test_typescript.py
// after it installed the tarball in its scratch project (TODAYSIM_CONSUMER, holding
// bridge-page.ts), with its tsc (TODAYSIM_TSC). One tsc run checks them all: each mistake is a
// module of its own, and tsc names the file of every error, so each is judged alone (a mistake
// may cause more than one error; the one that names it must be among them).
import assert from "node:assert/strict";
import { readFile, writeFile, mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { before, test } from "node:test";
import { run } from "../support.js";

interface Mistake {
  /** What the page gets wrong. */
  name: string;
  /** The page's text, exactly once in it, and what it becomes. */
  from: string;
  to: string;
  /** The error tsc must give, and what its message must say. */
  code: string;
  says: RegExp;
}

const MISTAKES: Mistake[] = [
  { name: "a misspelt payload field", from: "status: ok ?", to: "state: ok ?", code: "TS2345", says: /'state' does not exist in type/ },
  { name: "a payload field of the wrong type", from: 'mode: "soft"', to: 'mode: "gentle"', code: "TS2322", says: /Type '"gentle"' is not assignable to type 'RefreshMode'/ },
  { name: "a required payload field left out", from: "requestId: request.requestId, presentation", to: "presentation", code: "TS2345",
    says: /Property 'requestId' is missing/ },
  { name: "an unknown message type", from: '"todayPage.refreshResult", {', to: '"todayPage.refreshResults", {', code: "TS2345",
    says: /Argument of type '"todayPage\.refreshResults"' is not assignable to parameter of type 'keyof WebToNativeMessages'/ },
  { name: "a todayPage.* call's result used as a value", from: "const done: undefined =", to: "const done: boolean =", code: "TS2322",
    says: /Type 'undefined' is not assignable to type 'boolean'/ },
  { name: "the Live Widget answer taken for a boolean", from: "return result.presented;", to: "return result;", code: "TS2322",
    says: /'LiveWidgetCreationResult' is not assignable to type 'boolean'/ },
  { name: "a dialog result read before its type is checked", from: 'if (result.type === "action") return result.actionId', to: "return result.actionId",
    code: "TS2339", says: /Property 'actionId' does not exist on type 'NativeDialogResult'/ },
  { name: "a payload left out where the type needs one", from: 'bridge.emit("liveWidgetCreation.present")', to: 'bridge.emit("nativeDialog.present")',
    code: "TS2345", says: /Argument of type '"nativeDialog\.present"' is not assignable to parameter of type '"liveWidgetCreation\.present"'/ },
  { name: "a native message read before its type is checked", from: "const message = event.detail;", to: "const message = event.detail; void message.requestId;",
    code: "TS2339", says: /Property 'requestId' does not exist on type 'NativeToWebEvent'/ },
  { name: "an unknown native message type", from: 'case "webView.visibilityChanged":', to: 'case "webView.visibilityChange":', code: "TS2678",
    says: /'"webView\.visibilityChange"' is not comparable to type/ },
  { name: "a platform the host never injects", from: '=== "ios"', to: '=== "web"', code: "TS2367", says: /have no overlap/ },
  { name: "the bridge used as if every browser had it", from: "return window.todayWebViewBridge?.emit", to: "return window.todayWebViewBridge.emit",
    code: "TS2532", says: /possibly 'undefined'/ },
  { name: "a misspelt native event name", from: 'host.addEventListener("todayNativeEvent"', to: 'host.addEventListener("todayNativeEvents"',
    code: "TS2769", says: /No overload matches this call/ },
  // Issue 45, item 3: the protocol's values, not any string or object.
  { name: "a misspelt result status", from: 'status: ok ? "succeeded"', to: 'status: ok ? "succeded"', code: "TS2322",
    says: /Type '"succeded"' is not assignable to type 'RefreshStatus'/ },
  { name: "an error without its stage", from: '{ stage: "loadBatches", status: 503, message', to: "{ status: 503, message", code: "TS2322",
    says: /Property 'stage' is missing .* 'RefreshError'/ },
  { name: "an error stage the protocol does not define", from: 'stage: "loadBatches"', to: 'stage: "fetchFeed"', code: "TS2322",
    says: /Type '"fetchFeed"' is not assignable to type '"loadBatches" \| "mountFeedCanvas"'/ },
  { name: "an error given as a bare message", from: 'error: ok ? undefined : { stage: "loadBatches", status: 503, message: "the feed did not load" }',
    to: 'error: ok ? undefined : "the feed did not load"', code: "TS2322", says: /Type 'string' is not assignable to type 'RefreshError'/ },
  { name: "the shim's handle read as if every browser had it", from: "host.todaysimBridge?.document", to: "host.todaysimBridge.document",
    code: "TS2532", says: /possibly 'undefined'/ },
  { name: "a first load's null request id taken for a string", from: "): string | null {", to: "): string {", code: "TS2322",
    says: /Type 'string \| null' is not assignable to type 'string'/ },
  { name: "window given where only a bridged target fits", from: "host: BridgeWindow = window): () => void", to: "host: BridgedTarget = window): () => void",
    code: "TS2322", says: /'Window & typeof globalThis' is not assignable to type 'BridgedTarget'/ },
];

interface Diagnostic {
  file: string;
  line: number;
  code: string;
  message: string;
}

const PAGE = "bridge-page.ts";
let diagnostics: Diagnostic[] = [];
let exitCode: number | null = null;

function slug(name: string): string {
  return name.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "").toLowerCase();
}

before(async () => {
  const consumer = process.env.TODAYSIM_CONSUMER;
  const tsc = process.env.TODAYSIM_TSC;
  if (!consumer || !tsc) throw new Error("TODAYSIM_CONSUMER and TODAYSIM_TSC must be set: systemtests/test_typescript.py runs this test");
  const page = await readFile(join(consumer, PAGE), "utf8");
  const folder = await mkdtemp(join(consumer, "mistakes-"));
  const files = [join(consumer, PAGE)];
  for (const mistake of MISTAKES) {
    const count = page.split(mistake.from).length - 1;
    assert.equal(count, 1, `${mistake.name}: ${JSON.stringify(mistake.from)} occurs ${count} times in ${PAGE}, not once`);
    const file = join(folder, `${slug(mistake.name)}.ts`);
    await writeFile(file, page.replace(mistake.from, mistake.to));
    files.push(file);
  }
  const config = join(folder, "tsconfig.json");
  await writeFile(config, JSON.stringify({
    compilerOptions: { target: "ES2022", module: "ES2022", moduleResolution: "node", lib: ["ES2022", "DOM"], strict: true, skipLibCheck: true, noEmit: true },
    files,
  }));
  const ran = await run(process.execPath, [tsc, "-p", config, "--pretty", "false"]);
  exitCode = ran.code;
  for (const line of ran.stdout.split("\n")) {
    const found = /^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/.exec(line);
    if (found) diagnostics.push({ file: found[1] as string, line: Number(found[2]), code: found[3] as string, message: found[4] as string });
    else if (line.startsWith(" ") && diagnostics.length) (diagnostics[diagnostics.length - 1] as Diagnostic).message += "\n" + line.trim();
  }
  diagnostics = diagnostics.map((d) => ({ ...d, file: d.file.split("/").pop() as string }));
});

test("the page's bridge code compiles against the contract with --strict", () => {
  assert.notEqual(exitCode, null, "tsc ran");
  assert.deepEqual(diagnostics.filter((d) => d.file === PAGE), [], `${PAGE} has no error`);
  const known = new Set(MISTAKES.map((mistake) => `${slug(mistake.name)}.ts`));
  assert.deepEqual(diagnostics.filter((d) => !known.has(d.file)), [], "every error is in a file with a mistake");
});

for (const mistake of MISTAKES) {
  test(`fails tsc: ${mistake.name}`, () => {
    assert.notEqual(exitCode, 0, "tsc fails on the mistakes");
    const mine = diagnostics.filter((d) => d.file === `${slug(mistake.name)}.ts`);
    assert.ok(mine.length > 0, `tsc accepted the page with ${mistake.name}`);
    const shown = mine.map((d) => `${d.code} line ${d.line}: ${d.message}`).join("\n");
    assert.ok(mine.some((d) => d.code === mistake.code && mistake.says.test(d.message)),
      `no ${mistake.code} saying ${mistake.says} among tsc's errors for ${mistake.name}:\n${shown}`);
  });
}
