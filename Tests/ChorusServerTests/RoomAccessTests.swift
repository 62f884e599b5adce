import ChorusServer
import Foundation
import XCTest

/// A team's room is its members': who may join a room, on the product's defaults.
final class RoomAccessTests: XCTestCase {
    var server: TestServer!

    override func setUpWithError() throws {
        server = try TestServer(configure: { $0.roomsOpen = ServerConfig().roomsOpen })
        for name in ["ann", "bob", "cat"] { try server.addAccount(name, "\(name)-password") }
    }

    override func tearDown() {
        server = nil
    }

    func testOutOfTheBoxRoomsAreMembersOnlyAndTheConfigFileSaysOtherwise() throws {
        XCTAssertFalse(ServerConfig().roomsOpen)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-rooms-\(UUID().uuidString).conf")
        defer { try? FileManager.default.removeItem(at: file) }
        var config = ServerConfig()
        try "rooms = open\n".write(to: file, atomically: true, encoding: .utf8)
        try config.load(file: file.path)
        XCTAssertTrue(config.roomsOpen)
        try "rooms = public\n".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try config.load(file: file.path)) { error in
            XCTAssertTrue("\(error)".contains("rooms is open or members, not public"), "\(error)")
        }
    }

    func testARoomAnAccountMadeTurnsAwayGuestsAndOtherAccountsUntilAdded() throws {
        let ann = try server.connect(as: "ann")
        try ann.join("#kitchen")
        ann.send("PRIVMSG #kitchen :the spare key is under the mat")

        let guest = try server.connect()
        try guest.register("drifter")
        guest.send("JOIN #kitchen")
        let refused = try guest.expect(command: "473", "#kitchen")
        XCTAssertEqual(refused.params.last, "Cannot join room: it is its members' (a manager adds you with !room add or INVITE)")
        guest.send("CHATHISTORY LATEST #kitchen * 10")
        guest.send("PING after-history")
        let seen = try guest.collect { $0.command == "PONG" }
        XCTAssertFalse(seen.contains { $0.params.last?.contains("spare key") == true }, "a guest reads nothing of the room")

        let bob = try server.connect(as: "bob")
        bob.send("JOIN #kitchen")
        try bob.expect(command: "473", "#kitchen")
        ann.send("PRIVMSG #kitchen :!room add bob")
        try bob.expect(command: "366", "#kitchen")  // put in the room at once

        // Invited: cat may come in once.
        let cat = try server.connect(as: "cat")
        ann.send("INVITE cat #kitchen")
        try cat.expect(command: "INVITE")
        try cat.join("#kitchen")
    }

    func testAManagerOpensTheRoomAndClosesItAgain() throws {
        let ann = try server.connect(as: "ann")
        try ann.join("#yard")
        ann.send("PRIVMSG #yard :!room set open on")
        let opened = try ann.expect("the setting") { $0.command == "NOTICE" && $0.params.last == "ann set open on in #yard" }
        XCTAssertNotNil(opened)
        let guest = try server.connect()
        try guest.register("passer")
        try guest.join("#yard")

        ann.send("PRIVMSG #yard :!room set open off")
        _ = try ann.expect("closed") { $0.command == "NOTICE" && $0.params.last == "ann set open off in #yard" }
        let other = try server.connect()
        try other.register("stranger")
        other.send("JOIN #yard")
        try other.expect(command: "473", "#yard")
    }

    func testARoomOnlyGuestsAreInIsOpenAsOnAnyIRCServer() throws {
        let first = try server.connect()
        try first.register("wanderer")
        try first.join("#lobby")
        let second = try server.connect()
        try second.register("rambler")
        try second.join("#lobby")
        let bob = try server.connect(as: "bob")
        try bob.join("#lobby")
    }

    func testTheRoomsSettingOpensAccountsRoomsToAll() throws {
        server = try TestServer(configure: { $0.roomsOpen = true })
        try server.addAccount("ann", "ann-password")
        let ann = try server.connect(as: "ann")
        try ann.join("#square")
        let guest = try server.connect()
        try guest.register("visitor")
        try guest.join("#square")
        ann.send("PRIVMSG #square :!room")
        _ = try ann.expect("the room's settings") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("#square: open on (anyone may join)") == true }
    }
}
