import ChorusCore
import ChorusIRC
import ChorusServer
import ChorusTestSupport
import Foundation
import XCTest

/// A person on two devices: the second connection of an account takes the nick the first holds,
/// and the room sees one person (`SharedNick.swift`).
final class SharedNickTests: XCTestCase {
    /// Two sessions of ann and bob in #den; each test starts here.
    private func annTwiceAndBob() throws -> (server: TestServer, laptop: TestClient, phone: TestClient, bob: TestClient) {
        let server = try annAndBob()
        let laptop = try server.connect(as: "ann")
        try laptop.join("#den")
        let bob = try server.connect(as: "bob")
        try bob.join("#den")
        try laptop.expect("bob's JOIN") { $0.command == "JOIN" && $0.source?.hasPrefix("bob!") == true }
        let phone = try server.connect()
        let welcome = try phone.register("ann", pass: "ann:ann-password")
        XCTAssertEqual(welcome.first { $0.command == "001" }?.params.first, "ann", "the second device is ann, not ann_")
        XCTAssertFalse(welcome.contains { $0.command == "433" })
        return (server, laptop, phone, bob)
    }

    /// A server with the accounts ann and bob.
    private func annAndBob(_ configure: (inout ServerConfig) -> Void = { _ in }) throws -> TestServer {
        let server = try TestServer(configure: configure)
        try server.addAccount("ann", "ann-password")
        try server.addAccount("bob", "bob-password")
        return server
    }

    /// A connection that logs in to `account` with PASS and asks for `nick`, as `user`; it does not
    /// wait for the answer.
    private func connecting(_ server: TestServer, as account: String, nick: String, user: String) throws -> TestClient {
        let client = try server.connect()
        client.send("PASS \(account):\(account)-password")
        client.send("NICK \(nick)")
        client.send("USER \(user) 0 * :\(user)")
        return client
    }

    func testASecondDeviceIsTheSamePersonToTheRoom() throws {
        let (server, laptop, phone, bob) = try annTwiceAndBob()
        defer { withExtendedLifetime(server) {} }
        // The phone is put in ann's room, and only the phone hears that.
        let names = try phone.collect { $0.command == "366" && $0.params[1] == "#den" }
        XCTAssertTrue(names.contains { $0.command == "JOIN" && $0.params.first == "#den" && $0.source?.hasPrefix("ann!") == true })
        let listed = names.filter { $0.command == "353" }.flatMap { $0.params.last!.split(separator: " ") }
        XCTAssertEqual(listed.filter { $0.hasSuffix("ann") }.count, 1, "ann is named once: \(listed)")
        XCTAssertTrue(listed.contains { $0.hasSuffix("bob") })
        let bobSaw = bob.drain(for: 0.5)
        XCTAssertFalse(bobSaw.contains { $0.command == "JOIN" }, "the room heard no second JOIN: \(bobSaw)")
        XCTAssertFalse(laptop.drain(for: 0.2).contains { $0.command == "JOIN" })
        bob.send("NAMES #den")
        let again = try bob.collect { $0.command == "366" }.filter { $0.command == "353" }.flatMap { $0.params.last!.split(separator: " ") }
        XCTAssertEqual(again.filter { $0.hasSuffix("ann") }.count, 1, "\(again)")
        bob.send("WHO #den")
        let who = try bob.collect { $0.command == "315" }.filter { $0.command == "352" }
        XCTAssertEqual(who.filter { $0.params[5] == "ann" }.count, 1)

        // Both of ann's devices hear the room; a line from one reaches the other.
        bob.send("PRIVMSG #den :hello ann")
        try laptop.expect(command: "PRIVMSG", "#den", "hello ann")
        try phone.expect(command: "PRIVMSG", "#den", "hello ann")
        phone.send("PRIVMSG #den :from my phone")
        let seen = try laptop.expect(command: "PRIVMSG", "#den", "from my phone")
        XCTAssertTrue(seen.source?.hasPrefix("ann!") == true)
        try bob.expect(command: "PRIVMSG", "#den", "from my phone")
    }

    func testPrivateLinesReachEverySession() throws {
        let (server, laptop, phone, bob) = try annTwiceAndBob()
        defer { withExtendedLifetime(server) {} }
        bob.send("PRIVMSG ann :are you there")
        try laptop.expect(command: "PRIVMSG", "ann", "are you there")
        try phone.expect(command: "PRIVMSG", "ann", "are you there")
        // What ann says from the laptop shows in the phone's conversation with bob too.
        laptop.send("PRIVMSG bob :on my way")
        try bob.expect(command: "PRIVMSG", "bob", "on my way")
        let copy = try phone.expect(command: "PRIVMSG", "bob", "on my way")
        XCTAssertTrue(copy.source?.hasPrefix("ann!") == true)
    }

