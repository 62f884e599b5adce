import ChorusIRC
@testable import ChorusServer
import ChorusTestSupport
import Foundation
import XCTest

/// One person connected to two nodes of a cluster (a laptop on one, a phone on the other): the
/// second device takes the nick its account holds elsewhere, everyone sees one person, and what
/// one device does (JOIN, PART, NICK) the other follows. Runs in the PostgreSQL pass.
final class ClusterPersonTests: XCTestCase {
    /// Nodes A and B; ann and cat (members of #den) on A, ben (a member) on B.
    private struct Team {
        let a: TestServer, b: TestServer
        let laptop: TestClient, cat: TestClient, ben: TestClient
    }

    private func team() throws -> Team {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "cluster-\(UUID().uuidString)"
        let a = try TestServer(sharing: shared), b = try TestServer(sharing: shared)
        for name in ["ann", "ben", "cat"] { try a.addAccount(name, "\(name)-password") }
        try b.server.reloadAccountKeys()
        let laptop = try a.connect(as: "ann")
        try laptop.join("#den")
        for name in ["ben", "cat"] {
            laptop.send("PRIVMSG #den :!room add \(name)")
            try laptop.expect("\(name) added") { $0.command == "NOTICE" && $0.params.last?.contains("added \(name)") == true }
        }
        let cat = try a.connect(as: "cat")
        try cat.expect(command: "366", "#den")
        let ben = try b.connect(as: "ben")
        try ben.expect(command: "366", "#den", timeout: 10)
        return Team(a: a, b: b, laptop: laptop, cat: cat, ben: ben)
    }

    /// The room's names as `client` hears them.
    private func names(_ room: String, for client: TestClient) throws -> [String] {
        client.send("NAMES \(room)")
        return try client.collect { $0.command == "366" }.filter { $0.command == "353" }
            .flatMap { $0.params.last!.split(separator: " ").map(String.init) }
    }

    /// What came to `client` within a moment from `nick` with `command`.
    private func heard(_ client: TestClient, _ command: String, from nick: String, within seconds: TimeInterval = 2) -> [Message] {
        client.drain(for: seconds).filter { $0.command == command && $0.source?.hasPrefix("\(nick)!") == true }
    }

    func testADeviceOnAnotherNodeIsTheSamePersonToEveryone() throws {
        let t = try team()
        let phone = try t.b.connect()
        let welcome = try phone.register("ann", pass: "ann:ann-password")
        XCTAssertEqual(welcome.first { $0.command == "001" }?.params.first, "ann", "the phone is ann, not ann_")
        try phone.expect(command: "366", "#den")
        XCTAssertEqual(heard(t.ben, "JOIN", from: "ann") + heard(t.cat, "JOIN", from: "ann", within: 0.2), [],
                       "nobody hears ann come in: she is in #den already")
        for (who, client) in [("ben on node B", t.ben), ("cat on node A", t.cat), ("the phone", phone)] {
            XCTAssertEqual(try names("#den", for: client).filter { $0.hasSuffix("ann") }, ["@ann"], "ann once in \(who)'s NAMES")
        }
        t.ben.send("WHO #den")
        XCTAssertEqual(try t.ben.collect { $0.command == "315" }.filter { $0.command == "352" && $0.params[5] == "ann" }.count, 1)

        // Lines reach both devices, and each device's own lines show on the other.
        t.ben.send("PRIVMSG ann :for both of you")
        try t.laptop.expect(command: "PRIVMSG", "ann", "for both of you", timeout: 10)
        try phone.expect(command: "PRIVMSG", "ann", "for both of you", timeout: 10)
        t.laptop.send("PRIVMSG ben :from the laptop")
        let copy = try phone.expect("the laptop's line to ben", timeout: 10) { $0.command == "PRIVMSG" && $0.params.last == "from the laptop" }
        XCTAssertEqual(copy.params.first, "ben")
        XCTAssertTrue(copy.source?.hasPrefix("ann!") == true)
        phone.send("PRIVMSG #den :from the phone")
        try t.laptop.expect(command: "PRIVMSG", "#den", "from the phone", timeout: 10)
        try t.cat.expect(command: "PRIVMSG", "#den", "from the phone", timeout: 10)

        // The laptop goes: ann is still here, on her phone. The phone goes: now she quits.
        t.laptop.send("QUIT :laptop closed")
        XCTAssertEqual(heard(t.cat, "QUIT", from: "ann", within: 3) + heard(t.ben, "QUIT", from: "ann", within: 0.2), [])
        XCTAssertEqual(try names("#den", for: t.cat).filter { $0.hasSuffix("ann") }, ["@ann"])
        phone.send("QUIT :phone off")
        for client in [t.cat, t.ben] {
            let quit = try client.expect("ann's QUIT", timeout: 10) { $0.command == "QUIT" && $0.source?.hasPrefix("ann!") == true }
            XCTAssertEqual(quit.params.last, "Quit: phone off")
        }
    }

