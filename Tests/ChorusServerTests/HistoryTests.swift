import ChorusCore
import ChorusIRC
@testable import ChorusServer
import ChorusStore
import ChorusTestSupport
import XCTest

final class HistoryTests: XCTestCase {
    /// A client that missed lines asks for those after the last `time` it saw. That line itself
    /// must not come back: its live stamp and its stored time are the same millisecond.
    func testHistoryAfterALiveStampLeavesOutThatLine() throws {
        let server = try TestServer()
        try server.addAccount("bob", "bob-password")
        let a = try server.connect()
        try a.register("alice")
        try a.join("#log")
        let b = try server.connect()
        try b.register("bob", caps: ["draft/chathistory", "batch", "server-time", "message-tags"], sasl: ("bob", "bob-password"))
        try b.join("#log")
        for i in 1...20 {
            a.send("PRIVMSG #log :line \(i)")
            let live = try b.expect(command: "PRIVMSG", "#log", "line \(i)")
            let stamp = try XCTUnwrap(live.tag("time"))
            b.send("CHATHISTORY AFTER #log timestamp=\(stamp) 10")
            let after = try b.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
                .filter { $0.command == "PRIVMSG" }.map { $0.params[1] }
            XCTAssertEqual(after, [], "after line \(i)'s own stamp \(stamp)")
        }
    }

    /// A private line to an account nobody is connected as waits for its next login, in order and
    /// with its time; it is played back once. A guest cannot leave one, and an unknown nick is 401.
    func testPrivateLinesToAnOfflineAccountWaitForItsLogin() throws {
        let server = try TestServer()
        try server.addAccount("alice", "alice-password")
        try server.addAccount("bob", "bob-password")
        let bob = try server.connect(as: "bob")
        bob.send("PRIVMSG alice :are you coming tonight?")
        try bob.expect(command: "301", "alice", "not connected; they will get your message when they log in")
        // 301 is a promise: by the time it arrives, the line is stored and held (a crash now would
        // not lose it). Read straight from the store, without waiting for anything queued.
        let stored = try server.server.workspace.store.history(of: HistoryEntry.conversation(between: "bob", and: "alice"),
                                                     .latest(after: nil, limit: 10))
        XCTAssertEqual(stored.map(\.text), ["are you coming tonight?"])
        bob.send("PRIVMSG Alice :bring the ladder")
        try bob.expect(command: "301", "Alice")
        bob.send("PRIVMSG nobody :hello?")
        try bob.expect(command: "401", "nobody", "No such nick")

        let guest = try server.connect()
        try guest.register("guest")
        guest.send("PRIVMSG alice :hi")
        try guest.expect(command: "401", "alice", "alice is offline; log in to leave them a message")

        let alice = try server.connect()
        try alice.register("alice", caps: ["server-time"], sasl: ("alice", "alice-password"))
        let first = try alice.expect(command: "PRIVMSG", "alice", "are you coming tonight?")
        XCTAssertTrue(first.source?.hasPrefix("bob!") == true, "from bob: \(first.source ?? "none")")
        XCTAssertNotNil(first.tag("time"), "with the time it was sent")
        try alice.expect(command: "PRIVMSG", "alice", "bring the ladder")
        XCTAssertFalse(alice.drain(for: 0.3).contains { $0.params.last == "hi" }, "the guest's line was not kept")

        // Alice is here now: lines reach her live, and the held ones are not played again.
        bob.send("PRIVMSG alice :see you")
        try alice.expect(command: "PRIVMSG", "alice", "see you")
        alice.close()
        let again = try server.connect(as: "alice")
        let replayed = again.drain(for: 0.5).filter { $0.command == "PRIVMSG" }
        XCTAssertEqual(replayed.map { $0.params[1] }, [], "held lines are delivered once")

        // Without server-time the time is written in front of the text; the lines survive a restart.
        again.close()
        bob.send("PRIVMSG alice :one more")
        try bob.expect(command: "301", "alice")
        bob.send("PING sent")
        try bob.expect(command: "PONG", "test.chorus", "sent")
        try server.restart()
        let later = try server.connect(as: "alice")
        let stamped = try later.expect(command: "PRIVMSG", "alice")
        XCTAssertTrue(stamped.params[1].hasPrefix("["), stamped.params[1])
        XCTAssertTrue(stamped.params[1].hasSuffix(" UTC] one more"), stamped.params[1])
    }

