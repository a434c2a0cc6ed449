// The Playwright helper from the tarball, against playwright-core's own types: its BridgedPage
// takes their Page, and its fixtures fit `test.extend()` as @playwright/test types a fixture
// (written out below: @playwright/test itself cannot be fetched here), with Playwright's Page and
// Browser as the built-in fixtures. Compiled in test_typescript.py's scratch project.
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { Client } from "todaysim";
import { BridgedPage, ConformanceError, todaysimFixtures } from "todaysim/playwright";
import type { TodaysimFixtures, TodaysimWorkerFixtures } from "todaysim/playwright";

export async function conforming(client: Client, url: string): Promise<boolean> {
  const browser = await chromium.launch();
  const page: Page = await browser.newPage();
  const bridged = await new BridgedPage(client, "s1", page, url).open();
  await bridged.step({ gesture: { type: "pull", requestId: "p1" } });
  await bridged.move(12_000);
  // @ts-expect-error: a step holds an input the API knows
  await bridged.step({ gestures: { type: "pull" } });
  try {
    await bridged.expectConforms();
    return true;
  } catch (error) {
    if (error instanceof ConformanceError) return error.report.conforms;
    throw error;
  } finally {
    await browser.close();
  }
}

type Args = TodaysimFixtures & TodaysimWorkerFixtures & { page: Page; browser: Browser; baseURL: string | undefined };
type TestFixture<R> = (args: Args, use: (r: R) => Promise<void>, testInfo: { title: string }) => unknown;
type WorkerFixture<R> = [(args: {}, use: (r: R) => Promise<void>, workerInfo: { workerIndex: number }) => unknown, { scope: "worker" }];
export const fixtures: {
  todaysim: WorkerFixture<Client>;
  hostSession: TestFixture<TodaysimFixtures["hostSession"]>;
  bridgedPage: TestFixture<TodaysimFixtures["bridgedPage"]>;
} = todaysimFixtures;
