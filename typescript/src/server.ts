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
}

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
    const command = ["serve", "--host", "127.0.0.1", "--port", "0", "--db", options.db ?? ":memory:"];
    if (options.allowOrigin !== null) command.push("--allow-origin", options.allowOrigin ?? "*");
    if (options.token) command.push("--token", options.token);
    command.push(...(options.args ?? []));
    const child = spawn(binary, command, { stdio: ["ignore", "ignore", "pipe"] });
    const log: string[] = [];
    const decoder = new TextDecoder();
    let partial = "";
    let exited: { code: number | null; signal: string | null } | undefined;
    const exit = new Promise<number | null>((resolve) => {
      child.on("exit", (code, signal) => {
        exited = { code, signal };
        resolve(code);
      });
    });
    const listening = new Promise<string>((resolve, reject) => {
      child.on("error", (error) => reject(new Error(`cannot run ${binary}: ${error.message} (set TODAYSIM_BIN to the todaysim binary)`)));
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
      void exit.then((code) => reject(new Error(`todaysim exited (${code ?? exited?.signal}) before it listened:\n${log.slice(-20).join("\n")}`)));
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
      url = await withDeadline(listening, deadline, () => `todaysim did not listen within ${options.startTimeoutMs ?? 60_000} ms:\n${log.slice(-20).join("\n")}`);
      const client = new Client({ baseUrl: url, token: options.token, timeoutMs: 5_000 });
      // Listening is announced before the first answer may be ready: wait for /healthz itself.
      for (;;) {
        try {
          await client.health();
          break;
        } catch (error) {
          if (!(error instanceof TodaysimError) || exited || Date.now() > deadline) {
            throw new Error(`todaysim never answered /healthz: ${String(error)}\n${log.slice(-20).join("\n")}`);
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
