package dev.todaysim.recorder

import java.io.OutputStream

/**
 * A trace's lines as they are made: each stamped with its time and handed to the [TraceWriter]
 * under one lock (this object's), so that line order is time order and a time never goes back,
 * whatever thread wrote last; then the end line, once, and nothing after it.
 *
 * Apart from the recorder, which holds it, so that [TraceCloser] can still end the trace of a
 * recorder that became unreachable unclosed: nothing here refers to the recorder.
 */
internal class TraceLines(open: () -> OutputStream, private val clock: TraceClock, firstLines: String) {
    private val writer = TraceWriter(open)
    private val startMs = clock.nowMs()
    // Guarded by `this`.
    private var lastAtMs = 0L
    private var ended = false

    init {
        writer.write(firstLines.toByteArray(Charsets.UTF_8))
    }

    /** Writes the entry line, or returns why it cannot; after the end, nothing. */
    @Synchronized
    fun append(kind: String, type: String, requestId: String?, data: Map<String, Any?>): TraceRecordingException? {
        if (ended) return null
        val atMs = now()
        val line = linkedMapOf<String, Any?>("atMs" to atMs, "kind" to kind, "type" to type, "data" to data)
        if (requestId != null) line["requestId"] = requestId
        return try {
            write(line)
            lastAtMs = atMs
            null
        } catch (notJson: TraceRecordingException) {
            notJson
        }
    }

    /**
     * Writes the end line (`{"atMs": T, "kind": "end"}`, T the clock now) and lets the writer finish,
     * without waiting for it; true the first time, false once ended.
     */
    @Synchronized
    fun end(): Boolean {
        if (ended) return false
        ended = true
        lastAtMs = now()
        write(linkedMapOf("atMs" to lastAtMs, "kind" to "end"))
        writer.finish()
        return true
    }

    /** Waits until the writer has stopped: after [end], every line is in the file. What kept them out, if anything. */
    fun awaitWritten(): Exception? {
        writer.awaitStopped()
        return writer.failure
    }

    // A monotonic clock never goes back; a reading taken on another thread a moment earlier may.
    private fun now() = maxOf(lastAtMs, clock.nowMs() - startMs)

    private fun write(line: Map<String, Any?>) {
        writer.write((TraceJson.write(line) + "\n").toByteArray(Charsets.UTF_8))
    }
}
