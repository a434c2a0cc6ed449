/**
 * An event stream of the todaysim API as an async iterator of timeline entries
 * (`Client.sessionEvents`, `Client.accountEvents`): Server-Sent Events read as they come.
 */
import { TodaysimError } from "./errors.js";
import { serverSentEvents } from "./sse.js";
import type { TimelineEntry, TimelineKind } from "./generated/api.js";

/** One timeline entry from an event stream: `id` (`<seq>`, or `<session>/<seq>` on the account stream). */
export interface EntryEvent {
  id: string;
  /** The entry's kind. */
  event: TimelineKind;
  /** The session the entry belongs to. */
  sessionId: string;
  entry: TimelineEntry;
}

export interface StreamOptions {
  /** Stops the stream (the iterator ends); breaking out of `for await` stops it too. */
  signal?: AbortSignal;
}

/**
 * An open event stream: an async iterator of entries, once (a second loop goes on where the
 * first stopped only if the first did not break out: leaving a loop closes the stream).
 * `lastEventId` is the id of the last event handed out, to resume from.
 */
export class EventStream implements AsyncIterableIterator<EntryEvent> {
  /** The id of the last event handed out (or the one the stream was resumed from). */
  lastEventId: string | undefined;
  private readonly events: AsyncGenerator<EntryEvent, void, undefined>;

  /** @internal made by `Client.sessionEvents` and `Client.accountEvents`. */
  constructor(path: string, response: Response, private readonly stop: AbortController, sessionId: string | undefined,
    resumedFrom: string | undefined, private readonly cleanup: () => void) {
    this.lastEventId = resumedFrom;
    this.events = this.read(path, response, sessionId);
  }

  private async *read(path: string, response: Response, sessionId: string | undefined): AsyncGenerator<EntryEvent, void, undefined> {
    try {
      if (!response.body) return;
      for await (const event of serverSentEvents(response.body)) {
        const id = event.id ?? "";
        const entry = JSON.parse(event.data) as TimelineEntry;
        this.lastEventId = id;
        yield { id, event: event.event as TimelineKind, sessionId: sessionId ?? id.slice(0, id.lastIndexOf("/")), entry };
      }
    } catch (error) {
      if (this.stop.signal.aborted) return;
      throw new TodaysimError(0, "unreachable", `the event stream ${path} broke: ${error instanceof Error ? error.message : String(error)}`,
        { request: `GET ${path}` });
    } finally {
      this.close();
    }
  }

  next(): Promise<IteratorResult<EntryEvent, void>> {
    return this.events.next();
  }

  async return(): Promise<IteratorResult<EntryEvent, void>> {
    this.close();
    return this.events.return(undefined);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Closes the connection; the iteration ends. */
  close(): void {
    this.stop.abort();
    this.cleanup();
  }
}
