package dev.todaysim.recorder

/**
 * The monotonic clock a recorder reads for each line's time, in milliseconds from any origin.
 *
 * An app passes `SystemClock.elapsedRealtime()`, which keeps counting while the device is in
 * deep sleep, as todaysim's timers do; the default, [NANO_TIME], is the JVM's `System.nanoTime()`
 * (on Android `CLOCK_MONOTONIC`, which stops in deep sleep, like iOS's `systemUptime`). A test
 * passes a clock it moves by hand.
 *
 * A plain interface rather than a `fun interface` (Kotlin 1.4), so that Kotlin 1.3 builds it:
 * Java passes a lambda or a method reference (`SystemClock::elapsedRealtime`), Kotlin the
 * function [TraceClock] of a lambda (`TraceClock(SystemClock::elapsedRealtime)`).
 */
interface TraceClock {
    /** Milliseconds since the clock's origin; a later reading is never less. */
    fun nowMs(): Long

    companion object {
        /** `System.nanoTime()` in milliseconds. */
        @JvmField
        val NANO_TIME: TraceClock = TraceClock { System.nanoTime() / 1_000_000 }
    }
}

/** A [TraceClock] that reads [read]: `TraceClock(SystemClock::elapsedRealtime)`. */
fun TraceClock(read: () -> Long): TraceClock = object : TraceClock {
    override fun nowMs(): Long = read()
}
