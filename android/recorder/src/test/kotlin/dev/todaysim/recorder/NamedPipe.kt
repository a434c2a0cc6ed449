package dev.todaysim.recorder

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import java.io.File
import java.io.FileInputStream
import java.nio.file.Files
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/**
 * A named pipe (FIFO, made with Linux's mkfifo) to record into: opening it for writing blocks
 * until a reader opens it, so that a test holds the recorder's writer thread at its first step
 * for as long as it wants, with no hook into the recorder.
 */
object NamedPipe {
    fun make(): File {
        val pipe = File(Files.createTempDirectory("todaysim-fifo-").toFile().apply { deleteOnExit() }, "trace.jsonl")
        assertEquals("mkfifo ${pipe.path}", 0, ProcessBuilder("mkfifo", pipe.path).inheritIO().start().waitFor())
        pipe.deleteOnExit()
        return pipe
    }

    /** Opens [pipe] for reading on a thread of its own and reads it to its end (the writer closing it). */
    class Reader(pipe: File) {
        private val text = AtomicReference<String>()
        private val done = CountDownLatch(1)

        init {
            Thread({
                text.set(FileInputStream(pipe).use { it.readBytes() }.toString(Charsets.UTF_8))
                done.countDown()
            }, "test reader").apply { isDaemon = true }.start()
        }

        /** The text, once the writer has closed the pipe (within a minute). */
        fun await(): String {
            assertTrue("the reader saw the end of the pipe within a minute", done.await(60, TimeUnit.SECONDS))
            return text.get()
        }
    }
}
