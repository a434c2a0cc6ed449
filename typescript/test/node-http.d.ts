// The Node built-ins only the Playwright helper's tests use (a page server), declared as
// src/node.d.ts declares the package's own, in place of @types/node.

declare module "node:http" {
  interface IncomingMessage {
    url?: string;
    method?: string;
  }
  interface ServerResponse {
    writeHead(status: number, headers?: { [name: string]: string }): this;
    end(data?: string): void;
  }
  interface Server {
    listen(port: number, host: string, listening: () => void): this;
    address(): { port: number } | string | null;
    close(closed?: (error?: Error) => void): this;
    closeAllConnections(): void;
  }
  function createServer(handler: (request: IncomingMessage, response: ServerResponse) => void): Server;
}
