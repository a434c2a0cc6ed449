import Foundation
import Testing
import TodayHost
@testable import TodayStore
import TodayTestSupport
@testable import TodayServer

/// An account stream (`/v1/events?uid=`) starts from the sessions its handler listed. A session
/// of the account created between that listing and the subscription was announced while no
/// stream followed the account: the stream must find it anyway (on one server as across
/// replicas, where another server's create can land in that window at any moment).
@Suite struct AccountStreamStartTests {
    @Test func aSessionCreatedBetweenTheListingAndTheSubscriptionIsFollowed() async throws {
        let store = try SessionStore(path: ":memory:")
        let streams = EventStreams(store: store, heartbeat: 600)
        defer {
            streams.stop()
            store.close()
        }
        // The handler listed u1's sessions (none), then s9 was created and announced: no stream
        // followed u1 yet.
        _ = try store.create(id: "s9", config: SessionConfig(uid: "u1"))
        streams.sessionsChanged(["s9"])
        let stream = streams.follow(uid: "u1", label: nil, currentSessions: [])
        #expect(await eventually { stream.queuedText.contains("id: s9/1\n") }, "s9's entries reach the stream: \(stream.queuedText)")
        // From here on commits reach the streams as in the service. Another account's session
        // is not sent.
        store.observeChanges { ids in streams.sessionsChanged(ids) }
        _ = try store.create(id: "other", config: SessionConfig(uid: "u2"))
        _ = try store.apply(.lifecycle(.background), to: "s9")
        let last = try store.session("s9").session.lastSeq
        #expect(await eventually { stream.queuedText.contains("id: s9/\(last)\n") })
        #expect(!stream.queuedText.contains("other/"))
    }
}
