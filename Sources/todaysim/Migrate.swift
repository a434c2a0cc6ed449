import Foundation
import TodayStore

/// `todaysim migrate --from PATH.sqlite --to postgres://… [--chunk-rows N]` (see `Usage` and
/// `StoreMigration`): exit 0 copied, 1 the copy failed partway (none of it visible), 2 usage or
/// refused before copying.
enum MigrateCommand {
    static func run(_ arguments: [String]) -> Int32 {
        var source: String?
        var target: String?
        var chunkRows = StoreMigration.defaultChunkRows
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            if flag == "--help" || flag == "-h" {
                print(Usage.full)
                return 0
            }
            guard ["--from", "--to", "--chunk-rows"].contains(flag) else {
                CommandLineInterface.fail("unknown flag \(flag)", usage: true)
            }
            guard let value = rest.popFirst() else { CommandLineInterface.fail("\(flag) needs a value", usage: true) }
            switch flag {
            case "--from": source = value
            case "--to": target = value
            default:
                guard let rows = Int(value), (1...1_000_000).contains(rows) else {
                    CommandLineInterface.fail("--chunk-rows must be 1-1000000", usage: false)
                }
                chunkRows = rows
            }
        }
        guard let source, let target else { CommandLineInterface.fail("migrate needs --from PATH and --to URI", usage: true) }
        guard SessionStore.isPostgres(target) else {
            CommandLineInterface.fail("--to must be a PostgreSQL URI (postgres://…); a SQLite file is copied as a file",
                                      usage: false)
        }
        guard !SessionStore.isPostgres(source), source != ":memory:" else {
            CommandLineInterface.fail("--from must be the path of a SQLite database file", usage: false)
        }
        let started = Date()
        let migration: StoreMigration
        do {
            migration = try StoreMigration(from: source, to: target, chunkRows: chunkRows)
        } catch {
            CommandLineInterface.fail("cannot migrate: \(error)", usage: false)
        }
        defer { migration.close() }
        do {
            let summary = try migration.copy()
            let seconds = String(format: "%.2f", Date().timeIntervalSince(started))
            print("migrated \(summary) from \(source) to \(migration.targetName) in \(seconds) s")
            return 0
        } catch {
            FileHandle.standardError.write(Data("todaysim: the copy to \(migration.targetName) failed and none of it is shown there; run migrate again: \(error)\n".utf8))
            return 1
        }
    }
}
