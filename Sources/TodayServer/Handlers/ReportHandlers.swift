import TodayHost
import TodayStore

/// The contract monitor's answers: one session's verdict, and violations across sessions.
struct ReportHandlers: Sendable {
    let store: SessionStore

    /// `GET …/report`, or JUnit XML with `?format=junit`.
    func report(_ request: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        let report = try self.report(path)
        let format = try QueryParameters(request: request).oneOf("format", ["json", "junit"]) ?? "json"
        return format == "junit" ? Self.junit(report) : .json(report.json)
    }

    /// `GET …/report/junit`: the same XML as `?format=junit`, under an operation of its own,
    /// because a client generated from the OpenAPI document decodes one operation's `200` one
    /// way (JSON for `…/report`).
    func junit(_: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        Self.junit(try report(path))
    }

    private func report(_ path: PathParameters) throws(APIError) -> SessionReport {
        do throws(StoreError) {
            return try store.report(path["id"])
        } catch {
            throw APIError(error)
        }
    }

    private static func junit(_ report: SessionReport) -> HTTPResponse {
        .junit(report.junit)
    }

    /// `GET /v1/violations?uid=&code=&after=&limit=`.
    func violations(_ request: HTTPRequest, _: PathParameters) throws(APIError) -> HTTPResponse {
        let query = QueryParameters(request: request)
        let uid = try query.identifier("uid")
        let code = try query.oneOf("code", SessionReport.rules.map(\.code))
        let limit = try query.limit()
        let after = try query.listCursor()
        let page: SessionStore.ViolationPage
        do throws(StoreError) {
            page = try store.violations(uid: uid, label: request.scope.label, code: code, limit: limit, after: after)
        } catch {
            throw APIError(error)
        }
        var bytes = Array(#"{"violations":["#.utf8)
        for (index, violation) in page.violations.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += Array(#"{"sessionId":"#.utf8)
            JSON.string(violation.sessionId).write(to: &bytes)
            bytes += Array(#","entry":"#.utf8)
            bytes += violation.entry
            bytes.append(UInt8(ascii: "}"))
        }
        bytes += Array(#"],"next":"#.utf8)
        JSON.string(page.next).write(to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return .jsonBytes(bytes)
    }
}
