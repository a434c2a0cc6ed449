import Foundation
import Testing
import TodayHost
@testable import TodayStore
import TodayTestSupport

private func tempPath(_ tag: String) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-probe-\(tag)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent("s.sqlite").path
}

private final class Box: @unchecked Sendable {
    let lock = NSLock()
    var acknowledgedAfterPurge = 0
    var ok = 0
    var failed = 0
    var answered: Int {
        lock.lock()
        defer { lock.unlock() }
        return ok + failed
    }
}

/// Issue 12, items 3 and 10, from an adversarial review: races between purges, forks, inputs
/// and the reclaimer, and the one-server lock. Each failed before its fix.
@Suite(.serialized) struct RemovalRaceTests {
    /// An input racing a purge: the purge drops the cache entry only after it released the
    /// write lock, so the writer may apply an input to the stale cached session (its ord is
    /// already hidden) — `updateSession` sets `closed` back to 0/1 and the row becomes a zombie.
    @Test func anInputRacingAPurgeNeverBringsTheSessionBack() throws {
        let path = try tempPath("race")
        let store = try SessionStore(path: path)
        let iterations = 300
        let box = Box()
        for round in 0..<iterations {
            let id = "z\(round % 3)"
            _ = try? store.create(id: id, config: labelled("L"))
            let stop = Flag()
            let group = DispatchGroup()
            for _ in 0..<2 {
                group.enter()
                Thread.detachNewThread {
                    while !stop.isSet {
                        let done = DispatchSemaphore(value: 0)
                        store.apply(.clock(.advanceBy(1)), to: id) { result in
                            box.lock.lock()
                            if case .success = result { box.ok += 1 } else { box.failed += 1 }
                            box.lock.unlock()
                            done.signal()
                        }
                        done.wait()
                    }
                    group.leave()
                }
            }
            // The purge goes in once the writers' inputs are flowing (an answered input since
            // the round began), not after a fixed pause.
            let answeredBefore = box.answered
            let flowing = Date().addingTimeInterval(30)
            while box.answered == answeredBefore, Date() < flowing { sched_yield() }
            _ = try store.purge(label: "L")
            stop.set()
            group.wait()
        }
        let database = try Database(path: path)
        let zombies = try database.integer("SELECT count(*) FROM sessions WHERE closed < 2 AND id LIKE 'removing/%'")
        let sample = try database.prepare("SELECT ord, id, uid, label, closed FROM sessions WHERE closed < 2 AND id LIKE 'removing/%' LIMIT 2").rows { "\($0.int64(0)) \($0.text(1) ?? "") uid='\($0.text(2) ?? "")' label=\($0.text(3) ?? "NULL") closed=\($0.int64(4))" }
        // The reclaimer deletes the purged sessions' rows in the background: waited for (until no
        // row is being removed), then no timeline row may be left without its session.
        var removing: Int64 = 0
        _ = try eventuallyOnThisThread(within: 300, pollMs: 10) {
            removing = try database.integer("SELECT count(*) FROM sessions WHERE id LIKE 'removing/%'")
            return removing == 0
        }
        let orphans = try database.integer("SELECT count(*) FROM timeline WHERE session NOT IN (SELECT ord FROM sessions)")
        let listed = try store.list(uid: nil, label: nil, closed: nil, limit: 1000, after: nil).sessions.map(\.id)
        #expect(Set(listed).count == listed.count, "a session listed twice: \(listed), \(sample)")
        #expect(removing == 0, "the reclaimer left \(removing) removed sessions' rows")
        #expect(orphans == 0, "rows of no session: \(orphans)")
        #expect(zombies == 0, "a purged session came back")
        store.close()
    }

