package dev.todaysim.recorder

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test
import java.io.File
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/** A clock a test moves by hand: milliseconds since an arbitrary boot, like `SystemClock.elapsedRealtime()`. */
class ManualClock(@Volatile var ms: Long) : TraceClock {
    override fun nowMs(): Long = ms
}

/**
 * The recorder driven as an app drives it, line by line: the same calls as the Swift recorder's
 * `RecorderTests`, with the same lines expected.
 */
class RecorderTest {
    private fun tempTrace(): File = File.createTempFile("todaysim-recorder-", ".jsonl").apply { deleteOnExit() }

    private fun lines(file: File): List<Map<String, Any?>> =
        file.readText(Charsets.UTF_8).split("\n").filter { it.isNotEmpty() }.map { TinyJson.obj(it) }

    @Suppress("UNCHECKED_CAST")
    private fun Map<String, Any?>.obj(name: String): Map<String, Any?> = get(name) as Map<String, Any?>

    @Test fun itWritesTheHeaderTheCreationAndOneLinePerCall() {
        val file = tempTrace()
        val clock = ManualClock(1_000_000)
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"),
            recorded = listOf(TodayPageTraceRecorder.Kind.EMIT, TodayPageTraceRecorder.Kind.HEADER), toleranceMs = 50,
            host = "test app", clock = clock)
        clock.ms += 250
        recorder.gesture(GestureType.PULL)
        recorder.emitted(mapOf("type" to "todayPage.refreshRequested", "schemaVersion" to 1, "requestId" to "r1", "reason" to "user_pull"))
        clock.ms += 100
        recorder.header(HeaderState.REFRESHING, "r1")
        recorder.header(HeaderState.REFRESHING, "r1")  // the same state and id again: no line
        recorder.header(HeaderState.REFRESHING, "r2")  // another id: a line
        clock.ms -= 30  // a clock read on another thread a moment earlier: times never go back
        recorder.webEvent(mapOf("type" to "todayPage.refreshResult", "requestId" to "r2", "status" to "succeeded"))
        recorder.close()
        recorder.overlay(OverlayState.HIDDEN)  // after close: nothing

        val text = file.readText(Charsets.UTF_8)
        val raw = text.split("\n")
        assertEquals("one line a call and the end line, each ended by a newline", 9, raw.size)
        assertEquals("", raw.last())
        // The first two lines exactly: the header and the creation, members sorted by name.
        assertEquals("{\"host\":\"test app\",\"recorded\":[\"emit\",\"header\"],\"todaysimTrace\":1,\"toleranceMs\":50}", raw[0])
        assertEquals("{\"atMs\":0,\"data\":{\"input\":{\"uid\":\"u1\"},\"via\":\"create\"},\"kind\":\"input\",\"type\":\"create\"}", raw[1])

