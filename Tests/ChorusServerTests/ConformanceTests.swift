import ChorusIRC
import XCTest

/// Replies as the specifications (modern.ircdocs.horse, IRCv3) and the conformance suite irctest
/// want them, each written from the text rather than from what Chorus did before.
final class ConformanceTests: XCTestCase {
    var server: TestServer!

    override func setUpWithError() throws {
        server = try TestServer()
    }

    override func tearDown() {
        server = nil
    }

    func registered(_ nick: String) throws -> TestClient {
        let c = try server.connect()
        try c.register(nick)
        return c
    }

    /// A mode parameter that is not one the mode takes is answered with ERR_INVALIDMODEPARAM (696),
    /// not passed over in silence.
    func testAnInvalidLimitIsAnsweredWith696() throws {
        let ann = try registered("ann")
        try ann.join("#r")
        for bad in ["many", "0"] {
            ann.send("MODE #r +l \(bad)")
            let refused = try ann.expect(command: "696", "#r", "l", bad)
            XCTAssertFalse(refused.params.last?.isEmpty ?? true)
        }
        ann.send("MODE #r +l 5")
        try ann.expect(command: "MODE", "#r", "+l", "5")
    }

    /// 265/266's max is the most clients seen since start, not the count now; 255 counts
    /// registered clients, as 251 and 265 do, not connections still registering.
    func testLusers() throws {
        let a = try registered("ann")
        let b = try registered("ben")
        b.send("QUIT")
        _ = b.drain(for: 0.3)
        let unregistered = try server.connect()
        unregistered.send("NICK half")
        unregistered.send("PING sync")
        try unregistered.expect(command: "PONG")
        a.send("LUSERS")
        let lines = try a.collect(until: { $0.command == "266" })
        let me = try XCTUnwrap(lines.first { $0.command == "255" })
        XCTAssertEqual(me.params.last, "I have 1 clients and 0 servers", "only ann is registered now")
        let local = try XCTUnwrap(lines.first { $0.command == "265" })
        XCTAssertEqual(Array(local.params.dropFirst().prefix(2)), ["1", "2"], "1 now, 2 at most")
        XCTAssertEqual(local.params.last, "Current local users 1, max 2")
        let global = try XCTUnwrap(lines.first { $0.command == "266" })
        XCTAssertEqual(Array(global.params.dropFirst().prefix(2)), ["1", "2"])
        XCTAssertNotNil(lines.first { $0.command == "253" }, "the connection still registering is counted as unknown")
    }

    /// WHOWAS with a count of 0 or less means no limit.
    func testWhowasWithoutALimit() throws {
        let a = try registered("ann")
        for _ in 0..<3 {
            let b = try registered("ben")
            b.send("QUIT")
            _ = b.drain(for: 0.2)
        }
        for count in ["0", "-1"] {
            a.send("WHOWAS ben \(count)")
            let lines = try a.collect(until: { $0.command == "369" })
            XCTAssertEqual(lines.filter { $0.command == "314" }.count, 3, "WHOWAS ben \(count)")
        }
        a.send("WHOWAS ben 2")
        XCTAssertEqual(try a.collect(until: { $0.command == "369" }).filter { $0.command == "314" }.count, 2)
    }

    /// A key JOIN could not give back (a space, a lone space, a leading colon) is refused with 525.
    func testMalformedChannelKeysAreRefused() throws {
        let a = try registered("ann")
        try a.join("#k")
        for key in [":bad", "two words", " "] {
            a.send("MODE #k +k :\(key)")
            let refused = try a.expect(command: "525", "#k")
            XCTAssertEqual(refused.params.last, "Key is not well-formed", key)
        }
        a.send("MODE #k")
        let modes = try a.expect(command: "324", "#k")
        XCTAssertFalse(modes.params.contains { $0.contains("k") && $0.hasPrefix("+") }, "no key was set: \(modes.params)")
        a.send("MODE #k +k good")
        try a.expect(command: "MODE", "#k", "+k", "good")
    }

    /// MODE +o for a nick nobody has is 401; 441 is for a nick that is not in the room.
    func testOppingSomeoneWhoDoesNotExistIs401() throws {
        let a = try registered("ann")
        let b = try registered("ben")
        try a.join("#r")
        a.send("MODE #r +o nobody")
        try a.expect(command: "401", "nobody")
        a.send("MODE #r +o ben")
        try a.expect(command: "441", "ben", "#r")
        b.send("QUIT")
    }

    /// USER with an empty realname is short of a parameter.
    func testUserWithAnEmptyRealnameIs461() throws {
        let c = try server.connect()
        c.send("NICK ann")
        c.send("USER ann 0 * :")
        try c.expect(command: "461", "USER")
        c.send("USER ann 0 * :Ann")
        try c.expect(command: "001")
    }