    func testOneSessionLeavingSaysNothingUntilTheLast() throws {
        let (server, laptop, phone, bob) = try annTwiceAndBob()
        defer { withExtendedLifetime(server) {} }
        _ = phone.drain(for: 0.3)
        laptop.send("QUIT :closing the laptop")
        XCTAssertFalse(bob.drain(for: 0.5).contains { $0.command == "QUIT" }, "ann is still here on her phone")
        // The phone carries the nick on: lines to ann reach it, and WHOIS finds her.
        bob.send("PRIVMSG #den :still there?")
        try phone.expect(command: "PRIVMSG", "#den", "still there?")
        bob.send("WHOIS ann")
        try bob.expect(command: "311", "ann")
        // A third connection may take the nick back, as the person's again.
        phone.send("QUIT :phone off")
        let quit = try bob.expect(command: "QUIT")
        XCTAssertTrue(quit.source?.hasPrefix("ann!") == true)
        bob.send("WHOIS ann")
        try bob.expect(command: "401", "ann")
    }

    func testPartNickAndJoinActForThePerson() throws {
        let (server, laptop, phone, bob) = try annTwiceAndBob()
        defer { withExtendedLifetime(server) {} }
        _ = phone.drain(for: 0.3)
        // A room joined on one device is joined on the other; the room hears one JOIN.
        try laptop.join("#plans")
        try phone.expect(command: "JOIN", "#plans")
        try phone.expect(command: "366", "#plans")
        // A new nick is every session's.
        phone.send("NICK annie")
        try laptop.expect(command: "NICK", "annie")
        try phone.expect(command: "NICK", "annie")
        try bob.expect(command: "NICK", "annie")
        bob.send("WHOIS ann")
        try bob.expect(command: "401", "ann")
        // A new spelling, asked on the phone, not the session that came first.
        phone.send("NICK Annie")
        try phone.expect(command: "NICK", "Annie")
        try laptop.expect(command: "NICK", "Annie")
        // Leaving the room from one device takes the person out: both hear it, the room once.
        phone.send("PART #den :bye")
        try laptop.expect(command: "PART", "#den")
        try phone.expect(command: "PART", "#den")
        let parts = try bob.collect { $0.command == "PART" }.filter { $0.command == "PART" }
        XCTAssertEqual(parts.count, 1)
        bob.send("PRIVMSG #den :gone?")
        XCTAssertFalse(laptop.drain(for: 0.4).contains { $0.command == "PRIVMSG" && $0.params.first == "#den" })
        XCTAssertFalse(phone.drain(for: 0.1).contains { $0.command == "PRIVMSG" && $0.params.first == "#den" })
    }

    func testSomeoneElseStillCannotTakeTheNick() throws {
        let (server, laptop, phone, bob) = try annTwiceAndBob()
        defer { withExtendedLifetime((laptop, phone, bob)) {} }
        // bob's second connection asks for ann's nick: he is not ann.
        let other = try connecting(server, as: "bob", nick: "ann", user: "b")
        try other.expect(command: "433", "ann")
        // A guest is told when its registration ends (a login may still come before then).
        let guest = try server.connect()
        guest.send("NICK ann")
        guest.send("USER g 0 * :G")
        try guest.expect(command: "433", "ann")
        guest.send("NICK guest")
        XCTAssertEqual(try guest.expect(command: "001").params.first, "guest")
    }

    /// An operator's KILL of the nick ends every session of it; the room hears one QUIT.
    func testAKillEndsEverySession() throws {
        let hash = try PasswordHasher(logRounds: 4).hash("oper-secret")
        let server = try annAndBob { $0.operators = [.init(name: "root", passwordHash: hash)] }
        let laptop = try server.connect(as: "ann")
        try laptop.join("#den")
        laptop.send("PRIVMSG #den :!room add bob")
        let admin = try server.connect(as: "bob")
        try admin.expect(command: "366", "#den")
        let phone = try server.connect()
        try phone.register("ann", pass: "ann:ann-password")
        admin.send("OPER root oper-secret")
        try admin.expect(command: "381")
        admin.send("KILL ann :enough")
        try laptop.expect(command: "ERROR")
        try phone.expect(command: "ERROR")
        let quits = admin.drain(for: 0.5).filter { $0.command == "QUIT" }
        XCTAssertEqual(quits.count, 1, "\(quits)")
        admin.send("WHOIS ann")
        try admin.expect(command: "401", "ann")
    }