        val lines = lines(file)
        assertEquals("{\"atMs\":350,\"kind\":\"end\"}", raw[7])
        assertEquals(8, lines.size)
        assertEquals(listOf(250L, 250L, 350L, 350L, 350L, 350L), lines.drop(2).map { it["atMs"] })
        assertEquals(listOf("input pull", "emit todayPage.refreshRequested", "header refreshing", "header refreshing", "input todayPage.refreshResult"),
            lines.drop(2).dropLast(1).map { "${it["kind"]} ${it["type"]}" })
        assertEquals("gesture", lines[2].obj("data")["via"])
        assertEquals(mapOf("type" to "pull"), lines[2].obj("data")["input"])
        assertEquals("r1", lines[3]["requestId"])
        assertEquals(mapOf("type" to "todayPage.refreshRequested", "schemaVersion" to 1L, "requestId" to "r1", "reason" to "user_pull"),
            lines[3].obj("data")["payload"])
        assertEquals("r1", lines[4]["requestId"])
        assertEquals("r2", lines[5]["requestId"])
        assertEquals(mapOf("to" to "refreshing"), lines[5]["data"])
        assertEquals("webEvent", lines[6].obj("data")["via"])
        assertTrue("an input has no requestId member", !lines[6].containsKey("requestId"))
    }

    @Test fun everyOutputHasTheSwiftRecordersLine() {
        val file = tempTrace()
        val clock = ManualClock(42)
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1", "platform" to "android"), clock = clock)
        clock.ms += 7
        recorder.navigated(NavigationCause.RECOVERY, "https://today.example.com/embed/feeds/v1?uid=u1&requestId=R", "R")
        recorder.navigated(NavigationCause.NAVIGATION, "/embed/feeds/v3")
        recorder.pull(PullState.REFRESHING, "P")
        recorder.pull(PullState.REFRESHING, "P")                    // the same: no line
        recorder.pull(PullState.IDLE, "P", PullOutcome.SUCCEEDED)
        recorder.pull(PullState.IDLE, "P", PullOutcome.SUCCEEDED)   // the same: no line
        recorder.overlay(OverlayState.VISIBLE)                      // the initial state: no line
        recorder.overlay(OverlayState.HIDDEN)
        recorder.overlay(OverlayState.HIDDEN)                       // the same: no line
        recorder.overlayShownByLoad()                               // hidden → visible: a line
        recorder.overlayShownByLoad()                               // already visible: no line
        recorder.header(HeaderState.HIDDEN, null)                   // the initial state: no line
        recorder.analytics("page_view", mapOf("uid" to "u1", "app_version" to "5.12.0"))
        recorder.resolved("nativeDialog.present", "c1", mapOf("type" to "action", "actionId" to "delete"))
        recorder.lifecycle(LifecycleType.BACKGROUND)
        recorder.command(mapOf("type" to "todayPage.scrollToSection", "batchId" to "news"))
        recorder.gesture(GestureType.DIALOG_CHOOSE, mapOf("actionId" to "a", "type" to "ignored"))  // the enum's type wins
        recorder.webEvent(mapOf("event" to "x"))                   // no type: the line's type is its channel
        recorder.close()

        val expected = listOf(
            "{\"atMs\":7,\"data\":{\"cause\":\"recovery\",\"url\":\"https://today.example.com/embed/feeds/v1?uid=u1&requestId=R\"},\"kind\":\"navigation\",\"requestId\":\"R\",\"type\":\"recovery\"}",
            "{\"atMs\":7,\"data\":{\"cause\":\"navigation\",\"url\":\"/embed/feeds/v3\"},\"kind\":\"navigation\",\"type\":\"navigation\"}",
            "{\"atMs\":7,\"data\":{\"state\":\"refreshing\"},\"kind\":\"pull\",\"requestId\":\"P\",\"type\":\"refreshing\"}",
            "{\"atMs\":7,\"data\":{\"outcome\":\"succeeded\",\"state\":\"idle\"},\"kind\":\"pull\",\"requestId\":\"P\",\"type\":\"idle\"}",
            "{\"atMs\":7,\"data\":{\"to\":\"hidden\"},\"kind\":\"overlay\",\"type\":\"hidden\"}",
            "{\"atMs\":7,\"data\":{\"to\":\"visible\"},\"kind\":\"overlay\",\"type\":\"visible\"}",
            "{\"atMs\":7,\"data\":{\"event\":\"page_view\",\"properties\":{\"app_version\":\"5.12.0\",\"uid\":\"u1\"}},\"kind\":\"analytics\",\"type\":\"page_view\"}",
            "{\"atMs\":7,\"data\":{\"callId\":\"c1\",\"value\":{\"actionId\":\"delete\",\"type\":\"action\"}},\"kind\":\"resolution\",\"type\":\"nativeDialog.present\"}",
            "{\"atMs\":7,\"data\":{\"input\":{\"type\":\"background\"},\"via\":\"lifecycle\"},\"kind\":\"input\",\"type\":\"background\"}",
            "{\"atMs\":7,\"data\":{\"input\":{\"batchId\":\"news\",\"type\":\"todayPage.scrollToSection\"},\"via\":\"command\"},\"kind\":\"input\",\"type\":\"todayPage.scrollToSection\"}",
            "{\"atMs\":7,\"data\":{\"input\":{\"actionId\":\"a\",\"type\":\"dialog.choose\"},\"via\":\"gesture\"},\"kind\":\"input\",\"type\":\"dialog.choose\"}",
            "{\"atMs\":7,\"data\":{\"input\":{\"event\":\"x\"},\"via\":\"webEvent\"},\"kind\":\"input\",\"type\":\"webEvent\"}",
            "{\"atMs\":7,\"kind\":\"end\"}"
        )
        assertEquals(expected, file.readText(Charsets.UTF_8).split("\n").drop(2).filter { it.isNotEmpty() })
        assertEquals("{\"recorded\":[\"emit\",\"navigation\",\"header\",\"pull\",\"overlay\",\"analytics\",\"resolution\"],\"todaysimTrace\":1,\"toleranceMs\":100}",
            file.readText(Charsets.UTF_8).split("\n")[0])
    }

    /** The clock is the app's: times are milliseconds since the recorder was made, in the lines. */
    @Test fun timesAreTheInjectedClocksSinceTheRecordersStart() {
        val file = tempTrace()
        val clock = ManualClock(86_400_000)  // a device up for a day
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"), clock = clock)
        val steps = listOf(0L, 1L, 999L, 1_000L, 5_000L, 5_000L, 123_456L)
        for (at in steps) {
            clock.ms = 86_400_000 + at
            recorder.lifecycle(LifecycleType.TIMER_TICK)
        }
        clock.ms = 86_400_000 + 100  // a reading from before the last one
        recorder.lifecycle(LifecycleType.TIMER_TICK)
        recorder.close()
        assertEquals(listOf(0L) + steps + 123_456L + 123_456L, lines(file).drop(1).map { it["atMs"] })
    }

    @Test fun theDefaultClockStartsAtZero() {
        val file = tempTrace()
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"))
        recorder.lifecycle(LifecycleType.FOREGROUND)
        recorder.close()
        val at = lines(file)[2]["atMs"] as Long
        assertTrue("atMs $at: milliseconds since the recorder was made", at in 0L..60_000L)
    }

    /** `host` keeps its first 200 characters, counted as the verifier counts them (Unicode scalars). */
    @Test fun theHostKeepsItsFirst200Characters() {
        val file = tempTrace()
        val long = "😀".repeat(150) + "é".repeat(100)
        TodayPageTraceRecorder(file, mapOf("uid" to "u1"), host = long, clock = ManualClock(0)).close()
        val host = lines(file)[0]["host"] as String
        assertEquals("😀".repeat(150) + "é".repeat(50), host)
        assertEquals(200, host.codePointCount(0, host.length))
    }

    /** Calls from several threads: every line whole, once, and times that never go back. */
    @Test fun callsFromSeveralThreadsAreSerialized() {
        val file = tempTrace()
        val perThread = ThreadLocal<Long>()
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"), clock = TraceClock { perThread.get() ?: 0L })
        val threads = 4
        val calls = 300
        val start = CountDownLatch(1)
        val done = CountDownLatch(threads)
        for (t in 0 until threads) {
            Thread {
                start.await()
                for (i in 0 until calls) {
                    // Each thread's clock runs at its own pace: a later line may read an earlier time.
                    perThread.set((i * (t + 1)).toLong())
                    recorder.analytics("t$t", mapOf("i" to i, "text" to "line \"$i\" of thread $t\n"))
                    recorder.header(if (i % 2 == 0) HeaderState.REFRESHING else HeaderState.HIDDEN, "t$t-$i")
                }
                done.countDown()
            }.start()
        }
        start.countDown()
        assertTrue("the threads finished", done.await(60, TimeUnit.SECONDS))
        recorder.close()
        assertEquals("end", lines(file).last()["kind"])
        val lines = lines(file).drop(2).dropLast(1)
        assertEquals(threads * calls * 2, lines.size)
        val times = lines.map { it["atMs"] as Long }
        assertEquals("times never go back", times.sorted(), times)
        for (t in 0 until threads) {
            val mine = lines.filter { it["type"] == "t$t" }.map { (it.obj("data").obj("properties")["i"] as Long).toInt() }
            assertEquals("thread $t: each of its lines once, in its order", (0 until calls).toList(), mine)
        }
    }
}
