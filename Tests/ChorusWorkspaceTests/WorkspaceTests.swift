import ChorusCore
import ChorusStore
import ChorusTestSupport
import ChorusWorkspace
import Foundation
import Synchronization
import XCTest

/// The Workspace in-process, on a real store (a SQLite file, or PostgreSQL) and without sockets: commands through the one
/// door, group commit, refusals taken back, events planned once and handed to a sink, what comes due.
final class WorkspaceTests: XCTestCase {
    var directory: URL!
    var store: (any ChorusStorage)!
    var workspace: Workspace!
    let sink = RecordingSink()
    let t0 = ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")!

    /// Keeps what it is given, in order: the sink a browser or another process will be.
    final class RecordingSink: EventSink, @unchecked Sendable {
        private let published = Mutex<[(deliveries: [Delivery], origin: AnyObject?)]>([])
        func publish(_ batch: [Committed]) {
            published.withLock { $0 += batch.filter { !$0.deliveries.isEmpty }.map { ($0.deliveries, $0.origin) } }
        }
        var all: [(deliveries: [Delivery], origin: AnyObject?)] { published.withLock { $0 } }
    }

    struct Words: EventWording {
        func roomLine(_ event: Event, roomName: String) -> RoomLineWords {
            RoomLineWords(text: "\(event.actor) \(event.type) in \(roomName)", tags: [("chorus/event", event.type)],
                          serializedTags: "chorus/event=\(event.type)")
        }

        func directLine(_ event: Event, roomName: String?) -> RoomLineWords {
            RoomLineWords(text: "\(event.actor) \(event.type)", tags: [("chorus/event", event.type)], serializedTags: "chorus/event=\(event.type)")
        }
    }

    /// A change typed by `actor`: what the bot's parsing would produce, without the parsing.
    struct Change: WorkspaceCommand {
        let body: @Sendable (Boards) throws -> Outcome
        func run(on boards: Boards) -> Outcome {
            do { return try body(boards) } catch { return .refusal("\(error)") }
        }
    }

