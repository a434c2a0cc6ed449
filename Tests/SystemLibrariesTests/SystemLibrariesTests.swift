import CMicroHTTPD
import CPostgres
import CSQLite
import Testing

/// The service's C libraries are installed, found through pkg-config and linked.
@Suite struct SystemLibrariesTests {
    @Test func libmicrohttpdIsLinked() throws {
        let version = try #require(MHD_get_version()).pointee
        #expect(version != 0)
        let text = String(cString: try #require(MHD_get_version()))
        #expect(text.split(separator: ".").count >= 3, "libmicrohttpd reported \(text)")
    }

    @Test func sqliteIsLinkedAndThreadSafe() {
        #expect(sqlite3_libversion_number() >= 3_035_000)
        #expect(sqlite3_threadsafe() != 0)
    }

    /// libpq 13 or newer (the wrapper's URIs and `PQconninfoParse` are older; Debian 12 ships
    /// 15), built thread-safe, so connections may live on different threads.
    @Test func libpqIsLinkedAndThreadSafe() {
        #expect(PQlibVersion() >= 130_000, "libpq \(PQlibVersion())")
        #expect(PQisthreadsafe() == 1)
    }
}
