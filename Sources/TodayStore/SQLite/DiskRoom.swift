import Foundation

/// Whether a database file has room to grow, looked at directly: SQLite reports a write past
/// the process's file size limit as a plain I/O error (`SQLITE_IOERR_WRITE`, errno lost by
/// then), so "full" is decided from the file system and the limit themselves.
struct DiskRoom: Sendable {
    /// Free space below this counts as a full disk.
    static let reserveBytes: UInt64 = 4 << 20
    /// A file within this of the file size limit counts as at the limit.
    static let limitMarginBytes: UInt64 = 256 << 10

    let path: String

    var isExhausted: Bool {
        let folder = (path as NSString).deletingLastPathComponent
        var stats = statvfs()
        if statvfs(folder.isEmpty ? "." : folder, &stats) == 0,
           UInt64(stats.f_bavail) * UInt64(stats.f_frsize) < Self.reserveBytes {
            return true
        }
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return false }
        let largest = [path, path + "-wal"].compactMap { file -> UInt64? in
            var info = stat()
            return stat(file, &info) == 0 ? UInt64(info.st_size) : nil
        }.max() ?? 0
        return largest + Self.limitMarginBytes >= UInt64(limit.rlim_cur)
    }
}
