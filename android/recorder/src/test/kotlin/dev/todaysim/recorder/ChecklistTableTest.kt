package dev.todaysim.recorder

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File
import java.util.UUID
import java.util.concurrent.TimeUnit

/** `todaysim verify-host FILE`, the binary named by TODAYSIM_BIN (systemtests/test_android_recorder.py sets it). */
object VerifyHost {
    class Result(val exitCode: Int, val output: String) {
        val verdict: Map<String, Any?> by lazy { TinyJson.obj(output) }
        val conforms: Boolean get() = verdict["conforms"] == true
        @Suppress("UNCHECKED_CAST")
        val divergences: List<Map<String, Any?>> get() = verdict["divergences"] as List<Map<String, Any?>>
        val rules: List<Any?> get() = divergences.map { it["rule"] }
        override fun toString() = "exit $exitCode: $output"
    }

    fun run(trace: File): Result {
        val binary = System.getenv("TODAYSIM_BIN")
            ?: throw AssertionError("TODAYSIM_BIN is not set: the path of the todaysim binary (systemtests/test_android_recorder.py sets it)")
        if (!File(binary).canExecute()) throw AssertionError("TODAYSIM_BIN=$binary is not an executable")
        val process = ProcessBuilder(binary, "verify-host", trace.path)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
        process.outputStream.close()
        val output = process.inputStream.bufferedReader(Charsets.UTF_8).readText()  // until the verifier closes it
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly()
            throw AssertionError("todaysim verify-host did not end within 120 s")
        }
        return Result(process.exitValue(), output.trim())
    }
}

/**
 * The request ids and callIds a host makes: random UUIDs, upper-case as `UUID().uuidString` on
 * iOS and as many Android hosts write them. One per name, made at its first use.
 */
class HostIds {
    private val made = LinkedHashMap<String, String>()
    operator fun get(name: String): String = made.getOrPut(name) {
        buildString { for (c in UUID.randomUUID().toString()) append(Character.toUpperCase(c)) }
    }
}

/** One row of the table: at [atMs] the host [what] (an input it received or an output it made). */
class Row(val atMs: Long, val what: String, val call: (TodayPageTraceRecorder, HostIds) -> Unit)

/**
 * The checklist's calls as an Android app's Today Page host makes them, played through the
 * recorder: a session created, Web releasing the overlay, a user pull answered, the app sent to
 * the background and back after 6 s (an `app_foreground` request that Web starts but never
 * answers: its 5 s deadline hides the header and reloads the document once), a tab activation,
 * and a refresh Web makes itself with the header. The outputs are what the rules make for these
 * inputs: they were read from a todaysim session driven over HTTP with the same inputs
 * (`GET /v1/sessions/{id}/timeline?format=trace`), and `todaysim verify-host` judges the trace
 * written here against them.
 */
