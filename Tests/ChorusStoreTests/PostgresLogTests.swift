import ChorusCore
@testable import ChorusPostgres
import ChorusTestSupport
import Foundation
import Synchronization
import XCTest

/// The log the processes of one installation share, as the PostgreSQL store keeps it: the
/// wake-ups a commit sends, the bus, the rooms each process changed, and reads that other
/// processes' commits land in the middle of. Skipped without `CHORUS_TEST_POSTGRES`.
final class PostgresLogTests: XCTestCase {
    /// Installations in two schemas of one database: a process is woken by its own installation's
    /// commits (a line, a room made), never by the other's.
    func testEachInstallationWakesOnItsOwnChannel() throws {
        let ours = try freshLocation("w"), theirs = try freshLocation("w")
        XCTAssertNotEqual(ours.channel, theirs.channel)
        let listening = try PostgresStore(location: ours, connections: 1)
        let sameInstallation = try PostgresStore(location: ours, connections: 1)
        let otherInstallation = try PostgresStore(location: theirs, connections: 1)
        defer { listening.close(); sameInstallation.close(); otherInstallation.close() }
        let woken = DispatchSemaphore(value: 0)
        listening.whenCommitted { _ in woken.signal() }
        Thread.sleep(forTimeInterval: 0.3)  // its LISTEN is in place
        func line(_ n: Int) -> HistoryEntry {
            HistoryEntry(conversation: "#flat", msgid: "m\(n)", time: Date(), command: "PRIVMSG", source: "ann!a@h",
                         account: "ann", target: "#flat", text: "hello \(n)")
        }
        try otherInstallation.transaction(cache: nil) { try $0.appendHistory([line(1)]) }
        try otherInstallation.saveRoom(Room(name: "#flat", createdAt: Date()))
        XCTAssertEqual(woken.wait(timeout: .now() + 0.5), .timedOut, "the other installation's commits wake no one here")
        try sameInstallation.transaction(cache: nil) { try $0.appendHistory([line(2)]) }
        XCTAssertEqual(woken.wait(timeout: .now() + 5), .success, "a line of its own installation does")
        try sameInstallation.saveRoom(Room(name: "#flat", createdAt: Date()))
        XCTAssertEqual(woken.wait(timeout: .now() + 5), .success, "and a room made by it")

        var long = ours
        long.schema = String(repeating: "s", count: 63)
        XCTAssertLessThanOrEqual(long.channel.utf8.count, 63, "a channel is an identifier")
        long.schema = String(repeating: "s", count: 62) + "t"
        XCTAssertNotEqual(long.channel, { var l = long; l.schema = String(repeating: "s", count: 63); return l.channel }())
    }

    /// Each node reads the rooms the others changed, even one it changed itself right after:
    /// its own change does not hide another node's that came before it.
    func testANodesChangeOfARoomDoesNotHideAnothersBeforeIt() throws {
        let (_, a, b) = try twoProcesses("r")
        defer { a.close(); b.close() }
        let since = try b.roomsChanged(since: nil).now
        try a.saveRoom(Room(name: "#flat", createdAt: Date()))
        try b.saveRoom(Room(name: "#flat", topic: "b's topic", createdAt: Date()))
        XCTAssertEqual(try b.roomsChanged(since: since).rooms.map(\.room), ["#flat"], "b reads a's change")
        XCTAssertEqual(try a.roomsChanged(since: since).rooms.map(\.room), ["#flat"], "a reads b's change")
        XCTAssertEqual(try b.roomsChanged(since: since).rooms.count, 1, "a room once, at its latest change")
        try a.saveRoom(Room(name: "#yard", createdAt: Date()))
        XCTAssertEqual(try a.roomsChanged(since: since).rooms.map(\.room), ["#flat"], "a's own changes are not for a")
        XCTAssertEqual(try b.roomsChanged(since: since).rooms.map(\.room), ["#flat", "#yard"], "in the order they changed")
    }

