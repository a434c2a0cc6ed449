// Puts the bridge core beside the compiled package: Web/bridge-core.mjs copied byte for byte
// (the one bridge, the same code /bridge.js wraps for pages; never rewritten here) and its
// hand-written declarations, src/bridge-core.d.mts, which tsc does not copy.
//   node tools/ship-core.mjs [OUTDIR]      (default dist; systemtests/test_typescript.py passes its test build)
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(PACKAGE, "dist"));
const core = join(PACKAGE, "..", "Web", "bridge-core.mjs");
if (!existsSync(core)) throw new Error(`ship-core: no ${core}: the package is built from the todaysim repository`);
if (!existsSync(out)) throw new Error(`ship-core: no ${out}: compile the package first (tsc)`);
copyFileSync(core, join(out, "bridge-core.mjs"));
copyFileSync(join(PACKAGE, "src", "bridge-core.d.mts"), join(out, "bridge-core.d.mts"));
