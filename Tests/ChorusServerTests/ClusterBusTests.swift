import ChorusCore
import ChorusIRC
@testable import ChorusPostgres
@testable import ChorusServer
import ChorusTestSupport
import ChorusWorkspace
import Foundation
import Synchronization
import XCTest

/// The bus between nodes (`BusMessage`): what one node tells another that no one's history keeps,
/// typed, in the one order of the log. Runs in the PostgreSQL pass (`CHORUS_TEST_STORE=postgres`).
final class ClusterBusTests: XCTestCase {
    private func nodes(_ count: Int) throws -> [TestServer] {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "cluster-\(UUID().uuidString)"
        return try (0..<count).map { _ in try TestServer(sharing: shared) }
    }

    /// ann on node A says to ben on node B a kept line, then tags only (a TAGMSG, on the bus), ten
    /// times over without waiting: ben reads them in the order she said them.
    func testLinesKeptAndLinesOnlyRelayedArriveInTheOrderTheyWereSaid() throws {
        let n = try nodes(2)
        try n[0].addAccount("ann", "ann-password")
        try n[0].addAccount("ben", "ben-password")
        try n[1].server.reloadAccountKeys()
        let ann = try n[0].connect(as: "ann", caps: ["message-tags"])
        let ben = try n[1].connect(as: "ben", caps: ["message-tags"])
        try ann.waitUntilOnline("ben")
        for i in 1...10 {
            ann.send("PRIVMSG ben :line \(i)")
            ann.send("@+example.com/after=\(i) TAGMSG ben")
        }
        let heard = try ben.collect(until: { $0.command == "TAGMSG" && $0.tag("+example.com/after") == "10" })
            .filter { $0.command == "PRIVMSG" || $0.command == "TAGMSG" }
            .map { $0.command == "PRIVMSG" ? $0.params[1] : "tags \($0.tag("+example.com/after") ?? "?")" }
        XCTAssertEqual(heard, (1...10).flatMap { ["line \($0)", "tags \($0)"] })
    }

