package dev.todaysim.recorder

import java.io.Closeable
import java.io.File
import java.io.FileOutputStream
import java.math.BigDecimal
import java.math.BigInteger

/**
 * Records what an app's Today Page host receives and does as a todaysim host trace
 * (docs/TRACES.md), for `todaysim verify-host` to judge against the rules. The Android twin of
 * `Recorder/TodayPageTraceRecorder.swift`: the same lines for the same calls.
 *
 * Copy this package's files (`src/main/kotlin/dev/todaysim/recorder`) into the app, or add
 * `android/recorder` as a module; they need the Kotlin standard library and the JDK only (no
 * Android class, no org.json), and keep to Kotlin 1.3 so that any Kotlin an app builds with
 * takes them. Create one recorder per Today Page host (at the host's creation),
 * call it where the host receives an input and where it makes an output, and [close] it when the
 * test ends. Times come from [clock] (an app passes `SystemClock::elapsedRealtime`), and are
 * written relative to the recorder's creation, never going back. Every call is one line, written
 * at once; calls from several threads are serialized. States, causes and input types are enums
 * ([HeaderState], [PullState], [PullOutcome], [OverlayState], [NavigationCause], [LifecycleType],
 * [GestureType]) whose `wire` strings are what the trace holds; a Java caller writes
 * `new TodayPageTraceRecorder(file, creation, SystemClock::elapsedRealtime)`.
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
 * `String`, numbers, `Boolean` and `null`. A call whose value is none of these (a `Char`, a
 * `Date`, a `Double.NaN`, a map with a non-string key) writes nothing, as the Swift recorder
 * writes nothing for a body `JSONSerialization` refuses.
 *
 * @param file the trace, created or emptied.
 * @param creation the host's settings as `POST /v1/sessions` takes them (`uid` required;
 *   `platform`, `route`, `language`, `loadingGate`, `capabilities`, `timing`, `analytics`).
 * @param clock the monotonic clock of the lines' times ([TraceClock]; the default reads
 *   `System.nanoTime()`, an app passes `SystemClock.elapsedRealtime()`).
 * @param recorded the output kinds the trace judges (default: all seven).
 * @param toleranceMs how far a real output's time may be from the rules' time.
 * @param host free text repeated in the verdict (its first 200 characters are kept).
 */
