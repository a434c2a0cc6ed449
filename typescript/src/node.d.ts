// The few Node built-ins the package and its tests use, declared here instead of @types/node
// (which cannot be fetched where the package is built). Only what is called is declared, as Node
// 20 has it. This file is not shipped: no declaration the package ships names a type from it, so
// a consumer needs no Node types either.

declare const process: {
  env: { [name: string]: string | undefined };
  execPath: string;
  exitCode: number | undefined;
  on(event: "exit", listener: () => void): void;
};

declare module "node:child_process" {
  interface Readable {
    on(event: "data", listener: (chunk: Uint8Array) => void): this;
    on(event: "end" | "close", listener: () => void): this;
  }
  interface Writable {
    end(data?: string | Uint8Array): void;
  }
  interface ChildProcess {
    readonly pid: number | undefined;
    readonly exitCode: number | null;
    readonly signalCode: string | null;
    readonly stdout: Readable | null;
    readonly stderr: Readable | null;
    readonly stdin: Writable | null;
    kill(signal?: string): boolean;
    on(event: "exit", listener: (code: number | null, signal: string | null) => void): this;
    on(event: "error", listener: (error: Error) => void): this;
    once(event: "exit", listener: (code: number | null, signal: string | null) => void): this;
    unref(): void;
  }
  interface SpawnOptions {
    cwd?: string;
    env?: { [name: string]: string | undefined };
    stdio?: ("pipe" | "ignore" | "inherit")[];
  }
  function spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
}

declare module "node:fs/promises" {
  interface FileHandle {
    read(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }>;
    stat(): Promise<{ size: number; isFile(): boolean }>;
    close(): Promise<void>;
  }
  function open(path: string, flags?: string): Promise<FileHandle>;
  function readFile(path: string, encoding: "utf8"): Promise<string>;
  function writeFile(path: string, data: string | Uint8Array): Promise<void>;
  function mkdtemp(prefix: string): Promise<string>;
  function rm(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void>;
  function stat(path: string): Promise<{ size: number }>;
  function chmod(path: string, mode: number): Promise<void>;
}

declare module "node:os" {
  function tmpdir(): string;
}

declare module "node:path" {
  function join(...parts: string[]): string;
  function dirname(path: string): string;
}

declare module "node:url" {
  function fileURLToPath(url: string | URL): string;
}

declare module "node:test" {
  type Body = () => void | Promise<void>;
  function test(name: string, body: Body): Promise<void>;
  function test(name: string, options: { timeout?: number; skip?: boolean | string }, body: Body): Promise<void>;
  function describe(name: string, body: () => void): void;
  function before(body: Body, options?: { timeout?: number }): void;
  function after(body: Body, options?: { timeout?: number }): void;
  export { test, describe, before, after };
  export default test;
}

declare module "node:assert/strict" {
  interface Assert {
    (value: unknown, message?: string): asserts value;
    ok(value: unknown, message?: string): asserts value;
    equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    notEqual(actual: unknown, expected: unknown, message?: string): void;
    deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    match(value: string, pattern: RegExp, message?: string): void;
    doesNotMatch(value: string, pattern: RegExp, message?: string): void;
    rejects(block: Promise<unknown> | (() => Promise<unknown>), check?: RegExp | ((error: unknown) => boolean), message?: string): Promise<void>;
    throws(block: () => unknown, check?: RegExp | ((error: unknown) => boolean), message?: string): void;
    fail(message?: string): never;
  }
  const assert: Assert;
  export default assert;
}
