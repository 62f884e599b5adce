@testable import ChorusServer
import ChorusIRC
import Foundation
import Synchronization
import XCTest

/// Time that follows the person, over real sockets: a timer left running when someone's last
/// connection closes is asked about at their next login, not counted through the night.
final class TimeTests: XCTestCase {
    var server: TestServer!

    override func tearDown() {
        server = nil
    }

    /// QUIT's ERROR can reach the client before the server has let the connection go: wait for that
    /// before moving the clock, so the time it left is the time it quit.
    func waitUntilGone(_ nick: String) throws {
        let irc = server.server!
        for _ in 0..<500 {
            if try irc.loop.submit({ irc.registry.client(nick: nick) == nil }).wait() { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        XCTFail("\(nick) is still connected")
    }

    func testATimerLeftRunningIsAskedAboutAtTheNextLogin() throws {
        let clock = Mutex(ISO8601DateFormatter().date(from: "2026-11-23T14:02:00Z")!)
        func set(_ iso: String) { clock.withLock { $0 = ISO8601DateFormatter().date(from: iso)! } }
        server = try TestServer(now: { clock.withLock { $0 } }) { $0.timeZone = TimeZone(identifier: "UTC")! }
        try server.addAccount("ann", "ann-password")
        var ann = try server.connect(as: "ann")
        ann.send("PRIVMSG Chorus :!track start work report")
        _ = try ann.take("started") { $0.params.last == "work started at 14:02." }
        // A second connection closing is not leaving: ann is still here.
        let phone = try server.connect(as: "ann", nick: "ann_phone")
        phone.send("QUIT :bye")
        _ = try phone.expect(command: "ERROR")
        try waitUntilGone("ann_phone")
        set("2026-11-23T16:10:00Z")
        ann.send("QUIT :home")
        _ = try ann.expect(command: "ERROR")
        try waitUntilGone("ann")

        set("2026-11-24T08:30:00Z")
        ann = try server.connect(as: "ann")
        let asked = try ann.take("the question") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("work has been running") == true }
        XCTAssertEqual(asked.params[1], "work has been running since Mon 23 Nov 14:02 (you left at 16:10 yesterday): " +
                       "!track stop at 16:10 yesterday, or !track keep")
        ann.send("PRIVMSG Chorus :!track stop at 16:10 yesterday")
        _ = try ann.take("stopped") { $0.params.last?.hasPrefix("work stopped at 16:10: 2h 08m (entry 1).") == true }

        // Keeping it: the timer runs on; leaving again is asked about again, from the new time.
        ann.send("PRIVMSG Chorus :!track start study")
        _ = try ann.take("started") { $0.params.last == "study started at 08:30." }
        ann.send("QUIT :lunch")
        _ = try ann.expect(command: "ERROR")
        try waitUntilGone("ann")
        set("2026-11-24T09:30:00Z")
        ann = try server.connect(as: "ann")
        _ = try ann.take("the question") { $0.params.last == "study has been running since 08:30 (you left at 08:30): !track stop at 08:30, or !track keep" }
        ann.send("PRIVMSG Chorus :!track keep")
        _ = try ann.take("kept") { $0.params.last == "study keeps running since 08:30 (1h 00m)." }
        set("2026-11-24T10:00:00Z")
        ann.send("QUIT :again")
        _ = try ann.expect(command: "ERROR")
        try waitUntilGone("ann")
        ann = try server.connect(as: "ann")
        _ = try ann.take("the new question") { $0.params.last?.hasPrefix("study has been running since 08:30 (you left at 10:00)") == true }
    }
}