    /// A ban on the laptop's mask holds for the phone too: a second device is no way round it.
    func testABanOnOneSessionsMaskHoldsForTheOthers() throws {
        let server = try annAndBob()
        let bob = try server.connect(as: "bob")
        try bob.join("#den")
        bob.send("PRIVMSG #den :!room add ann")
        let laptop = try connecting(server, as: "ann", nick: "ann", user: "laptop")
        try laptop.expect(command: "366", "#den")
        let phone = try connecting(server, as: "ann", nick: "ann", user: "phone")
        try phone.expect(command: "366", "#den")
        bob.send("MODE #den +b *!~laptop@*")
        try bob.expect(command: "MODE", "#den", "+b")
        phone.send("PRIVMSG #den :from the phone")
        try phone.expect(command: "404", "#den")
        XCTAssertFalse(bob.drain(for: 0.3).contains { $0.command == "PRIVMSG" })
    }

    /// The person is away while every session is: away on the laptop, here on the phone.
    func testThePersonIsAwayOnlyWhileEverySessionIs() throws {
        let server = try annAndBob()
        let laptop = try server.connect(as: "ann")
        try laptop.join("#den")
        laptop.send("PRIVMSG #den :!room add bob")
        let bob = try server.connect(as: "bob", caps: ["away-notify"])
        try bob.expect(command: "366", "#den")
        laptop.send("AWAY :gone for lunch")
        try laptop.expect(command: "306")
        XCTAssertEqual(try bob.expect(command: "AWAY").params, ["gone for lunch"])
        // The phone comes: she is here again.
        let phone = try server.connect()
        try phone.register("ann", pass: "ann:ann-password")
        XCTAssertEqual(try bob.expect(command: "AWAY").params, [], "back, on her phone")
        bob.send("WHOIS ann")
        XCTAssertFalse(try bob.collect { $0.command == "318" }.contains { $0.command == "301" })
        // Away on the phone too: now she is away, with the phone's words.
        phone.send("AWAY :on the bus")
        XCTAssertEqual(try bob.expect(command: "AWAY").params, ["on the bus"])
        // The phone's session ends while the laptop's is away: still away, with the laptop's words.
        phone.send("AWAY")
        XCTAssertEqual(try bob.expect(command: "AWAY").params, [])
        phone.send("QUIT")
        XCTAssertEqual(try bob.expect(command: "AWAY").params, ["gone for lunch"])
        bob.send("PRIVMSG ann :lunch?")
        XCTAssertEqual(try bob.expect(command: "301").params.last, "gone for lunch")
    }

    /// With several nodes the other node sees one ann, and her first session's going passes the
    /// nick (and its presence record) to the second without a QUIT; the last one's going is one.
    func testOnANodeOfSeveralTheSecondSessionCarriesTheNickOn() throws {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "cluster-\(UUID().uuidString)"
        let a = try TestServer(sharing: shared), b = try TestServer(sharing: shared)
        try a.addAccount("ann", "ann-password")
        try a.addAccount("ben", "ben-password")
        let laptop = try a.connect(as: "ann")
        try laptop.join("#den")
        laptop.send("PRIVMSG #den :!room add ben")
        try laptop.expect("ben added") { $0.command == "NOTICE" && $0.params.last?.contains("added ben") == true }
        let ben = try b.connect(as: "ben")
        try ben.expect(command: "366", "#den", timeout: 10)
        let phone = try a.connect()
        let welcome = try phone.register("ann", pass: "ann:ann-password")
        XCTAssertEqual(welcome.first { $0.command == "001" }?.params.first, "ann")
        try phone.expect(command: "366", "#den")

        laptop.send("QUIT :laptop closed")
        XCTAssertFalse(ben.drain(for: 3).contains { $0.command == "QUIT" }, "ann is still on node A, on her phone")
        ben.send("NAMES #den")
        let names = try ben.collect { $0.command == "366" }.filter { $0.command == "353" }.flatMap { $0.params.last!.split(separator: " ") }
        XCTAssertEqual(names.filter { $0.hasSuffix("ann") }.count, 1, "\(names)")
        ben.send("PRIVMSG #den :across nodes")
        try phone.expect(command: "PRIVMSG", "#den", "across nodes", timeout: 10)

        phone.send("QUIT :phone off")
        let quit = try ben.expect("ann's QUIT", timeout: 10) { $0.command == "QUIT" }
        XCTAssertTrue(quit.source?.hasPrefix("ann!") == true)
    }
}
