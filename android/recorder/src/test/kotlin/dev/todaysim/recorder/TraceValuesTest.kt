package dev.todaysim.recorder

import org.junit.Assert.assertEquals
import org.junit.Test
import java.io.File

/** The typed calls' values write the strings todaysim reads. */
class TraceValuesTest {
    /** The output states and causes as the trace format's tables name them (docs/TRACES.md). */
    @Test fun outputValuesAreTheTraceFormatsStrings() {
        assertEquals(listOf("hidden", "refreshing", "updated", "failed"), HeaderState.values().map { it.wire })
        assertEquals(listOf("refreshing", "idle"), PullState.values().map { it.wire })
        assertEquals(listOf("succeeded", "failed", "cancelled", "unsupported", "unknown", "timedOut"), PullOutcome.values().map { it.wire })
        assertEquals(listOf("visible", "hidden"), OverlayState.values().map { it.wire })
        assertEquals(listOf("initial", "recovery", "manualRepeat", "termination", "accountSwitch", "navigation"),
            NavigationCause.values().map { it.wire })
    }

    /**
     * Every gesture and lifecycle type, recorded as a host meets them, makes a trace todaysim
     * judges rather than refuses (an input type the API does not take is a bad trace, exit 2).
     */
    @Test fun everyInputTypeIsOneTodaysimTakes() {
        val file = File.createTempFile("todaysim-input-types-", ".jsonl").apply { deleteOnExit() }
        val clock = ManualClock(0)
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1", "capabilities" to listOf("live_widget_creation.v1")),
            clock = clock)
        val fields = mapOf(GestureType.CHAT_EDIT to mapOf("text" to "hello"), GestureType.DIALOG_CHOOSE to mapOf("actionId" to "ok"),
            LifecycleType.NAVIGATION to mapOf("url" to "/embed/feeds/v2"), LifecycleType.ACCOUNT_SWITCH to mapOf("uid" to "u2"))
        for (type in GestureType.values()) {
            clock.ms += 1_000
            recorder.gesture(type, fields[type] ?: emptyMap())
        }
        for (type in LifecycleType.values()) {  // TEARDOWN last: no input may follow it
            clock.ms += 1_000
            recorder.lifecycle(type, fields[type] ?: emptyMap())
        }
        recorder.close()
        val result = VerifyHost.run(file)
        assertEquals("$result\n--- the trace:\n${file.readText(Charsets.UTF_8)}", true, result.exitCode in 0..1)
        val types = file.readText(Charsets.UTF_8).split("\n").filter { it.isNotEmpty() }.drop(2).dropLast(1).map { TinyJson.obj(it)["type"] }
        assertEquals(GestureType.values().map { it.wire } + LifecycleType.values().map { it.wire }, types)
    }
}
