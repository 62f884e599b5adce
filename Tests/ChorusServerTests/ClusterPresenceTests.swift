import ChorusTestSupport
import ChorusIRC
import Foundation
import XCTest

/// Who is connected, across several servers on one PostgreSQL database: the users of the others
/// come and go in a room as the room's own do, are listed by NAMES, WHO, WHOIS, LUSERS and MONITOR,
/// and keep their nicks to themselves. Runs in the PostgreSQL pass (`CHORUS_TEST_STORE=postgres`).
final class ClusterPresenceTests: XCTestCase {
    private func nodes(_ count: Int) throws -> [TestServer] {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "cluster-\(UUID().uuidString)"
        return try (0..<count).map { _ in try TestServer(sharing: shared) }
    }

    /// Asks NAMES until `nick`, connected to another node, shows in `room` on `client`'s node (or,
    /// with `present` false, shows no more), for at most 5 s: what the other node committed reaches
    /// this one a few milliseconds later.
    private func waitUntil(_ client: TestClient, sees nick: String, in room: String, present: Bool = true) throws {
        for _ in 0..<50 {
            client.send("NAMES \(room)")
            let names = try client.collect { $0.command == "366" }.filter { $0.command == "353" }
            let shown = names.contains(where: { $0.params.last?.split(separator: " ").contains { $0.hasSuffix(nick) } == true })
            if shown == present { return }
            usleep(100_000)
        }
        XCTFail("\(nick) \(present ? "never showed" : "still shows") in \(room) on the other node")
    }

    func testUsersOnAnotherNodeComeAndGoInTheRoomAndAreListed() throws {
        let n = try nodes(2)
        let ann = try n[0].connect()
        try ann.register("ann", caps: ["away-notify", "extended-join", "multi-prefix"])
        try ann.join("#kitchen")
        let ben = try n[1].connect()
        try ben.register("ben")
        try waitUntil(ben, sees: "ann", in: "#kitchen")
        ben.send("JOIN #kitchen")
        // ben's NAMES on node B has ann, op as she came first on node A.
        let names = try ben.expect(command: "353")
        XCTAssertEqual(Set(names.params.last?.split(separator: " ") ?? []), ["@ann", "ben"], "\(names)")
        // ann on node A sees ben come in, in extended-join's form.
        let join = try ann.expect("ben's JOIN") { $0.command == "JOIN" && $0.source?.hasPrefix("ben!") == true }
        XCTAssertEqual(join.params, ["#kitchen", "*", "ben Tester"])

        ann.send("NAMES #kitchen")
        XCTAssertEqual(Set(try ann.expect(command: "353").params.last?.split(separator: " ") ?? []), ["@ann", "ben"])
        ann.send("WHO #kitchen")
        let who = try ann.collect { $0.command == "315" }.filter { $0.command == "352" }
        XCTAssertEqual(Set(who.map { $0.params[5] }), ["ann", "ben"], "\(who)")
        ben.send("WHOIS ann")
        let whois = try ben.collect { $0.command == "318" }
        XCTAssertEqual(whois.first { $0.command == "311" }?.params[1], "ann")
        XCTAssertEqual(whois.first { $0.command == "319" }?.params.last, "@#kitchen")
        ben.send("LUSERS")
        XCTAssertEqual(try ben.expect(command: "266").params[1], "2", "global users: one here, one on node A")
        ben.send("ISON ann nobody")
        XCTAssertEqual(try ben.expect(command: "303").params.last, "ann")

        // What ben does on node B reaches ann on node A, in order.
        ben.send("AWAY :fetching milk")
        XCTAssertEqual(try ann.expect(command: "AWAY").params, ["fetching milk"])
        ben.send("NICK benny")
        let nick = try ann.expect(command: "NICK")
        XCTAssertEqual(nick.source?.hasPrefix("ben!"), true)
        XCTAssertEqual(nick.params, ["benny"])
        ben.send("PRIVMSG ann :a private word")
        let line = try ann.expect("benny's private line, from node B") { $0.command == "PRIVMSG" }
        XCTAssertEqual(line.source?.hasPrefix("benny!"), true)
        XCTAssertEqual(line.params, ["ann", "a private word"])
        ben.send("PART #kitchen :off to the shop")
        let part = try ann.expect(command: "PART")
        XCTAssertEqual(part.source?.hasPrefix("benny!"), true)
        XCTAssertEqual(part.params, ["#kitchen", "off to the shop"])
        ben.send("JOIN #kitchen")
        try ann.expect(command: "JOIN")
        ben.send("QUIT :home time")
        let quit = try ann.expect(command: "QUIT")
        XCTAssertEqual(quit.source?.hasPrefix("benny!"), true)
        XCTAssertEqual(quit.params, ["Quit: home time"])
        ann.send("NAMES #kitchen")
        XCTAssertEqual(try ann.expect(command: "353").params.last, "@ann", "ben is gone from the list")
    }

