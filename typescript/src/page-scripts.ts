/**
 * The page driver's in-page half, as `BridgedPage` adds it to a context: Web/'s virtual clock,
 * page driver and settling look, shipped beside this module (`npm pack` copies them from the
 * repository's Web/: tools/ship-core.mjs), one set of files for this package and python/'s.
 */

/** Page time when the session's clock reads 0 (2026-01-01T00:00:00Z), as python/'s `EPOCH_MS`. */
export const EPOCH_MS = 1_767_225_600_000;

const read = new Map<string, Promise<string>>();

function shipped(name: string): Promise<string> {
  let text = read.get(name);
  if (text === undefined) {
    text = (async () => {
      const { readFile } = await import("node:fs/promises");
      const { fileURLToPath } = await import("node:url");
      return readFile(fileURLToPath(new URL(`./${name}`, import.meta.url)), "utf8");
    })();
    read.set(name, text);
  }
  return text;
}

/** The virtual clock (`Web/virtual-time.js`, shipped as `virtual-time.js` beside this module). */
export function timersScript(): Promise<string> {
  return shipped("virtual-time.js");
}

/**
 * What `BridgedPage` adds to its context once, as python/'s `INIT_JS`: the virtual clock, then
 * the page driver (`page-driver.js`) given the epoch and the settling look (`settle-probe.js`).
 */
export async function initScript(): Promise<string> {
  const [timers, driver, probe] = await Promise.all([timersScript(), shipped("page-driver.js"), shipped("settle-probe.js")]);
  return `${timers}\n(${driver.trim()})(${EPOCH_MS}, () => ${probe.trim().replace(/;+$/, "")});\n`;
}
