import CMicroHTTPD
import Glibc

/// Closes the listening socket when a stop begins (issue 15, item 5), so a load balancer's new
/// connections are refused (`ECONNREFUSED`: nginx tries the next replica, safe even for a POST
/// since nothing was sent) while the connections already open drain.
///
/// `MHD_quiesce_daemon` would do it but races with libmicrohttpd 0.9.75's epoll workers (see
/// `HTTPServer.beginStopping`). Instead the read end of a pipe is `dup3`'d onto the listening
/// socket's descriptor number: the kernel closes the socket (its last reference), which leaves
/// every epoll set and stops listening, and libmicrohttpd still believes its listen fd is in
/// its epoll sets. Why that is safe, from daemon.c of 0.9.75 (with `MHD_USE_EPOLL`, a thread
/// pool and `MHD_USE_ITC`; `listen_fd` is used by nothing else in that mode):
/// - `MHD_epoll` adds `listen_fd` when `!listen_socket_in_epoll` and below the limits: adding
///   the pipe succeeds, and a pipe whose write end stays open (here, until after
///   `MHD_stop_daemon`) never becomes readable, so it never wakes a worker.
/// - an epoll event already taken for the socket makes a worker `accept4` the pipe: `ENOTSOCK`,
///   which `MHD_accept_connection` logs and returns (it is not a "low resources" error, so it
///   never sets `at_limit`); an `accept4` already inside the kernel may still return one
///   connection, served like any other while stopping (`503 shutting_down`, closed).
/// - the one danger: `MHD_epoll` removes `listen_fd` from its set when `listen_socket_in_epoll`
///   and the worker is at its connection limit or `at_limit`, and panics (aborts the process)
///   if that removal fails — and it fails with `ENOENT` once the socket is gone. That state
///   lasts from the `accept` that reached the limit to the worker's next loop. So the socket is
///   replaced only when no worker can be there: first a filter that drops every packet stops
///   the accept queue from growing; then if the connections libmicrohttpd holds, plus every
///   connection still queued, plus one accepted-but-not-yet-counted per worker, stay below one
///   worker's limit, no worker is at its limit now or later (after the swap nothing more can be
///   accepted). `at_limit` comes only from `accept` failing with `EMFILE`/`ENFILE`/`ENOBUFS`/
///   `ENOMEM` — below the limit `EMFILE` cannot happen, as the limit is sized to the open-file
///   limit (main.swift); the system-wide three would have to strike in the same microseconds.
///   Otherwise (a stop under a connection flood) the socket is left as it was: it stays open
///   until `MHD_stop_daemon`, and what connects meanwhile is refused `503 shutting_down`.
/// - `MHD_stop_daemon` calls `shutdown` on `listen_fd` (`ENOTSOCK` on the pipe, ignored) and
///   closes it: that closes the pipe's read end; `finish()` then closes the write end.
final class ListenerClosing {
    enum Outcome {
        case closed
        case keptOpen(reason: String)
    }

    private var writeEnd: Int32 = -1

    /// Replaces the listening `socket` of the running `daemon` (`workers` threads, each allowed
    /// `workerLimit` connections) with a pipe that never becomes readable, when that is safe.
    func close(listening socket: Int32, of daemon: OpaquePointer, workers: Int, workerLimit: Int) -> Outcome {
        let filtered = todaysim_listener_drop_all(socket)
        guard filtered == 0 else { return .keptOpen(reason: "cannot filter the listening socket: \(String(cString: strerror(filtered)))") }
        // The queue only shrinks from here: read it before the connections, so a connection
        // accepted between the two reads is counted twice rather than not at all.
        let queued = Int(todaysim_listener_queued(socket))
        let open = todaysim_daemon_connections(daemon)
        guard queued >= 0, open >= 0 else { return keep(socket, "its accept queue or connections cannot be read") }
        let reachable = Int(open) + queued + workers
        guard reachable < workerLimit else {
            return keep(socket, "\(open) connections open and \(queued) queued reach a worker's limit of \(workerLimit)")
        }
        let replaced = todaysim_replace_with_pipe(socket, &writeEnd)
        guard replaced == 0 else { return keep(socket, "cannot replace it: \(String(cString: strerror(replaced)))") }
        return .closed
    }

    /// After `MHD_stop_daemon`, which closed the descriptor that held the pipe's read end.
    func finish() {
        guard writeEnd >= 0 else { return }
        Glibc.close(writeEnd)
        writeEnd = -1
    }

    deinit { finish() }

    private func keep(_ socket: Int32, _ reason: String) -> Outcome {
        todaysim_listener_take_all(socket)
        return .keptOpen(reason: reason)
    }
}
