/// How servers on one PostgreSQL database tell each other what they wrote (issue 15, item 4):
/// each write transaction sends, with `pg_notify` inside it, the ids of the sessions it changed
/// on `changes`, and the id of each `wall` session left with a pending timer on `wallTimers`.
/// PostgreSQL delivers a notification when its transaction commits and never for a rollback, so
/// a listener hears exactly of committed writes (`PostgresListener`).
enum PostgresChannels {
    static let changes = "todaysim_changes"
    static let wallTimers = "todaysim_wall"

    /// PostgreSQL refuses a payload of 8000 bytes or more; this leaves room to spare.
    static let payloadLimit = 7000

    /// `ids` as payloads of at most `limit` bytes each: newline-separated, split between ids.
    /// (A session id is at most a few hundred bytes, far below the limit.)
    static func payloads(_ ids: [String], limit: Int = payloadLimit) -> [String] {
        var payloads: [String] = []
        var current = ""
        for id in ids {
            let added = (current.isEmpty ? 0 : 1) + id.utf8.count
            if !current.isEmpty, current.utf8.count + added > limit {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? id : "\n" + id
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }

    /// The session ids a `changes` payload names.
    static func ids(in payload: String) -> [String] {
        payload.split(separator: "\n").map(String.init)
    }
}
