import Foundation
import Testing
import TodayTestSupport

/// `todaysim serve --port 0 …` run as a process of its own (for what only the binary does: its
/// signal handling, its stop), killed when released if still running.
final class ServedBinary {
    let process: ChildProcess
    let errors: ErrorOutput
    let port: Int

    /// Starts the server and waits until it says where it listens.
    init(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        process = try ChildProcess(CLITests.binary.path, ["serve", "--port", "0"] + arguments, output: .null, error: .pipe)
        errors = ErrorOutput(process.standardError!)
        let errors = errors
        #expect(await eventually { errors.port != nil }, "the server never said where it listens: \(errors.all)",
                sourceLocation: sourceLocation)
        port = try #require(errors.port, sourceLocation: sourceLocation)
    }

    deinit {
        if process.isRunning {
            process.signal(SIGKILL)
            _ = process.waitForExit()
        }
    }

    /// One request on a connection of its own, its answer (`nil`: none within `timeout`).
    func answer(_ method: String, _ path: String, body: String? = nil, headers: [String] = [],
                timeout: TimeInterval = 60) async throws -> RawConnection.Answer? {
        let connection = try RawConnection(port: port)
        var request = "\(method) \(path) HTTP/1.1\r\nHost: x\r\n" + headers.map { $0 + "\r\n" }.joined()
        if let body { request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        connection.send(request + "\r\n" + (body ?? ""))
        return await connection.readAnswer(timeout: timeout)
    }

    /// The server's standard error, read on its own thread (never on the cooperative pool) to
    /// its end, so the child never blocks on a full pipe.
    final class ErrorOutput: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""

        init(_ handle: FileHandle) {
            Thread { [self] in
                while case let chunk = handle.availableData, !chunk.isEmpty {
                    lock.lock()
                    text += String(decoding: chunk, as: UTF8.self)
                    lock.unlock()
                }
            }.start()
        }

        var all: String {
            lock.lock()
            defer { lock.unlock() }
            return text
        }

        /// The port of the "listening on http://127.0.0.1:PORT" line, once it is there.
        var port: Int? {
            let marker = "listening on http://127.0.0.1:"
            guard let found = all.range(of: marker) else { return nil }
            return Int(all[found.upperBound...].prefix { $0.isNumber })
        }
    }
}