    /// An account's name is its reserved nick: a line to it reaches the account's connections under
    /// other nicks (alice as `alice_` after a reconnect), addressed to the nick each one has.
    func testALineToAnAccountReachesItUnderAnotherNick() throws {
        let server = try TestServer()
        try server.addAccount("alice", "alice-password")
        try server.addAccount("bob", "bob-password")
        let alice = try server.connect(as: "alice", nick: "alice_")
        let bob = try server.connect(as: "bob", caps: ["echo-message"])
        bob.send("PRIVMSG alice :the van is here")
        let got = try alice.expect(command: "PRIVMSG", "alice_", "the van is here")
        XCTAssertTrue(got.source?.hasPrefix("bob!") == true)
        try bob.expect(command: "PRIVMSG", "alice", "the van is here")  // the echo, as bob addressed it
        bob.send("NOTICE alice :and a notice")
        try alice.expect(command: "NOTICE", "alice_", "and a notice")
        XCTAssertFalse(bob.drain(for: 0.3).contains { $0.command == "301" || $0.command == "401" }, "nothing is held")

        // It is history between the two accounts: alice pages it back from her side.
        alice.close()
        let back = try server.connect(as: "alice", caps: ["draft/chathistory", "batch"])
        back.send("CHATHISTORY LATEST bob * 10")
        let lines = try back.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
            .filter { $0.command == "PRIVMSG" || $0.command == "NOTICE" }.map { $0.params[1] }
        XCTAssertEqual(lines, ["the van is here", "and a notice"])
    }

    /// A long absence does not flood the returning client: the latest lines are played back, and
    /// a notice says how many came in all.
    func testALongAbsencePlaysBackTheLatestHeldLines() throws {
        let server = try TestServer()
        try server.addAccount("carol", "carol-password")
        try server.addAccount("bob", "bob-password")
        let bob = try server.connect(as: "bob")
        let sent = 105
        for i in 1...sent { bob.send("PRIVMSG carol :line \(i)") }
        for _ in 1...sent { try bob.expect(command: "301", "carol") }

        let carol = try server.connect(as: "carol", caps: ["server-time"])
        let limit = 100
        try carol.expect(command: "NOTICE", "carol",
                         "\(sent) private messages came while you were away; here are the latest \(limit). "
                         + "The others are in your history with each sender (CHATHISTORY).")
        let played = try carol.collect(until: { $0.command == "PRIVMSG" && $0.params.last == "line \(sent)" })
            .filter { $0.command == "PRIVMSG" }.map { $0.params[1] }
        XCTAssertEqual(played, ((sent - limit + 1)...sent).map { "line \($0)" })
    }

