// What `npm pack` of typescript/ needs besides the folder (issue 45, item 7): the repository's
// Web/ beside it (the bridge core and the page driver's scripts, copied into dist/ by
// tools/ship-core.mjs) and playwright-core's types (a dev dependency). Packed from a copy of the
// folder alone, prepack's first step stops, naming ../Web, before tsc runs.
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PACKAGE, run } from "./support.js";

test("ship-core, run where typescript/ has no ../Web beside it, names what the package needs", async () => {
  const scratch = await mkdtemp(join(tmpdir(), "todaysim-pack-"));
  try {
    // typescript/ alone: its tools/ in a folder with nothing beside it (the names do not matter).
    const folder = await mkdtemp(join(scratch, "typescript-"));
    const tools = await mkdtemp(join(folder, "tools-"));
    await writeFile(join(tools, "ship-core.mjs"), await readFile(join(PACKAGE, "tools", "ship-core.mjs"), "utf8"));
    for (const args of [["--check"], [folder]]) {
      const ran = await run(process.execPath, [join(tools, "ship-core.mjs"), ...args]);
      assert.equal(ran.code, 1, ran.stdout + ran.stderr);
      assert.match(ran.stderr, /ship-core: the package needs \.\.\/Web\/ \(bridge-core\.mjs, virtual-time\.js, page-driver\.js, settle-probe\.js\) beside typescript\//);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
});

test("ship-core --check passes in the repository once playwright-core is linked", async () => {
  const ran = await run(process.execPath, [join(PACKAGE, "tools", "ship-core.mjs"), "--check"]);
  assert.equal(ran.code, 0, ran.stderr);
});