    /// A fork racing a purge of its source (by label): the reveal does not look at the source.
    @Test func aForkRacingAPurgeOfItsSourceNeverAppearsAfterIt() throws {
        let path = try tempPath("fork")
        let store = try SessionStore(path: path)
        let iterations = 300
        var resurrected = 0
        var forked = 0
        for round in 0..<iterations {
            _ = try store.create(id: "src\(round)", config: labelled("L"))
            let group = DispatchGroup()
            let result = ForkResult()
            let started = DispatchSemaphore(value: 0)
            group.enter()
            Thread.detachNewThread {
                started.signal()
                do { _ = try store.fork("src\(round)", as: "f\(round)"); result.ok = true } catch {}
                group.leave()
            }
            // The purge goes in once the fork's thread runs, a few yields later or not (where the
            // two meet varies from round to round), never after a fixed pause.
            started.wait()
            for _ in 0..<Int.random(in: 0...3) { sched_yield() }
            _ = try store.purge(label: "L")
            group.wait()
            if result.ok { forked += 1 }
            // After the purge of label L returned and the fork returned: a fork with label L
            // still listed was revealed from a source the purge had already removed.
            let left = try store.list(uid: nil, label: "L", closed: nil, limit: 10, after: nil).sessions
            if !left.isEmpty { resurrected += 1; _ = try store.purge(label: "L") }
        }
        #expect(resurrected == 0)
        store.close()
    }

    /// One failed reclaim chunk (a full disk) once stopped the reclaimer until something else
    /// poked it: the rows of a removed session stayed until the next purge or restart.
    @Test func realTimeTheReclaimerRetriesAFailedChunk() throws {
        let path = try tempPath("giveup")
        let ord = try bigSession(path, rows: 60_000)
        let store = try SessionStore(path: path)
        let count = { try Database(path: path).integer("SELECT count(*) FROM timeline WHERE session = \(ord)") }
        // The start's own pass (nothing to remove) is over once a purge's poke is the next.
        let idle = Date().addingTimeInterval(30)
        while try Database(path: path).integer("SELECT count(*) FROM sessions WHERE closed = 2") > 0, Date() < idle { usleep(10_000) }
        _ = try store.purge(label: "big")
        // The next two commits are the reclaimer's chunks (two: a poke left from the start may
        // give it one more pass by itself).
        store.failNextCommit(count: 2)
        var left = try count()
        let deadline = Date().addingTimeInterval(30)
        while left > 0, Date() < deadline {
            usleep(50_000)
            left = try count()
        }
        #expect(left == 0, "the reclaimer stalled after one failed chunk: \(left) rows left")
        #expect(store.failingCommitsForTesting == 0, "a chunk did fail")
        store.close()
    }

    /// Two stores on one database through a symlink: the lock file is named after the path.
    @Test func aSymlinkToTheDatabaseMeetsTheSameLock() throws {
        let path = try tempPath("link")
        let first = try SessionStore(path: path)
        _ = try first.create(id: "s", config: SessionConfig(uid: "u"))
        let link = (path as NSString).deletingLastPathComponent + "/link.sqlite"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        var second: SessionStore?
        do { second = try SessionStore(path: link) } catch {
            #expect(error == .inUse(path: link, holder: getpid()), "\(error)")
        }
        if let second {
            // Lost update: both caches hold version 1 of s.
            _ = try first.session("s"); _ = try second.session("s")
            _ = try first.apply(.clock(.advanceBy(5)), to: "s")
            _ = try second.apply(.clock(.advanceBy(7)), to: "s")
            let onDisk = try second.reloadFromDisk("s").session
            let timeline = try Database(path: path).integer("SELECT count(*) FROM timeline t JOIN sessions s ON s.ord = t.session WHERE s.id = 's'")
            _ = (onDisk, timeline)
            #expect(Bool(false), "two stores opened one database")
            second.close()
        }
        first.close()
    }
}

private final class ForkResult: @unchecked Sendable { var ok = false }

private func labelled(_ label: String) -> SessionConfig {
    var config = SessionConfig(uid: "u")
    config.label = label
    return config
}

/// A session `big` (label `big`) with `rows` timeline rows written straight into the file.
private func bigSession(_ path: String, rows: Int) throws -> Int64 {
    var ord: Int64 = 0
    do {
        let store = try SessionStore(path: path)
        _ = try store.create(id: "big", config: labelled("big"))
        _ = try store.create(id: "hot", config: SessionConfig(uid: "u"))
        ord = try store.reloadFromDisk("big").ord
        store.close()
    }
    let database = try Database(path: path)
    try database.execute("""
        WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows + 100))
        INSERT INTO timeline (session, seq, kind, entry) SELECT \(ord), i, 'input', zeroblob(60) FROM n
        """)
    return ord
}

