/// A session as its `SessionSnapshot`, its one stored form (made from one by `init(_:)`).
extension HostSession {
    package var snapshot: SessionSnapshot {
        SessionSnapshot(id: id, config: config, uid: uid, isClosed: isClosed, version: version, nowMs: nowMs, lastSeq: lastSeq,
                        step: step, requestCounter: requestCounter, violationCount: violationCount,
                        injectedCapabilities: injectedCapabilities, app: app.snapshot, document: document.snapshot,
                        header: header.snapshot, pull: pull.snapshot, manualWindow: manualWindow.snapshot,
                        refresh: refresh.snapshot, recovery: recovery.snapshot, chat: chat.snapshot,
                        liveWidgetSheet: liveWidgetSheet.snapshot, dialog: dialog.snapshot, dialogCounter: dialog.counter)
    }
}

/// The store's binary form: the snapshot's.
extension HostSession: StateCodable {
    package func encode(to writer: inout StateWriter) { snapshot.encode(to: &writer) }

    package init(from reader: inout StateReader) throws(StateDecodingError) { self.init(try SessionSnapshot(from: &reader)) }
}

/// The first schema's JSON form (a row it wrote still loads, `StoredSession.decode`): the
/// snapshot's.
extension HostSession: Codable {
    package init(from decoder: any Decoder) throws { self.init(try SessionSnapshot(from: decoder)) }

    package func encode(to encoder: any Encoder) throws { try snapshot.encode(to: encoder) }
}
