import ChorusCore
import ChorusIRC
@testable import ChorusServer
import ChorusTestSupport
import Foundation
import Logging
import Synchronization
import XCTest

/// Several servers on one PostgreSQL database, as processes behind a balancer are: what one
/// commits reaches the clients of the others. Runs in the PostgreSQL pass (`CHORUS_TEST_STORE=postgres`).
final class ClusterTests: XCTestCase {
    private func nodes(_ count: Int, sharing shared: String = "cluster-\(UUID().uuidString)") throws -> [TestServer] {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        return try (0..<count).map { _ in try TestServer(sharing: shared) }
    }

    /// Two nodes on the database `shared`: ann logged in on the first and ben on the second, both
    /// in #den, and ann has seen ben come in.
    private func annAndBenInTheDen(sharing shared: String = "cluster-\(UUID().uuidString)") throws -> (nodes: [TestServer], ann: TestClient, ben: TestClient) {
        let n = try nodes(2, sharing: shared)
        try n[0].addAccount("ann", "ann-password")
        try n[0].addAccount("ben", "ben-password")
        try n[1].server.reloadAccountKeys()
        let ann = try n[0].connect(as: "ann")
        try ann.join("#den")
        let ben = try n[1].connect(as: "ben")
        try ben.join("#den")
        try ann.expect("ben's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("ben!") == true }
        return (n, ann, ben)
    }

    func testARoomLineAndAnEventOnOneNodeReachMembersOnTheOthers() throws {
        let (a, b, c) = try { let n = try nodes(3); return (n[0], n[1], n[2]) }()
        try a.addAccount("ann", "ann-password")
        try a.addAccount("ben", "ben-password")
        let ann = try a.connect()
        try ann.register("ann", caps: ["message-tags", "server-time"], sasl: ("ann", "ann-password"))
        try ann.join("#kitchen")
        let ben = try b.connect()
        try ben.register("ben", caps: ["message-tags", "server-time"], sasl: ("ben", "ben-password"))
        try ben.join("#kitchen")
        let guest = try c.connect()
        try guest.register("cat")
        try guest.join("#kitchen")

        ann.send("PRIVMSG #kitchen :dinner at eight")
        for (who, client) in [("ben on node B", ben), ("cat on node C", guest)] {
            let line = try client.expect("the line, for \(who)") { $0.command == "PRIVMSG" && $0.params.last == "dinner at eight" }
            XCTAssertTrue(line.source?.hasPrefix("ann!") == true, "\(line.source ?? "")")
        }

        ann.send("PRIVMSG #kitchen :!job add Buy candles @ben")
        // On node B as on node A: the command's line, then what it made happen.
        let lines = try ben.collect { $0.command == "NOTICE" && $0.params.last?.contains("created job 1 ") == true }
        XCTAssertTrue(lines.contains { $0.command == "PRIVMSG" && $0.params.last == "!job add Buy candles @ben" }, "\(lines)")
        let event = try XCTUnwrap(lines.last)
        XCTAssertEqual(event.tag("chorus/event"), "job.created")
        ben.send("PRIVMSG #kitchen :!done 1")
        let done = try ann.expect("ben's !done, on node A") { $0.params.last?.contains("completed job 1 ") == true }
        XCTAssertEqual(done.tag("chorus/actor"), "ben")
        // A line a node wrote itself is not delivered twice to its own clients: ben's copy came
        // once, and after a poll's time no other has come.
        XCTAssertFalse(ben.drain(for: 1.5).contains { $0.params.last == "dinner at eight" })
    }

    /// What a node read of a job before another node changed it is not what it acts on: ann's
    /// node read job 1 for her comment, ben finished it on his, and her `!done` finds it done.
    func testANodeActsOnAJobAsAnotherNodeLeftIt() throws {
        let (nodes, ann, ben) = try annAndBenInTheDen()
        defer { withExtendedLifetime(nodes) {} }  // the servers run as long as the test
        ann.send("PRIVMSG #den :!job add Oil the gate @ben")
        try ben.expect("the job, on node B") { $0.params.last?.contains("created job 1 ") == true }
        ann.send("PRIVMSG #den :!comment 1 the hinges are rusty")
        try ben.expect("ann's comment, on node B") { $0.params.last?.contains("rusty") == true && $0.command == "NOTICE" }
        ben.send("PRIVMSG #den :!done 1")
        try ann.expect("ben's !done, on node A") { $0.params.last?.contains("completed job 1 ") == true }
        _ = ben.drain(for: 0.3)  // his own event

        ann.send("PRIVMSG #den :!done 1")
        let answer = try ann.expect("the bot's answer") { $0.command == "NOTICE" && $0.params.last?.localizedCaseInsensitiveContains("job 1") == true }
        XCTAssertEqual(answer.params[1], "Job 1 cannot go from completed to completed: it is already completed")
        XCTAssertFalse(ben.drain(for: 0.5).contains { $0.params.last?.contains("completed job 1 ") == true })
    }

    /// A command's `@nick` names whoever holds that nick on any node: ben is `benny` on node B,
    /// and ann's `!job add … @benny` on node A gives the job to his account.
    func testACommandsNickIsFoundOnAnotherNode() throws {
        let n = try nodes(2)
        try n[0].addAccount("ann", "ann-password")
        try n[0].addAccount("ben", "ben-password")
        try n[1].server.reloadAccountKeys()
        let ann = try n[0].connect(as: "ann")
        try ann.join("#den")
        let benny = try n[1].connect(as: "ben", nick: "benny")
        try benny.join("#den")
        try ann.expect("benny's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("benny!") == true }
        ann.send("PRIVMSG #den :!job add Oil the gate @benny")
        let made = try ann.expect("the job") { $0.command == "NOTICE" && $0.params.last?.contains("Oil the gate") == true }
        XCTAssertEqual(made.params.last, "ann created job 1 “Oil the gate” for ben")
        ann.send("PRIVMSG #den :!assign 1 @nobody")
        let refused = try ann.expect("the refusal") { $0.command == "NOTICE" && $0.params.last?.contains("nobody") == true }
        XCTAssertEqual(refused.params.last, "nobody is not a registered account")
    }

    func testAPrivateLineReachesItsRecipientOnAnotherNode() throws {
        let n = try nodes(2)
        try n[0].addAccount("ann", "ann-password")
        try n[0].addAccount("ben", "ben-password")
        let ann = try n[0].connect()
        try ann.register("ann", sasl: ("ann", "ann-password"))
        let ben = try n[1].connect()
        try ben.register("ben", sasl: ("ben", "ben-password"))
        // ben's second connection goes by another nick: a line to the account reaches both.
        let benny = try n[1].connect()
        try benny.register("benny", sasl: ("ben", "ben-password"))
        ann.send("PRIVMSG ben :are you in?")
        let line = try ben.expect("ann's private line") { $0.command == "PRIVMSG" && $0.params.last == "are you in?" }
        XCTAssertEqual(line.params.first, "ben")
        let other = try benny.expect("the line on ben's other connection") { $0.command == "PRIVMSG" && $0.params.last == "are you in?" }
        XCTAssertEqual(other.params.first, "benny")
    }

    /// Every question about people answers for someone on another node as for someone here: ann
    /// is on node A (away), cat beside ben on node B. WHO and WHOIS name the server each is on.
    func testQueriesAboutPeopleFindThemOnEveryNode() throws {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "cluster-\(UUID().uuidString)"
        let n = try ["a.chorus.test", "b.chorus.test"].map { name in try TestServer(sharing: shared) { $0.serverName = name } }
        let ann = try n[0].connect()
        try ann.register("ann")
        ann.send("AWAY :at lunch")
        try ann.expect(command: "306")
        let ben = try n[1].connect(), cat = try n[1].connect()
        try ben.register("ben")
        try cat.register("cat")
        for _ in 0..<50 {
            ben.send("USERHOST ann")
            if try ben.expect(command: "302").params.last?.hasPrefix("ann=-") == true { break }
            usleep(100_000)
        }

        ben.send("USERHOST ann cat nobody")
        let userhost = try ben.expect(command: "302").params.last?.split(separator: " ").map { $0.prefix(5) }
        XCTAssertEqual(userhost, ["ann=-", "cat=+"], "ann is away; nobody is nobody")
        ben.send("WHO ann")
        let who = try ben.collect { $0.command == "315" }.filter { $0.command == "352" }
        XCTAssertEqual(who.map { [$0.params[4], $0.params[5], $0.params[6], $0.params.last ?? ""] },
                       [["a.chorus.test", "ann", "G", "0 ann Tester"]])
        ben.send("WHO *a* %sn")
        let whox = try ben.collect { $0.command == "315" }.filter { $0.command == "354" }
        XCTAssertEqual(Set(whox.map { [$0.params[1], $0.params[2]] }), [["a.chorus.test", "ann"], ["b.chorus.test", "cat"]],
                       "by mask, here and elsewhere: \(whox)")
        ben.send("WHOIS ann")
        let whois = try ben.collect { $0.command == "318" }
        XCTAssertEqual(whois.first { $0.command == "312" }?.params[2], "a.chorus.test")
        XCTAssertEqual(whois.first { $0.command == "301" }?.params.last, "at lunch")
        XCTAssertNil(whois.first { $0.command == "338" }, "ann's address is for operators and herself")
        ben.send("MONITOR + ann,nobody")
        let online = try ben.expect(command: "730")
        XCTAssertEqual(online.params.last?.hasPrefix("ann!"), true, "\(online)")
        XCTAssertEqual(try ben.expect(command: "731").params.last, "nobody")
    }

    /// A KICK of a member by the nick they have on another node ends the membership, and with it
    /// every connection of theirs in the room: here (ben's laptop on node A, as `benny`) and there.
    func testAMemberKickedByTheirNickOnAnotherNodeLeavesWithEveryConnection() throws {
        let (nodes, ann, ben) = try annAndBenInTheDen()
        defer { withExtendedLifetime(nodes) {} }
        let laptop = try nodes[0].connect()
        try laptop.register("benny", sasl: ("ben", "ben-password"))
        try laptop.join("#den")
        try ann.expect("benny's JOIN") { $0.command == "JOIN" && $0.source?.hasPrefix("benny!") == true }

        ann.send("KICK #den ben :not today")
        XCTAssertEqual(try ben.expect(command: "KICK").params, ["#den", "ben", "not today"])
        XCTAssertEqual(try laptop.expect(command: "KICK").params, ["#den", "benny", "not today"])
        let heard = ann.drain(for: 1.5).filter { $0.command == "KICK" || $0.command == "PART" }.map { [$0.command] + $0.params }
        XCTAssertEqual(heard, [["KICK", "#den", "benny", "not today"], ["KICK", "#den", "ben", "not today"]], "each nick's KICK, once")
        ann.send("NAMES #den")
        XCTAssertEqual(try ann.expect(command: "353").params.last, "@ann", "neither of ben's connections is left in #den")
    }

    /// A node reads a room again after another node changed it, and hands it to the event loop.
    /// A snapshot read before a change this node made meanwhile is read again, not applied: ben's
    /// PART on node B would be taken back (his membership is in the old snapshot) and the
    /// manager's new topic there put back to the old one.
    func testARoomReadBeforeAChangeMadeHereIsReadAgainNotApplied() throws {
        let (nodes, ann, ben) = try annAndBenInTheDen()
        defer { withExtendedLifetime(nodes) {} }
        let b = try XCTUnwrap(nodes[1].server), log = try XCTUnwrap(b.cluster?.log)
        try nodes[0].addAccount("cat", "cat-password")
        try b.reloadAccountKeys()
        let cat = try nodes[1].connect(as: "cat")
        ann.send("PRIVMSG #den :!room add cat")
        try cat.expect(command: "366", "#den", timeout: 10)
        try ann.expect("cat's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("cat!") == true }
        ann.send("MODE #den +o cat")
        try cat.expect("cat made a manager") { $0.command == "MODE" && $0.params == ["#den", "+o", "cat"] }

        let mark = RoomMarks.now, old = try log.storedRoom("#den")
        ben.send("PART #den :back later")
        try ben.expect(command: "PART", "#den", "back later")
        cat.send("TOPIC #den :Fresh paint")
        try cat.expect(command: "TOPIC", "#den", "Fresh paint")
        try b.loop.submit { b.roomChangedElsewhere(RoomSnapshot(key: "#den", stored: old, mark: mark)) }.wait()

        let toBen = ben.drain(for: 1.5).filter { $0.params.first == "#den" }
        XCTAssertEqual(toBen.map(\.command), [], "ben is not put back in #den: \(toBen)")
        XCTAssertEqual(cat.drain(for: 0.2).filter { $0.command == "TOPIC" || $0.command == "JOIN" }, [], "the old topic is not put back")
        cat.send("TOPIC #den")
        XCTAssertEqual(try cat.expect(command: "332").params.last, "Fresh paint")
        cat.send("NAMES #den")
        XCTAssertEqual(Set(try cat.expect(command: "353").params.last!.split(separator: " ")), ["@ann", "@cat"])
    }

    /// Node B keeps the roles its commands read between batches: a manager made on node A is one
    /// on node B as soon as node B has told him.
    func testAManagerMadeOnAnotherNodeIsOneForTheNextCommandThere() throws {
        let (nodes, ann, ben) = try annAndBenInTheDen()
        defer { withExtendedLifetime(nodes) {} }
        ben.send("PRIVMSG #den :!room set echo off")
        try ben.expect("the refusal") { $0.command == "NOTICE" && $0.params.last?.hasSuffix("Only managers change the room's settings") == true }
        ben.send("PRIVMSG #den :!job add Paint the fence")  // a command that commits, its role read as a member's
        try ben.expect("the job's line") { $0.command == "NOTICE" && $0.params.last?.contains("created job 1") == true }
        ann.send("MODE #den +o ben")
        try ben.expect("ben made a manager") { $0.command == "MODE" && $0.params == ["#den", "+o", "ben"] }
        ben.send("PRIVMSG #den :!room set echo off")
        let set = try ben.expect("the setting's line") { $0.command == "NOTICE" && $0.params.last?.contains("echo") == true }
        XCTAssertTrue(set.params.last!.hasSuffix("ben set echo off in #den"), "\(set)")
    }

    /// A room closed on one node: its members on the other hear who closed it, as those here do.
    func testARoomClosedOnAnotherNodeNamesWhoClosedIt() throws {
        let (nodes, ann, ben) = try annAndBenInTheDen()
        defer { withExtendedLifetime(nodes) {} }
        ann.send("PRIVMSG #den :!room close")
        let here = try ann.expect("ann's KICK") { $0.command == "KICK" }
        XCTAssertEqual(here.params, ["#den", "ann", "Room closed by ann"])
        let there = try ben.expect("ben's KICK") { $0.command == "KICK" }
        XCTAssertEqual(there.params, ["#den", "ben", "Room closed by ann"])
    }

    /// Someone who is no manager invites a person connected to another node: an order to that node,
    /// which tells them (a manager's invitation of an account makes it a member instead).
    func testAnInvitationFromSomeoneWhoIsNoManagerReachesAPersonOnAnotherNode() throws {
        let (nodes, _, ben) = try annAndBenInTheDen()
        defer { withExtendedLifetime(nodes) {} }
        try nodes[0].addAccount("cat", "cat-password")
        let cat = try nodes[0].connect(as: "cat")
        try ben.waitUntilOnline("cat")
        ben.send("INVITE cat #den")
        XCTAssertEqual(try ben.expect(command: "341").params, ["ben", "cat", "#den"])
        let invite = try cat.expect(command: "INVITE")
        XCTAssertEqual(invite.params, ["cat", "#den"])
        XCTAssertEqual(invite.source?.hasPrefix("ben!"), true)
    }

    /// ben comes into #den on node B before node A hears of it, and ann, on node A, gives him a
    /// job: node A writes him a direct line, and node B, which knows he heard the room's line,
    /// leaves it out. (Node A's feed is stopped to keep its view of ben behind.)
    func testADirectLineToSomeoneWhoHeardTheRoomsLineOnAnotherNodeIsLeftOut() throws {
        let (nodes, ann, ben) = try annAndBenInTheDen()
        defer { withExtendedLifetime(nodes) {} }
        ben.send("PART #den")
        try ann.expect("ben gone from #den") { $0.command == "PART" && $0.source?.hasPrefix("ben!") == true }
        nodes[0].server.cluster?.feed?.stop()
        try ben.join("#den")
        ann.send("PRIVMSG #den :!job add Sweep the porch @ben")
        try ann.expect("the job made") { $0.params.last?.contains("“Sweep the porch”") == true }
        let told = ben.drain(for: 0.5).filter { $0.command == "NOTICE" && $0.params.last?.contains("“Sweep the porch”") == true }
        XCTAssertEqual(told.map { $0.params[0] }, ["#den"], "once, in the room")
    }

    /// bob joins #busy on node B while alice talks in it on node A, a line every ~0.2 ms, until
    /// fifty lines after his join: he reads the room's latest lines, then what was said since,
    /// in order, each once.
    func testJoiningABusyRoomOnAnotherNodeReadsHistoryThenLiveLinesInOrder() throws {
        let n = try nodes(2)
        let alice = try n[0].connect(), bob = try n[1].connect()
        try alice.register("alice")
        try bob.register("bob")
        try alice.join("#busy")
        for i in 1...30 { alice.send("PRIVMSG #busy :n\(i)") }
        alice.send("PING warm")
        try alice.expect(command: "PONG", "test.chorus", "warm")
        let joined = Atomic<Bool>(false), last = Atomic<Int>(0)
        let talking = DispatchGroup()
        DispatchQueue.global().async(group: talking) {
            var i = 31, afterJoin = 0
            while afterJoin < 50 && i < 20_000 {
                alice.send("PRIVMSG #busy :n\(i)")
                if joined.load(ordering: .relaxed) { afterJoin += 1 }
                i += 1
                usleep(200)
            }
            last.store(i - 1, ordering: .relaxed)
        }
        usleep(10_000)
        bob.send("JOIN #busy")
        _ = try bob.collect(until: { $0.command == "366" })
        joined.store(true, ordering: .relaxed)
        talking.wait()
        let end = last.load(ordering: .relaxed)
        let seen = try bob.collect(until: { $0.params.last?.hasSuffix(" n\(end)") == true || $0.params.last == "n\(end)" }, timeout: 10)
            .filter { $0.command == "PRIVMSG" }
            .map { Int($0.params[1].split(separator: " ").last!.dropFirst())! }
        let first = try XCTUnwrap(seen.first)
        XCTAssertEqual(seen, Array(first...end), "replay, then live: in order, each once")
        XCTAssertLessThan(first, end - 50, "the replay holds lines from before the join")
    }

    /// Lines another node committed whose wake-up never came are read with bob's replay on node B
    /// before node B delivers them (at its next poll): he reads each of them once, after the
    /// lines before them.
    func testLinesAReplayReadsBeforeTheNodeDeliversThemComeOnce() throws {
        let shared = "cluster-\(UUID().uuidString)"
        let n = try nodes(2, sharing: shared)
        let alice = try n[0].connect(), bob = try n[1].connect(), cat = try n[1].connect()
        try alice.register("alice")
        try bob.register("bob")
        try cat.register("cat")
        try alice.join("#flat")
        alice.send("PRIVMSG #flat :hello")
        // cat, on node B, tells when node B has delivered alice's line.
        try cat.join("#flat")
        alice.send("PRIVMSG #flat :are you there?")
        try cat.expect("alice's line, on node B") { $0.params.last == "are you there?" }
        for n in 1...5 { try TestStore.appendWithoutWakeUp(msgid: "q\(n)", text: "quiet \(n)", at: Date(), folder: shared) }
        bob.send("JOIN #flat")
        let said = (try bob.collect(until: { $0.params.last?.hasSuffix("quiet 5") == true }) + bob.drain(for: 1.5))
            .filter { $0.command == "PRIVMSG" }.compactMap { $0.params.last?.split(separator: "] ").last.map(String.init) }
        XCTAssertEqual(said, ["hello", "are you there?"] + (1...5).map { "quiet \($0)" }, "each once, in order")
    }

    /// A chore's reminder comes due: whichever node takes the due work first does it, once, and
    /// the person whose turn it is hears it on the node they are connected to.
    func testWhatComesDueIsDoneOnceAndReachesItsPersonOnAnotherNode() throws {
        let (clock, a, b, ann, ben) = try Self.bensTurnOnAnotherNode()
        defer { withExtendedLifetime(ann) {} }

        clock.advance(hours: 11.5)  // 20:30
        try a.server.checkReminders()
        try b.server.checkReminders()
        let due = try ben.expect("the reminder node A sent") { $0.command == "NOTICE" && $0.params.first == "ben" }
        XCTAssertTrue(due.params[1].hasPrefix("Your turn: dishes in #flat is due now"), due.params[1])
        XCTAssertEqual(due.source?.hasPrefix("Chorus!"), true)
        XCTAssertFalse(ben.drain(for: 1.5).contains { $0.command == "NOTICE" && $0.params.first == "ben" }, "the reminder came once")
    }

    /// ann on node A and ben on node B add tasks to one job at the same moment, twenty each, sent
    /// without waiting: their batches overlap, and each task is kept (none written over by the
    /// other node's write of the job), and each is announced once.
    func testTasksAddedToOneJobOnTwoNodesAtOnceAreAllKept() throws {
        let shared = "cluster-\(UUID().uuidString)"
        let (nodes, ann, ben) = try annAndBenInTheDen(sharing: shared)
        defer { withExtendedLifetime(nodes) {} }
        // Command lines not relayed: a relayed line is stored before its command, and storing it
        // takes the log's lock, which would keep the two nodes' batches from overlapping at all.
        ann.send("PRIVMSG #den :!room set echo off")
        try ben.expect("echo off, on node B") { $0.params.last?.contains("echo off") == true }
        ann.send("PRIVMSG #den :!job add Paint the hall @ben")
        try ben.expect("the job, on node B") { $0.params.last?.contains("created job 1 ") == true }

        func tasks(_ who: String) -> [UInt8] {
            Array((1...20).map { "PRIVMSG #den :!task add 1 \(who) \($0)\r\n" }.joined().utf8)
        }
        ann.sendRaw(tasks("ann"))
        ben.sendRaw(tasks("ben"))
        let added = { (m: Message) in m.command == "NOTICE" && m.params.last?.contains("added task") == true }
        let seen = try ann.collect { m in added(m) && m.params.last?.contains("ben 20") == true }.filter(added)
            + ann.drain(for: 1).filter(added)
        XCTAssertEqual(seen.count, 40, "each task announced once: \(seen.map { $0.params.last ?? "" })")

        let store = try TestStore.at(folder: shared)
        defer { store.close() }
        let kept = try XCTUnwrap(try store.job(1)).tasks.map(\.text)
        XCTAssertEqual(kept.count, 40, "\(kept)")
        XCTAssertEqual(Set(kept), Set(["ann", "ben"].flatMap { who in (1...20).map { "\(who) \($0)" } }))
    }

    /// What another node commits reaches this node's feed once each and in order, whether it came
    /// with its wake-up or had to be read from the log: wake-ups lost while the listening
    /// connection was away leave a gap, which the next read fills.
    func testTheFeedDeliversEachLineOnceAndInOrderThroughLostWakeUps() throws {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "feed-\(UUID().uuidString)"
        let here = try TestStore.at(folder: shared), there = try TestStore.at(folder: shared)
        defer { here.close(); there.close() }
        let log = try XCTUnwrap(here as? any SharedLog & SharedPresence)
        let delivered = Mutex<[String]>([])
        let feed = ClusterFeed(log: log, from: try log.join().position, logger: Logger(label: "test"), deliver: { changes in
            delivered.withLock { seen in
                for case .line(let entry) in changes { seen.append(entry.msgid) }
            }
        }, deliverRooms: { _ in })
        feed.start()
        defer { feed.stop() }
        Thread.sleep(forTimeInterval: 0.3)  // listening
        func append(_ round: String) throws {
            for n in 1...10 {
                let line = HistoryEntry(conversation: "#flat", msgid: "\(round)\(n)", time: Date(), command: "PRIVMSG",
                                        source: "ben!b@h", account: "ben", target: "#flat", text: "line \(round)\(n)")
                try there.transaction(cache: nil) { try $0.appendHistory([line]) }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        try append("a")
        try TestStore.endListeners(folder: shared)
        try append("b")  // while nobody listens: read by the polls
        Thread.sleep(forTimeInterval: 2.5)  // the listener is back
        for n in 1...10 { try TestStore.appendWithoutWakeUp(msgid: "c\(n)", text: "line c\(n)", folder: shared) }
        try append("d")  // the first comes after a gap, read before it (the next poll is most likely far off)
        let expected = ["a", "b", "c", "d"].flatMap { round in (1...10).map { "\(round)\($0)" } }
        for _ in 0..<100 where delivered.withLock({ $0.count }) < expected.count { Thread.sleep(forTimeInterval: 0.1) }
        Thread.sleep(forTimeInterval: 1.2)  // a poll more: nothing comes twice
        XCTAssertEqual(delivered.withLock { $0 }, expected)
    }

    /// Nodes A and B on a clock of the test's, ann on A and ben on B in #flat, and ben's turn for
    /// the dishes at 20:00 every day, made on node A at 09:00.
    /// Two nodes on one schema: ann on node A and ben on node B, both in #flat, and node A has seen
    /// ben's JOIN.
    static func annAndBenInFlatOnTwoNodes(now: @escaping @Sendable () -> Date = Date.init,
                                          configure: @escaping (inout ServerConfig) -> Void = { _ in })
        throws -> (TestServer, TestServer, TestClient, TestClient) {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "cluster-\(UUID().uuidString)"
        let a = try TestServer(now: now, sharing: shared, configure: configure)
        let b = try TestServer(now: now, sharing: shared, configure: configure)
        try a.addAccount("ann", "ann-password")
        try a.addAccount("ben", "ben-password")
        try b.server.reloadAccountKeys()
        let ann = try a.connect(as: "ann")
        try ann.join("#flat")
        let ben = try b.connect(as: "ben")
        try ben.join("#flat")
        try ann.expect("ben's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("ben!") == true }
        return (a, b, ann, ben)
    }

    static func bensTurnOnAnotherNode() throws -> (ReminderTests.Clock, TestServer, TestServer, TestClient, TestClient) {
        let clock = ReminderTests.Clock()
        // Node A must know ben is in #flat, or it tells him of his turn directly as well.
        let (a, b, ann, ben) = try annAndBenInFlatOnTwoNodes(now: { clock.now }) { $0.timeZone = TimeZone(identifier: "UTC")! }
        ann.send("PRIVMSG #flat :!chore add dishes every day at 20:00 among ben")
        try ben.expect("the turn, from node A") { $0.params.last?.hasPrefix("It is ben's turn for dishes") == true }
        return (clock, a, b, ann, ben)
    }
}
