import ChorusCore
@testable import ChorusServer
import Foundation
import XCTest

/// An account deleted by its operator (`chorusd account del`, `erase`, `export`), as the people
/// around it and a newcomer meet it. Over the API's test server: the token and the report link
/// are among what must stop.
extension APITests {
    func testADeletedAccountEndsItsSessionsAndItsNameNeverComesBackWithItsData() throws {
        server = try TestServer(configure: {
            $0.webPlain = .init(host: "127.0.0.1", port: 0)
            $0.webURL = "https://chorus.example"
        })
        try server.addAccount("alice", "alice-password")
        try server.addAccount("bob", "bob-password")
        let alice = try flat("!job add Fix the sink @bob")
        try alice.take("the job") { ($0.params.last ?? "").contains("created job 1") }
        alice.send("PRIVMSG bob :the secret plan")  // bob is offline: held for him
        try alice.take("held") { $0.command == "301" }
        alice.send("PRIVMSG Chorus :!track add work 9:00-10:00 yesterday")
        try alice.take("the entry") { $0.command == "NOTICE" && ($0.params.last ?? "").contains("1h") }
        alice.send("PRIVMSG Chorus :!report yesterday")
        let links = try alice.take("the links") { $0.command == "NOTICE" && ($0.params.last ?? "").contains("Chart: ") }
        let chart = try XCTUnwrap(links.params.last?.split(separator: " ").first { $0.hasPrefix("https://") })
        let chartPath = String(chart[chart.range(of: "/report.")!.lowerBound...])
        XCTAssertEqual(try call("GET", chartPath, token: nil).status, 200)
        let aliceToken = try token("alice")
        XCTAssertEqual(try call("GET", "/api/v1/me", token: aliceToken).status, 200)

        let store = server.server.store
        try server.server.accounts.delete(name: "alice")
        XCTAssertNotNil(try? alice.expect("the end of her session", timeout: 15) { $0.command == "ERROR" })
        XCTAssertEqual(try call("GET", "/api/v1/me", token: aliceToken).status, 401, "her token no longer opens the API")
        XCTAssertEqual(try call("GET", chartPath, token: nil).status, 410, "her report link no longer works")
        XCTAssertThrowsError(try server.server.accounts.delete(name: "alice"), "deleted once")

        // Her name is never given again, and her old password opens nothing.
        let newcomer = try server.connect()
        newcomer.send("CAP LS 302")
        newcomer.send("CAP REQ :standard-replies")
        newcomer.send("REGISTER alice * another-long-password")
        let refused = try newcomer.expect(command: "FAIL", "REGISTER", "ACCOUNT_EXISTS")
        XCTAssertTrue(refused.params.last?.contains("belonged to an account that was deleted") == true, "\(refused)")
        XCTAssertThrowsError(try server.server.accounts.authenticate(name: "alice", password: "alice-password"))
        XCTAssertThrowsError(try server.server.accounts.register(name: "Alice", password: "another-long-password")) { error in
            XCTAssertEqual(error as? AccountError, .nameRetired("Alice"))
        }

        // The team keeps its record; she is no longer a member of anything.
        XCTAssertEqual(try store.memberships(ofAccount: "alice"), [])
        XCTAssertEqual(try store.tokens(of: "alice"), [])
        XCTAssertEqual(try store.job(1)?.creator, "alice")

        // What an operator exports for her: her rows, never a password hash or a token's secret.
        let exported = try XCTUnwrap(try store.exportAccount(named: "alice"))
        XCTAssertEqual(exported.tables["jobs"]?.first?["title"], .text("Fix the sink"))
        XCTAssertEqual(exported.tables["time_entries"]?.count, 1)
        XCTAssertTrue(exported.tables["history"]?.contains { $0["text"] == .text("the secret plan") } == true)
        XCTAssertNotNil(exported.tables["accounts"]?.first?["deleted_at"].flatMap { $0 == .null ? nil : $0 })
        XCTAssertEqual(exported.tables["account_presence"]?.count, 0, "her session's end is not noted after she is deleted")
        let json = String(decoding: try exported.json(), as: UTF8.self)
        XCTAssertFalse(json.contains("password") || json.contains("digest") || json.contains(aliceToken), json)

        // Erased: her private conversations (bob's held line too) and her time are gone; the job stays.
        try server.server.accounts.erase(name: "alice")
        let erased = try XCTUnwrap(try store.exportAccount(named: "alice"))
        XCTAssertFalse(erased.tables["history"]?.contains { $0["text"] == .text("the secret plan") } ?? true)
        XCTAssertEqual(erased.tables["time_entries"]?.count, 0)
        XCTAssertEqual(erased.tables["jobs"]?.count, 1)
        let bob = try server.connect(as: "bob")
        XCTAssertFalse(bob.drain(for: 0.5).contains { $0.params.last == "the secret plan" })
        XCTAssertNil(try store.exportAccount(named: "carol"))
    }
}
