import CSQLite
import Foundation

/// What todaysim checks of a database file before SQLite opens it (issue 12, items 3 and 7):
/// opening is not harmless — SQLite creates `-wal`/`-shm` beside a WAL database and the
/// migrations switch the journal mode — so another program's file is refused from its header,
/// read with plain file I/O, and a file another todaysim serves is refused by its lock.
package enum DatabaseFile {
    /// `PRAGMA application_id` of todaysim's files: "TDSM".
    package static let applicationId: Int32 = 0x5444_534D

    /// How a file on disk looks before it is opened.
    enum Kind: Equatable {
        /// Absent or empty: a new database.
        case new
        /// Marked as todaysim's, written at `schemaVersion`.
        case todaysim(schemaVersion: Int64)
        /// An SQLite file without a mark: a todaysim file from before the mark, or not ours.
        case unmarked(schemaVersion: Int64)
        case foreign(String)
    }

    /// Reads the 100-byte SQLite header of `path` (never through SQLite).
    static func inspect(_ path: String) throws(StoreError) -> Kind {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            return FileManager.default.fileExists(atPath: path) ? .foreign("it cannot be read") : .new
        }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 100)) ?? Data())
        if header.isEmpty { return .new }
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            return .foreign("it is not an SQLite database")
        }
        let userVersion = Int64(bigEndian32(header, at: 60))
        switch bigEndian32(header, at: 68) {
        case applicationId: return .todaysim(schemaVersion: userVersion)
        case 0: return .unmarked(schemaVersion: userVersion)
        case let other: return .foreign("it belongs to another program (application_id \(other))")
        }
    }

    /// Whether an unmarked file holds todaysim's tables: read through an immutable connection,
    /// which takes no lock and creates no `-wal`/`-shm` file.
    static func holdsTodaysimTables(_ path: String) -> Bool {
        let uri = "file:\(path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path)?immutable=1"
        let sql = "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('sessions', 'timeline', 'requests')"
        guard let database = try? Database(path: uri, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX)
        else { return false }
        return (try? database.integer(sql)) == 3
    }

    /// Refuses, before SQLite touches it, a file that is not todaysim's or is newer than this
    /// todaysim. Returns whether the file still has to be marked.
    static func admit(_ path: String, supportedVersion: Int64) throws(StoreError) -> Bool {
        switch try inspect(path) {
        case .new:
            return true
        case let .todaysim(version):
            guard version <= supportedVersion else { throw .newerSchema(found: version, supported: supportedVersion) }
            return false
        case let .unmarked(version):
            guard (1...supportedVersion).contains(version), holdsTodaysimTables(path) else {
                throw .foreign(path: path, reason: "it is an SQLite database of another program (no todaysim tables)")
            }
            return true
        case let .foreign(reason):
            throw .foreign(path: path, reason: reason)
        }
    }

    private static func bigEndian32(_ bytes: [UInt8], at offset: Int) -> Int32 {
        Int32(bitPattern: UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3]))
    }
}

/// An exclusive `flock` on `<database>.lock`, held from before the database opens until
/// `release()` or the process ends (the OS drops it at SIGKILL too). A separate file, because
/// closing any descriptor of the database itself would drop SQLite's own POSIX locks.
final class DatabaseLock: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`; -1 once released.
    private var descriptor: Int32

    init(databasePath path: String) throws(StoreError) {
        // Named after the file the path leads to: a symlink to the database must meet the same lock.
        let lockPath = URL(fileURLWithPath: path).resolvingSymlinksInPath().path + ".lock"
        let opened = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw .unusable(path: path, reason: "cannot create its lock file \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK ? nil : String(cString: strerror(errno))
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            close(opened)
            if let reason { throw .unusable(path: path, reason: "cannot lock \(lockPath): \(reason)") }
            throw .inUse(path: path, holder: holder.flatMap(Int32.init))
        }
        // Who holds it, for the next one's error message.
        let pid = "\(getpid())\n"
        _ = ftruncate(opened, 0)
        _ = pid.withCString { pwrite(opened, $0, strlen($0), 0) }
        descriptor = opened
    }

    deinit { release() }

    func release() {
        lock.lock()
        defer { lock.unlock() }
        guard descriptor >= 0 else { return }
        close(descriptor)  // drops the flock
        descriptor = -1
    }
}
