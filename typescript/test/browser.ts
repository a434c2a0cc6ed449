// What the Playwright helper's tests share: the real Playwright for JavaScript (the
// playwright-core that PyPI's `playwright` wheel ships, TODAYSIM_PLAYWRIGHT_CORE, which
// systemtests/test_typescript.py sets), Debian's Chromium (TODAYSIM_BROWSER), and the pages under test
// served from this clone over HTTP on a free loopback port, as python/tests/conftest.py serves
// them: the fixture Today Page (examples/today-page) at /today/, python's test pages
// (python/tests/pages) at /pages/, and /hang, which never answers (a request that keeps a page
// from settling).
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, BrowserContext, BrowserType, Page } from "playwright-core";
import { ROOT } from "./support.js";

/** Playwright's own types, under the names the tests use. */
export type TestPage = Page;
export type TestContext = BrowserContext;
export type TestBrowser = Browser;

/**
 * One Chromium, driven by playwright-core (one per test file: the machine has two cores):
 * TODAYSIM_PLAYWRIGHT_CORE, the one the package's types were checked against or another version
 * (Scripts/playwright-versions runs the browser tests on the lowest and the newest allowed).
 */
export async function launchChromium(): Promise<TestBrowser> {
  const core = process.env.TODAYSIM_PLAYWRIGHT_CORE;
  if (!core) throw new Error("TODAYSIM_PLAYWRIGHT_CORE is not set: run the tests with Scripts/system-tests BIN test_typescript.py");
  const playwright = (await import(join(core, "index.mjs"))) as { chromium: BrowserType };
  return playwright.chromium.launch({ executablePath: process.env.TODAYSIM_BROWSER || undefined });
}

export interface Pages {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** The conforming fixture page; `?bug=NAME` plants one bug. */
  today: string;
  close(): Promise<void>;
}

const FOLDERS: { [prefix: string]: string } = {
  "/today/": join(ROOT, "examples", "today-page"),
  "/pages/": join(ROOT, "python", "tests", "pages"),
};

export function servePages(): Promise<Pages> {
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/hang") return; // never answered: the server's close ends it
    const prefix = Object.keys(FOLDERS).find((p) => path.startsWith(p));
    const name = prefix ? path.slice(prefix.length) : "";
    if (!prefix || !/^[\w.-]+$/.test(name)) {
      response.writeHead(404).end();
      return;
    }
    readFile(join(FOLDERS[prefix], name), "utf8").then(
      (text) => response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(text),
      () => response.writeHead(404).end(),
    );
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
      resolve({
        base,
        today: `${base}/today/index.html`,
        close: () => new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
      });
    });
  });
}
