import ChorusCore
import ChorusIRC
@testable import ChorusServer
@testable import ChorusStore
import ChorusTestSupport
import GRDB
import XCTest

/// A room's topic and modes are told once stored: when the store refuses the write, the one who
/// asked hears why, the room hears nothing, and `/ready` says the server is not ready.
final class StoredRoomChangeTests: XCTestCase {
    func testARoomChangeTheStoreRefusesIsToldToItsAuthorOnlyAndReadyIsNot() throws {
        try XCTSkipIf(TestStore.onPostgres, "SQLite's query_only stands for a store that refuses writes")
        let server = try TestServer(configure: { $0.webPlain = .init(host: "127.0.0.1", port: 0) })
        let store = try XCTUnwrap(server.server.store as? SQLiteStore)
        let ann = try server.connect()
        try ann.register("ann", caps: ["standard-replies"])
        try ann.join("#den")
        let ben = try server.connect()
        try ben.register("ben")
        try ben.join("#den")
        ann.send("TOPIC #den :stored first")
        try ben.expect(command: "TOPIC", "#den", "stored first")
        XCTAssertEqual(try ready(server), "HTTP/1.1 200 OK")

        try refuseWrites(store, true)
        ann.send("TOPIC #den :never stored")
        try ann.expect(command: "FAIL", "TOPIC", "CANNOT_SAVE", "#den")
        ann.send("MODE #den +mk secret")
        try ann.expect(command: "FAIL", "MODE", "CANNOT_SAVE", "#den")
        XCTAssertEqual(ben.drain(for: 0.3).filter { ["TOPIC", "MODE"].contains($0.command) }.count, 0, "the room heard nothing")
        ann.send("TOPIC #den")
        XCTAssertEqual(try ann.expect(command: "332").params.last, "stored first", "nothing changed")
        XCTAssertEqual(try ready(server), "HTTP/1.1 503 Service Unavailable")

        try refuseWrites(store, false)
        ann.send("MODE #den +m")
        try ben.expect(command: "MODE", "#den", "+m")
        XCTAssertEqual(try ready(server), "HTTP/1.1 200 OK", "ready again once a write goes through")
        let den = try XCTUnwrap(try store.allRooms().first { $0.key == "#den" })
        XCTAssertEqual(den.topic, "stored first")
        XCTAssertTrue(den.modes.moderated)
    }

    /// A member's role (MODE ±o/±v) and a member's KICK change their stored membership, so they too
    /// are told once stored: with writes refused the manager hears why and the room nothing; once
    /// writes go through the room hears each, and a restart keeps them.
    func testMembersRolesAndKicksAreToldOnceStored() throws {
        try XCTSkipIf(TestStore.onPostgres, "SQLite's query_only stands for a store that refuses writes")
        let server = try TestServer()
        for name in ["ann", "ben", "cat"] { try server.addAccount(name, "\(name)-password") }
        let ann = try server.connect(as: "ann", caps: ["standard-replies"])
        try ann.join("#den")
        let ben = try server.connect(as: "ben"), cat = try server.connect(as: "cat")
        try ben.join("#den")
        try cat.join("#den")
        let store = try XCTUnwrap(server.server.store as? SQLiteStore)

        try refuseWrites(store, true)
        ann.send("MODE #den +o ben")
        try ann.expect(command: "FAIL", "MODE", "CANNOT_SAVE", "#den")
        ann.send("KICK #den cat :out")
        try ann.expect(command: "FAIL", "KICK", "CANNOT_SAVE", "#den")
        XCTAssertEqual(cat.drain(for: 0.3).filter { ["MODE", "KICK"].contains($0.command) }.count, 0, "the room heard nothing")
        ann.send("NAMES #den")
        XCTAssertEqual(Set(try ann.expect(command: "353").params.last!.split(separator: " ")), ["@ann", "ben", "cat"], "nothing changed")

        try refuseWrites(store, false)
        ann.send("MODE #den +ov ben ben")
        try cat.expect(command: "MODE", "#den", "+ov", "ben", "ben")
        ann.send("KICK #den cat :out")
        try ben.expect(command: "KICK", "#den", "cat", "out")
        XCTAssertEqual(try store.role(of: "ben", in: "#den"), .manager)
        XCTAssertNil(try store.role(of: "cat", in: "#den"), "a kicked member's membership ends")

        try server.restart()
        let again = try server.connect(as: "ben")
        let names = try again.collect(until: { $0.command == "366" }).filter { $0.command == "353" }
        XCTAssertEqual(names.flatMap { $0.params.last!.split(separator: " ") }, ["@ben"], "a manager after a restart: \(names)")
    }

    /// A live operator the room does not have as a manager (a guest who opened the room before a
    /// manager was named) is refused a member's role by the room's rules, and hears so; the room
    /// hears no MODE that was never stored.
    func testARoleTheRoomsRulesRefuseIsHeardByTheSetterAlone() throws {
        let server = try TestServer()
        for name in ["ann", "ben"] { try server.addAccount(name, "\(name)-password") }
        let gus = try server.connect()
        try gus.register("gus")
        try gus.join("#yard")
        let ann = try server.connect(as: "ann"), ben = try server.connect(as: "ben")
        try ann.join("#yard")
        try ben.join("#yard")
        gus.send("MODE #yard +o ann")  // nobody manages the room yet: its operator names the first manager
        try ben.expect(command: "MODE", "#yard", "+o", "ann")
        try ann.expect(command: "MODE", "#yard", "+o", "ann")
        gus.send("MODE #yard +o ben")
        let refusal = try gus.expect(command: "482", "#yard")
        XCTAssertTrue(refusal.params.last!.contains("managers"), "\(refusal)")
        XCTAssertEqual(ann.drain(for: 0.3).filter { $0.command == "MODE" }.count, 0, "the room heard nothing")
        XCTAssertEqual(try server.server.store.role(of: "ben", in: "#yard"), .member)
    }

    /// Two managers' changes at once are both kept: each is worked out from what the one before left.
    func testChangesAtOnceAreAllKept() throws {
        let server = try TestServer()
        try server.addAccount("ann", "ann-password")
        let ann = try server.connect(as: "ann")
        try ann.join("#den")
        for flag in ["+m", "+i", "+s", "+l 7"] { ann.send("MODE #den \(flag)") }
        ann.send("TOPIC #den :all four")
        try ann.expect(command: "TOPIC", "#den", "all four")
        try server.restart()
        let again = try server.connect(as: "ann")
        try again.join("#den")
        again.send("MODE #den")
        let modes = try again.expect(command: "324")
        XCTAssertTrue(["i", "l", "m", "s"].allSatisfy { modes.params[2].contains($0) }, "\(modes)")
    }

    /// SQLite's `query_only` stands for a store that refuses writes (a full disk, a lost database).
    private func refuseWrites(_ store: SQLiteStore, _ refuse: Bool) throws {
        try store.pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA query_only = \(refuse ? 1 : 0)") }
    }

    private func ready(_ server: TestServer) throws -> String? {
        let c = try TestClient(port: server.webPlainPort, tls: false)
        defer { c.close() }
        c.sendRaw(Array("GET /ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        return c.drainRaw(for: 0.5).first
    }
}
