import ChorusIRC
import XCTest

/// IRCv3 MONITOR and extended-monitor, written from the specifications
/// (ircv3.net/specs/extensions/monitor, …/extended-monitor).
final class MonitorTests: XCTestCase {
    var server: TestServer!

    override func setUpWithError() throws {
        server = try TestServer()
    }

    override func tearDown() {
        server = nil
    }

    func client(_ nick: String, caps: [String] = []) throws -> (TestClient, [Message]) {
        let c = try server.connect()
        let burst = try c.register(nick, caps: caps)
        return (c, burst)
    }

    /// Sends a PING after `line` and returns everything up to its PONG: the whole answer, or nothing.
    func answer(_ c: TestClient, _ line: String) throws -> [Message] {
        c.send(line)
        c.send("PING end-of-answer")
        return try c.collect { $0.command == "PONG" }.dropLast().map { $0 }
    }

    func testMonitorSaysWhoIsOnlineAndFollowsComingAndGoing() throws {
        let (foo, burst) = try client("foo")
        XCTAssertTrue(burst.contains { $0.command == "005" && $0.params.contains("MONITOR=100") })
        let (bar, _) = try client("bar")
        let status = try answer(foo, "MONITOR + bar,baz,*!user@host")
        XCTAssertEqual(status.map(\.command), ["730", "731"], "online, offline, and no mask: \(status)")
        XCTAssertTrue(status[0].params[1].hasPrefix("bar!"), "with its user and host")
        XCTAssertEqual(status[1].params, ["foo", "baz"])

        bar.send("QUIT :bye")
        try foo.expect(command: "731", "bar")
        let (baz, _) = try client("baz")
        let online = try foo.expect(command: "730")
        XCTAssertTrue(online.params[1].hasPrefix("baz!"))
        // A new spelling of the same nick is no news; a new nick is.
        _ = try answer(baz, "NICK BAZ")
        XCTAssertEqual(try answer(foo, "PING quiet").filter { $0.command.hasPrefix("73") }, [])
        baz.send("NICK qux")
        try foo.expect(command: "731", "BAZ")

        let listed = try answer(foo, "MONITOR L")
        XCTAssertEqual(listed.map(\.command), ["732", "733"])
        XCTAssertEqual(Set(listed[0].params[1].split(separator: ",")), ["bar", "baz"])
        XCTAssertEqual(try answer(foo, "MONITOR S").map(\.command), ["731"], "both offline now")
        XCTAssertEqual(try answer(foo, "MONITOR - bar"), [], "removing says nothing")
        XCTAssertEqual(try answer(foo, "MONITOR C"), [], "nor does clearing")
        XCTAssertEqual(try answer(foo, "MONITOR L").map(\.command), ["733"])
        baz.send("NICK baz")
        XCTAssertEqual(try answer(foo, "MONITOR S"), [], "nothing is watched any more")
    }

    func testAFullListIsRefusedWithWhatDidNotFit() throws {
        let (foo, _) = try client("foo")
        _ = try answer(foo, "MONITOR + " + (1...98).map { "n\($0)" }.joined(separator: ","))
        let answer = try answer(foo, "MONITOR + a1,a2,a3,a4")
        let full = try XCTUnwrap(answer.first { $0.command == "734" })
        XCTAssertEqual(full.params[1...2], ["100", "a3,a4"])
        XCTAssertEqual(answer.filter { $0.command == "731" }.first?.params[1], "a1,a2", "what fit is answered")
    }

    /// extended-monitor: a watcher with away-notify hears a watched nick's AWAY without sharing a room.
    func testExtendedMonitorCarriesAwayWithoutASharedRoom() throws {
        let (foo, _) = try client("foo", caps: ["extended-monitor", "away-notify"])
        let (plain, _) = try client("plain", caps: ["away-notify"])
        let (bar, _) = try client("bar")
        _ = try answer(foo, "MONITOR + bar")
        _ = try answer(plain, "MONITOR + bar")
        bar.send("AWAY :afk")
        let away = try foo.expect(command: "AWAY")
        XCTAssertEqual(away.source?.hasPrefix("bar!"), true)
        XCTAssertEqual(away.params, ["afk"])
        XCTAssertFalse(try answer(plain, "PING x").contains { $0.command == "AWAY" }, "only with extended-monitor")
    }
}