    /// A login replays what the account missed since its last connection ended, not the same last
    /// lines each time; at most `history-replay` of them, saying when earlier ones are left out.
    /// A second connection while another reads the room is replayed nothing.
    func testALoginReplaysOnlyWhatTheAccountMissed() throws {
        let server = try TestServer(configure: { $0.historyReplayLines = 3 })
        try server.addAccount("ann", "ann-password")
        try server.addAccount("ben", "ben-password")
        let ann = try server.connect(as: "ann")
        try ann.join("#log")
        var ben = try server.connect(as: "ben")
        try ben.join("#log")
        ann.send("PRIVMSG #log :seen by ben")
        try ben.expect(command: "PRIVMSG", "#log", "seen by ben")
        usleep(5_000)  // a line of the very millisecond ben leaves is replayed too (none is lost)
        ben.close()
        try ann.expect(command: "QUIT")
        ann.send("PRIVMSG #log :missed 1")
        ann.send("PRIVMSG #log :missed 2")
        ann.send("PING sent")
        try ann.expect(command: "PONG")

        ben = try server.connect(as: "ben")
        let first = try ben.collect(until: { $0.params.last?.hasSuffix("missed 2") == true }).filter { $0.command == "PRIVMSG" }
        XCTAssertEqual(first.map { $0.params[1].replacingOccurrences(of: #"^\[[^\]]*\] "#, with: "", options: .regularExpression) },
                       ["missed 1", "missed 2"])
        // Nothing new: the next login replays nothing.
        ben.close()
        try ann.expect(command: "QUIT")
        ben = try server.connect(as: "ben")
        XCTAssertFalse(ben.drain(for: 0.4).contains { $0.command == "PRIVMSG" }, "nothing was missed")

        // More missed than replayed: the latest three, after a note that earlier ones were left out.
        ben.close()
        try ann.expect(command: "QUIT")
        for i in 1...5 { ann.send("PRIVMSG #log :away \(i)") }
        ann.send("PING sent2")
        try ann.expect(command: "PONG")
        ben = try server.connect(as: "ben")
        let lines = try ben.collect(until: { $0.params.last?.hasSuffix("away 5") == true })
        XCTAssertTrue(lines.contains { $0.command == "NOTICE" && $0.params.last?.hasPrefix("Earlier lines of #log are not replayed") == true })
        XCTAssertEqual(lines.filter { $0.command == "PRIVMSG" }.count, 3)

        // A second connection of ben's, while the first reads the room: nothing to catch up on.
        let phone = try server.connect(as: "ben", nick: "ben_phone")
        try phone.expect(command: "JOIN", "#log")
        XCTAssertFalse(phone.drain(for: 0.4).contains { $0.command == "PRIVMSG" })
    }

    /// A store that cannot write (here a database at its size cap, as a full disk looks to SQLite):
    /// lines still reach their readers, the sender hears they are not kept, and once the store can
    /// write again lines are kept again, without a restart.
    func testLinesTheStoreCannotKeepReachTheRoomAndTheirSenderIsTold() throws {
        try XCTSkipIf(TestStore.onPostgres, "SQLite's size cap stands for a full disk; PostgreSQL's full disk is the operator's")
        let server = try TestServer()
        let store = try XCTUnwrap(server.server.store as? SQLiteStore)
        let caps = ["draft/chathistory", "batch", "server-time", "message-tags"]
        let ann = try server.connect()
        try ann.register("ann", caps: caps)
        try ann.join("#log")
        let ben = try server.connect()
        try ben.register("ben")
        try ben.join("#log")
        ann.send("PRIVMSG #log :kept before")
        try ben.expect(command: "PRIVMSG", "#log", "kept before")
        usleep(100_000)  // its batch is written

        try store.limitSize(toBytes: 1)  // no room to grow: writes fail as on a full disk
        let long = String(repeating: "lost ", count: 80)
        for i in 0..<30 { ann.send("PRIVMSG #log :\(i) \(long)") }
        for i in 0..<30 { try ben.expect(command: "PRIVMSG", "#log", "\(i) \(long)") }  // delivered all the same
        let told = try ann.expect("the sender told") { $0.command == "NOTICE" && $0.params.last?.contains("not kept in the history") == true }
        XCTAssertTrue(told.params.last!.contains("you sent to #log"), told.params.last!)

        try store.limitSize(toBytes: nil)
        ann.send("PRIVMSG #log :kept after")
        try ben.expect(command: "PRIVMSG", "#log", "kept after")
        usleep(100_000)
        ann.send("CHATHISTORY LATEST #log * 100")
        let history = try ann.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
            .filter { $0.command == "PRIVMSG" }.compactMap { $0.params.last }
        XCTAssertTrue(history.contains("kept before") && history.contains("kept after"), "\(history)")
        XCTAssertLessThan(history.count, 32, "the lines the store refused are not in the history")
    }

    /// `draft/read-marker`: a marker set on one client reaches the account's others, never goes
    /// back, is named on JOIN before the end of NAMES, and outlives a restart.
    func testReadMarkersFollowTheAccountAcrossClients() throws {
        let server = try TestServer()
        try server.addAccount("ann", "ann-password")
        let caps = ["draft/read-marker", "server-time", "message-tags"]
        let desk = try server.connect(as: "ann", caps: caps)
        desk.send("JOIN #log")
        let joined = try desk.collect(until: { $0.command == "366" })
        let markIndex = joined.firstIndex { $0.command == "MARKREAD" }, namesEnd = joined.firstIndex { $0.command == "366" }
        XCTAssertEqual(joined[try XCTUnwrap(markIndex)].params, ["#log", "*"], "nothing read yet")
        XCTAssertLessThan(markIndex!, namesEnd!, "named before the end of NAMES")
        let phone = try server.connect(as: "ann", nick: "ann_phone", caps: caps)
        try phone.expect(command: "MARKREAD", "#log", "*")

        desk.send("MARKREAD #log timestamp=2026-11-25T10:00:00.000Z")
        try desk.expect(command: "MARKREAD", "#log", "timestamp=2026-11-25T10:00:00.000Z")
        try phone.expect(command: "MARKREAD", "#log", "timestamp=2026-11-25T10:00:00.000Z")
        // Older: the stored one comes back, and the phone hears nothing.
        phone.send("MARKREAD #log timestamp=2026-11-25T09:00:00.000Z")
        try phone.expect(command: "MARKREAD", "#log", "timestamp=2026-11-25T10:00:00.000Z")
        XCTAssertFalse(desk.drain(for: 0.3).contains { $0.command == "MARKREAD" })
        // In the future: no later than now.
        phone.send("MARKREAD #LOG timestamp=2999-01-01T00:00:00.000Z")
        let clamped = try phone.expect(command: "MARKREAD", "#LOG")
        let when = try XCTUnwrap(Timestamp.parse(String(clamped.params[1].dropFirst(10))))
        XCTAssertLessThan(abs(when.timeIntervalSinceNow), 5)
        desk.send("MARKREAD bob")
        try desk.expect(command: "MARKREAD", "bob", "*")

        desk.send("MARKREAD")
        try desk.expect(command: "FAIL", "MARKREAD", "NEED_MORE_PARAMS")
        desk.send("MARKREAD #log yesterday")
        try desk.expect(command: "FAIL", "MARKREAD", "INVALID_PARAMS")
        let guest = try server.connect()
        try guest.register("guest")
        // A guest's markers are its connection's own: not ann's, and gone with it.
        guest.send("MARKREAD #log")
        try guest.expect(command: "MARKREAD", "#log", "*")
        guest.send("MARKREAD #log timestamp=2026-11-25T08:00:00.000Z")
        try guest.expect(command: "MARKREAD", "#log", "timestamp=2026-11-25T08:00:00.000Z")

        try server.restart()
        let again = try server.connect(as: "ann", caps: caps)
        let back = try again.expect(command: "MARKREAD", "#log")
        XCTAssertEqual(Timestamp.parse(String(back.params[1].dropFirst(10))).map { Int($0.timeIntervalSince1970) },
                       Int(when.timeIntervalSince1970))
    }

    /// Without `draft/chathistory`, a join replays the latest lines: in a `chathistory` batch with
    /// their own stamps for a client with `batch` and `server-time`, stamped in the text otherwise.
    func testJoinReplaysTheLatestLines() throws {
        let server = try TestServer()
        let a = try server.connect()
        try a.register("alice")
        try a.join("#log")
        for i in 1...3 { a.send("PRIVMSG #log :line \(i)") }
        a.send("PING sent")
        try a.expect(command: "PONG", "test.chorus", "sent")

        let b = try server.connect()
        try b.register("bob", caps: ["batch", "server-time", "message-tags"])
        b.send("JOIN #log")
        let open = try b.expect(command: "BATCH")
        XCTAssertEqual(Array(open.params.dropFirst()), ["chathistory", "#log"])
        XCTAssertNil(open.tag("batch"), "a batch does not open inside itself")
        let id = String(open.params[0].dropFirst())
        let lines = try b.collect(until: { $0.command == "BATCH" })
        XCTAssertEqual(lines.last?.params, ["-" + id])
        let replayed = lines.filter { $0.command == "PRIVMSG" }
        XCTAssertEqual(replayed.map { $0.params[1] }, ["line 1", "line 2", "line 3"])
        XCTAssertTrue(replayed.allSatisfy { $0.tag("batch") == id && $0.tag("time") != nil && $0.tag("msgid") != nil })

        let c = try server.connect()
        try c.register("carol")
        c.send("JOIN #log")
        let plain = try c.collect(until: { $0.params.last?.hasSuffix("line 3") == true }).filter { $0.command == "PRIVMSG" }
        XCTAssertEqual(plain.count, 3)
        for (i, line) in plain.enumerated() {
            let text = line.params[1]
            XCTAssertTrue(text.range(of: #"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\] line \#(i + 1)$"#, options: .regularExpression) != nil, text)
        }
    }

    /// Someone joins while the room talks: the replayed lines come first, then the live ones,
    /// each line once and none missing, though the replay is read while lines keep arriving.
    func testJoiningABusyRoomReadsHistoryThenLiveLinesInOrder() throws {
        let server = try TestServer()
        let a = try server.connect()
        try a.register("alice")
        try a.join("#busy")
        for i in 1...30 { a.send("PRIVMSG #busy :n\(i)") }
        a.send("PING warm")
        try a.expect(command: "PONG", "test.chorus", "warm")
        let b = try server.connect()
        try b.register("bob")
        // Alice keeps talking, a line every ~0.2 ms, while Bob's join is processed and his replay read.
        let talking = DispatchGroup()
        DispatchQueue.global().async(group: talking) {
            for i in 31...400 {
                a.send("PRIVMSG #busy :n\(i)")
                usleep(200)
            }
        }
        usleep(10_000)
        b.send("JOIN #busy")
        talking.wait()
        let seen = try b.collect(until: { $0.params.last?.hasSuffix(" n400") == true || $0.params.last == "n400" }, timeout: 10)
            .filter { $0.command == "PRIVMSG" }
            .map { Int($0.params[1].split(separator: " ").last!.dropFirst())! }
        let first = try XCTUnwrap(seen.first)
        XCTAssertEqual(seen, Array(first...400), "replay, then live: in order, each once")
        XCTAssertLessThan(first, 380, "the join came while Alice talked; the replay holds the lines before it")
    }

    func testChathistoryPagesRoomAndPrivateHistory() throws {
        let server = try TestServer()
        try server.addAccount("alice", "alice-password")
        try server.addAccount("bob", "bob-password")
        let a = try server.connect()
        try a.register("alice", sasl: ("alice", "alice-password"))
        try a.join("#log")
        for i in 1...6 { a.send("PRIVMSG #log :line \(i)") }
        let b = try server.connect()
        try b.register("bob", caps: ["draft/chathistory", "batch", "server-time", "message-tags", "standard-replies"], sasl: ("bob", "bob-password"))
        try b.join("#log")
        XCTAssertFalse(b.drain(for: 0.3).contains { $0.command == "PRIVMSG" }, "chathistory clients are not replayed to")

        b.send("CHATHISTORY LATEST #log * 3")
        let page = try b.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
        XCTAssertEqual(page.first?.params.dropFirst().first, "chathistory")
        let lines = page.filter { $0.command == "PRIVMSG" }
        XCTAssertEqual(lines.map { $0.params[1] }, ["line 4", "line 5", "line 6"])
        XCTAssertTrue(lines.allSatisfy { $0.tag("batch") != nil && $0.tag("msgid") != nil && $0.tag("time") != nil })

        let oldest = lines[0].tag("msgid")!
        b.send("CHATHISTORY BEFORE #log msgid=\(oldest) 10")
        let earlier = try b.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
            .filter { $0.command == "PRIVMSG" }.map { $0.params[1] }
        XCTAssertEqual(earlier, ["line 1", "line 2", "line 3"])

        a.send("PRIVMSG bob :private hello")
        try b.expect(command: "PRIVMSG", "bob", "private hello")
        b.send("CHATHISTORY LATEST alice * 10")
        let dm = try b.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
        XCTAssertEqual(dm.filter { $0.command == "PRIVMSG" }.map { $0.params[1] }, ["private hello"])

        b.send("CHATHISTORY TARGETS timestamp=2000-01-01T00:00:00.000Z timestamp=2100-01-01T00:00:00.000Z 10")
        let targetLines = try b.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
        let targets = targetLines.filter { $0.command == "CHATHISTORY" }
        // Oldest latest line first (IRCv3 chathistory: TARGETS in ascending order): #log's lines
        // came before the private one.
        XCTAssertEqual(targets.map { $0.params[1] }, ["#log", "alice"])
        let targetsBatch = targetLines.first { $0.command == "BATCH" }?.params.first?.dropFirst()
        XCTAssertTrue(targets.allSatisfy { $0.tag("batch") == targetsBatch.map(String.init) }, "\(targets)")

        b.send("CHATHISTORY LATEST #secret * 10")
        try b.expect(command: "FAIL", "CHATHISTORY", "INVALID_TARGET")
        b.send("CHATHISTORY LATEST #log nonsense 10")
        try b.expect(command: "FAIL", "CHATHISTORY", "INVALID_PARAMS")
    }

    /// TARGETS lists a private conversation whoever is connected, and matches each conversation on
    /// its latest line (irctest's testChathistoryTargetsExcludesUpdatedTargets).
    func testTargetsListPrivateConversationsWithThoseOfflineAndMatchTheLatestLine() throws {
        let server = try TestServer()
        for name in ["ann", "ben", "cal"] { try server.addAccount(name, "\(name)-password") }
        let caps = ["draft/chathistory", "batch", "server-time", "message-tags"]
        let ann = try server.connect(as: "ann", caps: caps)
        let ben = try server.connect(as: "ben", caps: caps)
        let cal = try server.connect(as: "cal", caps: caps)
        ben.send("PRIVMSG ann :first from ben")
        try ann.expect(command: "PRIVMSG", "ann", "first from ben")
        cal.send("PRIVMSG ann :from cal")
        let calsLine = try ann.expect(command: "PRIVMSG", "ann", "from cal")
        Thread.sleep(forTimeInterval: 0.01)
        ben.send("PRIVMSG ann :later from ben")
        try ann.expect(command: "PRIVMSG", "ann", "later from ben")
        ben.send("QUIT :off")
        cal.send("QUIT :off")
        _ = ann.drain(for: 0.2)

        func targets(_ from: String, _ to: String) throws -> [String] {
            ann.send("CHATHISTORY TARGETS timestamp=\(from) timestamp=\(to) 10")
            return try ann.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
                .filter { $0.command == "CHATHISTORY" }.map { $0.params[1] }
        }
        XCTAssertEqual(try targets("2000-01-01T00:00:00.000Z", "2100-01-01T00:00:00.000Z"), ["cal", "ben"],
                       "both, though neither is connected; cal's latest line is the older")
        // Up to cal's line: ben's first line is in the window, but his latest is after it.
        let calsTime = try XCTUnwrap(calsLine.tag("time"))
        let justAfterCal = Timestamp.format(try XCTUnwrap(Timestamp.parse(calsTime)).addingTimeInterval(0.001))
        XCTAssertEqual(try targets("2000-01-01T00:00:00.000Z", justAfterCal), ["cal"])
    }
}