    /// Two nodes; ann logged in on node A and managing #ops, ben logged in on node B, who knows her there.
    private func annInOpsAndBenElsewhere() throws -> (nodes: [TestServer], ann: TestClient, ben: TestClient) {
        let n = try nodes(2)
        try n[0].addAccount("ann", "ann-password")
        try n[0].addAccount("ben", "ben-password")
        let ann = try n[0].connect(as: "ann")
        try ann.join("#ops")
        let ben = try n[1].connect(as: "ben")
        try waitUntil(ben, sees: "ann", in: "#ops")
        return (n, ann, ben)
    }

    func testATopicModesAndRolesSetOnOneNodeHoldOnTheOthers() throws {
        let (n, ann, ben) = try annInOpsAndBenElsewhere()
        try ben.join("#ops")
        try ann.expect("ben's JOIN") { $0.command == "JOIN" && $0.source?.hasPrefix("ben!") == true }

        ann.send("TOPIC #ops :Rota on the wall")
        let topic = try ben.expect(command: "TOPIC")
        XCTAssertEqual(topic.params, ["#ops", "Rota on the wall"])
        XCTAssertEqual(topic.source?.hasPrefix("ann!"), true)
        ann.send("MODE #ops +m")
        XCTAssertEqual(try ben.expect(command: "MODE").params, ["#ops", "+m"])
        // ann makes ben, on the other node, a manager: his node gives him +o, and ann hears it.
        ann.send("MODE #ops +o ben")
        XCTAssertEqual(try ben.expect(command: "MODE").params, ["#ops", "+o", "ben"])
        XCTAssertEqual(try ann.expect("ben's +o, from his node") { $0.command == "MODE" && $0.params.contains("ben") }.params, ["#ops", "+o", "ben"])
        // As a manager he may change the topic on his node, and it holds on hers.
        ben.send("TOPIC #ops :Ben runs the rota")
        XCTAssertEqual(try ann.expect(command: "TOPIC").params, ["#ops", "Ben runs the rota"])
        let late = try n[0].connect()
        try late.register("late")
        late.send("TOPIC #ops")
        XCTAssertEqual(try late.expect(command: "332").params.last, "Ben runs the rota")
    }

