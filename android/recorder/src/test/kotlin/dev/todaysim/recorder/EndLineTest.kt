package dev.todaysim.recorder

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test
import java.io.File
import java.util.concurrent.TimeUnit

/**
 * The end line, `{"atMs": T, "kind": "end"}`: the trace's last line, once, at the clock's time
 * when recording stopped (never before the line before it), written by close() or, for a recorder
 * nobody closed, when the garbage collector finds it unreachable.
 */
class EndLineTest {
    private fun tempTrace(): File = File.createTempFile("todaysim-end-", ".jsonl").apply { deleteOnExit() }

    private fun rawLines(file: File) = file.readText(Charsets.UTF_8).split("\n").filter { it.isNotEmpty() }

    /** A recorder with one line, `foreground`, 250 ms after it was made. */
    private fun recorderWithOneLine(file: File, clock: ManualClock): TodayPageTraceRecorder {
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"), clock = clock)
        clock.ms += 250
        recorder.lifecycle(LifecycleType.FOREGROUND)
        return recorder
    }

    @Test fun closeWritesTheEndLineLastOnceAtTheClocksTime() {
        val file = tempTrace()
        val clock = ManualClock(5_000)
        val recorder = recorderWithOneLine(file, clock)
        clock.ms += 1_250
        recorder.close()
        clock.ms += 500
        recorder.close()                                   // again: nothing
        recorder.header(HeaderState.REFRESHING, "r1")      // after the end: nothing
        val lines = rawLines(file)
        assertEquals(4, lines.size)
        assertEquals("{\"atMs\":1500,\"kind\":\"end\"}", lines.last())
        assertEquals(250L, TinyJson.obj(lines[2])["atMs"])
    }

    /** A clock read a moment earlier on another thread: the end is at the last line's time, not before. */
    @Test fun theEndLineIsNeverBeforeTheLineBeforeIt() {
        val file = tempTrace()
        val clock = ManualClock(1_000)
        val recorder = recorderWithOneLine(file, clock)
        clock.ms -= 100
        recorder.close()
        assertEquals("{\"atMs\":250,\"kind\":\"end\"}", rawLines(file).last())
    }

    /**
     * Threads closing at once, while the writer cannot write yet (the trace a named pipe nobody
     * reads): each close() waits, and the reader then gets one end line, the last.
     */
    @Test fun closingOnSeveralThreadsAtOnceWritesOneEndLine() {
        val pipe = NamedPipe.make()
        val recorder = TodayPageTraceRecorder(pipe, mapOf("uid" to "u1"), clock = ManualClock(0))
        recorder.lifecycle(LifecycleType.FOREGROUND)
        val closers = List(8) { Thread { recorder.close() }.apply { start() } }
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
        // WAITING (not BLOCKED on the recorder's lock): each has ended the trace and waits for the writer.
        while (closers.any { it.state != Thread.State.WAITING }) {
            assertTrue("the closers waiting within a minute: ${closers.map { it.state }}", System.nanoTime() < deadline)
            Thread.yield()
        }
        val reader = NamedPipe.Reader(pipe)
        for (closer in closers) closer.join(TimeUnit.SECONDS.toMillis(60))
        assertEquals("every close() returned", emptyList<Thread>(), closers.filter { it.isAlive })
        val lines = reader.await().split("\n").filter { it.isNotEmpty() }
        assertEquals(listOf("foreground", "{\"atMs\":0,\"kind\":\"end\"}"),
            lines.drop(2).map { TinyJson.obj(it)["type"] ?: it })
    }

    /** Made, used and dropped without close(): nothing refers to the recorder after this returns. */
    private fun recordWithoutClosing(file: File, clock: ManualClock) {
        recorderWithOneLine(file, clock)
    }

    /**
     * A recorder nobody closed gets its end line when the collector finds it unreachable, at the
     * clock's time then. Collection is asked for until the line is there (System.gc() is a
     * request; a round every 20 ms), for at most a minute.
     */
    @Test fun aRecorderNobodyClosedIsEndedWhenItIsCollected() {
        val file = tempTrace()
        val clock = ManualClock(10_000)
        recordWithoutClosing(file, clock)
        clock.ms = 14_000
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
        while (!file.readText(Charsets.UTF_8).endsWith("\"kind\":\"end\"}\n")) {
            assertTrue("no end line within a minute of asking for collection:\n${file.readText(Charsets.UTF_8)}",
                System.nanoTime() < deadline)
            System.gc()
            Thread.sleep(20)
        }
        val lines = rawLines(file)
        assertEquals(4, lines.size)
        assertEquals("{\"atMs\":4000,\"kind\":\"end\"}", lines.last())
    }
}
