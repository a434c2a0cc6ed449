package dev.todaysim.recorder

import org.json.JSONObject
import org.junit.Assert.assertEquals
import org.junit.Assert.assertSame
import org.junit.Assert.fail
import org.junit.Test
import java.io.File
import java.util.Date

/**
 * A value JSON has no form for is refused loudly, by the call given it, with its path in the line
 * the call would have written; the call writes nothing and the recorder goes on.
 */
class NotJsonTest {
    private fun tempTrace(): File = File.createTempFile("todaysim-not-json-", ".jsonl").apply { deleteOnExit() }

    private fun types(file: File): List<Any?> =
        file.readText(Charsets.UTF_8).split("\n").filter { it.isNotEmpty() }.drop(2).map { TinyJson.obj(it) }
            .map { it["type"] ?: it["kind"] }

    /** Runs [call] on a recorder that throws (the default) and returns the message it threw. */
    private fun refusal(call: (TodayPageTraceRecorder) -> Unit): String {
        val file = tempTrace()
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"), clock = ManualClock(0))
        val message = try {
            call(recorder)
            fail("the call was not refused")
            ""
        } catch (refused: TraceRecordingException) {
            refused.message ?: ""
        }
        recorder.lifecycle(LifecycleType.FOREGROUND)  // the recorder goes on
        recorder.close()
        assertEquals("the refused call wrote nothing", listOf("foreground", "end"), types(file))
        return message
    }

    @Test fun anOrgJsonObjectNestedInAWebMessageIsNamedByItsPath() {
        val message = mapOf("type" to "track", "event" to "tap",
            "payload" to mapOf("items" to listOf(1, "two", JSONObject(mapOf("when" to 3)))))
        assertEquals("data.input.payload.items[2]: no JSON form for org.json.JSONObject " +
            "(a trace takes Map, Collection, Array, String, Boolean, Number and null)",
            refusal { it.webEvent(message) })
    }

    @Test fun aDateIsNamedByItsPath() {
        assertEquals("data.properties.when: no JSON form for java.util.Date " +
            "(a trace takes Map, Collection, Array, String, Boolean, Number and null)",
            refusal { it.analytics("page_view", mapOf("uid" to "u1", "when" to Date(0))) })
    }

    @Test fun notANumberIsNamedByItsPath() {
        assertEquals("data.payload.ratio: no JSON form for the number NaN",
            refusal { it.emitted(mapOf("type" to "todayPage.refreshRequested", "ratio" to Double.NaN)) })
        assertEquals("data.value.scores[0][1]: no JSON form for the number -Infinity",
            refusal { it.resolved("nativeDialog.present", "c1", mapOf("scores" to listOf(listOf(1.5f, Float.NEGATIVE_INFINITY)))) })
    }

    /** The object with the key is named; a member name that is no identifier is quoted. */
    @Test fun aNonStringKeyIsNamedByItsObjectsPath() {
        assertEquals("data.input[\"dialog answer\"].counts: an object member's name must be a String, not the java.lang.Integer 1",
            refusal { it.gesture(GestureType.DIALOG_CHOOSE, mapOf("actionId" to "a", "dialog answer" to mapOf("counts" to mapOf(1 to "one")))) })
    }

    /** With a handler, the refused call returns: the handler has the error, on the caller's thread, before the call returns. */
    @Test fun aHandlerTheHostChoseIsCalledInsteadOfThrowing() {
        val file = tempTrace()
        val errors = ArrayList<Pair<TraceRecordingException, Thread>>()
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"), clock = ManualClock(0),
            onError = TraceErrorHandler { errors.add(Pair(it, Thread.currentThread())) })
        recorder.webEvent(mapOf("type" to "track", "event" to "x", "properties" to mapOf("when" to Date(0))))
        assertEquals("the handler ran before the call returned", 1, errors.size)
        recorder.analytics("page_view", mapOf("ratio" to Double.NaN))
        recorder.webEvent(mapOf("type" to "track", "event" to "x"))
        recorder.close()
        assertEquals(listOf("data.input.properties.when", "data.properties.ratio"), errors.map { it.first.path })
        assertEquals(listOf("no JSON form for the number NaN"), errors.drop(1).map { it.first.problem })
        for (error in errors) assertSame(Thread.currentThread(), error.second)
        assertEquals("the refused calls wrote nothing, the next one did", listOf("track", "end"), types(file))
    }

    /** A trace without its creation cannot be judged: the constructor throws whatever the handler. */
    @Test fun aCreationThatIsNotJsonThrowsFromTheConstructor() {
        val file = tempTrace()
        try {
            TodayPageTraceRecorder(file, mapOf("uid" to "u1", "analytics" to mapOf("ctx" to Date(0))), clock = ManualClock(0),
                onError = TraceErrorHandler { })
            fail("the recorder was made")
        } catch (refused: TraceRecordingException) {
            assertEquals("data.input.analytics.ctx", refused.path)
        }
    }
}