    func testAManagerInvitesAndKicksAMemberConnectedToAnotherNode() throws {
        let (n, ann, ben) = try annInOpsAndBenElsewhere()
        defer { withExtendedLifetime(n) {} }  // the servers run to the end of the test

        ann.send("INVITE ben #ops")
        // ben's node puts him in the room once the membership is stored; ann sees him come in.
        XCTAssertEqual(try ben.expect(command: "JOIN").params.first, "#ops")
        try ann.expect("ben's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("ben!") == true }

        // ben's node says the KICK as ann gave it; ann's room hears it once, as a KICK.
        ann.send("KICK #ops ben :not today")
        let kick = try ben.expect(command: "KICK")
        XCTAssertEqual(kick.params, ["#ops", "ben", "not today"])
        XCTAssertTrue(kick.source?.hasPrefix("ann!") == true, "\(kick)")
        let heard = ann.drain(for: 1.5).filter { ($0.command == "KICK" || $0.command == "PART") && $0.params.first == "#ops" }
        XCTAssertEqual(heard.map(\.command), ["KICK"], "\(heard)")
        XCTAssertEqual(heard.first?.params, ["#ops", "ben", "not today"])
        ann.send("NAMES #ops")
        XCTAssertEqual(try ann.expect(command: "353").params.last, "@ann")
    }

    /// A guest connected to another node has no membership to store: a manager here invites them
    /// into an invite-only room and kicks them out by an order to their node. What no history
    /// keeps (a TAGMSG, a line to the room's managers) reaches the members there too.
    func testAGuestOnAnotherNodeIsInvitedAndKickedAndHearsWhatIsNotKept() throws {
        let n = try nodes(2)
        try n[0].addAccount("ann", "ann-password")
        try n[0].addAccount("ben", "ben-password")
        let ann = try n[0].connect(as: "ann", caps: ["message-tags"])
        try ann.join("#ops")
        ann.send("MODE #ops +i")
        try ann.expect(command: "MODE")
        let ben = try n[1].connect(as: "ben")
        let gus = try n[1].connect()
        try gus.register("gus", caps: ["message-tags"])
        try waitUntil(gus, sees: "ann", in: "#ops")
        ann.send("INVITE nobody #ops")
        XCTAssertEqual(try ann.expect(command: "401").params[1], "nobody")
        try ann.waitUntilOnline("gus")

        gus.send("JOIN #ops")
        XCTAssertEqual(try gus.expect(command: "473").params[1], "#ops", "invite-only")
        ann.send("INVITE gus #ops")
        XCTAssertEqual(try ann.expect(command: "341").params, ["ann", "gus", "#ops"])
        let invite = try gus.expect(command: "INVITE")
        XCTAssertEqual(invite.params, ["gus", "#ops"])
        XCTAssertEqual(invite.source?.hasPrefix("ann!"), true)
        gus.send("JOIN #ops")
        try gus.expect(command: "366")
        try ann.expect("gus's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("gus!") == true }

        // ben, on node B too, becomes a manager: a line to @#ops reaches him and not gus.
        ann.send("INVITE ben #ops")
        try ben.expect(command: "JOIN")
        try ann.expect("ben's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("ben!") == true }
        ann.send("MODE #ops +o ben")
        try ben.expect(command: "MODE")
        ann.send("@+typing=active TAGMSG #ops")
        let typing = try gus.expect(command: "TAGMSG")
        XCTAssertEqual(typing.tag("+typing"), "active")
        XCTAssertEqual(typing.params, ["#ops"])
        ann.send("PRIVMSG @#ops :managers only")
        XCTAssertEqual(try ben.expect(command: "PRIVMSG").params, ["@#ops", "managers only"])
        ann.send("PRIVMSG #ops :everyone")
        XCTAssertEqual(try gus.expect(command: "PRIVMSG").params, ["#ops", "everyone"], "gus got no line before this one")

        ann.send("KICK #ops gus :not today")
        XCTAssertEqual(try ann.expect(command: "KICK").params, ["#ops", "gus", "not today"])
        let kick = try gus.expect(command: "KICK")
        XCTAssertEqual(kick.params, ["#ops", "gus", "not today"])
        XCTAssertEqual(kick.source?.hasPrefix("ann!"), true)
        gus.send("JOIN #ops")
        XCTAssertEqual(try gus.expect(command: "473").params[1], "#ops", "the invitation was used")
        XCTAssertFalse(ann.drain(for: 0.5).contains { $0.command == "PART" }, "ann saw the KICK, not a PART besides")
    }

    func testWhatCouldNotBeWrittenWhileTheDatabaseWasAwayIsWrittenOnceItIsBack() throws {
        let shared = "cluster-\(UUID().uuidString)"
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let a = try TestServer(sharing: shared), b = try TestServer(sharing: shared)
        let ann = try a.connect()
        try ann.register("ann")
        try ann.join("#x")
        let ben = try b.connect()
        try ben.register("ben")
        try waitUntil(ben, sees: "ann", in: "#x")
        // The presence table is away (as when the database is): ann's PART reaches no one else.
        try TestStore.renameTable("presence", to: "presence_away", folder: shared)
        ann.send("PART #x")
        try ann.expect(command: "PART")
        usleep(300_000)
        try TestStore.renameTable("presence_away", to: "presence", folder: shared)
        // Once it is back, node A writes its users again (at its next lease renewal, 2 s).
        var gone = false
        for _ in 0..<60 where !gone {
            ben.send("NAMES #x")
            let names = try ben.collect { $0.command == "366" }.filter { $0.command == "353" }
            gone = !names.contains { $0.params.last?.split(separator: " ").contains { $0.hasSuffix("ann") } == true }
            if !gone { usleep(100_000) }
        }
        XCTAssertTrue(gone, "ann's PART never reached node B")
    }

    func testANickIsTakenOnceAcrossNodes() throws {
        let n = try nodes(2)
        let cat = try n[0].connect()
        try cat.register("cat")
        let watcher = try n[0].connect()
        try watcher.register("watcher")
        watcher.send("MONITOR + dog")
        try watcher.expect(command: "731")

        // Registering as cat on node B is refused; so is taking it by NICK.
        let other = try n[1].connect()
        other.send("NICK cat")
        other.send("USER x 0 * :Other")
        try other.expect(command: "433", "cat")
        other.send("NICK CAT")
        try other.expect(command: "433")
        other.send("NICK dog")
        try other.expect(command: "001")
        // The watcher on node A hears dog come online on node B.
        XCTAssertEqual(try watcher.expect(command: "730").params.last?.hasPrefix("dog!"), true)
        other.send("NICK cat")
        try other.expect(command: "433", "cat")

        // Once cat leaves node A, the nick is free on node B.
        cat.send("QUIT :bye")
        try cat.expect(command: "ERROR")
        var taken = false
        for _ in 0..<50 where !taken {
            other.send("NICK cat")
            taken = try other.expect("an answer to NICK") { $0.command == "NICK" || $0.command == "433" }.command == "NICK"
            if !taken { usleep(100_000) }
        }
        XCTAssertTrue(taken, "cat was not free on node B after leaving node A")
        XCTAssertEqual(try watcher.expect(command: "731").params.last, "dog", "dog went offline with the nick change")
    }

    /// A guest on each of two nodes makes the same new room at the same moment, eight times over,
    /// and then two accounts do: the database makes each room once, and only the one whose node
    /// made it is its operator (for an account, its manager).
    func testOfTwoMakingOneRoomOnTwoNodesAtOnceOneIsItsOperator() throws {
        let n = try nodes(2)
        try n[0].addAccount("ann", "ann-password")
        try n[0].addAccount("ben", "ben-password")
        try n[1].server.reloadAccountKeys()
        let amy = try n[0].connect(), bob = try n[1].connect()
        try amy.register("amy")
        try bob.register("bob")
        let ann = try n[0].connect(as: "ann"), ben = try n[1].connect(as: "ben")
        for (prefix, first, second) in [("#guests", (amy, "amy"), (bob, "bob")), ("#team", (ann, "ann"), (ben, "ben"))] {
            let rooms = (1...8).map { "\(prefix)\($0)" }
            first.0.send("JOIN \(rooms.joined(separator: ","))")
            second.0.send("JOIN \(rooms.joined(separator: ","))")
            try assertOneOperator(of: rooms, first, second)
        }
    }

    /// A room whose only manager left is nobody's: ann and ben come into eight such rooms on two
    /// nodes at the same moment, and the database makes one of them each room's manager.
    func testOfTwoComingIntoARoomNobodyManagesOnTwoNodesOneManagesIt() throws {
        let n = try nodes(2)
        for name in ["ann", "ben", "cat"] { try n[0].addAccount(name, "\(name)-password") }
        try n[1].server.reloadAccountKeys()
        let rooms = (1...8).map { "#left\($0)" }, all = rooms.joined(separator: ",")
        let cat = try n[0].connect(as: "cat"), gus = try n[1].connect()
        try gus.register("gus")
        cat.send("JOIN \(all)")
        _ = try cat.collect(until: { $0.command == "366" && $0.params[1] == rooms.last })
        // gus, a guest on node B, asks until node B knows the rooms with cat in them, and then
        // that cat left.
        try waitUntil(gus, sees: "cat", in: rooms.last!)
        cat.send("PART \(all)")
        // Answered once what came before it is stored: cat's leaving, which made the rooms nobody's.
        cat.send("PRIVMSG Chorus :!rooms")
        try cat.expect("cat's rooms") { $0.params.last?.hasPrefix("You are not a member of any room") == true }
        try waitUntil(gus, sees: "cat", in: rooms.last!, present: false)

        let ann = try n[0].connect(as: "ann"), ben = try n[1].connect(as: "ben")
        ann.send("JOIN \(all)")
        ben.send("JOIN \(all)")
        try assertOneOperator(of: rooms, (ann, "ann"), (ben, "ben"))
    }

    /// Of two who came into `rooms` at once, exactly one is each room's operator, as each read it
    /// from its own name in the NAMES its JOIN got.
    private func assertOneOperator(of rooms: [String], _ first: (TestClient, String), _ second: (TestClient, String),
                                   file: StaticString = #filePath, line: UInt = #line) throws {
        func opped(_ who: TestClient, _ nick: String) throws -> [String: Bool] {
            var found: [String: Bool] = [:]
            for message in try who.collect(until: { $0.command == "366" && $0.params[1] == rooms.last }) where message.command == "353" {
                let names = message.params.last?.split(separator: " ").map(String.init) ?? []
                if names.contains("@" + nick) { found[message.params[2]] = true } else if names.contains(nick) { found[message.params[2]] = false }
            }
            return found
        }
        let firstOps = try opped(first.0, first.1), secondOps = try opped(second.0, second.1)
        for room in rooms {
            let ops = [firstOps[room], secondOps[room]].compactMap { $0 }
            XCTAssertEqual(ops.count, 2, "both came in to \(room)", file: file, line: line)
            XCTAssertEqual(ops.filter { $0 }.count, 1, "one operator of \(room): \(firstOps[room] == true ? first.1 : second.1)?",
                           file: file, line: line)
        }
    }
}

/// A node that dies without a word (`kill -9`): the others give it up when its lease lapses, QUIT
/// its users, free their nicks, and what it acknowledged before dying is kept.
final class ClusterNodeLossTests: XCTestCase {
    func testANodeKilledMidWayIsGivenUpAndNothingItAcknowledgedIsLost() throws {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "cluster-\(UUID().uuidString)"
        let clock = ReminderTests.Clock(Date())  // node A's, moved on to when a chore comes due
        let a = try TestServer(now: { clock.now }, sharing: shared)
        try a.addAccount("ann", "ann-password")
        try a.addAccount("bob", "bob-password")

        let (b, port) = try Self.nodeProcess(sharing: shared)
        defer { if b.isRunning { kill(b.processIdentifier, SIGKILL) } }
        let bob = try Self.connect(port: port, within: 20)

        let ann = try a.connect(as: "ann")
        try ann.join("#den")
        try bob.register("bob", pass: "bob:bob-password")
        bob.send("JOIN #den")
        try bob.expect(command: "366")
        try ann.expect("bob's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("bob!") == true }
        // Acknowledged on node B: stored.
        bob.send("PRIVMSG #den :!job add Mend the gate")
        try bob.expect("the job made") { $0.params.last?.contains("created job 1") == true }
        // A chore made on node B, with ann's turn first: it must still come due once node B is gone.
        bob.send("PRIVMSG #den :!chore add gate every day at 20:00 among ann")
        try ann.expect("the chore's first turn, from node B") { $0.params.last?.hasPrefix("It is ann's turn for gate") == true }
        // Under load: node B is killed while commands are still coming; every one it acknowledged
        // must be in the database.
        for n in 1...60 { bob.send("PRIVMSG #den :!job add Task \(n)") }
        // Killed as soon as it has acknowledged some (on a loaded machine the first batch can take
        // longer than any fixed wait), while the rest are still coming.
        var acknowledged: [(id: Int64, title: String)] = []
        let giveUp = Date().addingTimeInterval(10)
        while acknowledged.isEmpty && Date() < giveUp {
            for line in bob.drain(for: 0.05) {
                guard let text = line.params.last, let made = text.range(of: "created job ") else { continue }
                let rest = text[made.upperBound...]
                guard let id = Int64(rest.prefix { $0.isNumber }), let open = rest.firstIndex(of: "“"),
                      let close = rest.firstIndex(of: "”") else { continue }
                acknowledged.append((id, String(rest[rest.index(after: open)..<close])))
            }
        }

        kill(b.processIdentifier, SIGKILL)
        let killedAt = Date()
        let quit = try ann.expect("bob's QUIT once node B is given up", timeout: 15) { $0.command == "QUIT" }
        let after = Date().timeIntervalSince(killedAt)
        XCTAssertLessThan(after, 10, "QUIT came \(after) s after the kill")
        XCTAssertEqual(quit.source?.hasPrefix("bob!"), true)
        XCTAssertEqual(quit.params, ["Server lost"])

        // bob's nick is free again (he registers with it on node A), and the jobs node B
        // acknowledged are there.
        _ = try a.connect(as: "bob")
        XCTAssertFalse(acknowledged.isEmpty, "node B acknowledged nothing before it was killed")
        let store = try TestStore.at(folder: shared)
        defer { store.close() }
        for (id, title) in [(Int64(1), "Mend the gate")] + acknowledged {
            XCTAssertEqual(try store.job(id)?.title, title, "job \(id) was acknowledged and is not stored")
        }

        // The chore's turn comes due with node B gone: node A takes the due work, once.
        let isGateReminder: @Sendable (Message) -> Bool = { line in
            line.command == "NOTICE" && line.params.first == "ann" && line.params.last?.contains("gate in #den") == true
        }
        clock.advance(hours: 48)
        try a.server.checkReminders()
        let reminder = try ann.expect("the gate's reminder, from node A", isGateReminder)
        XCTAssertTrue(reminder.params[1].hasPrefix("Your turn: gate in #den"), reminder.params[1])
        try a.server.checkReminders()
        XCTAssertFalse(ann.drain(for: 0.5).contains(where: isGateReminder), "the reminder came once")
    }

    /// bob was on node B when it died; his client, reconnecting through the balancer, lands on node
    /// A within a second, long before B's lease lapses. He logs in and is bob at once (not `bob_`),
    /// the same person as the dead node's session: the room hears neither a JOIN nor, when node B
    /// is given up, a QUIT.
    func testAnOwnerBackFromADeadNodeGetsTheirOwnNick() throws {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "cluster-\(UUID().uuidString)"
        let a = try TestServer(sharing: shared)
        try a.addAccount("ann", "ann-password")
        try a.addAccount("bob", "bob-password")
        let (b, port) = try Self.nodeProcess(sharing: shared)
        defer { if b.isRunning { kill(b.processIdentifier, SIGKILL) } }
        let ann = try a.connect(as: "ann")
        try ann.join("#den")
        let bobOnB = try Self.connect(port: port, within: 20)
        try bobOnB.register("bob", pass: "bob:bob-password")
        bobOnB.send("JOIN #den")
        try bobOnB.expect(command: "366")
        try ann.expect("bob's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("bob!") == true }

        kill(b.processIdentifier, SIGKILL)
        let killedAt = Date()
        let bob = try a.connect()
        bob.send("PASS bob:bob-password")
        bob.send("NICK bob")
        bob.send("USER bob 0 * :Bob")
        let welcome = try bob.expect("001 or 433", timeout: 20) { $0.command == "001" || $0.command == "433" }
        XCTAssertEqual(welcome.command, "001", "\(welcome)")
        XCTAssertEqual(welcome.params.first, "bob")
        XCTAssertLessThan(Date().timeIntervalSince(killedAt), 3, "bob waited for node B to be given up")
        try bob.expect("bob put back in #den") { $0.command == "JOIN" && $0.params.first == "#den" }
        // Node B is given up about 6 s after it died: bob stays, one person in the room.
        let seen = ann.drain(for: 9).filter { $0.source?.hasPrefix("bob!") == true }
        XCTAssertEqual(seen.map(\.command), [], "\(seen)")
        ann.send("NAMES #den")
        let names = try ann.collect { $0.command == "366" }.filter { $0.command == "353" }.flatMap { $0.params.last!.split(separator: " ") }
        XCTAssertEqual(names.filter { $0.hasSuffix("bob") }, ["bob"], "\(names)")
        ann.send("PRIVMSG bob :are you back?")
        try bob.expect(command: "PRIVMSG", "bob", "are you back?")
    }

    /// Node B: a chorusd process of its own on the shared database, plaintext on a free port.
    private static func nodeProcess(sharing shared: String) throws -> (Process, port: Int) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-node-\(UUID().uuidString)")
        let port = try freePort()
        let b = Process()
        b.executableURL = try chorusdBinary()
        b.arguments = ["serve", "--store", try TestStore.postgresURL(folder: shared), "--data", folder.path,
                       "--tls", "off", "--web", "off", "--plain", "127.0.0.1:\(port)", "--no-limits", "--rooms", "open"]
        b.standardOutput = FileHandle.nullDevice
        b.standardError = FileHandle.nullDevice
        b.terminationHandler = { _ in try? FileManager.default.removeItem(at: folder) }
        try b.run()
        return (b, port)
    }

    /// A port nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0 else { throw TestError.failed("no free port") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        bound = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Connects to a server that is starting, trying for `seconds`.
    private static func connect(port: Int, within seconds: TimeInterval) throws -> TestClient {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do { return try TestClient(port: port, tls: false) } catch {
                if Date() > deadline { throw error }
                usleep(100_000)
            }
        }
    }
}
