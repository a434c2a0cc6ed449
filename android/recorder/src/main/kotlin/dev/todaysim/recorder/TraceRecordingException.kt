package dev.todaysim.recorder

/**
 * A value given to a recorder call that the trace cannot hold, because JSON has no form for it
 * (an org.json `JSONObject`, a `Date`, NaN, a map with a non-string key): [path] says where it is
 * in the line the call would have written (`data.input.payload.items[2].when`), [problem] what it
 * is. The call writes nothing.
 */
class TraceRecordingException(val path: String, val problem: String) :
    IllegalArgumentException(if (path == "") problem else "$path: $problem")

/**
 * What a recorder does with a [TraceRecordingException]: the constructor's `onError`, called on
 * the thread of the call that was refused, before the call returns. The default, [THROW], throws
 * it from that call; a host that must not fail there (a release-like test run) passes a handler
 * that logs it or counts it for the test to assert on.
 *
 * A plain interface for Kotlin 1.3 (as [TraceClock]): Java passes a lambda, Kotlin the function
 * [TraceErrorHandler] of a lambda.
 */
interface TraceErrorHandler {
    fun onError(error: TraceRecordingException)

    companion object {
        /** Throws the error from the call that was refused. */
        @JvmField
        val THROW: TraceErrorHandler = TraceErrorHandler { throw it }
    }
}

/** A [TraceErrorHandler] that calls [handle]: `TraceErrorHandler { Log.w("trace", it.message) }`. */
fun TraceErrorHandler(handle: (TraceRecordingException) -> Unit): TraceErrorHandler = object : TraceErrorHandler {
    override fun onError(error: TraceRecordingException) = handle(error)
}
