// The TypeScript half of the page driver's contract test (systemtests/test_driver_contract.py):
// runs each scenario of the JSON file it is given (TODAYSIM_CONTRACT_SCENARIOS) through todaysim/playwright's BridgedPage (a
// new session and a page of a new context each, on Debian's Chromium through
// TODAYSIM_PLAYWRIGHT_CORE) and prints, as JSON, what each step left: the session's timeline
// entries it added and the page's clock, for the test to compare with python/'s BridgedPage's.
//   TODAYSIM_URL=… TODAYSIM_CONTRACT_SCENARIOS=scenarios.json node build/test/contract-driver.js
import { readFile } from "node:fs/promises";
import { Client } from "../src/index.js";
import type { TimelineEntry } from "../src/index.js";
import { BridgedPage } from "../src/playwright.js";
import type { Step } from "../src/playwright.js";
import { launchChromium } from "./browser.js";

interface Scenario {
  name: string;
  session: string;
  url: string;
  steps: Step[];
}

/** What one step left: the entries it added to the session's timeline, and the page's clock (session ms). */
interface Recorded {
  entries: TimelineEntry[];
  pageNowMs: number;
}

async function entriesAfter(client: Client, sessionId: string, after: number): Promise<TimelineEntry[]> {
  const found: TimelineEntry[] = [];
  for await (const entry of client.timelineEntries(sessionId, { after })) found.push(entry);
  return found;
}

async function main(): Promise<void> {
  const scenarios = JSON.parse(await readFile(process.env.TODAYSIM_CONTRACT_SCENARIOS ?? "", "utf8")) as Scenario[];
  const url = process.env.TODAYSIM_URL;
  if (!url) throw new Error("TODAYSIM_URL is not set");
  const client = new Client({ baseUrl: url, fieldValidation: "Strict" });
  const browser = await launchChromium();
  const recorded: { [name: string]: Recorded[] } = {};
  try {
    for (const scenario of scenarios) {
      await client.createSession({ uid: "contract", id: scenario.session });
      const context = await browser.newContext();
      const page = await new BridgedPage(client, scenario.session, await context.newPage(), scenario.url).open();
      const steps: Recorded[] = [{ entries: await entriesAfter(client, scenario.session, 0), pageNowMs: await page.pageNowMs() }];
      for (const step of scenario.steps) {
        const before = page.view.counts.timeline;
        await page.step(step);
        steps.push({ entries: await entriesAfter(client, scenario.session, before), pageNowMs: await page.pageNowMs() });
      }
      recorded[scenario.name] = steps;
      await context.close();
    }
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(recorded));
}

await main();
