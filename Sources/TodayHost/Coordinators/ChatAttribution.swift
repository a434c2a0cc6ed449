/// Chat attribution (H25): a trusted card link prefills the chat draft and remembers which
/// widget it came from, until the user sends.
package struct ChatAttribution: Equatable, Sendable {
    package enum State: Equatable, Sendable {
        /// Next: `drafting` on a trusted card link or an edit.
        case empty
        /// Next: `drafting` on another link or an edit; `empty` when a non-empty draft is sent
        /// or on an account switch.
        case drafting(Draft)
    }

    package struct Draft: Equatable, Sendable {
        var text: String
        /// `msg_trigger_ele_id` of the last card link, carried into the next `chat_query_submit`.
        var triggerId: String?
        /// The link's `today_*` parameters, in link order.
        var attribution: [Parameter]
    }

    package struct Parameter: Codable, Equatable, Sendable {
        package var name: String
        package var value: String
    }

    private var state: State = .empty

    package init() {}

    package var draft: String? {
        switch state {
        case .empty: return nil
        case let .drafting(draft): return draft.text
        }
    }

    package var pendingTriggerId: String? {
        switch state {
        case .empty: return nil
        case let .drafting(draft): return draft.triggerId
        }
    }

    /// A trusted `today://chat…` link: a later card link overwrites both draft and id.
    mutating func linkOpened(_ link: DeepLink) -> [Effect] {
        var seen: Set<String> = []
        let attribution = link.query.filter { $0.name.hasPrefix("today_") && seen.insert($0.name).inserted }
            .map { Parameter(name: $0.name, value: $0.value) }
        state = .drafting(Draft(text: link.firstValue(of: "text") ?? "", triggerId: link.firstValue(of: "msg_trigger_ele_id"),
                                attribution: attribution))
        return []
    }

    /// The user edits the draft: the id stays.
    mutating func edited(text: String) -> [Effect] {
        switch state {
        case .empty:
            state = .drafting(Draft(text: text, triggerId: nil, attribution: []))
        case var .drafting(draft):
            draft.text = text
            state = .drafting(draft)
        }
        return []
    }

    /// The user sends: ignored (`noDraft`) without a draft, else `chat_query_submit` with the
    /// draft, its id and attribution, then `baseProperties` (H24).
    mutating func sent(baseProperties: [(String, JSON)]) -> [Effect] {
        switch state {
        case let .drafting(draft) where !draft.text.isEmpty:
            var properties: [(String, JSON)] = [("text", .string(draft.text))]
            if let triggerId = draft.triggerId { properties.append(("msg_trigger_ele_id", .string(triggerId))) }
            properties += draft.attribution.map { ($0.name, JSON.string($0.value)) }
            state = .empty
            return [.analytics(event: "chat_query_submit", properties: .object(properties + baseProperties))]
        case .empty, .drafting:
            return [.ignored(.noDraft)]
        }
    }

    /// H19: an account switch forgets the draft and the id.
    mutating func accountSwitched() -> [Effect] {
        state = .empty
        return []
    }
}

extension ChatAttribution {
    init(_ snapshot: SessionSnapshot.Chat) {
        guard let text = snapshot.draft else { return }
        state = .drafting(Draft(text: text, triggerId: snapshot.pendingTriggerId, attribution: snapshot.attribution))
    }

    var snapshot: SessionSnapshot.Chat {
        switch state {
        case .empty: return SessionSnapshot.Chat(draft: nil, pendingTriggerId: nil, attribution: [])
        case let .drafting(draft):
            return SessionSnapshot.Chat(draft: draft.text, pendingTriggerId: draft.triggerId, attribution: draft.attribution)
        }
    }
}
