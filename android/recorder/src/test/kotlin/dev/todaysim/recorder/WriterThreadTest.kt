package dev.todaysim.recorder

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File
import java.io.IOException
import java.nio.file.Files
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/**
 * The file is the writer thread's alone: a call on the host's main thread returns without disk
 * I/O, and close() returns once everything is in the file. (Timing-dependent only in that it
 * waits for conditions, each with a deadline of a minute.)
 */
class WriterThreadTest {
    private fun lines(text: String) = text.split("\n").filter { it.isNotEmpty() }.map { TinyJson.obj(it) }

    /**
     * The trace is a named pipe (FIFO) nobody reads yet: opening it for writing blocks until a
     * reader comes. Made and called on a "main" thread, the recorder returns from a thousand calls
     * all the same, so neither the opening nor a write happened on that thread; once a reader
     * opens the pipe, every line arrives, in order, and close() returns after the last.
     */
    @Test fun callsOnTheMainThreadReturnWhileTheTraceCannotEvenBeOpened() {
        val fifo = NamedPipe.make()
        val recorder = AtomicReference<TodayPageTraceRecorder>()
        val returned = CountDownLatch(1)
        val clock = ManualClock(0)
        Thread({
            val made = TodayPageTraceRecorder(fifo, mapOf("uid" to "u1"), clock = clock)
            for (i in 0 until 1_000) made.analytics("tick", mapOf("i" to i))
            recorder.set(made)
            returned.countDown()
        }, "main").apply { isDaemon = true }.start()
        val returnedUnread = returned.await(60, TimeUnit.SECONDS)
        val reader = NamedPipe.Reader(fifo)  // opened whatever happened, so that a recorder stuck in open() goes on
        assertTrue("the calls on the main thread returned while the trace could not be opened", returnedUnread)
        recorder.get().close()
        val lines = lines(reader.await())
        assertEquals(listOf("create") + List(1_000) { "tick" } + "end", lines.drop(1).map { it["type"] ?: it["kind"] })
        @Suppress("UNCHECKED_CAST")
        val order = lines.drop(2).dropLast(1).map { ((it["data"] as Map<String, Any?>)["properties"] as Map<String, Any?>)["i"] }
        assertEquals((0L until 1_000L).toList(), order)
    }

    /** close() returns after the last line is in the file: read at once, the file is whole. */
    @Test fun closeReturnsWithEveryLineInTheFile() {
        val file = File.createTempFile("todaysim-writer-", ".jsonl").apply { deleteOnExit() }
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"), clock = ManualClock(0))
        val calls = 20_000
        for (i in 0 until calls) recorder.analytics("tick", mapOf("i" to i, "padding" to "x".repeat(100)))
        recorder.close()
        val lines = lines(file.readText(Charsets.UTF_8))
        assertEquals(2 + calls + 1, lines.size)
        assertEquals(mapOf("atMs" to 0L, "kind" to "end"), lines.last())
    }

    /** The file is opened by the writer: a trace that cannot be made fails close(), once, naming the file. */
    @Test fun aTraceThatCannotBeWrittenFailsClose() {
        val file = File(Files.createTempDirectory("todaysim-gone-").toFile().apply { delete() }, "trace.jsonl")
        val recorder = TodayPageTraceRecorder(file, mapOf("uid" to "u1"), clock = ManualClock(0))
        recorder.lifecycle(LifecycleType.FOREGROUND)
        try {
            recorder.close()
            fail("close() returned")
        } catch (failed: IOException) {
            assertTrue(failed.message, failed.message!!.contains(file.path))
        }
        recorder.close()  // closing again does nothing
    }
}
