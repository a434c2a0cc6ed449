package dev.todaysim.recorder

import java.io.BufferedOutputStream
import java.io.OutputStream
import java.util.concurrent.LinkedBlockingQueue

/**
 * The one thread that touches a trace's file: it opens it, writes the lines in the order they
 * were handed over, buffered, and flushes whenever it has caught up, so that the file is whole up
 * to the last line written a moment ago. A recorder's calls only queue bytes: a host calls them on
 * its main thread, where Android's StrictMode counts opening and writing a file as disk I/O.
 *
 * The thread holds the queue and the output, never the recorder, so that a recorder nobody closed
 * can still become unreachable and have its trace ended ([TraceCloser]). It is a daemon: an
 * unclosed recorder does not keep a JVM from exiting.
 */
internal class TraceWriter(private val open: () -> OutputStream) {
    private val queue = LinkedBlockingQueue<ByteArray>()
    private val thread = Thread({ run() }, "todaysim trace writer").apply { isDaemon = true }

    /** Why the trace could not be written (set once, by the writer thread); later lines are dropped. */
    @Volatile
    var failure: Exception? = null
        private set

    init {
        thread.start()
    }

    /** Queues [bytes] after every line queued before. */
    fun write(bytes: ByteArray) {
        if (failure == null) queue.add(bytes)
    }

    /** Queues the end of the trace: the writer writes what came before, closes the output and stops. */
    fun finish() {
        queue.add(END)
    }

    /** Waits until the writer has stopped (after [finish]: every line is in the file and the file closed). */
    fun awaitStopped() {
        var interrupted = false
        while (thread.isAlive) {
            try {
                thread.join()
            } catch (interruption: InterruptedException) {
                interrupted = true  // the wait is close()'s promise; the interruption is kept for the caller
            }
        }
        if (interrupted) Thread.currentThread().interrupt()
    }

    private fun run() {
        try {
            BufferedOutputStream(open(), BUFFER_BYTES).use { output ->
                while (true) {
                    val bytes = queue.poll() ?: run {
                        output.flush()
                        queue.take()
                    }
                    if (bytes === END) break
                    output.write(bytes)
                }
            }
        } catch (broken: Exception) {  // IOException mostly; whatever it is, close() reports it
            failure = broken
        }
    }

    private companion object {
        val END = ByteArray(0)
        const val BUFFER_BYTES = 64 * 1024
    }
}