class ChecklistTableTest {
    companion object {
        const val UID = "u1"
        const val PAGE = "https://today.example.com/embed/feeds/v1"

        /** The URL the host's WebView loads (H3, H9: a host-made reload carries its request id). */
        fun url(requestId: String? = null) = "$PAGE?uid=$UID&language=en" + (if (requestId != null) "&requestId=$requestId" else "")

        fun refreshRequested(id: String, reason: String) =
            mapOf("type" to "todayPage.refreshRequested", "schemaVersion" to 1, "requestId" to id, "reason" to reason)

        fun visibility(type: String, visible: Boolean) = mapOf("type" to type, "schemaVersion" to 1, "visible" to visible)

        fun started(id: String) = mapOf("type" to "todayPage.refreshStarted", "schemaVersion" to 1, "requestId" to id, "presentation" to "header")

        fun result(id: String, status: String, mode: String = "soft") =
            mapOf("type" to "todayPage.refreshResult", "schemaVersion" to 1, "requestId" to id, "mode" to mode, "status" to status)

        /** Analytics as the app's pipeline sends them: the rules' `uid` and a property of the pipeline's own (not compared, H24). */
        fun event(name: String): (TodayPageTraceRecorder, HostIds) -> Unit =
            { r, _ -> r.analytics(name, mapOf("uid" to UID, "app_version" to "5.12.0")) }

        const val WEB_REFRESH = "web-refresh-1"  // an id Web made: the same on both sides

        /** The golden table: a host that follows the rules (the rule each output follows in brackets). */
        val golden: List<Row> = listOf(
            // 0 ms: the host is created; its first load (H3) with the overlay up, and its analytics (H24).
            Row(0, "navigation initial [H3]") { r, _ -> r.navigated(NavigationCause.INITIAL, url()) },
            Row(0, "overlay shown by the load (already visible: no line)") { r, _ -> r.overlayShownByLoad() },
            Row(0, "analytics app_sess_start [H24]", event("app_sess_start")),
            Row(0, "analytics page_view [H24]", event("page_view")),
            // Web releases the overlay (H23), then renders.
            Row(100, "web: webView.loadingPresentation") { r, _ ->
                r.webEvent(mapOf("type" to "webView.loadingPresentation", "owner" to "web", "reason" to "placeholders_visible"))
            },
            Row(100, "overlay hidden [H23]") { r, _ -> r.overlay(OverlayState.HIDDEN) },
            Row(150, "web: todayPage.firstBatchRendered") { r, _ ->
                r.webEvent(mapOf("type" to "todayPage.firstBatchRendered", "schemaVersion" to 1, "batchId" to "b1", "elapsedMs" to 140))
            },
            Row(150, "overlay hidden again (a repeat: no line)") { r, _ -> r.overlay(OverlayState.HIDDEN) },
            // A user pull: the spinner and a silent request (H10), the spinner ends on its result (H11).
            Row(1000, "gesture pull") { r, _ -> r.gesture(GestureType.PULL) },
            Row(1000, "pull refreshing [H10]") { r, ids -> r.pull(PullState.REFRESHING, ids["pull"]) },
            Row(1000, "emit refreshRequested user_pull [H10]") { r, ids -> r.emitted(refreshRequested(ids["pull"], "user_pull")) },
            Row(1200, "pull refreshing again (a re-render: no line)") { r, ids -> r.pull(PullState.REFRESHING, ids["pull"]) },
            Row(1500, "web: refreshResult for the pull") { r, ids -> r.webEvent(result(ids["pull"], "succeeded")) },
            Row(1500, "pull idle succeeded [H11]") { r, ids -> r.pull(PullState.IDLE, ids["pull"], PullOutcome.SUCCEEDED) },
            // Background (H15): visibility to Web, page_end.
            Row(2000, "lifecycle background") { r, _ -> r.lifecycle(LifecycleType.BACKGROUND) },
            Row(2000, "emit visibilityWillChange false [H15]") { r, _ -> r.emitted(visibility("webView.visibilityWillChange", false)) },
            Row(2000, "emit visibilityChanged false [H15]") { r, _ -> r.emitted(visibility("webView.visibilityChanged", false)) },
            Row(2000, "analytics page_end [H24]", event("page_end")),
            // Foreground after 6 s (>= 5 s away): visibility, page_view and an app_foreground request (H15) with its 5 s deadline (H5).
            Row(8000, "lifecycle foreground") { r, _ -> r.lifecycle(LifecycleType.FOREGROUND) },
            Row(8000, "emit visibilityWillChange true [H15]") { r, _ -> r.emitted(visibility("webView.visibilityWillChange", true)) },
            Row(8000, "emit visibilityChanged true [H15]") { r, _ -> r.emitted(visibility("webView.visibilityChanged", true)) },
            Row(8000, "analytics page_view [H24]", event("page_view")),
            Row(8000, "emit refreshRequested app_foreground [H15]") { r, ids -> r.emitted(refreshRequested(ids["foreground"], "app_foreground")) },
            // Web starts it with the header (H12) and never answers.
            Row(8200, "web: refreshStarted for the foreground request") { r, ids -> r.webEvent(started(ids["foreground"])) },
            Row(8200, "header refreshing [H12]") { r, ids -> r.header(HeaderState.REFRESHING, ids["foreground"]) },
            Row(8300, "header refreshing again (a re-render: no line)") { r, ids -> r.header(HeaderState.REFRESHING, ids["foreground"]) },
            // 13,000 ms, the deadline (H6): the header goes with the document (H14), the one recovery reload (H9) shows the overlay (H3).
            Row(13000, "header hidden [H14]") { r, ids -> r.header(HeaderState.HIDDEN, ids["foreground"]) },
            Row(13000, "navigation recovery [H9]") { r, ids -> r.navigated(NavigationCause.RECOVERY, url(ids["recovery"]), ids["recovery"]) },
            Row(13000, "overlay shown by the load [H3]") { r, _ -> r.overlayShownByLoad() },
            Row(13100, "web: webView.loadingPresentation") { r, _ ->
                r.webEvent(mapOf("type" to "webView.loadingPresentation", "owner" to "web", "reason" to "content_visible"))
            },
            Row(13100, "overlay hidden [H23]") { r, _ -> r.overlay(OverlayState.HIDDEN) },
            Row(13300, "web: firstBatchRendered of the reload") { r, ids ->
                r.webEvent(mapOf("type" to "todayPage.firstBatchRendered", "schemaVersion" to 1, "batchId" to "b2", "elapsedMs" to 290,
                    "requestId" to ids["recovery"]))
            },
            Row(13500, "web: refreshResult of the reload (hard)") { r, ids -> r.webEvent(result(ids["recovery"], "succeeded", mode = "hard")) },
            // A tab activation: a silent request (H16), answered.
            Row(14000, "lifecycle tabActivated") { r, _ -> r.lifecycle(LifecycleType.TAB_ACTIVATED) },
            Row(14000, "emit refreshRequested tab_activated [H16]") { r, ids -> r.emitted(refreshRequested(ids["tab"], "tab_activated")) },
            Row(14300, "web: refreshResult for the tab request") { r, ids -> r.webEvent(result(ids["tab"], "succeeded")) },
            // A refresh Web makes itself, with the header (H12), updated then hidden 1 s later (H13).
            Row(15000, "web: refreshStarted of Web's own refresh") { r, _ -> r.webEvent(started(WEB_REFRESH)) },
            Row(15000, "header refreshing [H12]") { r, _ -> r.header(HeaderState.REFRESHING, WEB_REFRESH) },
            Row(15400, "web: refreshResult of Web's own refresh") { r, _ -> r.webEvent(result(WEB_REFRESH, "succeeded")) },
            Row(15400, "header updated [H13]") { r, _ -> r.header(HeaderState.UPDATED, WEB_REFRESH) },
            Row(16400, "header hidden [H13]") { r, _ -> r.header(HeaderState.HIDDEN, WEB_REFRESH) }
        )

        /** Planted: the spinner never ends on the pull's result (the checklist's H11). */
        val spinnerNeverEnds: List<Row> = golden.filter { it.what != "pull idle succeeded [H11]" }

        /** Planted: the recording stops 1 s in, at a user pull Web never answers. */
        val pullNeverAnswered: List<Row> = golden.filter { it.atMs <= 1000 }

        /** Planted: the header mirrors a user pull, with no refreshStarted (H10). */
        val headerMirrorsPull: List<Row> = (golden + listOf(
            Row(1000, "header refreshing for the pull (the bug)") { r, ids -> r.header(HeaderState.REFRESHING, ids["pull"]) },
            Row(1500, "header updated for the pull (the bug)") { r, ids -> r.header(HeaderState.UPDATED, ids["pull"]) },
            Row(2500, "header hidden for the pull (the bug)") { r, ids -> r.header(HeaderState.HIDDEN, ids["pull"]) }
        )).sortedBy { it.atMs }  // a stable sort: each bug row comes after the golden rows of its instant

        /**
         * Plays [rows] in order, the clock set to each row's time, into a new trace file, closed at
         * [endAtMs] (by default the last row's time).
         */
        fun play(rows: List<Row>, host: String = "Android MiniHost (ChecklistTableTest)", endAtMs: Long? = null): File {
            val file = File.createTempFile("todaysim-android-trace-", ".jsonl")
            file.deleteOnExit()
            val boot = 3_600_000L  // elapsedRealtime when the host is created: the trace starts at 0 all the same
            val clock = ManualClock(boot)
            val ids = HostIds()
            val recorder = TodayPageTraceRecorder(file, mapOf("uid" to UID, "platform" to "android"), host = host, clock = clock)
            for (row in rows) {
                assertTrue("the table is in time order (${row.what})", boot + row.atMs >= clock.ms)
                clock.ms = boot + row.atMs
                row.call(recorder, ids)
            }
            if (endAtMs != null) clock.ms = boot + endAtMs
            recorder.close()
            return file
        }
    }

