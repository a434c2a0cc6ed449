import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TodayHost

/// Client subcommands for scripts, where they beat raw curl:
///
///   todaysim timeline ID [--follow] [--after SEQ] [--server URL]
///   todaysim report ID [--junit] [--server URL]
///
/// The server is `--server`, else `$TODAYSIM_URL`, else http://127.0.0.1:8080; `$TODAYSIM_TOKEN`
/// goes with every request. Exit codes: 0 done (and, for `report`, the Web side conforms), 1 the
/// server said no (or the report found violations), 2 usage, 3 the server could not be reached.
enum ClientCommands {
    struct Options {
        var sessionId = ""
        var server = ProcessInfo.processInfo.environment["TODAYSIM_URL"] ?? "http://127.0.0.1:8080"
        var follow = false
        var junit = false
        var after = 0
    }

    static let token = ProcessInfo.processInfo.environment["TODAYSIM_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        var serverSource = "TODAYSIM_URL"
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h":
                print(Usage.client)
                exit(0)
            case "--follow": options.follow = true
            case "--junit": options.junit = true
            case "--server":
                guard let value = rest.popFirst() else { CommandLineInterface.fail("--server needs a URL", usage: false) }
                options.server = value
                serverSource = "--server"
            case "--after":
                guard let value = rest.popFirst().flatMap(Int.init), value >= 0 else {
                    CommandLineInterface.fail("--after needs a seq (a number >= 0)", usage: false)
                }
                options.after = value
            default:
                guard options.sessionId.isEmpty, !argument.hasPrefix("-") else {
                    CommandLineInterface.fail("unexpected argument \(argument)\n\(Usage.client)", usage: false)
                }
                options.sessionId = argument
            }
        }
        guard !options.sessionId.isEmpty else { CommandLineInterface.fail("a session id is required\n\(Usage.client)", usage: false) }
        guard isServerURL(options.server) else {
            CommandLineInterface.fail("\(serverSource) \(options.server) is not a valid server URL: want http:// or https:// and a host, e.g. http://127.0.0.1:8080", usage: false)
        }
        options.server = String(options.server.reversed().drop(while: { $0 == "/" }).reversed())
        // An id is one path segment whatever it holds (one the server never made is its 404).
        options.sessionId = options.sessionId.addingPercentEncoding(withAllowedCharacters: pathSegmentCharacters) ?? options.sessionId
        return options
    }

    private static let pathSegmentCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// A URL a request can go to: http or https, a host, a TCP port if any, nothing after the path.
    static func isServerURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty else { return false }
        // Foundation takes any digits as a port; connecting to 99999 would fail as "cannot reach".
        if let port = url.port, !(1...65535).contains(port) { return false }
        return url.query == nil && url.fragment == nil
    }

    /// One line per entry, as it arrives with `--follow` (long polls of 25 s). A follow ends
    /// when the session closes: at once for one closed already (its timeline is printed), and as
    /// soon as the teardown's entries arrive for one closed meanwhile (a teardown, or idle past
    /// its `ttlMs`; every later entry of that commit comes in the same answer or the pages
    /// before `more` turns false). A session purged meanwhile ends it with the server's `404`.
    static func timeline(_ arguments: [String]) -> Int32 {
        let options = parse(arguments)
        var after = options.after
        var follow = options.follow
        if follow {
            let (status, view) = get("\(options.server)/v1/sessions/\(options.sessionId)")
            guard status == 200 else { return refused(status, view, server: options.server) }
            if view["status"] == "closed" { follow = false }
        }
        var closed = false
        while true {
            let wait = follow ? "&waitMs=25000" : ""
            let (status, body) = get("\(options.server)/v1/sessions/\(options.sessionId)/timeline?after=\(after)&limit=1000\(wait)")
            guard status == 200, case let .array(entries)? = body["entries"] else { return refused(status, body, server: options.server) }
            // Written straight to the descriptor: a follower sees each line as it comes.
            for entry in entries {
                FileHandle.standardOutput.write(Data((line(for: entry) + "\n").utf8))
                if isTeardown(entry) { closed = true }
            }
            after = Int(body["next"]?.int64Value ?? Int64(after))
            if body["more"] == true { continue }
            if !follow || closed { return 0 }
        }
    }

    /// The input that closes a session (`via: teardown` in entries written before teardown
    /// became a lifecycle input).
    static func isTeardown(_ entry: JSON) -> Bool {
        entry["kind"] == "input" && entry["type"] == "teardown"
    }

    /// The verdict; exit 1 when Web broke the contract.
    static func report(_ arguments: [String]) -> Int32 {
        let options = parse(arguments)
        let url = "\(options.server)/v1/sessions/\(options.sessionId)/report" + (options.junit ? "?format=junit" : "")
        let (status, body, raw) = fetch(url)
        guard status == 200 else { return refused(status, body, server: options.server) }
        if options.junit {
            print(String(decoding: raw, as: UTF8.self), terminator: "")
            return (String(decoding: raw, as: UTF8.self).contains("<failure")) ? 1 : 0
        }
        let violations: [JSON]
        if case let .array(items)? = body["violations"] { violations = items } else { violations = [] }
        print("session \(options.sessionId): \(violations.isEmpty ? "conforms" : "\(violations.count) violation(s)")")
        for violation in violations {
            print("  seq \(violation["seq"]?.int64Value ?? 0) at \(violation["atMs"]?.int64Value ?? 0) ms  \(violation["data"]?["detail"]?.stringValue ?? "")")
        }
        if case let .array(requests)? = body["requests"] {
            for request in requests {
                let answered = request["answeredInMs"]?.int64Value.map { "answered in \($0) ms" } ?? "no answer"
                let why = request["reason"]?.stringValue ?? request["cause"]?.stringValue ?? "silent"
                print("  request \(request["requestId"]?.stringValue ?? "?") (\(why)): \(request["outcome"]?.stringValue ?? "pending"), \(answered)")
            }
        }
        return violations.isEmpty ? 0 : 1
    }

    /// `seq  atMs  kind  type  requestId  detail`.
    static func line(for entry: JSON) -> String {
        let seq = entry["seq"]?.int64Value ?? 0
        let atMs = entry["atMs"]?.int64Value ?? 0
        let kind = entry["kind"]?.stringValue ?? "?"
        let type = entry["type"]?.stringValue ?? ""
        let requestId = entry["requestId"]?.stringValue.map { " [\($0)]" } ?? ""
        let data = entry["data"] ?? .null
        let detail: String
        switch kind {
        case "header", "overlay": detail = "\(data["from"]?.stringValue ?? "") → \(data["to"]?.stringValue ?? "")"
        case "input", "bridge": detail = [data["outcome"]?.stringValue, data["reason"]?.stringValue].compactMap { $0 }.joined(separator: " ")
        case "violation": detail = data["detail"]?.stringValue ?? ""
        case "verdict": detail = "\(data["divergenceCount"]?.int64Value ?? 0) divergences (host trace)"
        case "navigation": detail = data["url"]?.stringValue ?? ""
        case "pull": detail = [data["state"]?.stringValue, data["outcome"]?.stringValue].compactMap { $0 }.joined(separator: " ")
        default: detail = ""
        }
        let padded = "\(seq)".padding(toLength: 6, withPad: " ", startingAt: 0) + "\(atMs)ms".padding(toLength: 10, withPad: " ", startingAt: 0)
            + kind.padding(toLength: 11, withPad: " ", startingAt: 0)
        return padded + type + requestId + (detail.isEmpty ? "" : "  " + detail)
    }

    static func refused(_ status: Int, _ body: JSON, server: String) -> Int32 {
        if status == 0 {
            FileHandle.standardError.write(Data("todaysim: cannot reach the server at \(server) (is it running? Scripts/run or todaysim serve starts one)\n".utf8))
            return 3
        }
        FileHandle.standardError.write(Data("todaysim: \(status) \(body["code"]?.stringValue ?? ""): \(body["detail"]?.stringValue ?? "")\n".utf8))
        return 1
    }

    static func get(_ url: String) -> (Int, JSON) {
        let (status, body, _) = fetch(url)
        return (status, body)
    }

    /// A blocking GET (status 0 when the server could not be reached).
    static func fetch(_ url: String) -> (Int, JSON, [UInt8]) {
        guard let target = URL(string: url) else { return (0, .null, []) }
        var request = URLRequest(url: target)
        request.timeoutInterval = 60
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let done = DispatchSemaphore(value: 0)
        let result = FetchResult()
        URLSession.shared.dataTask(with: request) { data, response, _ in
            result.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            result.bytes = data.map(Array.init) ?? []
            done.signal()
        }.resume()
        done.wait()
        return (result.status, (try? JSON.parse(bytes: result.bytes)) ?? .null, result.bytes)
    }
}

private final class FetchResult: @unchecked Sendable {
    var status = 0
    var bytes: [UInt8] = []
}
