/**
 * Server-Sent Events read from a fetch body (the part of the EventSource parsing rules a
 * todaysim stream uses: `id`, `event`, `data` (several lines joined), `retry`, comments), so
 * Node needs no EventSource and a caller can send `Authorization` and `Last-Event-ID` itself.
 */
export interface ServerSentEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** Each event of `body`, in order, until the stream ends. */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let id: string | undefined;
  let event = "";
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A line ends at CRLF, LF or CR; a CR last in the buffer may be half of a CRLF still coming.
      let end: RegExpExecArray | null;
      const lineEnd = /\r\n|\n|\r(?!$)/g;
      let start = 0;
      while ((end = lineEnd.exec(buffered)) !== null) {
        const line = buffered.slice(start, end.index);
        start = end.index + end[0].length;
        if (line === "") {
          if (data.length > 0) yield { id, event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (name === "data") data.push(value);
        else if (name === "event") event = value;
        else if (name === "id" && !value.includes("\u0000")) id = value;
      }
      buffered = buffered.slice(start);
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
