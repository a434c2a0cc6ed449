/// How servers on one PostgreSQL database tell each other what they wrote (issue 15, item 4):
/// each write transaction sends, with `pg_notify` inside it, the ids of the sessions it changed
/// on `changes`, and the id of each `wall` session left with a pending timer on `wallTimers`.
/// PostgreSQL delivers a notification when its transaction commits and never for a rollback, so
/// a listener hears exactly of committed writes (`PostgresListener`). Every payload starts with
/// its sender's token (a line of its own, random per store) so a server knows its own: not by
/// the sending backend's pid, which a restarted PostgreSQL may give to another server's new
/// connection while this server's old one still looks alive.
enum PostgresChannels {
    static let changes = "todaysim_changes"
    static let wallTimers = "todaysim_wall"

    /// PostgreSQL refuses a payload of 8000 bytes or more; this leaves room to spare.
    static let payloadLimit = 7000

    /// `ids` from `sender` as payloads of at most `limit` bytes each: the sender's line, then
    /// the ids a line each, split between ids. (A session id is at most a few hundred bytes, far
    /// below the limit.)
    static func payloads(_ ids: [String], from sender: String, limit: Int = payloadLimit) -> [String] {
        var payloads: [String] = []
        var current = ""
        for id in ids {
            if !current.isEmpty, sender.utf8.count + 1 + current.utf8.count + 1 + id.utf8.count > limit {
                payloads.append(sender + "\n" + current)
                current = ""
            }
            current += current.isEmpty ? id : "\n" + id
        }
        if !current.isEmpty { payloads.append(sender + "\n" + current) }
        return payloads
    }

    /// Who sent a payload, and the session ids it names.
    static func parse(_ payload: String) -> (sender: String, ids: [String]) {
        let lines = payload.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return (lines.first ?? "", lines.dropFirst().filter { !$0.isEmpty })
    }
}
