import ChorusCore
import ChorusIRC
import XCTest

final class PersistenceTests: XCTestCase {
    func testRoomsRolesAndMembershipSurviveRestart() throws {
        let server = try TestServer()
        try server.addAccount("alice", "alice-password")
        try server.addAccount("bob", "bob-password")
        do {
            let a = try server.connect(), b = try server.connect()
            try a.register("alice", sasl: ("alice", "alice-password"))
            try b.register("bob", sasl: ("bob", "bob-password"))
            try a.join("#house")
            a.send("TOPIC #house :Chores and groceries")
            a.send("MODE #house +i")
            try a.expect(command: "MODE", "#house", "+i")
            a.send("INVITE bob #house")
            try b.expect(command: "INVITE")
            try b.join("#house")
            a.send("PRIVMSG #house :remember the milk")
            try b.expect(command: "PRIVMSG", "#house")
            usleep(5_000)  // a line of the very millisecond bob leaves is replayed too (none is lost)
            b.close()
            try a.expect(command: "QUIT")
            a.send("PRIVMSG #house :and bread")  // said while bob is away
            a.send("PING sync")
            try a.expect(command: "PONG")
        }
        try server.restart()

        // Bob logs in and is put back in the room, invite-only or not, as a member.
        let b = try server.connect()
        let burst = try b.register("bob", sasl: ("bob", "bob-password"))
        XCTAssertEqual(burst.last?.command, "376")
        try b.expect(command: "JOIN", "#house")
        try b.expect(command: "332", "#house", "Chores and groceries")
        let names = try b.expect(command: "353")
        XCTAssertEqual(names.params.last, "bob")
        // A telnet-style client gets what it missed replayed, stamped with its time: not the line
        // bob read before he left.
        let replay = try b.expect(command: "PRIVMSG", "#house")
        XCTAssertTrue(replay.params.last!.hasSuffix("and bread"), replay.params.last!)
        XCTAssertTrue(replay.params.last!.hasPrefix("["))

        // Alice comes back as the manager.
        let a = try server.connect()
        try a.register("alice", sasl: ("alice", "alice-password"))
        let aliceNames = try a.expect(command: "353", "=", "#house")
        XCTAssertTrue(aliceNames.params.last!.split(separator: " ").contains("@alice"))
        a.send("MODE #house")
        let modes = try a.expect(command: "324", "#house")
        XCTAssertTrue(modes.params[2].contains("i"))

        // A stranger still cannot get in.
        let c = try server.connect()
        try c.register("carol")
        c.send("JOIN #house")
        try c.expect(command: "473")

        // Leaving is remembered too.
        b.send("PART #house")
        try b.expect(command: "PART", "#house")
        try server.restart()
        let b2 = try server.connect()
        try b2.register("bob", sasl: ("bob", "bob-password"))
        XCTAssertFalse(b2.drain(for: 0.4).contains { $0.command == "JOIN" })
    }
}