    private fun explain(result: VerifyHost.Result, trace: File) =
        "$result\n--- the trace:\n${trace.readText(Charsets.UTF_8)}"

    @Test fun theGoldenTableConforms() {
        val trace = play(golden)
        val result = VerifyHost.run(trace)
        assertEquals(explain(result, trace), 0, result.exitCode)
        assertTrue(explain(result, trace), result.conforms)
        assertEquals(explain(result, trace), emptyList<Any?>(), result.divergences)
        // Every kind was judged, and the outputs were there to judge.
        @Suppress("UNCHECKED_CAST")
        val judged = result.verdict["judged"] as Map<String, Any?>
        assertEquals(mapOf("emit" to 7L, "navigation" to 2L, "header" to 5L, "pull" to 2L, "overlay" to 3L, "analytics" to 4L, "resolution" to 0L), judged)
    }

    @Test fun theSpinnerThatNeverEndsIsFoundByH11() {
        val trace = play(spinnerNeverEnds)
        val result = VerifyHost.run(trace)
        assertEquals(explain(result, trace), 1, result.exitCode)
        assertTrue(explain(result, trace), !result.conforms)
        assertEquals(explain(result, trace), listOf("H11"), result.rules)
        val missing = result.divergences[0]
        assertEquals(explain(result, trace), listOf(1500L, "pull", "idle", "missing"),
            listOf(missing["atMs"], missing["kind"], missing["type"], missing["problem"]))
    }

