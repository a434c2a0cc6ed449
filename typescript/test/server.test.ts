// Every way a server fails to start rejects TodaysimServer.start() within its bound, with a
// message naming the fix (issue 45, item 1): a missing binary, one that is not executable, one
// that exits at once, a port already taken, one that never answers /healthz. Before, a binary
// that never started left start() pending forever: the clean-up waited for an `exit` that a
// process which never started does not send.
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { TodaysimServer } from "../src/index.js";
import { binary } from "./support.js";

// A hang fails the test instead of holding the run (the bounds below are far shorter).
const HANG = { timeout: 120_000 };
let folder: string;

before(async () => {
  folder = await mkdtemp(join(tmpdir(), "todaysim-server-"));
});

after(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function script(name: string, body: string, mode = 0o755): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, mode);
  return path;
}

async function refusal(start: Promise<TodaysimServer>): Promise<string> {
  const outcome: unknown = await start.then((server) => server, (error: unknown) => error);
  if (outcome instanceof TodaysimServer) {
    await outcome.stop();
    assert.fail("the server started");
  }
  assert.ok(outcome instanceof Error, String(outcome));
  return outcome.message;
}

test("a missing binary rejects, naming TODAYSIM_BIN", HANG, async () => {
  const message = await refusal(TodaysimServer.start({ binary: "/nonexistent/todaysim" }));
  assert.match(message, /^cannot run \/nonexistent\/todaysim: .*ENOENT.*: set TODAYSIM_BIN to the todaysim binary/);
  assert.match(message, /Scripts\/run --install-link/);
});

test("a binary that is not executable rejects, naming chmod", HANG, async () => {
  const path = await script("not-executable", "exit 0", 0o644);
  const message = await refusal(TodaysimServer.start({ binary: path }));
  assert.match(message, /EACCES.*: make it executable \(chmod \+x\)/);
});

test("a binary that exits at once rejects with its last lines", HANG, async () => {
  const path = await script("exits", 'echo "todaysim: --db: cannot open /x/y.sqlite" >&2; exit 2');
  const message = await refusal(TodaysimServer.start({ binary: path }));
  assert.match(message, /^todaysim exited \(2\) before it listened: its last lines above say why/);
  assert.match(message, /cannot open \/x\/y\.sqlite/);
});

test("a port already taken rejects, naming the port option", HANG, async () => {
  const first = await TodaysimServer.start({ binary: binary() });
  try {
    const port = Number(new URL(first.url).port);
    const message = await refusal(TodaysimServer.start({ binary: binary(), port }));
    assert.match(message, /^todaysim exited \(2\) before it listened: the port is taken: pass another `port`/);
    assert.match(message, /Address already in use/);
  } finally {
    await first.stop();
  }
});

test("a server that never answers /healthz rejects at its startTimeoutMs", HANG, async () => {
  // Says it listens on a port where nothing does (9, discard: refused), then waits.
  const path = await script("silent", 'echo "todaysim: listening on http://127.0.0.1:9" >&2; exec sleep 600');
  const message = await refusal(TodaysimServer.start({ binary: path, startTimeoutMs: 2_000 }));
  assert.match(message, /^todaysim never answered \/healthz at http:\/\/127\.0\.0\.1:9: .*a loaded machine may need a larger `startTimeoutMs`/s);
});

test("a server that never says it listens rejects at its startTimeoutMs", HANG, async () => {
  const path = await script("mute", "exec sleep 600");
  const message = await refusal(TodaysimServer.start({ binary: path, startTimeoutMs: 1_000 }));
  assert.match(message, /^todaysim did not listen within 1000 ms: a loaded machine may need a larger `startTimeoutMs`/);
});
