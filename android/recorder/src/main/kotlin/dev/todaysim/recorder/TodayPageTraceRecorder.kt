package dev.todaysim.recorder

import java.io.Closeable
import java.io.File
import java.io.FileOutputStream
import java.io.IOException

/**
 * Records what an app's Today Page host receives and does as a todaysim host trace
 * (docs/TRACES.md), for `todaysim verify-host` to judge against the rules. The Android twin of
 * `Recorder/TodayPageTraceRecorder.swift`: the same lines for the same calls.
 *
 * Copy this package's files (`src/main/kotlin/dev/todaysim/recorder`) into the app, or add
 * `android/recorder` as a module; they need the Kotlin standard library and the JDK only (no
 * Android class, no org.json), and keep to Kotlin 1.3 so that any Kotlin an app builds with
 * takes them. Create one recorder per Today Page host (at the host's creation), call it where
 * the host receives an input and where it makes an output, and [close] it when the test ends:
 * that writes the end line, which tells the verifier when recording stopped.
 *
 * Times come from the clock (an app passes `SystemClock::elapsedRealtime`), relative to the
 * recorder's creation and never going back. Every call is one line; calls from several threads
 * are serialized, and the lines are written in their order by a thread of the recorder's own
 * ([TraceWriter]), so that a call made on the main thread does no disk I/O, not even opening the
 * file. States, causes and input types are enums ([HeaderState], [PullState], [PullOutcome],
 * [OverlayState], [NavigationCause], [LifecycleType], [GestureType]) whose `wire` strings are
 * what the trace holds. A Java caller writes `new TodayPageTraceRecorder(file, creation,
 * SystemClock::elapsedRealtime)` (the parameters after the ones given take their defaults).
 *
 * Where each call goes (docs/TRACES.md, "Recording in an app"):
 * - bridge dispatch (Web → native, the `@JavascriptInterface` method): [webEvent] with the
 *   message as Web posted it;
 * - native → Web messages (`evaluateJavascript`): [emitted] with the payload as the WebView
 *   receives it;
 * - the refresh coordinator: [gesture]/[lifecycle] for pulls, foreground returns, tab
 *   activations; [navigated] and [overlayShownByLoad] for every document load;
 * - the header renderer: [header] on each state it enters;
 * - the pull spinner: [pull]; the loading overlay: [overlay];
 * - analytics: [analytics] for each event as it leaves the host.
 *
 * Bodies and payloads are plain Kotlin values: `Map<String, Any?>`, `List`/`Collection`/`Array`,
 * `String`, numbers, `Boolean` and `null` ([TraceJson]). A call given anything else (an org.json
 * `JSONObject` or a Gson `JsonObject` nested in a message, a `Date`, a `Double.NaN`, a map with a
 * non-string key) writes nothing and is refused loudly: a [TraceRecordingException] naming the
 * value's path in the line (`data.input.properties.when: no JSON form for java.util.Date …`) goes
 * to [onError], which throws it from the call unless the host passed a handler of its own. (A
 * line dropped in silence would let the verdict judge a trace with an input missing.)
 *
 * @param file the trace, created or emptied (by the writer thread; if it cannot be, [close] throws).
 * @param creation the host's settings as `POST /v1/sessions` takes them (`uid` required;
 *   `platform`, `route`, `language`, `loadingGate`, `capabilities`, `timing`, `analytics`).
 * @param clock the monotonic clock of the lines' times ([TraceClock]; the default reads
 *   `System.nanoTime()`, an app passes `SystemClock.elapsedRealtime()`).
 * @param recorded the output kinds the trace judges (default: all seven).
 * @param toleranceMs how far a real output's time may be from the rules' time.
 * @param host free text repeated in the verdict (its first 200 characters are kept).
 * @param onError what a refused call does ([TraceErrorHandler.THROW]: throws). A [creation] JSON
 *   has no form for throws from the constructor whatever [onError] is: a trace without its
 *   creation line cannot be judged.
 */
