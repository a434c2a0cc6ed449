/**
 * A host trace as the client sends it (`Client.verifyHostTrace`, `Client.compareTraces`): text,
 * bytes, a stream or its lines, turned into a request body without holding a stream whole.
 */

/** A host trace: NDJSON text or bytes, a stream or async iterable of its bytes, or its lines as objects. */
export type HostTrace = string | Uint8Array | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | readonly object[];

/** A trace as one part of a multipart body: NDJSON, or its lines as a JSON array (a stream or async iterable is read whole first). */
export async function tracePart(trace: HostTrace): Promise<Blob> {
  if (Array.isArray(trace)) return new Blob([JSON.stringify(trace)], { type: "application/json" });
  const body = traceBody(trace);
  const bytes = body instanceof Blob ? body : await new Response(body as BodyInit).blob();
  return new Blob([bytes], { type: "application/x-ndjson" });
}

export function isStreamed(trace: HostTrace): boolean {
  return trace instanceof ReadableStream || (typeof trace === "object" && trace !== null && Symbol.asyncIterator in trace);
}

export function traceBody(trace: HostTrace): BodyInit | ReadableStream<Uint8Array> {
  if (typeof trace === "string" || trace instanceof Uint8Array || trace instanceof Blob || trace instanceof ReadableStream) return trace;
  if (Array.isArray(trace)) return trace.map((line: object) => `${JSON.stringify(line)}\n`).join("");
  const iterator = (trace as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/** The file at `path` as a stream of chunks of at most `chunkBytes`, read as they are pulled. */
export async function fileStream(path: string, chunkBytes: number): Promise<ReadableStream<Uint8Array>> {
  // Imported here, not at the top, so the client also loads where there is no file system (a browser).
  const { open } = await import("node:fs/promises");
  const file = await open(path, "r");
  const closed = { done: false };
  const close = async () => {
    if (!closed.done) {
      closed.done = true;
      await file.close();
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = new Uint8Array(chunkBytes);
        const { bytesRead } = await file.read(chunk, 0, chunkBytes, null);
        if (bytesRead === 0) {
          await close();
          controller.close();
        } else {
          controller.enqueue(chunk.subarray(0, bytesRead));
        }
      } catch (error) {
        await close().catch(() => undefined);
        controller.error(error);
      }
    },
    cancel: close,
  });
}
