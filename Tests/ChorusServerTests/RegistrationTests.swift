import ChorusIRC
@testable import ChorusServer
import NIOCore
import XCTest

final class RegistrationTests: XCTestCase {
    func testWelcomeBurstHasISupportLusersAndMotd() throws {
        let server = try TestServer()
        let c = try server.connect()
        let burst = try c.register("alice")
        let commands = burst.map(\.command)
        XCTAssertEqual(Array(commands.prefix(4)), ["001", "002", "003", "004"])
        let isupport = burst.filter { $0.command == "005" }.flatMap(\.params)
        XCTAssertTrue(isupport.contains("CASEMAPPING=ascii"))
        XCTAssertTrue(isupport.contains("CHANTYPES=#"))
        XCTAssertTrue(isupport.contains("WHOX"))
        XCTAssertTrue(commands.contains("251"))
        XCTAssertEqual(commands.last, "376")
        XCTAssertEqual(burst[0].params[0], "alice")
        // 005 and 372 lines are written from parameters made once: each still names this client.
        for line in burst where line.command == "005" || line.command == "372" {
            XCTAssertEqual(line.params.first, "alice", "\(line)")
            XCTAssertGreaterThan(line.params.count, 1, "\(line)")
        }
        XCTAssertTrue(burst.filter { $0.command == "005" }.allSatisfy { $0.params.last == "are supported by this server" })
        XCTAssertTrue(burst.filter { $0.command == "372" }.allSatisfy { $0.params.last?.hasPrefix("- ") == true })
        XCTAssertFalse(burst.filter { $0.command == "372" }.isEmpty, "the test server has a MOTD")
    }

    /// The user name keeps printable ASCII but '@' and '!', at most 10 of them, behind a '~'.
    func testUserNamesKeepOnlyWhatAPrefixCanHold() throws {
        let server = try TestServer()
        for (i, (given, kept)) in [("b@d!é~x", "~bd~x"), ("@!", "~user"), ("abcdefghijklmnop", "~abcdefghij")].enumerated() {
            let c = try server.connect()
            c.send("NICK u\(i)")
            c.send("USER \(given) 0 * :U")
            let welcome = try c.expect(command: "001")
            XCTAssertTrue(welcome.params.last!.hasSuffix(" u\(i)!\(kept)@127.0.0.1"), "\(given): \(welcome.params.last!)")
        }
    }

    func testCapNegotiationHoldsRegistrationUntilEnd() throws {
        let server = try TestServer()
        let c = try server.connect()
        c.send("CAP LS 302")
        let ls = try c.expect(command: "CAP", "*", "LS")
        XCTAssertTrue(ls.params.last!.contains("sasl=PLAIN"))
        XCTAssertTrue(ls.params.last!.contains("draft/chathistory"))
        c.send("NICK bob")
        c.send("USER bob 0 * :Bob")
        c.send("CAP REQ :server-time bogus-cap")
        try c.expect(command: "CAP", "*", "NAK")
        XCTAssertFalse(c.drain(for: 0.3).contains { $0.command == "001" }, "no welcome while negotiating")
        c.send("CAP REQ :server-time message-tags")
        try c.expect(command: "CAP", "*", "ACK")
        c.send("CAP END")
        let welcome = try c.expect(command: "001")
        XCTAssertNotNil(welcome.tag("time"), "server-time adds a time tag")
        c.send("CAP LIST")
        let list = try c.expect(command: "CAP", "bob", "LIST")
        XCTAssertTrue(list.params.last!.contains("server-time"))
    }

    func testNickRulesAndCommandsBeforeRegistration() throws {
        let server = try TestServer()
        let a = try server.connect()
        try a.register("alice")
        let b = try server.connect()
        b.send("JOIN #x")
        try b.expect(command: "451")
        b.send("NICK 9lives")
        try b.expect(command: "432")
        b.send("NICK ALICE")
        try b.expect(command: "433")
        b.send("NICK Chorus")
        try b.expect(command: "432")
        try b.register("bob")
        b.send("NICK alice")
        try b.expect(command: "433")
        b.send("NICK")
        try b.expect(command: "431")
        try a.join("#room")
        try b.join("#room")
        b.send("NICK robert")
        let change = try a.expect(command: "NICK", "robert")
        XCTAssertEqual(change.source?.hasPrefix("bob!"), true)
        b.send("USER x 0 * :again")
        try b.expect(command: "462")
    }