    @Test fun aHeaderMirroringAPullIsFoundByH10() {
        val trace = play(headerMirrorsPull)
        val result = VerifyHost.run(trace)
        assertEquals(explain(result, trace), 1, result.exitCode)
        assertTrue(explain(result, trace), !result.conforms)
        assertEquals(explain(result, trace), "H10", result.rules.firstOrNull())
        val first = result.divergences[0]
        assertEquals(explain(result, trace), listOf(1000L, "header", "refreshing", "unexpected"),
            listOf(first["atMs"], first["kind"], first["type"], first["problem"]))
    }

    /** The recorder's JSON read by todaysim's own reader: a host text of every hard character comes back in the verdict as it was. */
    @Test fun todaysimReadsTheRecordersJsonBack() {
        val host = "Android \"Pixel\" \\ 8\t/ é 今日 😀 \u0001\u001F end"
        val trace = play(golden, host = host)
        val result = VerifyHost.run(trace)
        assertEquals(explain(result, trace), 0, result.exitCode)
        assertEquals(host, result.verdict["host"])
    }

    /** The table's ids are the host's own: upper-case UUIDs, one a request. */
    @Test fun theTraceCarriesTheHostsOwnIds() {
        val lines = play(golden).readText(Charsets.UTF_8).split("\n").filter { it.isNotEmpty() }.map { TinyJson.obj(it) }
        val ids = lines.mapNotNull { it["requestId"] as? String }.filter { it != WEB_REFRESH }.toSet()
        assertEquals(4, ids.size)  // pull, foreground, recovery, tab
        for (id in ids) assertTrue(id, Regex("[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}").matches(id))
        val times = lines.drop(1).map { it["atMs"] as Long }  // line 1, the header, has no time
        assertEquals("times from 0, never going back", times.sorted(), times)
        if (times.first() != 0L) fail("the creation is at ${times.first()} ms, not 0")
        assertEquals(16400L, lines.last()["atMs"])
    }

    /**
     * The end line says when recording stopped, and the rules' timers due before it are judged:
     * Web never answers a pull. Closed at the pull, the trace cannot show the spinner stuck and
     * conforms; closed 20 s in, with the spinner still up, the deadline's reload (H9) and the
     * spinner's watchdog (H11, 13 s) are missing.
     */
    @Test fun theEndLineJudgesTheTimersDueBeforeRecordingStopped() {
        val cut = play(pullNeverAnswered)
        val atThePull = VerifyHost.run(cut)
        assertEquals(explain(atThePull, cut), 0, atThePull.exitCode)
        assertEquals(explain(atThePull, cut), 1000L, atThePull.verdict["endMs"])
        val trace = play(pullNeverAnswered, endAtMs = 20_000)
        val result = VerifyHost.run(trace)
        assertEquals(explain(result, trace), "{\"atMs\":20000,\"kind\":\"end\"}", trace.readText(Charsets.UTF_8).trim().lines().last())
        assertEquals(explain(result, trace), listOf(
            listOf(6000L, "navigation", "recovery", "missing", "H9"),
            listOf(6000L, "pull", "refreshing", "missing", "H11"),
            listOf(6000L, "overlay", "visible", "missing", "H3"),
            listOf(13000L, "pull", "idle", "missing", "H11")
        ), result.divergences.map { listOf(it["atMs"], it["kind"], it["type"], it["problem"], it["rule"]) })
    }
}