    func testJoinPartAndNickOnOneDeviceAreTheOthersToo() throws {
        let t = try team()
        let phone = try t.b.connect(as: "ann")
        try phone.expect(command: "366", "#den")
        t.cat.send("JOIN #plans")
        try t.cat.expect(command: "366", "#plans")

        phone.send("JOIN #plans")
        try phone.expect(command: "366", "#plans")
        try t.laptop.expect(command: "366", "#plans", timeout: 10)
        XCTAssertEqual(heard(t.cat, "JOIN", from: "ann").map(\.params.first), ["#plans"], "cat hears ann come in once")
        XCTAssertEqual(try names("#plans", for: t.cat).filter { $0.hasSuffix("ann") }.count, 1)

        // A room the phone makes: the laptop comes into it too.
        phone.send("JOIN #garden")
        try phone.expect(command: "366", "#garden")
        try t.laptop.expect(command: "366", "#garden", timeout: 10)

        t.laptop.send("PART #plans :enough plans")
        try phone.expect(command: "PART", "#plans", "enough plans", timeout: 10)
        XCTAssertEqual(heard(t.cat, "PART", from: "ann").map(\.params), [["#plans", "enough plans"]], "cat hears ann leave once")
        XCTAssertEqual(try names("#plans", for: t.cat).filter { $0.hasSuffix("ann") }, [])

        phone.send("NICK annie")
        try phone.expect(command: "NICK", "annie")
        let renamed = try t.laptop.expect("the laptop follows", timeout: 10) { $0.command == "NICK" }
        XCTAssertEqual(renamed.params, ["annie"])
        XCTAssertTrue(renamed.source?.hasPrefix("ann!") == true, "\(renamed)")
        XCTAssertEqual(heard(t.cat, "NICK", from: "ann").map(\.params), [["annie"]], "cat on node A hears one NICK")
        XCTAssertEqual(heard(t.ben, "NICK", from: "ann", within: 0.5).map(\.params), [["annie"]], "ben on node B hears one NICK")
        t.laptop.send("PRIVMSG #den :still me")
        let line = try t.ben.expect(command: "PRIVMSG", "#den", "still me", timeout: 10)
        XCTAssertTrue(line.source?.hasPrefix("annie!") == true, "\(line)")
        XCTAssertEqual(try names("#den", for: t.ben).filter { $0.hasSuffix("ann") || $0.hasSuffix("annie") }, ["@annie"])
    }

    /// A PART commits the person's presence, then the end of their membership. When both commit
    /// while the other node is between its read of the log and its read of the rooms, the device
    /// there still follows the PART: it is not taken out by the membership's end as if kicked.
    func testAPartCommittedWhileTheOtherNodeReadsIsFollowedNotTakenForAKick() throws {
        let t = try team()
        let phone = try t.b.connect(as: "ann")
        try phone.expect(command: "366", "#den")
        let feed = try XCTUnwrap(t.b.server.cluster?.feed)
        let laptop = t.laptop, nodeA = t.a.server!
        let stored = DispatchSemaphore(value: 0)
        feed.onceBeforeReadingRooms {
            laptop.send("PART #den :off to bed")
            for _ in 0..<100 {
                if (try? nodeA.store.memberships(ofAccount: "ann").contains { $0.room == "#den" }) == false { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            stored.signal()
        }
        XCTAssertEqual(stored.wait(timeout: .now() + 10), .success, "node B's feed reads the rooms within its poll")
        for (who, client) in [("the phone", phone), ("ben on node B", t.ben)] {
            let lines = client.drain(for: 2).filter { $0.params.first == "#den" && ["PART", "KICK"].contains($0.command) }
            XCTAssertEqual(lines.map(\.command), ["PART"], "\(who): \(lines)")
            XCTAssertEqual(lines.first?.params.last, "off to bed", who)
        }
    }

    /// What no history keeps (a TAGMSG, a guest's line) reaches the person's device on the other
    /// node as well as the one beside the sender.
    func testTagsAndAGuestsLineReachTheDeviceOnTheOtherNode() throws {
        let t = try team()
        let phone = try t.b.connect(as: "ann", caps: ["message-tags"])
        try phone.expect(command: "366", "#den")
        let cat = try t.a.connect(as: "cat", nick: "cat2", caps: ["message-tags"])
        cat.send("@+typing=active TAGMSG ann")
        let typing = try phone.expect("cat's typing, from node A", timeout: 10) { $0.command == "TAGMSG" }
        XCTAssertEqual(typing.tag("+typing"), "active")
        let gus = try t.a.connect()
        try gus.register("gus")
        gus.send("PRIVMSG ann :a guest says hi")
        try phone.expect(command: "PRIVMSG", "ann", "a guest says hi", timeout: 10)
        try t.laptop.expect(command: "PRIVMSG", "ann", "a guest says hi")
    }

    /// ann is away only while both devices are, as seen from either node (WHO's H or G).
    func testThePersonIsAwayOnlyWhileEveryDeviceIsOnEitherNode() throws {
        let t = try team()
        let phone = try t.b.connect(as: "ann")
        try phone.expect(command: "366", "#den")
        func seen(by client: TestClient, as flag: String) throws {
            for _ in 0..<50 {
                client.send("WHO ann")
                let row = try client.collect { $0.command == "315" }.first { $0.command == "352" }
                if row?.params[6].hasPrefix(flag) == true { return }
                usleep(100_000)
            }
            XCTFail("ann is never \(flag) to \(client.nick)")
        }
        t.laptop.send("AWAY :at lunch")
        try t.laptop.expect(command: "306")
        usleep(500_000)
        try seen(by: t.cat, as: "H")
        try seen(by: t.ben, as: "H")
        phone.send("AWAY :on the bus")
        try seen(by: t.cat, as: "G")
        try seen(by: t.ben, as: "G")
        phone.send("AWAY")
        try seen(by: t.cat, as: "H")
        try seen(by: t.ben, as: "H")
    }

    /// Someone else's login (another account) to a nick held on another node is still refused.
    func testSomeoneElseCannotTakeTheNickFromAnotherNode() throws {
        let t = try team()
        let other = try t.b.connect()
        other.send("PASS cat:cat-password")
        other.send("NICK ann")
        other.send("USER cat 0 * :Cat")
        XCTAssertEqual(try other.expect("433", timeout: 10) { $0.command == "433" || $0.command == "001" }.command, "433")
    }
}
