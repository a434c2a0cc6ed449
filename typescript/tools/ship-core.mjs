// Puts beside the compiled package what it takes from the repository's Web/ (the package is
// built from the todaysim repository: `npm pack` of typescript/ alone, without ../Web, stops here
// saying so): the bridge core, Web/bridge-core.mjs, copied byte for byte (the one bridge, the
// same code /bridge.js wraps for pages; never rewritten here) with its hand-written
// declarations, src/bridge-core.d.mts, which tsc does not copy; and the page driver's in-page
// half, Web/virtual-time.js, Web/page-driver.js and Web/settle-probe.js, which python/'s
// BridgedPage adds to a page too (todaysim/playwright reads them at run time).
// The build also needs playwright-core's types (a dev dependency, todaysim/playwright's peer):
// `--check` (prepack's first step) says so before tsc would.
//   node tools/ship-core.mjs [OUTDIR]      (default dist; systemtests/test_typescript.py passes its test build)
//   node tools/ship-core.mjs --check       (../Web and playwright-core are there)
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const WEB = join(PACKAGE, "..", "Web");
const FROM_WEB = ["bridge-core.mjs", "virtual-time.js", "page-driver.js", "settle-probe.js"];
const out = resolve(process.argv[2] ?? join(PACKAGE, "dist"));
const missing = FROM_WEB.filter((name) => !existsSync(join(WEB, name)));
if (missing.length) {
  console.error(`ship-core: the package needs ../Web/ (${FROM_WEB.join(", ")}) beside typescript/, and ${WEB} lacks ` +
    `${missing.join(", ")}: pack it in a clone of the todaysim repository (cd typescript && npm pack)`);
  process.exit(1);
}
if (process.argv[2] === "--check") {
  if (!existsSync(join(PACKAGE, "node_modules", "playwright-core", "index.d.ts"))) {
    console.error("ship-core: the package's types import playwright-core's (a dev dependency): npm install it, or, offline, " +
      "link the one PyPI's playwright wheel ships: python3 tools/link_playwright_core.py");
    process.exit(1);
  }
  process.exit(0);
}
if (!existsSync(out)) {
  console.error(`ship-core: no ${out}: compile the package first (tsc)`);
  process.exit(1);
}
for (const name of FROM_WEB) copyFileSync(join(WEB, name), join(out, name));
copyFileSync(join(PACKAGE, "src", "bridge-core.d.mts"), join(out, "bridge-core.d.mts"));
