/// What a session is created with (H1, H2, C1, C4). Everything but `uid` has a default.
package struct SessionConfig: Codable, Equatable, Sendable {
    package var uid: String
    package var label: String?
    package var language: String = "en"
    package var platform: Platform = .ios
    package var route: String = Route.feedsV1
    package var loadingGate: LoadingGate = .presentation
    /// `nil` means the route's defaults (H2); an explicit list, even empty, replaces them.
    package var capabilities: [String]?
    package var clock: ClockMode = .virtual
    package var timing = Timing()
    package var analytics = AnalyticsBase()

    package init(uid: String) { self.uid = uid }

    /// Checks what the type system cannot. Errors name the field as the request body does.
    package func validate() throws(InputError) {
        guard !uid.isEmpty else { throw .invalidField("uid", "must be a non-empty string") }
        guard Route.isValid(route) else {
            throw .invalidField("route", "must be /embed/feeds/v1, /embed/feeds/v3, /embed/feeds/v1/edit or /embed/feed/v1/<batchId>")
        }
        for (name, value) in timing.fields where value <= 0 {
            throw .invalidField("timing.\(name)", "must be a positive integer")
        }
    }

    /// H2: what the document advertises at document start.
    package var effectiveCapabilities: [String] {
        capabilities ?? Route.defaultCapabilities(for: route)
    }
}

/// The native analytics base fields (H24); an unset field adds nothing.
package struct AnalyticsBase: Codable, Equatable, Sendable {
    package var did: String?
    package var sid: String?
    package var client_plat: String?
    /// Any JSON value, usually an object (H1).
    package var ctx: JSON?

    package init(did: String? = nil, sid: String? = nil, client_plat: String? = nil, ctx: JSON? = nil) {
        self.did = did
        self.sid = sid
        self.client_plat = client_plat
        self.ctx = ctx
    }

    private enum CodingKeys: String, CodingKey {
        case did, sid, client_plat
        /// Any JSON value (what is written now).
        case context
        /// A plain string: how states from before `ctx` was any value (format 1, and the JSON
        /// states of the first schema) hold it. Read, never written.
        case ctx
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        did = try container.decodeIfPresent(String.self, forKey: .did)
        sid = try container.decodeIfPresent(String.self, forKey: .sid)
        client_plat = try container.decodeIfPresent(String.self, forKey: .client_plat)
        if let context = try container.decodeIfPresent(JSON.self, forKey: .context) {
            ctx = context
        } else {
            ctx = try container.decodeIfPresent(String.self, forKey: .ctx).map(JSON.string)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(did, forKey: .did)
        try container.encodeIfPresent(sid, forKey: .sid)
        try container.encodeIfPresent(client_plat, forKey: .client_plat)
        try container.encodeIfPresent(ctx, forKey: .context)
    }

    /// `uid` first, then the base fields that are set, in the API's order.
    func properties(uid: String) -> [(String, JSON)] {
        var members: [(String, JSON)] = [("uid", .string(uid))]
        for (name, value) in [("did", did), ("sid", sid), ("client_plat", client_plat)] {
            if let value { members.append((name, .string(value))) }
        }
        if let ctx { members.append(("ctx", ctx)) }
        return members
    }
}

/// The embed routes a session may load (H1) and what each advertises by default (H2).
package enum Route {
    package static let feedsV1 = "/embed/feeds/v1"
    package static let feedsV3 = "/embed/feeds/v3"
    package static let feedsV1Edit = "/embed/feeds/v1/edit"
    package static let batchPrefix = "/embed/feed/v1/"

    package static func isValid(_ route: String) -> Bool {
        if [feedsV1, feedsV3, feedsV1Edit].contains(route) { return true }
        guard route.hasPrefix(batchPrefix) else { return false }
        let batchId = route.dropFirst(batchPrefix.count)
        return !batchId.isEmpty && !batchId.contains(where: { "/?#&= ".contains($0) })
    }

    package static func defaultCapabilities(for route: String) -> [String] {
        switch route {
        case feedsV1: return [Capability.revalidateFeedback, Capability.liveWidgetCreation]
        case feedsV3: return [Capability.revalidateFeedback]
        case feedsV1Edit: return [Capability.nativeDialog]
        default: return []
        }
    }

    /// H3: `<route>?language=<language>&uid=<uid>`, plus `requestId` for a native hard reload.
    package static func documentURL(route: String, language: String, uid: String, requestId: String?) -> String {
        var query = [("language", language), ("uid", uid)]
        if let requestId { query.append(("requestId", requestId)) }
        return route + "?" + query.map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&")
    }

    /// Query-component encoding: everything but RFC 3986 unreserved characters.
    static func percentEncoded(_ value: String) -> String {
        var output = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                output += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0x0F)])
            }
        }
        return output
    }
}

/// Why an input is refused as a whole (an HTTP error at the service); nothing changes.
package enum InputError: Error, Equatable, Sendable {
    /// `400 invalid_field`.
    case invalidField(_ field: String, _ detail: String)
    /// `409 session_closed`.
    case sessionClosed
    /// `409 clock_not_virtual`.
    case clockNotVirtual
}

extension SessionConfig: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.string(uid)
        writer.optional(label) { $0.string($1) }
        writer.string(language)
        writer.raw(platform)
        writer.string(route)
        writer.raw(loadingGate)
        writer.optional(capabilities) { writer, list in writer.array(list) { $0.string($1) } }
        writer.raw(clock)
        for (_, value) in timing.fields { writer.int(value) }
        for value in [analytics.did, analytics.sid, analytics.client_plat] {
            writer.optional(value) { $0.string($1) }
        }
        writer.optional(analytics.ctx) { $0.json($1) }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        self.init(uid: try reader.string())
        label = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        language = try reader.string()
        platform = try reader.raw()
        route = try reader.string()
        loadingGate = try reader.raw()
        capabilities = try reader.optional { reader throws(StateDecodingError) in
            try reader.array { reader throws(StateDecodingError) in try reader.string() }
        }
        clock = try reader.raw()
        for (_, keyPath) in Timing.fieldKeyPaths { timing[keyPath: keyPath] = try reader.int64() }
        var base: [String?] = []
        for _ in 0..<3 { base.append(try reader.optional { reader throws(StateDecodingError) in try reader.string() }) }
        let ctx: JSON? = try reader.optional { reader throws(StateDecodingError) in
            reader.format == 0x01 ? .string(try reader.string()) : try reader.json()
        }
        analytics = AnalyticsBase(did: base[0], sid: base[1], client_plat: base[2], ctx: ctx)
    }
}
