// The installed Playwright helper finds its tracker, the shared file Web/virtual-time.js (argv[2]),
// at run time. Run in test_typescript.py's scratch project, where `todaysim` is installed.
import { readFileSync } from "node:fs";
import { timersScript } from "todaysim/playwright";

if (await timersScript() !== readFileSync(process.argv[2], "utf8")) {
  console.error("todaysim/playwright read another tracker");
  process.exit(1);
}
