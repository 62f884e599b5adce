import ChorusIRC
import Foundation
import XCTest

/// Reminders on a clock the test moves: who is told, how often, across a restart and while away.
final class ReminderTests: XCTestCase {
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Date
        init(_ start: Date = ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")!) { value = start }
        var now: Date { lock.lock(); defer { lock.unlock() }; return value }
        func advance(hours: Double) { lock.lock(); value += hours * 3600; lock.unlock() }
    }

    func testDueOverdueRoomOnceRestartAndOffline() throws {
        let clock = Clock()
        let server = try TestServer(now: { clock.now }) {
            $0.timeZone = TimeZone(identifier: "UTC")!
            $0.reminderInterval = 2 * 3600
        }
        for nick in ["ann", "ben", "cat"] { try server.addAccount(nick, "\(nick)-password") }
        func login(_ nick: String) throws -> TestClient {
            let c = try server.connect()
            try c.register(nick, sasl: (nick, "\(nick)-password"))
            return c
        }
        let ann = try login("ann"), ben = try login("ben"), cat = try login("cat")
        try ann.join("#flat"); try ben.join("#flat"); try cat.join("#flat")
        ann.send("PRIVMSG #flat :!chore add dishes every day at 20:00 among ben cat")
        try ben.expect("turn started") { $0.params.last?.hasPrefix("It is ben's turn for dishes") == true }
        try cat.expect("turn started") { $0.params.last?.hasPrefix("It is ben's turn for dishes") == true }

        // Before the due time nothing fires.
        clock.advance(hours: 10)  // 19:00
        try server.server.checkReminders()
        XCTAssertTrue(ben.drain(for: 0.2).filter { $0.command == "NOTICE" }.isEmpty)

        // At 20:00 only ben hears it, directly; the room hears nothing.
        clock.advance(hours: 1.5)  // 20:30
        try server.server.checkReminders()
        let due = try ben.expect(command: "NOTICE", "ben")
        XCTAssertTrue(due.params[1].hasPrefix("Your turn: dishes in #flat is due now"), due.params[1])
        XCTAssertFalse(cat.drain(for: 0.2).contains { $0.command == "NOTICE" })
        try server.server.checkReminders()
        XCTAssertFalse(ben.drain(for: 0.2).contains { $0.command == "NOTICE" }, "no second reminder within the interval")

        // Two hours later: ben again, and the room once.
        clock.advance(hours: 2)
        try server.server.checkReminders()
        let overdue = try ben.expect(command: "NOTICE", "ben")
        XCTAssertTrue(overdue.params[1].hasPrefix("Reminder: dishes in #flat is overdue"), overdue.params[1])
        let roomLine = try cat.expect(command: "NOTICE", "#flat")
        XCTAssertEqual(roomLine.params[1], "dishes is overdue: ben's turn, due Mon 23 Nov 20:00")
        clock.advance(hours: 2)
        try server.server.checkReminders()
        try ben.expect(command: "NOTICE", "ben")
        XCTAssertFalse(cat.drain(for: 0.3).contains { $0.command == "NOTICE" }, "the room is told once")

        // ben goes offline; the server restarts after two more intervals: one reminder, on login.
        ben.send("QUIT")
        try cat.expect(command: "QUIT")
        clock.advance(hours: 5)
        try server.restart()
        try server.server.checkReminders()
        let back = try login("ben")
        let lines = back.drain(for: 0.6).filter { $0.command == "NOTICE" && $0.params.first == "ben" }
        XCTAssertEqual(lines.filter { $0.params[1].contains("dishes") }.count, 1, "one line per chore, not a flood: \(lines.map { $0.params[1] })")

        // Done: the turn moves on and the reminders with it.
        back.send("PRIVMSG #flat :!done dishes")
        try back.expect("next turn") { $0.params.last?.hasPrefix("It is cat's turn for dishes") == true }
    }

    /// A block added to a plan says nothing to anyone, yet moves what comes due: its start earns a
    /// nudge, and a block taken out earns none.
    func testABlockPlannedInChatIsNudgedWhenItStarts() throws {
        let clock = Clock()  // Monday 09:00 UTC
        let server = try TestServer(now: { clock.now }) { $0.timeZone = TimeZone(identifier: "UTC")! }
        try server.addAccount("ben", "ben-password")
        let ben = try server.connect()
        try ben.register("ben", sasl: ("ben", "ben-password"))
        for line in ["!plan remind on", "!plan add exercise daily 13:00-14:00", "!plan rm 1", "!plan add study daily 10:00-12:00"] {
            ben.send("PRIVMSG Chorus :\(line)")
            try ben.expect(command: "NOTICE", "ben")
        }
        try server.server.checkReminders()
        XCTAssertFalse(ben.drain(for: 0.2).contains { $0.command == "NOTICE" }, "nothing before 10:00")

        clock.advance(hours: 1.25)  // 10:15
        try server.server.checkReminders()
        let nudge = try ben.expect(command: "NOTICE", "ben")
        XCTAssertEqual(nudge.params[1], "Your plan says study from 10:00 to 12:00, and no timer runs: !track start study")

        clock.advance(hours: 3)  // 13:15: the exercise block was taken out
        try server.server.checkReminders()
        XCTAssertFalse(ben.drain(for: 0.3).contains { $0.command == "NOTICE" })
    }
}