    /// A change of an account's settings wakes the other processes as a room's change does (their
    /// Workspaces read time zones again); a process's own changes do not wake it.
    func testAnAccountsSettingsChangedWakeTheOtherProcesses() throws {
        let (_, a, b) = try twoProcesses("t")
        defer { a.close(); b.close() }
        _ = try a.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: Date()))
        let woken = DispatchSemaphore(value: 0)
        b.whenCommitted { news in
            if case .look(roomsChanged: true) = news { woken.signal() }
        }
        Thread.sleep(forTimeInterval: 0.3)  // its LISTEN is in place
        try b.setTimeZone("Europe/Paris", of: "ann")
        XCTAssertEqual(woken.wait(timeout: .now() + 0.5), .timedOut, "not by its own change")
        try a.setTimeZone("Asia/Tokyo", of: "ann")
        XCTAssertEqual(woken.wait(timeout: .now() + 5), .success)
    }

    /// A transaction's lines come with its wake-up, with the log's end before them: another
    /// process's lines whole (an audience, no account), its own as where they end only, and lines
    /// too long for a notification as a plain wake-up.
    func testAWakeUpCarriesTheLinesAndMessagesItsStatementAppended() throws {
        let (_, listening, other) = try twoProcesses("n")
        defer { listening.close(); other.close() }
        let heard = Mutex<[LogNews]>([]), arrived = DispatchSemaphore(value: 0)
        listening.whenCommitted { news in
            heard.withLock { $0.append(news) }
            arrived.signal()
        }
        Thread.sleep(forTimeInterval: 0.3)  // its LISTEN is in place
        let t = Date(timeIntervalSince1970: 1_790_000_000)
        func line(_ msgid: String, text: String = "hello", account: String? = "ann", audience: [String]? = nil) -> HistoryEntry {
            HistoryEntry(conversation: "#flat", msgid: msgid, time: t, command: "PRIVMSG", source: "ann!a@h", account: account,
                         target: "#Flat", text: text, clientTags: "+draft/reply=x1", audience: audience)
        }
        func next() throws -> LogNews {
            XCTAssertEqual(arrived.wait(timeout: .now() + 5), .success)
            return try XCTUnwrap(heard.withLock { $0.isEmpty ? nil : $0.removeFirst() })
        }
        let start = try listening.changes(after: 0, limit: 100).next
        let sent = [line("m1"), line("m2", account: nil, audience: ["ben", "cat"])]
        try other.transaction(cache: nil) { try $0.appendHistory(sent) }
        guard case .appended(let after, let last, let lines, _) = try next() else { return XCTFail("not the lines") }
        XCTAssertEqual(after, start)
        XCTAssertEqual(lines, sent)
        XCTAssertEqual(try listening.changes(after: start, limit: 100).next, last, "where they end is where the log ends")

        try listening.transaction(cache: nil) { try $0.appendHistory([line("m3")]) }
        guard case .appended(let ownAfter, let ownLast, let own, _) = try next() else { return XCTFail("not its own lines' end") }
        XCTAssertEqual(ownAfter, last)
        XCTAssertGreaterThan(ownLast, ownAfter)
        XCTAssertEqual(own, [], "its own lines are its clients' already")

        // A message on the bus comes in its wake-up too, after the lines before it.
        let typing = BusMessage.line(RelayedLine(msgid: "r1", time: t, command: "TAGMSG", source: "gus!g@h", account: nil,
                                                 target: "#Flat", text: "", clientTags: "+typing=active"))
        try other.post([typing])
        guard case .appended(let busAfter, _, let noLines, let messages) = try next() else { return XCTFail("not the bus message") }
        XCTAssertEqual(busAfter, ownLast)
        XCTAssertEqual(noLines, [])
        XCTAssertEqual(messages, [typing])

        try other.transaction(cache: nil) { try $0.appendHistory([line("m4", text: String(repeating: "x", count: 8000))]) }
        guard case .look(roomsChanged: false) = try next() else { return XCTFail("a long line's wake-up says only to read") }
        // 3,000 characters, 9,000 bytes: long for a notification, and still stored.
        try other.transaction(cache: nil) { try $0.appendHistory([line("m5", text: String(repeating: "€", count: 3000))]) }
        guard case .look(roomsChanged: false) = try next() else { return XCTFail("a line long in bytes says only to read") }
        XCTAssertEqual(try listening.history(of: "#flat", .latest(after: nil, limit: 1)).first?.msgid, "m5")
    }

    /// A transaction of lines and a bus message that commits while another process reads the log,
    /// between its read of the lines and its read of the bus, is read whole the next time: the
    /// bus message does not carry the reader past the lines it did not see.
    func testLinesCommittedWhileTheLogIsReadAreReadNextTime() throws {
        let (_, reading, posting) = try twoProcesses("g")
        defer { reading.close(); posting.close(); PostgresStore.afterReadingLines = nil }
        let start = try reading.changes(after: 0, limit: 100).next
        let t = Date(timeIntervalSince1970: 1_790_000_000)
        func typing(_ msgid: String) -> BusMessage {
            .line(RelayedLine(msgid: msgid, time: t, command: "TAGMSG", source: "gus!g@h", account: nil, target: "#Flat",
                              text: "", clientTags: "+typing=active", standsInFor: .init(room: "#flat", membersHear: true)))
        }
        let lines = (1...3).map {
            HistoryEntry(conversation: "#flat", msgid: "m\($0)", time: t, command: "PRIVMSG", source: "ann!a@h", account: "ann",
                         target: "#Flat", text: "line \($0)")
        }
        try posting.post([typing("r1")])  // the reader's next read looks at the bus
        PostgresStore.afterReadingLines = {
            PostgresStore.afterReadingLines = nil
            do {
                try posting.transaction(cache: nil) { tx in
                    try tx.appendHistory(lines)
                    try XCTUnwrap(tx as? any SharedLog).post([typing("r2")])
                }
            } catch {
                XCTFail("\(error)")
            }
        }
        var read: [String] = []
        var position = start
        for _ in 0..<3 {
            let (changes, next, _) = try reading.changes(after: position, limit: 100)
            position = next
            for change in changes {
                switch change {
                case .line(let entry): read.append(entry.msgid)
                case .bus(.line(let relayed)): read.append(relayed.msgid)
                default: break
                }
            }
        }
        XCTAssertEqual(read, ["r1", "m1", "m2", "m3", "r2"])
    }

    /// Messages on the bus reach the other process typed as they were posted, in the log's one
    /// order with the lines around them; the poster passes over its own; a minute on they are
    /// forgotten.
    func testTheBusCarriesTypedMessagesInTheLogsOrderAndForgetsThemAfterAMinute() throws {
        let (_, reading, posting) = try twoProcesses("b")
        defer { reading.close(); posting.close() }
        let start = try reading.changes(after: 0, limit: 100).next
        let t = Date(timeIntervalSince1970: 1_790_000_000)
        let typing = RelayedLine(msgid: "r1", time: t, command: "TAGMSG", source: "gus!g@h", account: nil, target: "#Flat",
                                 text: "", clientTags: "+typing=active", standsInFor: .init(room: "#flat", membersHear: true))
        let line = HistoryEntry(conversation: "#flat", msgid: "m1", time: t, command: "PRIVMSG", source: "ann!a@h", account: "ann",
                                target: "#Flat", text: "hello")
        let kick = PresenceOrder(nick: "gus", room: "#Flat", reason: "not today", source: "ann!a@h", account: "ann", time: t)
        try posting.post([.line(typing)])
        try posting.transaction(cache: nil) { try $0.appendHistory([line]) }
        try posting.post([.kick(kick), .invite(PresenceOrder(nick: "gus", room: "#den", source: "ann!a@h", account: "ann", time: t))])

        let read = try reading.changes(after: start, limit: 100).changes
        guard read.count == 4, case .bus(.line(let first)) = read[0], case .line(let second) = read[1],
              case .bus(.kick(let third)) = read[2], case .bus(.invite(let fourth)) = read[3] else { return XCTFail("\(read)") }
        XCTAssertEqual(first, typing)
        XCTAssertEqual(second, line)
        XCTAssertEqual(third, kick)
        XCTAssertEqual(fourth.room, "#den")
        XCTAssertTrue(try posting.changes(after: start, limit: 100).changes.isEmpty, "its own messages are its clients' already")

        let count = { try posting.db.read { try $0.query("SELECT count(*) FROM bus").first?.int64(0) } }
        XCTAssertEqual(try count(), 3)
        _ = try posting.withdrawSilentNodes()
        XCTAssertEqual(try count(), 3, "kept while other processes may not have read them")
        try posting.db.write { try $0.execute("UPDATE bus SET created = created - 61000") }
        _ = try posting.withdrawSilentNodes()
        XCTAssertEqual(try count(), 0, "forgotten a minute on")
    }
}
