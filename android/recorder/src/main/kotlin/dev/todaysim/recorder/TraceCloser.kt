package dev.todaysim.recorder

import java.lang.ref.PhantomReference
import java.lang.ref.ReferenceQueue
import java.util.Collections
import java.util.concurrent.ConcurrentHashMap

/**
 * Ends the trace of a recorder the garbage collector found unreachable before anyone closed it
 * (a test that forgot `close()`, a host torn down without it): its end line is written at that
 * moment's clock, so the trace says when recording stopped at the latest. One daemon thread,
 * started with the first recorder, waits on a reference queue. It does not wait for the writer.
 *
 * Why a [PhantomReference]: `java.lang.ref.Cleaner`, which does the same, is Java 9 and Android
 * API 33 only; a `finalize()` override is deprecated since Java 9 (for removal since Java 18),
 * runs on ART's finalizer thread under its watchdog, and resurrects the object; phantom
 * references and their queue are Java 1.2 and every Android level, and are what Cleaner is built
 * on. Where the runtime never collects the recorder (the process ends first), nothing is written.
 */
internal object TraceCloser {
    private val queue = ReferenceQueue<Any>()
    // The phantoms themselves must stay reachable until they are enqueued.
    private val registered: MutableSet<Registration> = Collections.newSetFromMap(ConcurrentHashMap<Registration, Boolean>())

    init {  // at the first recorder's registration
        Thread({ endUnreachable() }, "todaysim trace closer").apply {
            isDaemon = true
            start()
        }
    }

    /** A recorder watched, and its lines to end. */
    class Registration internal constructor(recorder: Any, val lines: TraceLines) : PhantomReference<Any>(recorder, queue) {
        /** The recorder was closed: nothing to do when it goes. */
        fun cancel() {
            registered.remove(this)
            clear()
        }
    }

    /** Ends [lines] if [recorder] becomes unreachable before [Registration.cancel]. */
    fun register(recorder: Any, lines: TraceLines): Registration = Registration(recorder, lines).also { registered.add(it) }

    private fun endUnreachable() {
        while (true) {
            val registration = try {
                queue.remove() as Registration
            } catch (interruption: InterruptedException) {
                continue  // nobody interrupts this thread on purpose; it serves every recorder
            }
            if (registered.remove(registration)) registration.lines.end()
        }
    }
}
