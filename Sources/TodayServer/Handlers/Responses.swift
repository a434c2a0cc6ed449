import TodayHost
import TodayStore

/// The JSON bodies the API answers with.
enum Responses {
    /// `201`/`200` with the session view.
    static func view(_ stored: StoredSession, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        .json(stored.session.view, status: status, headers: headers)
    }

    /// API: Input responses.
    static func input(_ applied: Applied, _ stored: StoredSession) -> HTTPResponse {
        .json([
            "outcome": .string(applied.outcome.name), "reason": .string(applied.outcome.reason),
            "resolution": applied.resolution, "entries": .array(applied.entries.map(\.json)),
            "session": stored.session.view,
        ])
    }

    /// `{"entries":[…], "next", "more"}`, the stored entry bytes spliced in as they are.
    static func timeline(_ page: SessionStore.TimelinePage) -> HTTPResponse {
        var bytes = Array(#"{"entries":["#.utf8)
        for (index, entry) in page.entries.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += entry
        }
        bytes += Array(#"],"next":\#(page.next),"more":\#(page.more)}"#.utf8)
        return .jsonBytes(bytes)
    }
}

extension APIError {
    /// How the store's refusals read over HTTP; anything unexpected is a 500.
    init(_ error: StoreError) {
        switch error {
        case let .sessionNotFound(id): self = .sessionNotFound(id)
        case let .sessionExists(id): self = .sessionExists(id)
        case let .input(inputError): self = APIError(inputError)
        case .newerSchema, .database, .corrupt:
            self = .internalError
            logDetail = error.description
        }
    }
}