    /// A guest's private line and a manager's KICK of a guest elsewhere ride the bus as messages of
    /// their own kind and fields, and nothing of them is in the history.
    func testWhatTheBusCarriesIsTypedAndIsNoOnesHistory() throws {
        let n = try nodes(2)
        try n[0].addAccount("ann", "ann-password")
        let ann = try n[0].connect(as: "ann")
        try ann.join("#ops")
        let gus = try n[1].connect()
        try gus.register("gus")
        try ann.waitUntilOnline("gus")
        gus.send("JOIN #ops")
        try ann.expect("gus's JOIN, from node B") { $0.command == "JOIN" && $0.source?.hasPrefix("gus!") == true }

        gus.send("PRIVMSG ann :a guest says hello")
        let line = try ann.expect("gus's line") { $0.command == "PRIVMSG" && $0.params.last == "a guest says hello" }
        XCTAssertEqual(line.params.first, "ann")
        ann.send("MODE #ops +v gus")
        XCTAssertEqual(try ann.expect(command: "441").params.last,
                       "gus is a guest connected to another server of this network: only a member's role can be set from here")
        ann.send("KICK #ops gus :not today")
        XCTAssertEqual(try gus.expect(command: "KICK").params, ["#ops", "gus", "not today"])

        let store = try XCTUnwrap(n[0].server.store as? PostgresStore)
        let bus = try store.db.read { link in
            try link.query("SELECT kind, body->>'target', body->>'nick', body->>'reason' FROM bus ORDER BY id").map {
                [try $0.string(0) as String, try $0.string(1) as String? ?? "-", try $0.string(2) as String? ?? "-",
                 try $0.string(3) as String? ?? "-"]
            }
        }
        XCTAssertEqual(bus, [["line", "ann", "-", "-"], ["kick", "-", "gus", "not today"]])
        let relayedInHistory = try store.db.read { link in
            try link.query("SELECT count(*) FROM history WHERE text = 'a guest says hello' OR conversation LIKE '@*%'").first?.int64(0)
        }
        XCTAssertEqual(relayedInHistory, 0)
    }
    /// The bot's direct line to someone connected to another node only (a reminder of their turn)
    /// is on the bus when the command's transaction commits: a crash right after the commit
    /// cannot lose it. Read in the Workspace's `done`, which runs on its writer before any later
    /// write: a line posted by the server after the commit is not there yet.
    func testADirectLineForAnotherNodeIsPostedInTheCommandsTransaction() throws {
        let (clock, a, b, ann, ben) = try ClusterTests.bensTurnOnAnotherNode()
        defer { withExtendedLifetime((b, ann)) {} }  // node B, and ben on it, run to the end
        clock.advance(hours: 11.5)
        let store = try XCTUnwrap(a.server.store as? PostgresStore)
        final class Posted: @unchecked Sendable {  // written on the writer, read here after the semaphore
            var targets: [String] = []
        }
        let posted = Posted()
        let fired = DispatchSemaphore(value: 0)
        a.server.workspace.fireDue {
            let targets = try? store.db.read { link in
                try link.query("SELECT body->>'target' FROM bus WHERE kind = 'line' AND body->>'text' LIKE 'Your turn: dishes%'")
                    .map { try $0.string(0) as String }
            }
            posted.targets = targets ?? ["(unreadable)"]
            fired.signal()
        }
        XCTAssertEqual(fired.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(posted.targets, ["ben"])
        let due = try ben.expect("the reminder, from node A") { $0.command == "NOTICE" && $0.params.first == "ben" }
        XCTAssertTrue(due.params[1].hasPrefix("Your turn: dishes in #flat"), due.params[1])
    }

    /// A batch whose later command is refused after writing runs again with savepoints; the direct
    /// line an earlier command of it posts for someone on another node is on the bus once, and
    /// the refused command's job is not kept.
    func testABatchThatRunsAgainPostsItsDirectLinesForOtherNodesOnce() throws {
        let (_, a, b, ann, ben) = try ClusterTests.bensTurnOnAnotherNode()
        defer { withExtendedLifetime((b, ann)) {} }
        struct Change: WorkspaceCommand {
            let body: @Sendable (Boards) throws -> Outcome
            func run(on boards: Boards) -> Outcome {
                do { return try body(boards) } catch { return .refusal("\(error)") }
            }
        }
        let workspace = a.server.workspace
        let gate = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        workspace.afterWrites({ _ in holding.signal(); gate.wait() }, done: { _ in })
        XCTAssertEqual(holding.wait(timeout: .now() + 5), .success)
        let finished = DispatchGroup()
        let refused = Mutex<[Bool]>([])
        for body: @Sendable (Boards) throws -> Outcome in [
            { Outcome(events: try $0.jobs.add(title: "Fix the tap", assignee: "ben", in: "#flat", by: "ann").events) },
            { boards in
                _ = try boards.jobs.add(title: "Never kept", in: "#flat", by: "ann")
                return .refusal("no, after writing")
            },
        ] {
            finished.enter()
            workspace.run(Change(body: body)) { outcome in
                refused.withLock { $0.append(outcome.refused) }
                finished.leave()
            }
        }
        gate.signal()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(refused.withLock { $0 }, [false, true])
        let store = try XCTUnwrap(a.server.store as? PostgresStore)
        let posted = try store.db.read { link in
            try link.query("SELECT body->>'target' FROM bus WHERE kind = 'line' AND body->>'text' LIKE '%Fix the tap%'")
                .map { try $0.string(0) as String }
        }
        XCTAssertEqual(posted, ["ben"], "posted once, though the batch ran twice")
        var inFlat = JobFilter()
        inFlat.rooms = ["#flat"]
        XCTAssertEqual(try store.jobs(inFlat).map(\.title), ["Fix the tap"])
        let line = try ben.expect("the room line, from node A") { $0.command == "NOTICE" && $0.params.last?.contains("Fix the tap") == true }
        XCTAssertEqual(line.params.first, "#flat")
    }

    /// An operator's KILL of someone connected to another node ends them there: they read the
    /// KILL's reason, and the room on the operator's node hears their QUIT with it.
    func testAnOperatorsKillReachesSomeoneOnAnotherNode() throws {
        let hash = try PasswordHasher(logRounds: 4).hash("oper-secret")
        let (a, b, ann, ben) = try ClusterTests.annAndBenInFlatOnTwoNodes { $0.operators = [.init(name: "root", passwordHash: hash)] }
        defer { withExtendedLifetime((a, b)) {} }
        ann.send("KILL ben :spamming")
        try ann.expect(command: "481")
        ann.send("OPER root oper-secret")
        try ann.expect(command: "381")
        ann.send("KILL nobody :spamming")
        try ann.expect(command: "401")
        ann.send("KILL ben :spamming")
        let error = try ben.expect(command: "ERROR")
        XCTAssertTrue(error.params[0].contains("Killed (ann (spamming))"), error.params[0])
        let quit = try ann.expect("ben's QUIT, from node B") { $0.command == "QUIT" && $0.source?.hasPrefix("ben!") == true }
        XCTAssertTrue(quit.params.first?.contains("Killed (ann (spamming))") == true, "\(quit.params)")
        ann.send("KILL ben :again")
        try ann.expect(command: "401")
    }
}
