import Foundation
import Testing

/// What a user meets first with the `todaysim` command (issue 13, item 7): every command
/// answers `--help`, the help names every environment variable the command reads and its exit
/// codes, a malformed server URL is a usage error, and docs/SERVING.md shows the help as it is.
@Suite struct CLIUsageTests {
    let cli = CLITests()

    @Test func everyCommandAnswersHelpOnStdoutWithExitCode0() async throws {
        for arguments in [["--help"], ["-h"], ["help"], ["serve", "--help"], ["timeline", "--help"], ["report", "--help"],
                          ["migrate", "--help"], ["report", "s1", "--junit", "-h"], ["verify-host", "--help"],
                          ["compare-traces", "--help"]] {
            let help = try await cli.run(arguments)
            #expect(help.status == 0, "\(arguments): \(help.stderr)")
            #expect(help.stdout.hasPrefix("usage: todaysim "), "\(arguments)")
            #expect(help.stderr.isEmpty, "\(arguments)")
        }
        let client = try await cli.run(["timeline", "--help"]).stdout
        #expect(client.contains("todaysim timeline ID") && client.contains("todaysim report ID"))
        #expect(!client.contains("todaysim serve"), "a client command's help is about the clients")
    }

    /// Every `environment["…"]` the command's sources read is named in `--help`.
    @Test func helpNamesEveryEnvironmentVariableAndTheExitCodes() async throws {
        let sources = try FileManager.default.contentsOfDirectory(atPath: RepositoryFiles.root.appendingPathComponent("Sources/todaysim").path)
        var read: Set<String> = []
        for file in sources where file.hasSuffix(".swift") {
            let text = String(decoding: try RepositoryFiles.bytes("Sources/todaysim/\(file)"), as: UTF8.self)
            for match in text.matches(of: #/environment\["([A-Z_]+)"\]/#) { read.insert(String(match.1)) }
        }
        #expect(read == ["TODAYSIM_TOKEN", "TODAYSIM_TOKEN_FILE", "TODAYSIM_URL", "TODAYSIM_DB"], "the variables the sources read")
        let help = try await cli.run(["--help"]).stdout
        for name in read { #expect(help.contains("\n  \(name) "), "\(name) is not in --help") }
        let client = try await cli.run(["report", "--help"]).stdout
        for name in read.subtracting(["TODAYSIM_TOKEN_FILE", "TODAYSIM_DB"]) { #expect(client.contains("\n  \(name) "), "\(name)") }
        // The codes the binary is seen to use (here and in `CLITests`).
        for text in [help, client] {
            #expect(text.contains("timeline, report  0 done"))
            for code in ["; 1 the server answered an error", "; 2 usage", "3 the server cannot be reached"] {
                #expect(text.contains(code), "\(code)")
            }
        }
        #expect(help.contains("serve             0 stopped by SIGINT or SIGTERM; 2 a bad flag"))
        #expect(help.contains("migrate           0 copied; 1 the copy failed partway"))
    }

    /// The usage block of docs/SERVING.md is `todaysim --help`, byte for byte.
    @Test func theDocumentedUsageIsTheHelpOutput() async throws {
        let serving = String(decoding: try RepositoryFiles.bytes("docs/SERVING.md"), as: UTF8.self)
        let blocks = serving.components(separatedBy: "```\n")
        let usage = try #require(blocks.first { $0.hasPrefix("usage: todaysim serve") }, "no usage block in docs/SERVING.md")
        #expect(usage == (try await cli.run(["--help"]).stdout))
    }

    @Test func aMalformedServerURLIsAUsageError() async throws {
        for url in ["notaurl", "ftp://127.0.0.1:8080", "http://", "127.0.0.1:8080", "http://127.0.0.1:8080/?x=1",
                    "http://127.0.0.1:99999", "http://127.0.0.1:0"] {
            let report = try await cli.run(["report", "s1", "--server", url])
            #expect(report.status == 2, "\(url): \(report.stderr)")
            #expect(report.stderr.hasPrefix("todaysim: --server \(url) is not a valid server URL"), "\(url): \(report.stderr)")
        }
        let fromEnvironment = try await cli.run(["timeline", "s1"], environment: ["TODAYSIM_URL": "localhost"])
        #expect(fromEnvironment.status == 2)
        #expect(fromEnvironment.stderr.hasPrefix("todaysim: TODAYSIM_URL localhost is not a valid server URL"))
        let unreachable = try await cli.run(["report", "s1", "--server", "http://127.0.0.1:1"])
        #expect(unreachable.status == 3)
        #expect(unreachable.stderr == "todaysim: cannot reach the server at http://127.0.0.1:1 (is it running? Scripts/run or todaysim serve starts one)\n")
    }

    /// `TODAYSIM_TOKEN` goes with the client's requests; an id that is no session is the server's 404.
    @Test func theClientSendsTheTokenAndAnyIdAsOnePathSegment() async throws {
        let server = try TestServer(token: "cli-token")
        _ = try await Client(server: server).send("POST", "/v1/sessions", body: Array(#"{"uid":"u1","id":"s1"}"#.utf8),
                                                   headers: ["Authorization": "Bearer cli-token"])
        let url = server.base.absoluteString
        let without = try await cli.run(["report", "s1", "--server", url], environment: ["TODAYSIM_TOKEN": nil])
        #expect(without.status == 1)
        #expect(without.stderr.hasPrefix("todaysim: 401 unauthorized"))
        let with = try await cli.run(["report", "s1", "--server", url], environment: ["TODAYSIM_TOKEN": "cli-token"])
        #expect(with.status == 0, "\(with.stderr)")
        #expect(with.stdout.hasPrefix("session s1: conforms"))
        let odd = try await cli.run(["timeline", "no such id", "--server", url], environment: ["TODAYSIM_TOKEN": "cli-token"])
        #expect(odd.status == 1, "\(odd.stderr)")
        #expect(odd.stderr.hasPrefix("todaysim: 404 session_not_found"))
    }
}
