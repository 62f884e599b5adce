import ChorusIRC
import XCTest

final class ChannelTests: XCTestCase {
    func testJoinTalkPartBetweenTwoClients() throws {
        let server = try TestServer()
        let a = try server.connect(), b = try server.connect()
        try a.register("alice")
        try b.register("bob", caps: ["server-time", "message-tags", "account-tag", "echo-message"])
        a.send("JOIN #kitchen")
        let names = try a.expect(command: "353")
        XCTAssertEqual(names.params.last, "@alice", "the creator is the room's manager")
        try b.join("#kitchen")
        let joined = try a.expect(command: "JOIN", "#kitchen")
        XCTAssertTrue(joined.source!.hasPrefix("bob!"))

        a.send("PRIVMSG #kitchen :who took the last mug?")
        let got = try b.expect(command: "PRIVMSG", "#kitchen")
        XCTAssertEqual(got.params.last, "who took the last mug?")
        XCTAssertNotNil(got.tag("msgid"))
        XCTAssertNotNil(got.tag("time"))
        XCTAssertTrue(a.drain(for: 0.2).allSatisfy { $0.command != "PRIVMSG" }, "no echo without echo-message")

        b.send("PRIVMSG #kitchen :me, sorry")
        try b.expect(command: "PRIVMSG", "#kitchen", "me, sorry")  // echo-message
        try a.expect(command: "PRIVMSG", "#kitchen", "me, sorry")

        b.send("PART #kitchen :bye")
        let part = try a.expect(command: "PART", "#kitchen")
        XCTAssertEqual(part.params.last, "bye")
        b.send("PRIVMSG #kitchen :still here?")
        try b.expect(command: "404")
        b.send("PART #kitchen")
        try b.expect(command: "442")
        b.send("PART #nowhere")
        try b.expect(command: "403")
    }

    func testTopicModesKickAndInvite() throws {
        let server = try TestServer()
        let op = try server.connect(), member = try server.connect(), guest = try server.connect()
        try op.register("olga")
        try member.register("max")
        try guest.register("gus", caps: ["invite-notify"])
        try op.join("#ops")
        try member.join("#ops")

        member.send("TOPIC #ops :mine now")
        try member.expect(command: "482")
        op.send("TOPIC #ops :Weekly rota")
        try member.expect(command: "TOPIC", "#ops", "Weekly rota")
        member.send("TOPIC #ops")
        try member.expect(command: "332", "#ops", "Weekly rota")
        try member.expect(command: "333", "#ops")

        op.send("MODE #ops")
        let modes = try op.expect(command: "324", "#ops")
        XCTAssertEqual(modes.params[2], "+nt")
        try op.expect(command: "329", "#ops")
        op.send("MODE #ops +ik-t sesame")
        let change = try member.expect(command: "MODE", "#ops")
        XCTAssertEqual(Array(change.params.dropFirst()), ["+ik-t", "sesame"])
        member.send("MODE #ops +m")
        try member.expect(command: "482")
        op.send("MODE #ops b")
        try op.expect(command: "368", "#ops")

        guest.send("JOIN #ops")
        try guest.expect(command: "473", "#ops")
        member.send("INVITE gus #ops")
        try member.expect(command: "482")
        op.send("INVITE gus #ops")
        try op.expect(command: "341", "gus", "#ops")
        try guest.expect(command: "INVITE", "gus", "#ops")
        try guest.join("#ops")

        op.send("MODE #ops +o max")
        try guest.expect(command: "MODE", "#ops", "+o", "max")
        member.send("KICK #ops gus :not today")
        let kick = try guest.expect(command: "KICK", "#ops", "gus")
        XCTAssertEqual(kick.params.last, "not today")
        member.send("KICK #ops nobody")
        try member.expect(command: "441")
        op.send("MODE #ops +b gus")
        try op.expect(command: "MODE", "#ops", "+b", "gus!*@*")
        op.send("MODE #ops -i")
        try op.expect(command: "MODE", "#ops", "-i")
        guest.send("JOIN #ops sesame")
        try guest.expect(command: "474", "#ops")
    }