    func testPingPongAndQuit() throws {
        let server = try TestServer()
        let a = try server.connect()
        try a.register("alice")
        a.send("PING :token-1")
        let pong = try a.expect(command: "PONG")
        XCTAssertEqual(pong.params.last, "token-1")
        let b = try server.connect()
        try b.register("bob")
        try a.join("#q")
        try b.join("#q")
        b.send("QUIT :gone fishing")
        try b.expect(command: "ERROR")
        let quit = try a.expect(command: "QUIT")
        XCTAssertEqual(quit.params.first, "Quit: gone fishing")
    }

    func testServerPingsIdleClientsAndDropsSilentOnes() throws {
        let server = try TestServer(configure: { $0.pingInterval = 0.4; $0.pingTimeout = 0.4; $0.registrationTimeout = 0.8 })
        let a = try server.connect()
        try a.register("alice")
        let ping = try a.expect(command: "PING", timeout: 3)
        a.send("PONG :\(ping.params.last ?? "")")
        // Stop answering: the server gives up.
        let error = try a.expect(command: "ERROR", timeout: 5)
        XCTAssertTrue(error.params.last!.contains("Ping timeout"))

        let lazy = try server.connect()
        lazy.send("NICK lazy")
        let timeout = try lazy.expect(command: "ERROR", timeout: 5)
        XCTAssertTrue(timeout.params.last!.contains("Registration timed out"))
    }

    func testLabeledResponses() throws {
        let server = try TestServer()
        let c = try server.connect()
        try c.register("alice", caps: ["labeled-response", "batch", "message-tags"])
        /// Sends a labeled line; its answer must be `command` carrying that label.
        @discardableResult
        func answer(_ label: String, _ line: String, _ command: String, from client: TestClient) throws -> Message {
            client.send("@label=\(label) \(line)")
            let reply = try client.expect(command: command)
            XCTAssertEqual(reply.tag("label"), label, line)
            return reply
        }
        try answer("one", "PING x", "PONG", from: c)
        try answer("two", "PONG x", "ACK", from: c)
        let open = try answer("three", "MOTD", "BATCH", from: c)
        XCTAssertEqual(open.params.dropFirst().first, "labeled-response")
        let id = String(open.params[0].dropFirst())
        let inner = try c.expect(command: "372")
        XCTAssertEqual(inner.tag("batch"), id)
        try c.expect("batch end") { $0.command == "BATCH" && $0.params == ["-" + id] }
        // Refusals carry the label too: an unknown verb, a verb missing its parameters, and a
        // line from a client that has not registered yet.
        try answer("four", "FROBNICATE", "421", from: c)
        try answer("five", "JOIN", "461", from: c)
        let early = try server.connect()
        early.send("CAP REQ :labeled-response")
        try early.expect(command: "CAP", "*", "ACK")
        try answer("six", "PRIVMSG #x :too soon", "451", from: early)

        // With server-time too, each line of a labeled batch carries the batch and its own time.
        let timed = try server.connect()
        try timed.register("tim", caps: ["labeled-response", "batch", "server-time"])
        let batchOpen = try answer("seven", "LUSERS", "BATCH", from: timed)
        let batchID = String(batchOpen.params[0].dropFirst())
        let lines = try timed.collect { $0.command == "BATCH" && $0.params == ["-" + batchID] }
        XCTAssertEqual(lines.first?.command, "251")
        for line in lines {
            XCTAssertEqual(line.tag("batch"), line.command == "BATCH" ? nil : batchID, "\(line)")
            XCTAssertNotNil(line.tag("time"), "\(line)")
            XCTAssertNil(line.tag("label"), "only the batch's opening line carries the label: \(line)")
        }
        XCTAssertEqual(lines.first?.params.first, "tim")
    }

    /// Client addresses as hosts: IPv4 written by hand must read as NIO writes it; IPv6 is NIO's.
    func testAddressesAsTextMatchNIO() throws {
        for text in ["0.0.0.0", "127.0.0.1", "10.1.20.255", "192.168.100.9", "255.255.255.255", "1.2.3.4", "::1", "2001:db8::42"] {
            let address = try SocketAddress(ipAddress: text, port: 6667)
            XCTAssertEqual(IRCServer.text(of: address), address.ipAddress, text)
        }
    }
}