    final class Origin {}

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-ws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try TestStore.at(folder: directory.path)
        let t0 = self.t0
        workspace = Workspace(store: store, settings: .init(timeZone: TimeZone(identifier: "UTC")!, reminderInterval: 3600,
                                                            serviceNick: "Chorus", serviceSource: "Chorus!bot@test"),
                              wording: Words(), now: { t0 })
        workspace.add(sink)
        for name in ["ann", "ben", "cat"] { _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: t0)) }
        try store.saveRoom(Room(name: "#Flat", createdAt: t0))
        try store.saveMembership(Membership(room: "#flat", account: "ann", role: .manager, since: t0))
        try store.saveMembership(Membership(room: "#flat", account: "ben", role: .member, since: t0))
        try store.saveMembership(Membership(room: "#flat", account: "cat", role: .member, since: t0))
    }

    override func tearDownWithError() throws {
        workspace.waitUntilWritten()
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }

    func run(_ body: @escaping @Sendable (Boards) throws -> Outcome, origin: AnyObject? = nil) -> Outcome {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Outcome?>(nil)
        workspace.run(Change(body: body), origin: origin) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Runs the changes in one batch: the writer is held until all of them are queued behind it
    /// (queued sooner, the first could be taken alone). Their outcomes, in order.
    func runInOneBatch(_ bodies: [@Sendable (Boards) throws -> Outcome]) -> [Outcome] {
        let gate = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        workspace.afterWrites({ _ in holding.signal(); gate.wait() }, done: { _ in })
        XCTAssertEqual(holding.wait(timeout: .now() + 5), .success)
        let outcomes = Mutex<[Int: Outcome]>([:])
        let finished = DispatchGroup()
        for (i, body) in bodies.enumerated() {
            finished.enter()
            workspace.run(Change(body: body)) { outcome in
                outcomes.withLock { $0[i] = outcome }
                finished.leave()
            }
        }
        gate.signal()
        finished.wait()
        return outcomes.withLock { o in bodies.indices.map { o[$0]! } }
    }

    func testAnEventIsQueuedForWhoeverIsNotConnectedInItsCommandsTransaction() throws {
        // A transport that keeps who is connected: ann is, ben is not.
        workspace.waitUntilWritten()
        let connected = ConnectedAccounts()
        connected.connect("ann")
        let t0 = self.t0
        workspace = Workspace(store: store, settings: .init(timeZone: TimeZone(identifier: "UTC")!, reminderInterval: 3600,
                                                            serviceNick: "Chorus", serviceSource: "Chorus!bot@test"),
                              wording: Words(), connected: connected, now: { t0 })
        workspace.add(sink)
        // No sink queues anything here: what is queued, the command's transaction wrote.
        _ = run { boards in
            Outcome(events: try boards.jobs.add(title: "Fix the sink", assignee: "ben", in: "#flat", by: "ann").events)
        }
        let delivery = try XCTUnwrap(sink.all.last?.deliveries.first)
        XCTAssertEqual(delivery.queued, ["ben"], "the delivery says who has it waiting")
        let waiting = try store.takeQueuedEvents(for: "ben")
        XCTAssertEqual(waiting.map(\.id), [delivery.event.id], "ben, not connected, finds it queued")

        // Connected now: told as it happens, and nothing waits.
        connected.connect("ben")
        _ = run { boards in
            Outcome(events: try boards.jobs.add(title: "Fix the tap", assignee: "ben", in: "#flat", by: "ann").events)
        }
        XCTAssertEqual(sink.all.last?.deliveries.first?.queued, [])
        XCTAssertEqual(try store.takeQueuedEvents(for: "ben"), [])

        // A refused command queues nothing: the queue is taken back with it.
        connected.disconnect("ben")
        let refused = run { boards in
            _ = try boards.jobs.add(title: "Never", assignee: "ben", in: "#flat", by: "ann")
            return .refusal("changed my mind")
        }
        XCTAssertTrue(refused.refused)
        XCTAssertEqual(try store.takeQueuedEvents(for: "ben"), [])
    }

    func testACommandsEventIsStoredWithItsRoomLineAndPlannedOnce() throws {
        let origin = Origin()
        let outcome = run({ boards in
            let change = try boards.jobs.add(title: "Fix the sink", assignee: "ben", in: "#flat", by: "ann")
            return Outcome(replies: ["made it"], events: change.events)
        }, origin: origin)
        XCTAssertEqual(outcome.replies, ["made it"])
        XCTAssertFalse(outcome.refused)

        let published = sink.all
        XCTAssertEqual(published.count, 1)
        XCTAssertTrue(published[0].origin === origin, "the sink learns which request the events answer")
        let delivery = try XCTUnwrap(published[0].deliveries.first)
        XCTAssertEqual(delivery.event.type, EventType.jobCreated)
        XCTAssertEqual(delivery.direct, ["ben"], "the assignee is told directly; the actor is not")
        let line = try XCTUnwrap(delivery.roomLine)
        XCTAssertEqual(line.text, "ann job.created in #Flat", "the room line names the room as it was made")
        XCTAssertEqual(line.target, "#Flat")
        XCTAssertEqual(line.source, "Chorus!bot@test")
        XCTAssertTrue(delivery.reaches(account: "cat", isManager: false), "an open room: every member")

        // The room line was committed with the event: it is in the history already.
        let history = try store.history(of: "#flat", .latest(after: nil, limit: 10))
        XCTAssertEqual(history.map(\.msgid), [line.msgid])
        XCTAssertEqual(history.first?.clientTags, "chorus/event=job.created")
        XCTAssertEqual(try store.events(of: 1, limit: 10).map(\.type), [EventType.jobCreated])
    }

    /// In a room whose jobs are seen only by those involved, the plan says so, and the stored line
    /// carries the same audience, so history and the live line agree.
    func testAHiddenJobsAudienceIsDecidedOnce() throws {
        _ = run { boards in
            Outcome(events: [try boards.jobs.updateSettings(of: "#flat", by: "ann") { $0.visibility = .own; return "visibility own" }])
        }
        _ = run { boards in
            Outcome(events: try boards.jobs.add(title: "Secret raise for ben", assignee: "ben", in: "#flat", by: "ann").events)
        }
        let delivery = try XCTUnwrap(sink.all.last?.deliveries.first)
        XCTAssertTrue(delivery.reaches(account: "ben", isManager: false))
        XCTAssertTrue(delivery.reaches(account: "ann", isManager: true))
        XCTAssertFalse(delivery.reaches(account: "cat", isManager: false), "cat is not involved")
        XCTAssertFalse(delivery.reaches(account: nil, isManager: false), "nor is a guest")
        let catReads = try store.history(of: "#flat", .latest(after: nil, limit: 10), reader: .member("cat")).map(\.text)
        let benReads = try store.history(of: "#flat", .latest(after: nil, limit: 10), reader: .member("ben")).map(\.text)
        XCTAssertFalse(catReads.contains { $0.contains("job.created") }, "\(catReads)")
        XCTAssertTrue(benReads.contains { $0.contains("job.created") }, "\(benReads)")
    }

    /// Commands waiting while the writer is busy share one transaction (they see one handle), and a
    /// refused one takes back only its own writes; its events are never announced. The batch runs
    /// without savepoints first; the refused command wrote, so it runs again with them.
    func testWaitingCommandsShareOneTransactionAndARefusalIsTakenBackAlone() throws {
        let handles = Mutex<[ObjectIdentifier]>([])
        let outcomes = runInOneBatch((0..<3).map { i in
            { boards in
                handles.withLock { $0.append(ObjectIdentifier(boards.store as AnyObject)) }
                let change = try boards.jobs.add(title: "job \(i)", in: "#flat", by: "ann")
                if i == 1 { return .refusal("no, after writing") }
                return Outcome(events: change.events)
            }
        })
        let seen = handles.withLock { $0 }
        XCTAssertEqual(seen.count, 5, "two commands, then the batch again with savepoints")
        XCTAssertEqual(Set(seen.suffix(3)).count, 1, "one transaction for the three")
        XCTAssertEqual(outcomes.map(\.refused), [false, true, false])
        var inFlat = JobFilter()
        inFlat.rooms = ["#flat"]
        XCTAssertEqual(try store.jobs(inFlat).map(\.title).sorted(), ["job 0", "job 2"])
        let announced = sink.all.flatMap(\.deliveries).map { $0.event.data["title"] ?? "" }
        XCTAssertEqual(announced, ["job 0", "job 2"], "the refused command's event is not announced")
        XCTAssertEqual(try store.history(of: "#flat", .latest(after: nil, limit: 10)).count, 2, "nor its room line stored")
    }

    /// The transport's own writes go through the same door, in order: a read queued after them sees them.
    /// Registering: the account is hashed before it reaches the writer, and a name taken since it
    /// was checked is refused with a code the transport turns into ACCOUNT_EXISTS.
    /// A batch that cannot be committed (here its room lines have no table to go to) keeps
    /// nothing, and every command in it is answered as refused: no caller takes it for done.
    func testCommandsOfABatchThatCannotCommitAreRefused() throws {
        try TestStore.renameTable("history", to: "history_away", folder: directory.path)
        let outcomes = runInOneBatch([
            { boards in Outcome(events: try boards.jobs.add(title: "Fix the sink", in: "#flat", by: "ann").events) },
            { boards in Outcome(events: try boards.jobs.add(title: "Sweep", in: "#flat", by: "ann").events) },
        ])
        XCTAssertEqual(outcomes.map(\.refused), [true, true])
        XCTAssertEqual(outcomes.map(\.code), ["TEMPORARILY_UNAVAILABLE", "TEMPORARILY_UNAVAILABLE"])
        XCTAssertTrue(outcomes[0].replies.joined().contains("Nothing was changed"), "\(outcomes[0].replies)")
        XCTAssertTrue(sink.all.isEmpty, "nothing announced")
        try TestStore.renameTable("history_away", to: "history", folder: directory.path)
        XCTAssertEqual(try store.job(1), nil, "nothing kept")
        XCTAssertFalse(run { boards in Outcome(events: try boards.jobs.add(title: "Mop", in: "#flat", by: "ann").events) }.refused)
    }

    func testAnAccountIsOpenedOnceThroughTheDoor() async throws {
        let accounts = Accounts(store: store, hasher: PasswordHasher(logRounds: 1))
        let dora = try accounts.prepare(name: "dora", password: "dora-password")
        let again = try accounts.prepare(name: "DORA", password: "other-password")
        let first = await workspace.run(OpenAccount(dora))
        let second = await workspace.run(OpenAccount(again))
        XCTAssertFalse(first.refused)
        XCTAssertTrue(second.refused)
        XCTAssertEqual(second.code, "ACCOUNT_EXISTS")
        XCTAssertEqual(try accounts.authenticate(name: "dora", password: "dora-password").name, "dora", "the first stands")
        XCTAssertThrowsError(try accounts.prepare(name: "Dora", password: "third-password")) {
            XCTAssertEqual($0 as? AccountError, .nameTaken("Dora"))
        }
    }

    func testWritesAndReadsKeepTheirOrder() async throws {
        let t0 = self.t0
        for i in 0..<5 {
            workspace.write("line \(i)") { tx in
                try tx.appendHistory([HistoryEntry(conversation: "#flat", msgid: "m\(i)", time: t0, command: "PRIVMSG",
                                                   source: "ann!a@h", account: "ann", target: "#flat", text: "line \(i)")])
            }
        }
        // A write that fails takes back only itself.
        workspace.write("a duplicate") { tx in
            try tx.appendHistory([HistoryEntry(conversation: "#flat", msgid: "m0", time: t0, command: "PRIVMSG",
                                               source: "ann!a@h", account: "ann", target: "#flat", text: "again")])
        }
        let texts = try await workspace.afterWrites { try $0.history(of: "#flat", .latest(after: nil, limit: 10)).map(\.text) }
        XCTAssertEqual(texts, (0..<5).map { "line \($0)" })
    }

    /// Core answers what comes due next; the Workspace tells its listener after a change to a
    /// chore, and a reminder that fires goes to the sink as a direct line only.
    /// The one scheduler also ends requests: a window that passed (while the server was down, here)
    /// is what comes due next, and firing it expires the request and tells its customer.
    func testARequestWhoseWindowPassedIsDueAndExpires() throws {
        let nextDue = Mutex<[Date?]>([])
        let told = DispatchSemaphore(value: 0)
        workspace.whenNextDueChanges { date in
            nextDue.withLock { $0.append(date) }
            told.signal()
        }
        let passed = t0.addingTimeInterval(-60)
        let stale = try store.insertRequest(ServiceRequest(customer: "ann", category: "plumbing", description: "Fix the tap",
                                                           windowEnd: passed, createdAt: t0.addingTimeInterval(-3600)))
        workspace.reckonDue()
        XCTAssertEqual(told.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(nextDue.withLock { $0.last }, .some(passed))

        let fired = DispatchSemaphore(value: 0)
        workspace.fireDue { fired.signal() }
        XCTAssertEqual(fired.wait(timeout: .now() + 5), .success)
        let delivery = try XCTUnwrap(sink.all.last?.deliveries.first)
        XCTAssertEqual(delivery.event.type, EventType.requestExpired)
        XCTAssertEqual(delivery.direct, ["ann"], "its customer is told, directly")
        XCTAssertNil(delivery.roomLine)
        XCTAssertEqual(try store.request(stale.id)?.status, .expired)
        XCTAssertEqual(told.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(nextDue.withLock { $0.last }, .some(nil), "nothing else is due")
    }

    /// A timer past its owner's limit is due: it earns one nudge, told to the owner alone.
    func testATimerPastItsLimitEarnsOneNudge() throws {
        let nextDue = Mutex<[Date?]>([])
        let told = DispatchSemaphore(value: 0)
        workspace.whenNextDueChanges { date in
            nextDue.withLock { $0.append(date) }
            told.signal()
        }
        let started = t0.addingTimeInterval(-9 * 3600)
        _ = try store.insertEntry(TimeEntry(account: "ben", mode: "work", start: started))
        workspace.reckonDue()
        XCTAssertEqual(told.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(nextDue.withLock { $0.last }, .some(started.addingTimeInterval(8 * 3600)), "8 h after it started")

        for _ in 0..<2 {
            let fired = DispatchSemaphore(value: 0)
            workspace.fireDue { fired.signal() }
            XCTAssertEqual(fired.wait(timeout: .now() + 5), .success)
        }
        let nudges = sink.all.flatMap(\.deliveries).filter { $0.event.type == EventType.timeNudge }
        XCTAssertEqual(nudges.count, 1, "once")
        XCTAssertEqual(nudges.first?.direct, ["ben"])
        XCTAssertEqual(nudges.first?.event.data["minutes"], "540")
        XCTAssertNil(nudges.first?.roomLine)
    }

    /// A planned block that starts while no timer runs earns its owner a nudge, if they asked.
    func testAPlannedBlockStartingWithNoTimerEarnsANudge() throws {
        let nextDue = Mutex<[Date?]>([])
        let told = DispatchSemaphore(value: 0)
        workspace.whenNextDueChanges { date in
            nextDue.withLock { $0.append(date) }
            told.signal()
        }
        // ben and cat plan study on Mondays from 08:30 (UTC); cat's timer runs; ann asked for nothing.
        for name in ["ann", "ben", "cat"] {
            _ = try store.insertPlanBlock(PlanBlock(account: name, mode: "study", days: [2], start: 8 * 60 + 30, end: 12 * 60))
        }
        for name in ["ben", "cat"] { try store.setPlanReminders(true, of: name, from: t0.addingTimeInterval(-3600)) }
        _ = try store.insertEntry(TimeEntry(account: "cat", mode: "work", start: t0.addingTimeInterval(-600)))
        workspace.reckonDue()
        XCTAssertEqual(told.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(nextDue.withLock { $0.last }, .some(t0.addingTimeInterval(-1800)), "08:30")
        for _ in 0..<2 {
            let fired = DispatchSemaphore(value: 0)
            workspace.fireDue { fired.signal() }
            XCTAssertEqual(fired.wait(timeout: .now() + 5), .success)
        }
        let planned = sink.all.flatMap(\.deliveries).filter { $0.event.type == EventType.timePlanned }
        XCTAssertEqual(planned.map(\.direct), [["ben"]], "ben, once; cat's timer runs; ann did not ask")
        XCTAssertEqual(planned.first?.event.data["from"], "08:30")
    }

    func testWhatComesDueNextAndTheReminderThatFires() throws {
        let nextDue = Mutex<[Date?]>([])
        let told = DispatchSemaphore(value: 0)
        workspace.whenNextDueChanges { date in
            nextDue.withLock { $0.append(date) }
            told.signal()
        }
        workspace.reckonDue()
        XCTAssertEqual(told.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(nextDue.withLock { $0.last }, .some(nil), "nothing is due in a new workspace")

        _ = run { boards in
            let (_, events) = try boards.chores.add(name: "dishes", frequency: .days(1), hour: 9, minute: 0, from: nil,
                                                    among: ["ben", "cat"], in: "#flat", by: "ann")
            return Outcome(events: events)
        }
        XCTAssertEqual(told.wait(timeout: .now() + 5), .success)
        let due = ISO8601DateFormatter().date(from: "2026-11-24T09:00:00Z")!
        XCTAssertEqual(nextDue.withLock { $0.last }, .some(due), "the chore's first turn")

        // The clock says 09:00 on the 23rd: nothing is due yet, and nothing is published.
        let before = sink.all.count
        let fired = DispatchSemaphore(value: 0)
        workspace.fireDue { fired.signal() }
        XCTAssertEqual(fired.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(sink.all.count, before)
    }

    /// Another process (a second node on the same PostgreSQL) changes the job a command read before
    /// the command writes it: the command runs again on what is there now, and both changes stay.
    /// One that meets such a change every time is refused, and nothing of its own is kept.
    func testACommandThatMeetsAnotherProcessesChangeRunsAgainOnIt() throws {
        try XCTSkipUnless(TestStore.onPostgres, "one SQLite file has one process writing it")
        let otherNode = try TestStore.at(folder: directory.path)
        defer { otherNode.close() }
        let t0 = self.t0
        let elsewhere = JobBoard(store: otherNode, now: { t0 })
        _ = run { boards in Outcome(events: try boards.jobs.add(title: "Paint the hall", in: "#flat", by: "ann").events) }

        // In a batch after another command, so in a savepoint of its own: the commands around it are kept.
        let runs = Mutex(0)
        let outcomes = runInOneBatch([
            { boards in Outcome(events: try boards.jobs.add(title: "Sweep", in: "#flat", by: "ann").events) },
            { boards in
                let attempt = runs.withLock { $0 += 1; return $0 }
                _ = try boards.jobs.job(1, by: "ann")  // read, before the other node's change
                if attempt == 1 { _ = try elsewhere.addTask(1, text: "buy paint", by: "ann") }
                return Outcome(replies: ["added"], events: try boards.jobs.addTask(1, text: "tape the edges", by: "ann").events)
            },
            { boards in Outcome(events: try boards.jobs.add(title: "Mop", in: "#flat", by: "ann").events) },
        ])
        XCTAssertEqual(outcomes.map(\.refused), [false, false, false], "\(outcomes.map(\.replies))")
        XCTAssertEqual(runs.withLock { $0 }, 2)
        XCTAssertEqual(try store.job(1)?.tasks.map(\.text), ["buy paint", "tape the edges"])
        // The batch ran again whole, with savepoints: on PostgreSQL the first run's ids are not given again.
        var inFlat = JobFilter()
        inFlat.rooms = ["#flat"]
        XCTAssertEqual(try store.jobs(inFlat).map(\.title).sorted(), ["Mop", "Paint the hall", "Sweep"])
        let taskLines = sink.all.flatMap(\.deliveries).compactMap { $0.event.data["text"] }
        XCTAssertEqual(taskLines, ["tape the edges"], "announced once")
        XCTAssertEqual(try store.history(of: "#flat", .latest(after: nil, limit: 10)).count, 4, "one room line each")

        runs.withLock { $0 = 0 }
        let refused = run { boards in
            runs.withLock { $0 += 1 }
            _ = try boards.jobs.job(1, by: "ann")
            _ = try elsewhere.addTask(1, text: "another coat", by: "ann")
            return Outcome(events: try boards.jobs.addTask(1, text: "never kept", by: "ann").events)
        }
        XCTAssertTrue(refused.refused)
        XCTAssertTrue(refused.replies.joined().contains("job 1 was changed elsewhere at the same moment; try again"), "\(refused.replies)")
        XCTAssertEqual(runs.withLock { $0 }, 5)
        XCTAssertEqual(try store.job(1)?.tasks.map(\.text).filter { $0 == "another coat" }.count, 5)
        XCTAssertFalse(try store.job(1)?.tasks.contains { $0.text == "never kept" } ?? true)
    }

    /// A batch and another process's transaction lock two jobs in opposite orders: the database
    /// breaks the deadlock by stopping the batch, which runs again, whole, once the other is done.
    /// Nothing is refused and nothing of either is lost.
    func testABatchTheDatabaseStopsToBreakADeadlockRunsAgain() throws {
        try XCTSkipUnless(TestStore.onPostgres, "one SQLite file has one process writing it")
        let otherNode = try TestStore.at(folder: directory.path)
        defer { otherNode.close() }
        for title in ["Sink", "Hall"] {
            _ = run { boards in Outcome(events: try boards.jobs.add(title: title, in: "#flat", by: "ann").events) }
        }
        let otherHasJob1 = DispatchSemaphore(value: 0), startOther = DispatchSemaphore(value: 0)
        let otherDone = DispatchGroup()
        DispatchQueue.global().async(group: otherDone) {
            startOther.wait()
            try? otherNode.transaction(cache: nil) { tx in
                for id: Int64 in [1, 2] {
                    var job = try XCTUnwrap(try tx.job(id))
                    job.description = "from the other node"
                    _ = try tx.updateJob(job, events: [])
                    if id == 1 {
                        otherHasJob1.signal()
                        // The batch is waiting for job 1 by now: it waited first, so the database's
                        // deadlock check (after a second) stops it rather than this.
                        Thread.sleep(forTimeInterval: 0.5)
                    }
                }
            }
        }
        let runsOfSecond = Mutex(0)
        let outcomes = runInOneBatch([
            { boards in Outcome(events: try boards.jobs.edit(2, title: "Paint the hall", by: "ann").events) },
            { boards in
                if runsOfSecond.withLock({ $0 += 1; return $0 }) == 1 {
                    startOther.signal()
                    otherHasJob1.wait()
                }
                return Outcome(events: try boards.jobs.edit(1, title: "Fix the sink", by: "ann").events)
            },
        ])
        XCTAssertEqual(otherDone.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(outcomes.map(\.refused), [false, false], "\(outcomes.map(\.replies))")
        XCTAssertEqual(runsOfSecond.withLock { $0 }, 2, "stopped once, run again")
        for (id, title) in [(Int64(1), "Fix the sink"), (2, "Paint the hall")] {
            let job = try XCTUnwrap(try store.job(id))
            XCTAssertEqual(job.title, title)
            XCTAssertEqual(job.description, "from the other node")
        }
    }
}
