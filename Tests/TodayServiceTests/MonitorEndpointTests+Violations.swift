import Foundation
import Testing
import TodayHost

extension MonitorEndpointTests {
    /// `GET /v1/violations`: every session's violations, newest last, by `uid` and `code`, paged.
    @Suite struct Violations {
        @Test func violationsAcrossSessionsFilterAndPage() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            try await client.create(["uid": "u1", "id": "va"])
            try await client.create(["uid": "u2", "id": "vb"])
            try await client.create(["uid": "u1", "id": "vc"])
            try await client.input("va", "gestures", ["type": "pull", "requestId": "p-a"])
            try await client.input("va", "clock", ["advanceMs": 5000])  // M7 p-a
            try await client.input("vb", "lifecycle", ["type": "tabActivated", "requestId": "t-b"])
            try await client.input("vb", "web-events", [  // M3 t-b
                "type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "t-b", "presentation": "header",
            ])
            try await client.input("vb", "clock", ["advanceMs": 5000])  // M7 t-b
            let result: JSON = ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "w-a", "mode": "soft", "status": "succeeded"]
            try await client.input("va", "web-events", result)
            try await client.input("va", "web-events", result)  // M1 w-a

            let all = try await client.get("/v1/violations")
            #expect(all.status == 200)
            #expect(all["next"] == .null)
            #expect(summaries(all) == ["va M7 p-a", "vb M3 t-b", "vb M7 t-b", "va M1 w-a"], "in the order recorded, newest last")
            var timelines: [String: [JSON]] = [:]
            for id in ["va", "vb"] { timelines[id] = try await client.timeline(id) }
            for item in items(all["violations"]) {
                guard case let .object(fields) = item else { Issue.record("not an object: \(item)"); continue }
                #expect(fields.map(\.0) == ["sessionId", "entry"])
                let entry = item["entry"] ?? .null
                #expect(entry["kind"] == "violation")
                #expect(entry["type"] == entry["data"]?["code"])
                let sessionId = item["sessionId"]?.stringValue ?? ""
                #expect(timelines[sessionId]?.contains(entry) == true, "the entry is the session's timeline entry: \(entry)")
            }

            #expect(summaries(try await client.get("/v1/violations?uid=u1")) == ["va M7 p-a", "va M1 w-a"])
            #expect(summaries(try await client.get("/v1/violations?uid=u2")) == ["vb M3 t-b", "vb M7 t-b"])
            #expect(summaries(try await client.get("/v1/violations?code=M7")) == ["va M7 p-a", "vb M7 t-b"])
            #expect(summaries(try await client.get("/v1/violations?uid=u2&code=M7")) == ["vb M7 t-b"])
            let none = try await client.get("/v1/violations?code=M5")
            #expect(none.json == ["violations": [], "next": nil])
            #expect(summaries(try await client.get("/v1/violations?uid=nobody")) == [])

            // limit=1: one page per violation, each cursor leading on, no duplicates, null at the end.
            var collected: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await client.get("/v1/violations?limit=1" + (cursor.map { "&after=\($0)" } ?? ""))
                #expect(page.status == 200)
                collected += summaries(page)
                cursor = page["next"]?.stringValue
                #expect(page["next"] != nil)
                pages += 1
            } while cursor != nil && pages < 10
            #expect(collected == summaries(all))
            #expect(Set(collected).count == collected.count)
            #expect(pages == 4)

            let firstM7 = try await client.get("/v1/violations?code=M7&limit=1")
            #expect(summaries(firstM7) == ["va M7 p-a"])
            let afterM7 = try #require(firstM7["next"]?.stringValue)
            let secondM7 = try await client.get("/v1/violations?code=M7&limit=1&after=\(afterM7)")
            #expect(summaries(secondM7) == ["vb M7 t-b"])
            #expect(secondM7["next"] == .null)
        }

        @Test func violationsQueryErrors() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            expectProblem(try await client.get("/v1/violations?code=M10"), 400, "invalid_field", field: "code")
            expectProblem(try await client.get("/v1/violations?code=m1"), 400, "invalid_field", field: "code")
            expectProblem(try await client.get("/v1/violations?limit=0"), 400, "invalid_field", field: "limit")
            expectProblem(try await client.get("/v1/violations?limit=1001"), 400, "invalid_field", field: "limit")
            expectProblem(try await client.get("/v1/violations?limit=x"), 400, "invalid_field", field: "limit")
            expectProblem(try await client.get("/v1/violations?after=abc"), 400, "invalid_field", field: "after")
            expectProblem(try await client.get("/v1/violations?uid="), 400, "invalid_field", field: "uid")
            #expect(try await client.get("/v1/violations").json == ["violations": [], "next": nil])
        }

        /// `"<sessionId> <code> <requestId>"` of each listed violation.
        private func summaries(_ reply: Client.Reply) -> [String] {
            #expect(reply.status == 200, "\(reply.text)")
            return items(reply["violations"]).map { item in
                let entry = item["entry"] ?? .null
                return "\(item["sessionId"]?.stringValue ?? "?") \(entry["data"]?["code"]?.stringValue ?? "?") \(entry["requestId"]?.stringValue ?? "-")"
            }
        }
    }
}