    /// Before registration a numeric is addressed to `*`: the client has no nick yet.
    func testNickInUseBeforeRegistrationIsAddressedToStar() throws {
        let holder = try registered("ann")
        let c = try server.connect()
        c.send("NICK ann")
        let taken = try c.expect(command: "433")
        XCTAssertEqual(taken.params.prefix(2), ["*", "ann"])
        holder.send("QUIT")
    }

    func testInfo() throws {
        let a = try registered("ann")
        a.send("INFO")
        let lines = try a.collect(until: { $0.command == "374" })
        XCTAssertFalse(lines.filter { $0.command == "371" }.isEmpty)
        XCTAssertTrue(lines.filter { $0.command == "371" || $0.command == "374" }.allSatisfy { $0.params.first == "ann" })
    }

    /// IRCv3 bot mode: a +B client's messages carry the `bot` tag; others' do not.
    func testABotsMessagesCarryTheBotTag() throws {
        let listener = try server.connect()
        try listener.register("ann", caps: ["message-tags"])
        try listener.join("#r")
        let bot = try registered("ci")
        try bot.join("#r")
        bot.send("MODE ci +B")
        try bot.expect(command: "MODE", "ci", "+B")
        bot.send("PRIVMSG #r :build passed")
        let line = try listener.expect(command: "PRIVMSG", "#r", "build passed")
        XCTAssertNotNil(line.tag("bot"))
        let person = try registered("ben")
        try person.join("#r")
        person.send("PRIVMSG #r :thanks")
        XCTAssertNil(try listener.expect(command: "PRIVMSG", "#r", "thanks").tag("bot"))
    }

    /// UTF8ONLY: a line that is not UTF-8 is refused with FAIL <command> INVALID_UTF8, labeled,
    /// and nobody receives it.
    func testALineThatIsNotUTF8IsRefusedAndNotRelayed() throws {
        let sender = try server.connect()
        try sender.register("ann", caps: ["labeled-response", "standard-replies", "batch"])
        try sender.join("#u")
        let listener = try registered("ben")
        try listener.join("#u")
        sender.sendRaw(Array("@label=xyz PRIVMSG #u hi".utf8) + [0xAA] + Array("\r\n".utf8))
        let fail = try sender.expect(command: "FAIL", "PRIVMSG", "INVALID_UTF8")
        XCTAssertEqual(fail.tag("label"), "xyz")
        sender.send("PRIVMSG #u :fine")
        let next = try listener.expect(command: "PRIVMSG")
        XCTAssertEqual(next.params.last, "fine", "the bad line was not relayed")
    }

    /// account-registration and chathistory answer their errors with FAIL: a client that speaks
    /// them reads FAIL, not a NOTICE, whether or not it asked for standard-replies.
    func testRegisterAndChathistoryErrorsAreFailsWithoutStandardReplies() throws {
        try server.addAccount("taken", "taken-password")
        let c = try registered("eve")
        c.send("REGISTER taken * some-long-password")
        try c.expect(command: "FAIL", "REGISTER", "ACCOUNT_EXISTS", "taken")
        c.send("CHATHISTORY LATEST #nowhere * 10")
        try c.expect(command: "FAIL", "CHATHISTORY", "INVALID_TARGET")
    }

    /// UTF8ONLY asks for the FAIL whether or not the client negotiated standard-replies (a NOTICE in
    /// its place failed irctest's testUtf8Validation); a line whose command is not one (`NO_SUCH`)
    /// still gets its label back with the 421.
    func testInvalidUTF8IsAFailForEveryClientAndAnUnparsedCommandKeepsItsLabel() throws {
        let plain = try registered("cy")
        plain.sendRaw(Array("PRIVMSG cy hi".utf8) + [0xAA] + Array("\r\n".utf8))
        try plain.expect(command: "FAIL", "PRIVMSG", "INVALID_UTF8")
        let labeled = try server.connect()
        try labeled.register("dee", caps: ["labeled-response", "batch"])
        labeled.send("@label=deadbeef NONEXISTENT_COMMAND")
        let unknown = try labeled.expect(command: "421")
        XCTAssertEqual(unknown.tag("label"), "deadbeef")
    }

    /// echo-message: a line to yourself comes back twice, the delivery and the echo, which
    /// carries the label; labeled-response labels an unknown command's 421 too.
    func testAMessageToYourselfIsDeliveredAndEchoed() throws {
        let c = try server.connect()
        try c.register("ann", caps: ["echo-message", "labeled-response", "batch"])
        c.send("@label=me PRIVMSG ann :note to self")
        let first = try c.expect(command: "PRIVMSG", "ann", "note to self")
        let second = try c.expect(command: "PRIVMSG", "ann", "note to self")
        XCTAssertEqual([first, second].compactMap { $0.tag("label") }, ["me"], "one delivery, one labeled echo")
        c.send("@label=what FROBNICATE")
        let unknown = try c.expect(command: "421")
        XCTAssertEqual(unknown.tag("label"), "what")
    }

