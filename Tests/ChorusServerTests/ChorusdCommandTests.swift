import Foundation
#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// `chorusd`'s own commands as an operator types them: the binary the build made, run in a
/// temporary folder, its exit status and what it printed.
final class ChorusdCommandTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorusd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs chorusd with `arguments`, standard input closed or given; waits at most 30 s.
    private func chorusd(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = try chorusdBinary()
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate(); XCTFail("chorusd \(arguments) did not finish within 30 s") }
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    func testAccountsAreMadeListedAndDeletedInTheDataFolder() throws {
        let data = folder.appendingPathComponent("data").path
        let added = try chorusd(["account", "add", "alice", "--email", "alice@example.org", "--data", data], input: "a-long-password\n")
        XCTAssertEqual(added.status, 0, added.output)
        XCTAssertTrue(added.output.contains("created account alice"), added.output)
        XCTAssertTrue(FileManager.default.fileExists(atPath: data + "/chorus.sqlite"))

        let again = try chorusd(["account", "add", "ALICE", "--password", "another-password", "--data", data])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.output.lowercased().contains("taken") || again.output.contains("exists"), again.output)
        let weak = try chorusd(["account", "add", "bob", "--password", "x", "--data", data])
        XCTAssertNotEqual(weak.status, 0)
        XCTAssertTrue(weak.output.contains("password"), weak.output)

        let listed = try chorusd(["account", "list", "--data", data])
        XCTAssertEqual(listed.status, 0, listed.output)
        XCTAssertTrue(listed.output.hasPrefix("alice\talice@example.org\t"), listed.output)

        let token = try chorusd(["account", "token", "alice", "--label", "ci", "--data", data])
        XCTAssertTrue(token.output.contains("(ci) for alice: "), token.output)

        let exported = try chorusd(["account", "export", "alice", "--data", data])
        XCTAssertEqual(exported.status, 0, exported.output)
        let tables = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(exported.output.utf8)) as? [String: [[String: Any]]])
        XCTAssertEqual(tables["accounts"]?.first?["email"] as? String, "alice@example.org")
        XCTAssertEqual(tables["account_tokens"]?.first?["label"] as? String, "ci")
        XCTAssertFalse(exported.output.contains("password_hash") || exported.output.contains("digest"), exported.output)

        let deleted = try chorusd(["account", "del", "alice", "--data", data])
        XCTAssertEqual(deleted.status, 0, deleted.output)
        XCTAssertTrue(deleted.output.contains("its name stays retired"), deleted.output)
        let twice = try chorusd(["account", "del", "alice", "--data", data])
        XCTAssertNotEqual(twice.status, 0)
        XCTAssertTrue(twice.output.contains("The account alice is already deleted"), twice.output)
        XCTAssertEqual(try chorusd(["account", "list", "--data", data]).output, "no accounts\n")
        let retired = try chorusd(["account", "add", "alice", "--password", "a-long-password", "--data", data])
        XCTAssertNotEqual(retired.status, 0)
        XCTAssertTrue(retired.output.contains("The name alice belonged to an account that was deleted"), retired.output)
        XCTAssertEqual(try chorusd(["account", "erase", "alice", "--data", data]).status, 0)
        let nobody = try chorusd(["account", "export", "nobody", "--data", data])
        XCTAssertNotEqual(nobody.status, 0)
        XCTAssertTrue(nobody.output.contains("There is no account named nobody"), nobody.output)
        XCTAssertTrue(try chorusd(["check", "--data", data]).output.contains("chorus.sqlite: ok"))
    }

    func testAMistypedDataFolderIsRefusedNotMadeEmpty() throws {
        let typo = folder.appendingPathComponent("chorus-dta").path
        let listed = try chorusd(["account", "list", "--data", typo])
        XCTAssertNotEqual(listed.status, 0)
        XCTAssertTrue(listed.output.contains("There is no Chorus database at \(typo)/chorus.sqlite"), listed.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: typo))
        // Nor do check and backup make one: README's nightly backup must not copy an empty file.
        let checked = try chorusd(["check", "--data", typo])
        XCTAssertNotEqual(checked.status, 0)
        XCTAssertTrue(checked.output.contains("There is no Chorus database at \(typo)/chorus.sqlite"), checked.output)
        let copy = folder.appendingPathComponent("copy.sqlite").path
        let backedUp = try chorusd(["backup", copy, "--data", typo])
        XCTAssertNotEqual(backedUp.status, 0)
        XCTAssertTrue(backedUp.output.contains("There is no Chorus database at \(typo)/chorus.sqlite"), backedUp.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: typo))
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy))
        // A first account refused (its password too short) leaves no new folder behind.
        let refused = try chorusd(["account", "add", "bob", "--password", "short", "--data", typo])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: typo), refused.output)
    }

    /// A port already taken is named with its listener, and the start makes no data folder.
    func testAPortAlreadyTakenIsNamedAndLeavesNoFolder() throws {
        let taken = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(taken) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(taken, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(Glibc.listen(taken, 1), 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(taken, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let data = folder.appendingPathComponent("new-data").path
        let started = try chorusd(["serve", "--data", data, "--tls", "off", "--web", "off", "--plain", "127.0.0.1:\(port)"])
        XCTAssertNotEqual(started.status, 0)
        XCTAssertTrue(started.output.contains("Cannot listen on 127.0.0.1:\(port) (plaintext): the address is in use"), started.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: data), "no folder made for a start that failed")
    }

    func testADurabilityTheServerDoesNotKnowIsRefusedNamingTheLine() throws {
        let config = folder.appendingPathComponent("chorus.conf")
        try "durability = sometimes\n".write(to: config, atomically: true, encoding: .utf8)
        let refused = try chorusd(["serve", "--config", config.path, "--data", folder.path, "--tls", "off", "--web", "off", "--plain", "127.0.0.1:0"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.output.contains("chorus.conf:1: durability is crash or power-loss"), refused.output)
    }

    func testThePostgreSQLStoreIsNamedByURLAndBackedUpByItsOwnTools() throws {
        let unreachable = try chorusd(["serve", "--data", folder.path, "--store", "postgres://chorus@127.0.0.1:1/chorus?sslmode=disable",
                                       "--tls", "127.0.0.1:0", "--plain", "off", "--web", "off"])
        XCTAssertEqual(unreachable.status, 1)
        XCTAssertTrue(unreachable.output.contains("Cannot reach PostgreSQL at postgres://chorus@127.0.0.1:1/chorus: "), unreachable.output)
        let bad = try chorusd(["check", "--store", "postgres://h/d?sslmode=maybe"])
        XCTAssertTrue(bad.output.contains("sslmode is disable, prefer or require"), bad.output)

        guard let server = ProcessInfo.processInfo.environment["CHORUS_TEST_POSTGRES"] else {
            throw XCTSkip("no PostgreSQL server: set CHORUS_TEST_POSTGRES (eval \"$(bash Tests/postgres/cluster.sh start)\")")
        }
        let url = server + "&schema=cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let data = folder.appendingPathComponent("data").path
        XCTAssertEqual(try chorusd(["account", "add", "alice", "--password", "a-long-password", "--data", data, "--store", url]).status, 0)
        XCTAssertTrue(try chorusd(["account", "list", "--store", url]).output.hasPrefix("alice\t"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: data + "/chorus.sqlite"), "the team's data is in PostgreSQL, not the folder")
        let check = try chorusd(["check", "--data", data, "--store", url])
        XCTAssertTrue(check.output.contains("database postgres://"), check.output)
        XCTAssertFalse(check.output.contains("a-long-password"))
        let backup = try chorusd(["backup", folder.appendingPathComponent("copy.sqlite").path, "--store", url])
        XCTAssertNotEqual(backup.status, 0)
        XCTAssertTrue(backup.output.contains("pg_dump"), backup.output)
    }

    /// A running server, as an operator meets it: SIGHUP reads the config file again (a new MOTD
    /// for the next client), and SIGTERM says goodbye to the connected, writes what is pending
    /// and exits 0.
    func testServeReloadsOnSIGHUPAndStopsCleanlyOnSIGTERM() throws {
        let config = folder.appendingPathComponent("chorus.conf")
        try "motd = before the reload\n".write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = try chorusdBinary()
        process.arguments = ["serve", "--config", config.path, "--data", folder.appendingPathComponent("data").path,
                             "--tls", "off", "--web", "off", "--plain", "127.0.0.1:0"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let log = LogLines(out.fileHandleForReading)
        let running = try XCTUnwrap(log.first(containing: "Chorus is running", within: 30))
        // `plain=[IPv4]127.0.0.1/127.0.0.1:PORT`
        let address = try XCTUnwrap(running.range(of: "plain=").map { running[$0.upperBound...].prefix { $0 != " " } })
        let port = try XCTUnwrap(address.split(separator: ":").last.flatMap { Int($0) }, running)

        let first = try TestClient(port: port, tls: false)
        XCTAssertTrue(try first.register("ann").contains { $0.params.last == "- before the reload" })
        try "motd = after the reload\n".write(to: config, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        let second = try TestClient(port: port, tls: false)
        var motd = try second.register("bob").compactMap(\.params.last)
        for _ in 0..<50 where !motd.contains("- after the reload") {
            usleep(100_000)
            second.send("MOTD")
            motd = try second.collect { $0.command == "376" || $0.command == "422" }.compactMap(\.params.last)
        }
        XCTAssertTrue(motd.contains("- after the reload"), "\(motd)")

        kill(process.processIdentifier, SIGTERM)
        XCTAssertNotNil(try? first.expect("the goodbye", timeout: 10) { $0.command == "ERROR" })
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(process.isRunning, "chorusd still running 15 s after SIGTERM")
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertNotNil(log.first(containing: "shutting down", within: 1))
    }
}

/// What a process writes, read line by line on a thread of its own, for a test to wait on.
private final class LogLines: @unchecked Sendable {
    private let lock = NSCondition()
    private var lines: [String] = []

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var pending = Data()
            while case let chunk = handle.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let end = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<end], as: UTF8.self)
                    pending.removeSubrange(...end)
                    lock.lock(); lines.append(line); lock.broadcast(); lock.unlock()
                }
            }
        }
    }

    func first(containing text: String, within seconds: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let line = lines.first(where: { $0.contains(text) }) { return line }
            guard lock.wait(until: deadline) else { return nil }
        }
    }
}
