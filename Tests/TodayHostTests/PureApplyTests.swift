import Foundation
import Testing
@testable import TodayHost

/// `HostSession.apply` is a pure function of the session, the input and the request records it
/// is given (issue 46): fed as the store feeds it — the records `lookups(for:)` names, then any
/// it answers `.needs` for — it does exactly what it does against the whole ledger (H4, H8,
/// H22, M1 read the ledger).
@Suite struct PureApplyTests {
    /// A store in memory: the whole ledger kept aside, the session given only what it asks for.
    struct Fed {
        var session: HostSession
        var ledger: InMemoryLedger
        /// Inputs that needed a second read (`.needs`), and how many ids were read in all.
        var rounds = 0
        var reads = 0

        /// What the store does: the lookups in one read, then each `.needs`, until applied.
        mutating func apply(_ input: Input) throws(InputError) -> Applied {
            var given = LedgerRecords()
            read(session.lookups(for: input), into: &given)
            while true {
                switch try session.apply(input, given: given) {
                case let .applied(applied):
                    ledger.apply(applied.ledgerWrites)
                    return applied
                case let .needs(ids):
                    #expect(ids.allSatisfy { !given.knows($0) }, "asked again for \(ids)")
                    rounds += 1
                    read(ids, into: &given)
                }
            }
        }

        mutating func read(_ ids: [String], into given: inout LedgerRecords) {
            let unknown = ids.filter { !given.knows($0) }
            reads += unknown.count
            given.add(Dictionary(uniqueKeysWithValues: unknown.compactMap { id in ledger.record(for: id).map { (id, $0) } }),
                      lookedUp: unknown)
        }
    }

    /// One input of every kind, each applied both ways: the same answer, session and ledger.
    @Test func everyInputKindAppliesAlikeFedAsTheStoreFeedsIt() throws {
        let inputs: [Input] = [
            .gesture(.pull(requestId: "p1")), Web.started("p1"), Web.firstBatch(requestId: "p1"), Web.result("p1"),
            .gesture(.pull(requestId: nil)), .clock(.advanceBy(5_000)), Web.result("p1"),
            .lifecycle(.background), .clock(.advanceBy(6_000)), .lifecycle(.foreground(requestId: nil)),
            .lifecycle(.tabActivated(requestId: "t1")), Web.result("t1"), .lifecycle(.webContentTerminated(requestId: nil)),
            Web.allBatches(empty: false), .command(.scrollToSection(batchId: "b1", behavior: .smooth, highlight: true)),
            .gesture(.liveWidgetCreated(requestId: nil)), .gesture(.liveWidgetCancelled), .gesture(.chatEdit(text: "hi")),
            .clock(.toNextTimer), .clock(.runUntilIdle), .lifecycle(.accountSwitch(uid: "u2")), .clock(.advanceTo(60_000)),
            .teardown,
        ]
        let whole = SessionRunner.make()
        var runner = whole
        var fed = Fed(session: whole.session, ledger: whole.ledger)
        for input in inputs {
            let expected = try runner.apply(input)
            let got = try fed.apply(input)
            #expect(got == expected, "\(input.json.serialized())")
            #expect(fed.session == runner.session)
            #expect(fed.ledger == runner.ledger)
        }
        #expect(runner.session.isClosed)
    }

    /// Random inputs (the invariant test's generator), refusals included: fed or whole, the
    /// same thing happens at every step.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func randomInputsApplyAlikeFedAsTheStoreFeedsIt(seed: UInt64) throws {
        var generator = InputGenerator(seed: seed)
        var runner = try SessionRunner(config: generator.config())
        var fed = Fed(session: runner.session, ledger: runner.ledger)
        for index in 0..<800 {
            let input = generator.step(for: runner).input
            let expected = Result { () throws(InputError) in try runner.apply(input) }
            let got = Result { () throws(InputError) in try fed.apply(input) }
            #expect(got == expected, "seed \(seed), step \(index): \(input.json.serialized())")
            guard fed.session == runner.session, fed.ledger == runner.ledger else {
                Issue.record("seed \(seed), step \(index): the fed session or ledger differs after \(input.json.serialized())")
                return
            }
        }
    }

    /// The `.needs` round trip: given nothing, a second pull (H10: it cancels the first request
    /// and reloads) answers which records it read — the first request's and the server-made id
    /// it would mint — and changes nothing; given them, it applies as against the whole ledger. A
    /// refusal made from a record it was not given is no refusal: `.needs`.
    @Test func anInputGivenTooLittleSaysWhatItNeedsAndChangesNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        var session = runner.session
        let before = session

        let first = try session.apply(.gesture(.pull(requestId: nil)), given: LedgerRecords())
        let minted = RequestIdFactory.requestId(sessionId: session.id, counter: session.requestCounter + 1)
        #expect(first == .needs([minted, "p1"].sorted()))
        #expect(session == before)

        var given = LedgerRecords()
        given.add(["p1": try #require(runner.ledger.record(for: "p1"))], lookedUp: [minted, "p1"])
        let second = try session.apply(.gesture(.pull(requestId: nil)), given: given)
        var whole = runner
        let expected = try whole.apply(.gesture(.pull(requestId: nil)))
        #expect(second == .applied(expected))
        #expect(session == whole.session)

        // H4: "p1" was used; told nothing of it, the session cannot refuse it yet.
        var again = before
        #expect(try again.apply(.lifecycle(.tabActivated(requestId: "p1")), given: LedgerRecords()) == .needs(["p1"]))
        var known = LedgerRecords()
        known.add(["p1": try #require(runner.ledger.record(for: "p1"))], lookedUp: ["p1"])
        #expect(throws: InputError.invalidField("requestId", "p1 was already used by this session")) {
            _ = try again.apply(.lifecycle(.tabActivated(requestId: "p1")), given: known)
        }
        #expect(again == before)
    }

    /// What a store keeps with a session (`standingLookups`) names each open request once, in
    /// order, then the document's, header's and spinner's owners and the next server-made id,
    /// with few open requests and with many: 30 tab activations (H5), nothing times out on the
    /// virtual clock between them.
    @Test func theStandingLookupsNameEachOpenRequestOnce() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        for index in 1...30 {
            try runner.apply(.lifecycle(.tabActivated(requestId: "t\(index)")))
            let session = runner.session
            let open = session.refresh.pending.map(\.requestId)
            let minted = RequestIdFactory.requestId(sessionId: session.id, counter: session.requestCounter + 1)
            var expected: [String] = []
            for id in open + [session.document.requestId, session.header.owner, session.pull.owner].compactMap({ $0 })
            where !expected.contains(id) {
                expected.append(id)
            }
            #expect(session.standingLookups(mayMint: false) == expected, "after t\(index)")
            #expect(session.standingLookups() == expected + [minted], "after t\(index)")
            #expect(open.contains("t\(index)"))
        }
        #expect(runner.session.refresh.pending.count > 8, "many requests open at once, not a handful")
    }
}
