import CMicroHTTPD
import Foundation

/// One Server-Sent Events response: bytes pushed from any thread, read by libmicrohttpd when it
/// can send. With nothing to send the connection is parked (suspended) until the next push, so
/// an idle stream costs no thread and no polling.
package final class EventStream: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var buffer: [UInt8] = []
    private var closed = false
    private var suspended = false
    private var connection: OpaquePointer?
    private var gone = false
    private var behind = false
    /// Called once when the client is gone or the stream ended.
    var onGone: (@Sendable () -> Void)?
    /// Called when what was queued has been sent after `markBehind()`: the sender may go on.
    var onDrained: (@Sendable () -> Void)?

    /// Bytes queued past which a sender stops and waits for `onDrained` (issue 12, item 11):
    /// a slow client, or one gone while its connection is parked (libmicrohttpd does not see a
    /// parked connection close), must not have whole timelines piled up in memory for it.
    static let backlogLimit = 1 << 20

    package init() {}

    /// Queues bytes for the client.
    package func push(_ bytes: [UInt8]) {
        lock.lock()
        buffer += bytes
        let resume = takeSuspension()
        lock.unlock()
        if let resume { MHD_resume_connection(resume) }
    }

    /// Ends the stream once what is queued has been sent.
    package func close() {
        lock.lock()
        closed = true
        let resume = takeSuspension()
        lock.unlock()
        if let resume { MHD_resume_connection(resume) }
    }

    /// Bytes queued and not yet sent.
    var backlog: Int {
        lock.lock()
        defer { lock.unlock() }
        return buffer.count
    }

    /// Tests: what is queued and not yet sent, as text.
    var queuedText: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Whether nothing more will be sent (the stream ended or its client is gone).
    var isEnded: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed || gone
    }

    /// The sender stopped at `backlogLimit`: `onDrained` runs once the backlog is sent.
    func markBehind() {
        lock.lock()
        guard buffer.isEmpty else {
            behind = true
            lock.unlock()
            return
        }
        let drained = onDrained  // sent already, before it could be marked
        lock.unlock()
        drained?()
    }

    package var isGone: Bool {
        lock.lock()
        defer { lock.unlock() }
        return gone
    }

    /// The suspended connection to resume, clearing the mark (under `lock`).
    private func takeSuspension() -> OpaquePointer? {
        guard suspended, let connection else { return nil }
        suspended = false
        return connection
    }

    // MARK: libmicrohttpd's side (its own thread)

    fileprivate func attach(_ connection: OpaquePointer) {
        lock.lock()
        self.connection = connection
        lock.unlock()
    }

    /// Copies up to `max` bytes; `0` after parking the connection; `-1` at the end.
    fileprivate func read(into destination: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        lock.lock()
        if !buffer.isEmpty {
            let count = min(max, buffer.count)
            buffer.withUnsafeBytes { source in
                UnsafeMutableRawPointer(destination).copyMemory(from: source.baseAddress!, byteCount: count)
            }
            buffer.removeFirst(count)
            let drained = buffer.isEmpty && behind ? onDrained : nil
            if drained != nil { behind = false }
            lock.unlock()
            drained?()
            return count
        }
        if closed {
            lock.unlock()
            return -1
        }
        guard let connection = self.connection else {
            lock.unlock()
            return 0
        }
        lock.unlock()
        MHD_suspend_connection(connection)
        // Only now is the connection parked. A push that came in meanwhile found it not yet
        // suspended and left the resume to us: look again before marking it.
        lock.lock()
        if !buffer.isEmpty || closed {
            lock.unlock()
            MHD_resume_connection(connection)
            return 0
        }
        suspended = true
        lock.unlock()
        return 0
    }

    fileprivate func released() {
        lock.lock()
        gone = true
        let callback = onGone
        onGone = nil
        onDrained = nil
        lock.unlock()
        callback?()
    }

    /// The libmicrohttpd response that reads this stream; it holds the stream until freed.
    func makeResponse() -> OpaquePointer? {
        let context = Unmanaged.passRetained(self).toOpaque()
        return todaysim_response_streaming(streamReader, context, streamFreed)
    }

    func attachConnection(_ connection: OpaquePointer) { attach(connection) }

    /// Never sent (the answer to a HEAD): gone at once, as if its client had left.
    func abandon() { released() }
}

private let streamReader: MHD_ContentReaderCallback = { context, _, buffer, max in
    guard let context, let buffer else { return -2 }
    return Unmanaged<EventStream>.fromOpaque(context).takeUnretainedValue().read(into: buffer, max: max)
}

private let streamFreed: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let stream = Unmanaged<EventStream>.fromOpaque(context).takeRetainedValue()
    stream.released()
}
