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

        try store.pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA query_only = 1") }  // writes refused
        ann.send("TOPIC #den :never stored")
        try ann.expect(command: "FAIL", "TOPIC", "CANNOT_SAVE", "#den")
        ann.send("MODE #den +mk secret")
        try ann.expect(command: "FAIL", "MODE", "CANNOT_SAVE", "#den")
        XCTAssertEqual(ben.drain(for: 0.3).filter { ["TOPIC", "MODE"].contains($0.command) }.count, 0, "the room heard nothing")
        ann.send("TOPIC #den")
        XCTAssertEqual(try ann.expect(command: "332").params.last, "stored first", "nothing changed")
        XCTAssertEqual(try ready(server), "HTTP/1.1 503 Service Unavailable")

        try store.pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA query_only = 0") }
        ann.send("MODE #den +m")
        try ben.expect(command: "MODE", "#den", "+m")
        XCTAssertEqual(try ready(server), "HTTP/1.1 200 OK", "ready again once a write goes through")
        let den = try XCTUnwrap(try store.allRooms().first { $0.key == "#den" })
        XCTAssertEqual(den.topic, "stored first")
        XCTAssertTrue(den.modes.moderated)
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

    private func ready(_ server: TestServer) throws -> String? {
        let c = try TestClient(port: server.webPlainPort, tls: false)
        defer { c.close() }
        c.sendRaw(Array("GET /ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        return c.drainRaw(for: 0.5).first
    }
}
