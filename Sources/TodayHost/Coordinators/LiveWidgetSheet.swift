/// The native Live Widget creation sheet (H26).
package struct LiveWidgetSheet: Equatable, Sendable {
    /// Its name is what the session view shows (`liveWidgetSheet`) and what is stored.
    package enum State: String, Codable, Sendable {
        /// Next: `presented` on `liveWidgetCreation.present` with the capability.
        case hidden
        /// Next: `hidden` on created, cancelled, account switch or teardown.
        case presented
    }

    package private(set) var state: State = .hidden

    package init() {}

    /// H26: `liveWidgetCreation.present` answers `{presented}`: whether presentation started.
    /// Without the capability (`advertised` false) it is ignored and answers `false`.
    mutating func presentRequested(advertised: Bool) -> [Effect] {
        guard advertised else { return [.ignored(.capabilityNotAdvertised), .answer(["presented": false])] }
        switch state {
        case .hidden:
            state = .presented
            return [.answer(["presented": true])]
        case .presented:
            return [.answer(["presented": false])]
        }
    }

    /// H26: the user cancelled creation; ignored (`noSheet`) when no sheet was up.
    mutating func creationCancelled() -> [Effect] {
        switch state {
        case .hidden: return [.ignored(.noSheet)]
        case .presented:
            state = .hidden
            return []
        }
    }

    /// H19, H20, H26: creation succeeded, the account switched or the session ended: a sheet
    /// still up goes away.
    mutating func dismissed() -> [Effect] {
        state = .hidden
        return []
    }
}

extension LiveWidgetSheet {
    init(_ snapshot: SessionSnapshot.Sheet) { state = snapshot.state }

    var snapshot: SessionSnapshot.Sheet { SessionSnapshot.Sheet(state: state) }
}