    /// No line over 512 bytes (tags aside, CR LF included) leaves the server: the bot's long
    /// notices are split at spaces and arrive whole, and a relayed line is cut to fit its longer
    /// source. The longest legal line of each kind is sent, and every line received is measured.
    func testNoLineLeavesLongerThan512Bytes() throws {
        try server.addAccount("ann", "ann-password")
        let ann = try server.connect(as: "ann", caps: ["message-tags"])
        try ann.join("#longroom-with-a-long-name")
        let listener = try server.connect()
        try listener.register("listener-with-a-long-nick")
        try listener.join("#longroom-with-a-long-name")
        func bodyBytes(_ line: String) -> Int {
            let body = line.hasPrefix("@") ? line[line.index(after: line.firstIndex(of: " ")!)...] : line[...]
            return body.utf8.count + 2
        }
        let room = "#longroom-with-a-long-name"
        let title = String(repeating: "Fix the très long sink ", count: 8).trimmingCharacters(in: .whitespaces)
        ann.send("PRIVMSG \(room) :!job add \(title.prefix(200))")
        try ann.expect("created") { $0.params.last?.contains("created job 1") == true }
        let words = (0..<300).map { "word\($0)é" }.joined(separator: " ")
        let comment = String(words.prefix(900))
        // The longest a client may send: 510 bytes before CR LF.
        let prefix = "PRIVMSG \(room) :!comment 1 "
        let typed = String(decoding: Message.prefix(of: Array(comment.utf8)[...], bytes: 510 - prefix.utf8.count), as: UTF8.self)
        ann.sendRaw(Array((prefix + typed + "\r\n").utf8))
        var received: [String] = []
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            received += ann.drainRaw(for: 0.3)
            if received.contains(where: { $0.contains("NOTICE \(room)") }) && received.count > 2 { break }
        }
        ann.send("PRIVMSG \(room) :!comments 1")
        received += ann.drainRaw(for: 0.8)
        let heard = listener.drainRaw(for: 0.8)
        for line in received + heard {
            XCTAssertLessThanOrEqual(bodyBytes(line), 512, line)
        }
        // The event arrives whole, over several notices; the relayed line was cut, not split.
        let eventText = received.filter { $0.contains("NOTICE \(room) :") }
            .map { String($0[$0.range(of: "NOTICE \(room) :")!.upperBound...]) }.joined(separator: " ")
        XCTAssertTrue(eventText.hasSuffix(String(typed.suffix(40))), eventText)
        XCTAssertEqual(heard.filter { $0.contains("PRIVMSG \(room) :!comment 1 ") }.count, 1, "relayed once, cut to fit")
    }

    /// KICK #a,#b nick1,nick2 kicks in pairs, as RFC 2812 and the advertised TARGMAX say.
    func testKickInSeveralRooms() throws {
        let op = try registered("ann")
        let b = try registered("ben"), c = try registered("cat")
        try op.join("#a"); try op.join("#b")
        try b.join("#a"); try c.join("#b")
        op.send("KICK #a,#b ben,cat :tidy up")
        try b.expect(command: "KICK", "#a", "ben", "tidy up")
        try c.expect(command: "KICK", "#b", "cat", "tidy up")
        op.send("KICK #a,#b ben")
        try op.expect(command: "461", "KICK")
    }

    /// The shortest password is a setting (`password-min-length`, 8 unless set): irctest's
    /// services tests register with 6 characters.
    func testTheShortestPasswordIsASetting() throws {
        let strict = try server.connect()
        strict.send("CAP LS 302")
        strict.send("CAP REQ :standard-replies")
        strict.send("REGISTER bob * sixsix")
        let refused = try strict.expect(command: "FAIL", "REGISTER", "WEAK_PASSWORD")
        XCTAssertTrue(refused.params.last?.contains("at least 8 characters") == true, "\(refused.params)")

        let lenient = try TestServer(configure: { $0.passwordMinLength = 6 })
        let c = try lenient.connect()
        c.send("CAP LS 302")
        c.send("CAP REQ :standard-replies")
        c.send("REGISTER bob * sixsix")
        try c.expect(command: "REGISTER", "SUCCESS", "bob")
        c.send("CAP END")
        c.send("NICK bob")
        c.send("USER bob 0 * :Bob")
        try c.expect(command: "001")
        XCTAssertThrowsError(try lenient.server.accounts.register(name: "cat", password: "five5"))
    }
}
