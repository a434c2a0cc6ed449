/**
 * Runs a todaysim server for a test run (Node): the binary from `TODAYSIM_BIN`, else `todaysim`
 * on PATH, on a free loopback port (`--port 0`: the server names the port it got on stderr),
 * with its sessions in memory (`--db :memory:`) unless told otherwise, any page origin allowed
 * (`--allow-origin *`: it listens on 127.0.0.1 only), stopped with SIGTERM.
 */
import { Client } from "./client.js";
import type { ClientOptions } from "./client.js";
import { TodaysimError } from "./errors.js";

export interface ServerOptions {
  /** The todaysim binary (default `TODAYSIM_BIN`, else `todaysim` on PATH). */
  binary?: string;
  /** Extra `serve` flags, e.g. `["--field-validation", "strict"]`. */
  args?: string[];
  /** `--db` (default `:memory:`; a file keeps sessions across a restart). */
  db?: string;
  /** `--allow-origin` (default `*`); `null` sends none. */
  allowOrigin?: string | null;
  /** `--token`: every request must then carry it (the server's clients do). */
  token?: string;
  /** How long it may take to listen and answer /healthz, in ms (default 60,000: a loaded CI machine starts it slowly). */
  startTimeoutMs?: number;
  /** `--port` (default 0: the kernel picks a free one); a fixed port lets a test restart a server where its clients expect it. */
  port?: number;
}

/** What to do about a server that could not start, by what went wrong. */
const FIXES = {
  missing: "set TODAYSIM_BIN to the todaysim binary (in a todaysim clone: Scripts/run prints where it is), "
    + "or put todaysim on PATH (Scripts/run --install-link ~/.local/bin)",
  notExecutable: "make it executable (chmod +x), or set TODAYSIM_BIN to the todaysim binary",
  portTaken: "the port is taken: pass another `port` (or 0, the default, for a free one) or stop what listens there",
  exited: "its last lines above say why; run the same command by hand to see it whole",
  silent: "a loaded machine may need a larger `startTimeoutMs`; its last lines above show how far it got",
};

const LISTENING = /listening on (http:\/\/[0-9.]+:\d+)/;

/** A running todaysim: `const server = await TodaysimServer.start(); ... await server.stop();` */
export class TodaysimServer {
  readonly url: string;
  readonly token: string | undefined;
  /** The last lines the server wrote on stderr (its log), for a failure's message. */
  readonly log: string[];
  private readonly stopper: (timeoutMs?: number) => Promise<number | null>;

  private constructor(url: string, token: string | undefined, log: string[], stopper: (timeoutMs?: number) => Promise<number | null>) {
    this.url = url;
    this.token = token;
    this.log = log;
    this.stopper = stopper;
  }

  static async start(options: ServerOptions = {}): Promise<TodaysimServer> {
    const { spawn } = await import("node:child_process");
    const binary = options.binary ?? process.env.TODAYSIM_BIN ?? "todaysim";
    const command = ["serve", "--host", "127.0.0.1", "--port", String(options.port ?? 0), "--db", options.db ?? ":memory:"];
    if (options.allowOrigin !== null) command.push("--allow-origin", options.allowOrigin ?? "*");
    if (options.token) command.push("--token", options.token);
    command.push(...(options.args ?? []));
    const child = spawn(binary, command, { stdio: ["ignore", "ignore", "pipe"] });
    const log: string[] = [];
    const decoder = new TextDecoder();
    let partial = "";
    let exited: { code: number | null; signal: string | null } | undefined;
    // A process that never started (no such file, not executable) sends `error` and no `exit`:
    // either ends it, so the clean-up never waits for an exit that will not come.
    const exit = new Promise<number | null>((resolve) => {
      child.on("exit", (code, signal) => {
        exited = { code, signal };
        resolve(code);
      });
      child.on("error", () => {
        if (child.pid !== undefined) return;
        exited = { code: null, signal: null };
        resolve(null);
      });
    });
    const listening = new Promise<string>((resolve, reject) => {
      child.on("error", (error) => {
        const code = (error as Error & { code?: string }).code;
        const fix = code === "EACCES" ? FIXES.notExecutable : FIXES.missing;
        reject(new Error(`cannot run ${binary}: ${error.message}: ${fix}`));
      });
      child.stderr?.on("data", (chunk) => {
        const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) {
          log.push(line);
          if (log.length > 500) log.shift();
          const found = LISTENING.exec(line);
          if (found) resolve(found[1]);
        }
      });
      void exit.then((code) => {
        const last = log.slice(-20).join("\n");
        const fix = /address already in use/i.test(last) ? FIXES.portTaken : FIXES.exited;
        reject(new Error(`todaysim exited (${code ?? exited?.signal ?? "it never started"}) before it listened: ${fix}\n${last}`));
      });
    });
    const stopper = async (timeoutMs = 60_000): Promise<number | null> => {
      if (exited) return exited.code;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      try {
        return await exit;
      } finally {
        clearTimeout(killer);
      }
    };
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    let url: string;
    try {
      url = await withDeadline(listening, deadline,
        () => `todaysim did not listen within ${options.startTimeoutMs ?? 60_000} ms: ${FIXES.silent}\n${log.slice(-20).join("\n")}`);
      const client = new Client({ baseUrl: url, token: options.token, timeoutMs: 5_000 });
      // Listening is announced before the first answer may be ready: wait for /healthz itself.
      for (;;) {
        try {
          await client.health();
          break;
        } catch (error) {
          if (!(error instanceof TodaysimError) || exited || Date.now() > deadline) {
            throw new Error(`todaysim never answered /healthz at ${url}: ${String(error)}: ${FIXES.silent}\n${log.slice(-20).join("\n")}`);
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    } catch (error) {
      await stopper();
      throw error;
    }
    return new TodaysimServer(url, options.token, log, stopper);
  }

  /** A client of this server (its token included). */
  client(options: Omit<ClientOptions, "baseUrl" | "token"> = {}): Client {
    return new Client({ ...options, baseUrl: this.url, token: this.token });
  }

  /** SIGTERM, then its exit code (SIGKILL when it has not stopped within `timeoutMs`). */
  stop(timeoutMs?: number): Promise<number | null> {
    return this.stopper(timeoutMs);
  }
}

function withDeadline<T>(promise: Promise<T>, deadline: number, message: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
