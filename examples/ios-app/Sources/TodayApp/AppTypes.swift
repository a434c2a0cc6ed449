/// The app's own types, named as an app names them: the same names as types inside todaysim's
/// engine. A test target that imports this module and todaysim's three products uses each of
/// them unqualified (Tests/TodayAppTests/NamesTests.swift).

/// The Today Page's pull-to-refresh spinner.
public struct PullSpinner: Equatable, Sendable {
    public var isRefreshing = false
    public init() {}
}

/// The app's JSON value.
public enum JSON: Equatable, Sendable {
    case null, bool(Bool), number(Double), string(String)
}

/// Something the user typed.
public struct Input: Equatable, Sendable {
    public var text: String
    public init(text: String) { self.text = text }
}

/// A feature-flag rule.
public enum Rule: String, Sendable {
    case enabled, disabled
}

/// A signed-in session.
public final class Session: Sendable {
    public let uid: String
    public init(uid: String) { self.uid = uid }
}