class TodayPageTraceRecorder @JvmOverloads constructor(
    file: File,
    creation: Map<String, Any?>,
    private val clock: TraceClock = TraceClock.NANO_TIME,
    recorded: List<Kind> = Kind.values().toList(),
    toleranceMs: Int = 100,
    host: String? = null
) : Closeable {
    /** The output kinds a trace may record, as the header's `recorded` names them. */
    enum class Kind(val wire: String) {
        EMIT("emit"), NAVIGATION("navigation"), HEADER("header"), PULL("pull"), OVERLAY("overlay"),
        ANALYTICS("analytics"), RESOLUTION("resolution")
    }

    private val lock = Any()
    private val output = FileOutputStream(file)
    private val startMs = clock.nowMs()
    // Guarded by `lock`.
    private var lastAtMs = 0L
    private var headerState: Pair<HeaderState, String?> = Pair(HeaderState.HIDDEN, null)
    private var pullState: Pair<PullState, String?> = Pair(PullState.IDLE, null)
    private var overlayState = OverlayState.VISIBLE
    private var closed = false

    init {
        val header = linkedMapOf<String, Any?>(
            "todaysimTrace" to 1, "recorded" to recorded.map { it.wire }, "toleranceMs" to toleranceMs
        )
        if (host != null) header["host"] = prefixOfCodePoints(host, MAXIMUM_HOST_CHARACTERS)
        write(header)
        write(mapOf("atMs" to 0, "kind" to "input", "type" to "create", "data" to mapOf("via" to "create", "input" to creation)))
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
        synchronized(lock) {
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
        synchronized(lock) {
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
        synchronized(lock) {
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

    /** Ends the trace; later calls write nothing. */
    override fun close() {
        synchronized(lock) {
            if (closed) return
            closed = true
            output.close()
        }
    }

    // Lines

    private fun input(via: String, body: Map<String, Any?>) {
        entry("input", body["type"] as? String ?: via, null, mapOf("via" to via, "input" to body))
    }

    private fun input(via: String, type: String, fields: Map<String, Any?>) {
        input(via, LinkedHashMap(fields).apply { put("type", type) })
    }

    private fun entry(kind: String, type: String, requestId: String?, data: Map<String, Any?>) {
        synchronized(lock) {
            // A monotonic clock never goes back; a trace's times may not either, whatever thread wrote last.
            lastAtMs = maxOf(lastAtMs, clock.nowMs() - startMs)
            val line = linkedMapOf<String, Any?>("atMs" to lastAtMs, "kind" to kind, "type" to type, "data" to data)
            if (requestId != null) line["requestId"] = requestId
            writeLocked(line)
        }
    }

    private fun write(line: Map<String, Any?>) {
        synchronized(lock) { writeLocked(line) }
    }

    private fun writeLocked(line: Map<String, Any?>) {
        if (closed) return
        val text = try {
            TraceJson.write(line)
        } catch (notJson: IllegalArgumentException) {
            return
        }
        output.write((text + "\n").toByteArray(Charsets.UTF_8))
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

/**
 * The JSON the recorder writes: one line, no spaces, object members sorted by name (as the Swift
 * recorder's `.sortedKeys`), `/` not escaped. Strings escape `"` and `\`, and every control
 * character (U+0000–U+001F) as `\u00XX`; other characters are written as they are (the line is
 * UTF-8). A lone surrogate, which a Kotlin string may hold but UTF-8 and the trace reader cannot,
 * becomes U+FFFD.
 */
object TraceJson {
    /** [value] as JSON text; throws IllegalArgumentException for a value JSON has no form for. */
    fun write(value: Any?): String {
        val out = StringBuilder()
        append(out, value)
        return out.toString()
    }

    private fun append(out: StringBuilder, value: Any?) {
        when (value) {
            null -> out.append("null")
            is String -> appendString(out, value)
            is Boolean -> out.append(if (value) "true" else "false")
            is Int, is Long, is Short, is Byte, is BigInteger -> out.append(value.toString())
            is Double -> appendFinite(out, value.isNaN() || value.isInfinite(), value.toString())
            is Float -> appendFinite(out, value.isNaN() || value.isInfinite(), value.toString())
            is BigDecimal -> out.append(value.toString())
            is Map<*, *> -> appendObject(out, value)
            is Collection<*> -> appendArray(out, value)
            is Array<*> -> appendArray(out, value.asList())
            else -> throw IllegalArgumentException("no JSON form for ${value.javaClass.name}")
        }
    }

    private fun appendFinite(out: StringBuilder, notFinite: Boolean, text: String) {
        if (notFinite) throw IllegalArgumentException("no JSON form for $text")
        out.append(text)
    }

    private fun appendObject(out: StringBuilder, map: Map<*, *>) {
        val members = map.entries.map { member ->
            val name = member.key as? String ?: throw IllegalArgumentException("an object member's name must be a String")
            Pair(name, member.value)
        }.sortedBy { it.first }
        out.append('{')
        members.forEachIndexed { index, member ->
            if (index > 0) out.append(',')
            appendString(out, member.first)
            out.append(':')
            append(out, member.second)
        }
        out.append('}')
    }

    private fun appendArray(out: StringBuilder, items: Collection<*>) {
        out.append('[')
        items.forEachIndexed { index, item ->
            if (index > 0) out.append(',')
            append(out, item)
        }
        out.append(']')
    }

    private fun appendString(out: StringBuilder, text: String) {
        out.append('"')
        var index = 0
        while (index < text.length) {
            val c = text[index]
            when {
                c == '"' -> out.append("\\\"")
                c == '\\' -> out.append("\\\\")
                c < ' ' -> {
                    val code = text.codePointAt(index)  // (not Char.toInt(), which later Kotlin deprecates)
                    out.append("\\u00").append(HEX[code shr 4]).append(HEX[code and 0xF])
                }
                Character.isHighSurrogate(c) && index + 1 < text.length && Character.isLowSurrogate(text[index + 1]) -> {
                    out.append(c).append(text[index + 1])
                    index += 1
                }
                Character.isSurrogate(c) -> out.append('\uFFFD')
                else -> out.append(c)
            }
            index += 1
        }
        out.append('"')
    }

    private const val HEX = "0123456789abcdef"
}