class TodayPageTraceRecorder @JvmOverloads constructor(
    file: File,
    creation: Map<String, Any?>,
    clock: TraceClock = TraceClock.NANO_TIME,
    recorded: List<Kind> = Kind.values().toList(),
    toleranceMs: Int = 100,
    host: String? = null,
    private val onError: TraceErrorHandler = TraceErrorHandler.THROW
) : Closeable {
    /** The output kinds a trace may record, as the header's `recorded` names them. */
    enum class Kind(val wire: String) {
        EMIT("emit"), NAVIGATION("navigation"), HEADER("header"), PULL("pull"), OVERLAY("overlay"),
        ANALYTICS("analytics"), RESOLUTION("resolution")
    }

    private val lines: TraceLines
    private val closer: TraceCloser.Registration
    // Guarded by `lines`, the lock every line is written under.
    private var headerState: Pair<HeaderState, String?> = Pair(HeaderState.HIDDEN, null)
    private var pullState: Pair<PullState, String?> = Pair(PullState.IDLE, null)
    private var overlayState = OverlayState.VISIBLE

    init {
        val header = linkedMapOf<String, Any?>(
            "todaysimTrace" to 1, "recorded" to recorded.map { it.wire }, "toleranceMs" to toleranceMs
        )
        if (host != null) header["host"] = prefixOfCodePoints(host, MAXIMUM_HOST_CHARACTERS)
        val creationLine = mapOf("atMs" to 0, "kind" to "input", "type" to "create", "data" to mapOf("via" to "create", "input" to creation))
        val firstLines = TraceJson.write(header) + "\n" + TraceJson.write(creationLine) + "\n"
        lines = TraceLines({ FileOutputStream(file) }, clock, firstLines)
        closer = TraceCloser.register(this, lines)
    }

    // Inputs

    /**
     * A user gesture of [type], with the body's other members in [fields] (`actionId` for
     * [GestureType.DIALOG_CHOOSE], `text` for [GestureType.CHAT_EDIT]); its `type` is [type]'s.
     */
    @JvmOverloads
    fun gesture(type: GestureType, fields: Map<String, Any?> = emptyMap()) = input("gesture", type.wire, fields)

    /**
     * An app lifecycle transition of [type], with the body's other members in [fields] (`url` for
     * [LifecycleType.NAVIGATION], `uid` for [LifecycleType.ACCOUNT_SWITCH]); its `type` is [type]'s.
     */
    @JvmOverloads
    fun lifecycle(type: LifecycleType, fields: Map<String, Any?> = emptyMap()) = input("lifecycle", type.wire, fields)

    /** A bridge message from Web, exactly as Web posted it. */
    fun webEvent(message: Map<String, Any?>) = input("webEvent", message)

    /** A native → Web command the app decided to send (`todayPage.scrollToSection`). */
    fun command(body: Map<String, Any?>) = input("command", body)

    // Outputs

    /** A message the host sent to Web, as the WebView receives it. */
    fun emitted(payload: Map<String, Any?>) {
        entry("emit", payload["type"] as? String ?: "", payload["requestId"] as? String, mapOf("payload" to payload))
    }

    /** A document load of [url] (a full URL or its path) for [cause], made for [requestId] if a request made it. */
    @JvmOverloads
    fun navigated(cause: NavigationCause, url: String, requestId: String? = null) {
        entry("navigation", cause.wire, requestId, mapOf("url" to url, "cause" to cause.wire))
    }

    /** The header entered [state] for [requestId]; a repeat of the state and id it is already in writes nothing. */
    fun header(state: HeaderState, requestId: String?) {
        synchronized(lines) {
            val wanted = Pair(state, requestId)
            if (headerState == wanted) return
            headerState = wanted
            entry("header", state.wire, requestId, mapOf("to" to state.wire))
        }
    }

    /**
     * The pull spinner entered [state] for [requestId], [outcome] saying how it ended when it went
     * [PullState.IDLE]; a repeat of the state and id it is already in writes nothing.
     */
    @JvmOverloads
    fun pull(state: PullState, requestId: String?, outcome: PullOutcome? = null) {
        synchronized(lines) {
            val wanted = Pair(state, requestId)
            if (pullState == wanted) return
            pullState = wanted
            val data = linkedMapOf<String, Any?>("state" to state.wire)
            if (outcome != null) data["outcome"] = outcome.wire
            entry("pull", state.wire, requestId, data)
        }
    }

    /** The native loading overlay entered [state]; the state it is already in writes nothing. */
    fun overlay(state: OverlayState) {
        synchronized(lines) {
            val changed = overlayState != state
            overlayState = state
            if (changed) entry("overlay", state.wire, null, mapOf("to" to state.wire))
        }
    }

    /** A document load shows the overlay again (H3): call this at every load; a line only if it was hidden. */
    fun overlayShownByLoad() = overlay(OverlayState.VISIBLE)

    /** An analytics event as it left the host, with every property it carries. */
    fun analytics(event: String, properties: Map<String, Any?>) {
        entry("analytics", event, null, mapOf("event" to event, "properties" to properties))
    }

    /** A pending bridge call settled later (`nativeDialog.present`). */
    fun resolved(type: String, callId: String, value: Any?) {
        entry("resolution", type, null, mapOf("callId" to callId, "value" to value))
    }

    /**
     * Ends the trace with its end line, `{"atMs": T, "kind": "end"}` at the clock's time now, and
     * returns once every line is in the file and the file is closed; later calls write nothing,
     * and closing again does nothing. The end line tells the verifier when recording stopped, so
     * that a spinner still up then is judged against the watchdog due before it. Throws the
     * [IOException] that kept the trace from being written (its folder missing, the disk full),
     * once. A recorder that becomes unreachable unclosed is ended by [TraceCloser].
     */
    @Throws(IOException::class)
    override fun close() {
        val ending = lines.end()
        closer.cancel()
        val failure = lines.awaitWritten()
        if (ending && failure != null) throw IOException("the trace was not written: $failure", failure)
    }

    // Lines

    private fun input(via: String, body: Map<String, Any?>) {
        entry("input", body["type"] as? String ?: via, null, mapOf("via" to via, "input" to body))
    }

    private fun input(via: String, type: String, fields: Map<String, Any?>) {
        input(via, LinkedHashMap(fields).apply { put("type", type) })
    }

    private fun entry(kind: String, type: String, requestId: String?, data: Map<String, Any?>) {
        val refused = lines.append(kind, type, requestId, data)
        // Outside the lock (but for header, pull, overlay, which cannot be refused): a handler may
        // log through a path that records, or call the recorder.
        if (refused != null) onError.onError(refused)
    }

    companion object {
        /** The most characters (Unicode scalars, as the verifier counts them) of `host`. */
        const val MAXIMUM_HOST_CHARACTERS = 200

        private fun prefixOfCodePoints(text: String, count: Int): String {
            val total = text.codePointCount(0, text.length)
            return if (total <= count) text else text.substring(0, text.offsetByCodePoints(0, count))
        }
    }
}