    func testNamesListWhoWhoisAndAway() throws {
        let server = try TestServer()
        let a = try server.connect(), b = try server.connect()
        try a.register("alice", caps: ["multi-prefix", "away-notify"])
        try b.register("bob")
        try a.join("#c")
        try b.join("#c")
        a.send("MODE #c +v alice")
        try a.expect(command: "MODE", "#c", "+v", "alice")
        a.send("NAMES #c")
        let names = try a.expect(command: "353")
        XCTAssertEqual(Set(names.params.last!.split(separator: " ")), ["@+alice", "bob"])
        a.send("LIST")
        let list = try a.expect(command: "322", "#c")
        XCTAssertEqual(list.params[2], "2")
        try a.expect(command: "323")

        b.send("WHO #c")
        let rows = try b.collect(until: { $0.command == "315" }).filter { $0.command == "352" }
        XCTAssertEqual(Set(rows.map { $0.params[5] }), ["alice", "bob"])
        b.send("WHO #c %tnaf,7")
        let whox = try b.expect(command: "354")
        XCTAssertEqual(whox.params[1], "7")
        try b.expect(command: "315")

        b.send("AWAY :lunch")
        try b.expect(command: "306")
        let away = try a.expect(command: "AWAY")
        XCTAssertEqual(away.params, ["lunch"])
        a.send("WHOIS bob")
        let whois = try a.collect(until: { $0.command == "318" })
        XCTAssertEqual(whois.first { $0.command == "311" }?.params[1], "bob")
        XCTAssertEqual(whois.first { $0.command == "301" }?.params.last, "lunch")
        XCTAssertEqual(whois.first { $0.command == "319" }?.params.last, "#c")
        a.send("PRIVMSG bob :you there?")
        try a.expect(command: "301", "bob", "lunch")
        try b.expect(command: "PRIVMSG", "bob", "you there?")
        a.send("WHOIS nobody")
        try a.expect(command: "401")
        a.send("ISON bob nobody alice")
        let ison = try a.expect(command: "303")
        XCTAssertEqual(ison.params.last, "bob alice")
        a.send("USERHOST bob")
        let uh = try a.expect(command: "302")
        XCTAssertTrue(uh.params.last!.hasPrefix("bob=-~bob@"))
        b.send("QUIT")
        // Two connections' lines have no order between them: ask only once bob's QUIT has been seen.
        try a.expect(command: "QUIT")
        a.send("WHOWAS bob")
        try a.expect(command: "314", "bob")
    }

    /// A room too big for one 353 line: the names are spread over lines that each fit in 512 bytes,
    /// none is lost or cut, and the first joiner keeps its @.
    func testANamesListTooLongForOneLineIsSplitWithoutLosingANick() throws {
        let server = try TestServer()
        let host = try server.connect()
        try host.register("host", caps: ["userhost-in-names", "multi-prefix"])
        try host.join("#big")
        var guests: [TestClient] = []
        var expected: Set<String> = ["@host!~host@127.0.0.1"]  // ident unchecked: "~", user names cut to 10
        for i in 0..<40 {
            let nick = "guest\(i)" + String(repeating: "x", count: 30 - "guest\(i)".count)  // the longest nick allowed
            let guest = try server.connect()
            try guest.register(nick)
            try guest.join("#big")
            guests.append(guest)
            expected.insert("\(nick)!~\(nick.prefix(10))@127.0.0.1")
        }
        host.send("NAMES #big")
        let lines = try host.collect(until: { $0.command == "366" }).filter { $0.command == "353" }
        XCTAssertGreaterThan(lines.count, 3, "41 names of ~52 bytes need several lines")
        var seen: [String] = []
        for line in lines {
            XCTAssertEqual(Array(line.params.prefix(3)), ["host", "=", "#big"])
            XCTAssertLessThanOrEqual(line.serialized(includeTags: false).utf8.count + 2, Limits.lineBytes)
            seen += line.params[3].split(separator: " ").map(String.init)
        }
        XCTAssertEqual(seen.count, 41)
        XCTAssertEqual(Set(seen), expected)
    }

    func testModeratedAndNoExternalMessages() throws {
        let server = try TestServer()
        let a = try server.connect(), b = try server.connect()
        try a.register("alice")
        try b.register("bob")
        try a.join("#quiet")
        b.send("PRIVMSG #quiet :hello from outside")
        try b.expect(command: "404", "#quiet")
        try b.join("#quiet")
        a.send("MODE #quiet +m")
        try b.expect(command: "MODE", "#quiet", "+m")
        b.send("PRIVMSG #quiet :can I talk?")
        try b.expect(command: "404", "#quiet")
        a.send("MODE #quiet +v bob")
        try b.expect(command: "MODE", "#quiet", "+v", "bob")
        b.send("PRIVMSG #quiet :now I can")
        try a.expect(command: "PRIVMSG", "#quiet", "now I can")
        b.send("NOTICE #nowhere :notices never get errors")
        XCTAssertTrue(b.drain(for: 0.3).isEmpty)
    }
}
