import ChorusCore
@testable import ChorusPostgres
import ChorusStore
import ChorusTestSupport
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Synchronization
import XCTest

/// What only the PostgreSQL store has: its URL, its connections, nodes migrating one database at
/// once. The store's behaviour itself is the whole suite's, run again on PostgreSQL with
/// `CHORUS_TEST_STORE=postgres` (`.ci/run` does). Tests that need a server skip without
/// `CHORUS_TEST_POSTGRES`; `eval "$(bash Tests/postgres/cluster.sh start)"` gives one.
final class PostgresStoreTests: XCTestCase {
    func testALocationReadsAsLibpqWritesIt() throws {
        let full = try PostgresLocation("postgres://chorus:s%40cret@db.example.org:6543/team?sslmode=require&schema=chorus",
                                        environment: [:])
        XCTAssertEqual(full.host, "db.example.org")
        XCTAssertEqual(full.port, 6543)
        XCTAssertEqual(full.user, "chorus")
        XCTAssertEqual(full.database, "team")
        XCTAssertEqual(full.tls, .require)
        XCTAssertEqual(full.schema, "chorus")
        XCTAssertFalse(full.description.contains("s@cret"), "a password never reaches a log line")

        let bare = try PostgresLocation("postgresql:///?host=/run/postgresql", environment: ["USER": "ann", "PGPASSWORD": "pw"])
        XCTAssertEqual(bare.socketFolder, "/run/postgresql")
        XCTAssertEqual(bare.user, "ann")
        XCTAssertEqual(bare.database, "ann", "the database is named as the user, as libpq does")
        XCTAssertEqual(bare.port, 5432)
        XCTAssertEqual(bare.tls, .prefer)

        for (bad, says) in [("mysql://x/y", "not a PostgreSQL URL"), ("postgres://h/d?sslmode=maybe", "sslmode"),
                            ("postgres://h/d?pool=9", "Unknown setting \"pool\""), ("postgres://h/d?schema=a;drop", "not a schema name")] {
            XCTAssertThrowsError(try PostgresLocation(bad, environment: [:]), bad) { XCTAssertTrue("\($0)".contains(says), "\($0)") }
        }
    }

    func testAnUnreachableDatabaseIsSaidAtOnce() throws {
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let location = try PostgresLocation("postgres://chorus@127.0.0.1:1/chorus?sslmode=disable", environment: [:])
        let started = Date()
        XCTAssertThrowsError(try PostgresStore(location: location)) { error in
            XCTAssertTrue("\(error)".hasPrefix("Cannot reach PostgreSQL at postgres://chorus@127.0.0.1:1/chorus: "), "\(error)")
            XCTAssertTrue("\(error)".contains("refused"), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testNodesStartingAtOnceMigrateTheSchemaOnce() throws {
        let location = try freshLocation("m")
        let opened = DispatchGroup()
        let errors = Mutex<[String]>([])
        let target = location
        for _ in 0..<4 {
            DispatchQueue.global().async(group: opened) {
                do {
                    let store = try PostgresStore(location: target, connections: 1)
                    _ = try store.allAccounts()
                    store.close()
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        XCTAssertEqual(opened.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(errors.withLock { $0 }, [])
        let store = try PostgresStore(location: location, connections: 1)
        defer { store.close() }
        XCTAssertEqual(try store.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: Date())).name, "ann")
        XCTAssertThrowsError(try store.insertAccount(Account(name: "ANN", passwordHash: "y", createdAt: Date()))) {
            XCTAssertEqual($0 as? StoreError, .duplicate("ANN"))
        }
    }

    /// A database whose locale sorts words as a dictionary does (ICU's en-US) still lists what the
    /// store lists in SQLite's order, byte by byte: the same server shows the same lists on either.
    func testListsComeInSQLitesOrderWhateverTheDatabasesLocale() throws {
        let url = try serverURL()
        let admin = try PostgresLocation(url).adminConnection()
        defer { try? admin.close().wait() }
        let logger = Logger(label: "test")
        let exists = try admin.query("SELECT 1 FROM pg_database WHERE datname = 'chorus_icu_test'", logger: logger).wait()
        if exists.rows.isEmpty {
            _ = try admin.query("CREATE DATABASE chorus_icu_test LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C' TEMPLATE template0",
                                logger: logger).wait()
        }
        var location = try PostgresLocation(url.replacingOccurrences(of: "/postgres?", with: "/chorus_icu_test?"))
        location.schema = "o_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let store = try PostgresStore(location: location, connections: 1)
        defer { store.close() }
        for name in ["bob", "_ann", "ann", "[x]", "Zed"] {
            _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: Date()))
        }
        XCTAssertEqual(try store.allAccounts().map(\.name), ["[x]", "_ann", "ann", "bob", "Zed"])
    }

    /// A batch of many commands, some refused after they wrote: exactly the kept ones stay, on
    /// both stores, past the point where PostgreSQL's open savepoints are released together.
    func testABatchKeepsExactlyItsKeptCommandsOnBothStores() throws {
        func run(_ store: any ChorusStorage) throws -> [String] {
            try store.transaction(cache: nil) { tx in
                for i in 1...80 {
                    try tx.savepoint(.bySavepoint) {
                        _ = try tx.insertAccount(Account(name: "u\(i)", passwordHash: "x", createdAt: Date()))
                        if i % 3 == 0 { return false }  // refused after its write
                        if i % 7 == 0 { throw StoreError.notFound("u\(i)") }  // failed after its write
                        return true
                    }
                }
            }
            return try store.allAccounts().map(\.name).sorted()
        }
        let expected = (1...80).filter { $0 % 3 != 0 && $0 % 7 != 0 }.map { "u\($0)" }.sorted()
        XCTAssertEqual(try run(try SQLiteStore.inMemory()), expected)
        let location = try freshLocation("s")
        let store = try PostgresStore(location: location, connections: 1)
        defer { store.close() }
        XCTAssertEqual(try run(store), expected)
    }

    /// The due table: a process takes the boards that are due and holds them until it commits.
    /// Another asking meanwhile passes them by at once (`SKIP LOCKED`), and when the first ends
    /// without committing (its connection ended, as when its process dies) they are due for the
    /// other, which does them and writes down when each is next due.
    func testDueBoardsAreTakenByOneProcessAndLeftToTheOthersWhenItDies() throws {
        let (location, first, second) = try twoProcesses("d")
        defer { first.close(); second.close() }
        let firstHolds = DispatchSemaphore(value: 0)
        let firstMayGoOn = DispatchSemaphore(value: 0)
        let firstTook = Mutex<[DueBoard]>([])
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            try? first.transaction(cache: nil) { tx in
                firstTook.withLock { $0 = (try? tx.takeDueBoards(dueBy: Date())) ?? [] }
                firstHolds.signal()
                firstMayGoOn.wait()
                try tx.setNextDue(of: .chores, to: nil)  // fails: the connection is gone
            }
        }
        firstHolds.wait()
        XCTAssertEqual(firstTook.withLock { $0 }, DueBoard.allCases, "a new table has every board due at once")

        let asked = Date()
        XCTAssertEqual(try second.transaction(cache: nil) { try $0.takeDueBoards(dueBy: Date()) }, [])
        XCTAssertLessThan(Date().timeIntervalSince(asked), 1, "the boards another holds are passed by, not waited for")

        // The first process dies: PostgreSQL ends its connection, and with it its transaction.
        let admin = try location.adminConnection()
        defer { try? admin.close().wait() }
        let ended = try admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = \(location.applicationName) AND state = 'idle in transaction'
            """, logger: Logger(label: "test")).wait()
        XCTAssertEqual(ended.rows.count, 1)
        firstMayGoOn.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)

        let inAnHour = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3600).rounded())
        let retaken = try second.transaction(cache: nil) { tx -> [DueBoard] in
            let boards = try tx.takeDueBoards(dueBy: Date())
            for board in boards { try tx.setNextDue(of: board, to: board == .chores ? inAnHour : nil) }
            return boards
        }
        XCTAssertEqual(retaken, DueBoard.allCases, "what the dead process held is due for the others")
        XCTAssertEqual(try second.transaction(cache: nil) { try $0.takeDueBoards(dueBy: Date()) }, [], "and done once")
        XCTAssertEqual(try second.nextDue(), inAnHour)
        XCTAssertEqual(try first.transaction(cache: nil) { try $0.takeDueBoards(dueBy: inAnHour) }, [.chores])
    }

    /// Working out when the boards come due waits for a process doing their work, and then reads
    /// what it did: what it writes is never older than the work.
    func testWorkingOutWhenBoardsComeDueWaitsForTheOneDoingThem() throws {
        let (_, first, second) = try twoProcesses("d")
        defer { first.close(); second.close() }
        let firstHolds = DispatchSemaphore(value: 0)
        let secondAsks = DispatchSemaphore(value: 0)
        let secondSaw = Mutex<(waited: TimeInterval, found: Bool)?>(nil)
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            try? first.transaction(cache: nil) { tx in
                _ = try tx.takeDueBoards(dueBy: Date())
                firstHolds.signal()
                secondAsks.wait()  // the first holds the boards well past the second's asking
                _ = try tx.insertAccount(Account(name: "reminded", passwordHash: "x", createdAt: Date()))
                Thread.sleep(forTimeInterval: 0.3)
            }
        }
        firstHolds.wait()
        DispatchQueue.global().async(group: done) {
            let asked = Date()
            secondAsks.signal()
            try? second.transaction(cache: nil) { tx in
                try tx.holdDueBoards([.requests, .chores])
                let found = try tx.account(named: "reminded") != nil
                secondSaw.withLock { $0 = (Date().timeIntervalSince(asked), found) }
            }
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        let saw = try XCTUnwrap(secondSaw.withLock { $0 })
        XCTAssertGreaterThan(saw.waited, 0.2, "the second waited for the first's commit")
        XCTAssertTrue(saw.found, "and then read what the first did")
    }

    /// Two processes read one row in transactions that overlap and each write what they decided
    /// from it: the second write is refused (`StoreError.conflict`), for every kind of row a
    /// command reads to change, and a write after reading what the other wrote goes through.
    func testAWriteOverARowAnotherProcessChangedSinceItWasReadIsRefused() throws {
        let (_, first, other) = try twoProcesses("v")
        defer { first.close(); other.close() }
        let t = Date(timeIntervalSince1970: 1_790_000_000)
        try first.saveRoom(Room(name: "#flat", createdAt: t))
        let event = Event(type: "test", room: "#flat", job: nil, actor: "ann", at: t)
        let job = try first.insertJob(Job(room: "#flat", title: "Sink", creator: "ann", createdAt: t), event: event).0
        _ = try first.insertChore(Chore(room: "#flat", name: "Bins", frequency: .days(1), hour: 9, minute: 0,
                                        rotation: ["ann", "ben"], turnSince: t, due: t, createdBy: "ann", createdAt: t), events: [])
        let request = try first.insertRequest(ServiceRequest(customer: "ann", category: "plumbing", description: "Tap", createdAt: t))
        let timer = try first.insertEntry(TimeEntry(account: "ann", mode: "work", start: t))
        let ask = try first.insertAsk(Ask(room: "#flat", kind: .work, job: nil, by: "ann", reason: "help", at: t), event: event).0

        // (what; read it in a transaction, giving back the write of it changed; change it from the other process)
        typealias ReadThenWrite = (any ChorusStorage) throws -> () throws -> Void
        let kinds: [(String, ReadThenWrite, () throws -> Void)] = [
            ("job", { tx in
                var j = try XCTUnwrap(try tx.job(job.id))
                return { j.title += " (first)"; _ = try tx.updateJob(j, events: [event]) }  // with its event, in one statement
            }, {
                var j = try XCTUnwrap(try other.job(job.id)); j.status = .inProgress; _ = try other.updateJob(j, events: [])
            }),
            ("chore", { tx in
                var c = try XCTUnwrap(try tx.chore(named: "Bins", in: "#flat"))
                return { c.current += 1; _ = try tx.updateChore(c, events: [event]) }
            }, {
                var c = try XCTUnwrap(try other.chore(named: "Bins", in: "#flat")); c.current += 1; _ = try other.updateChore(c, events: [])
            }),
            ("request", { tx in
                var r = try XCTUnwrap(try tx.request(request.id))
                return { r.status = .cancelled; try tx.updateRequest(r) }
            }, {
                var r = try XCTUnwrap(try other.request(request.id)); r.contractor = "ben"; try other.updateRequest(r)
            }),
            ("timer", { tx in
                var e = try XCTUnwrap(try tx.entry(timer.id))
                return { e.end = t.addingTimeInterval(60); try tx.updateEntry(e) }
            }, {
                var e = try XCTUnwrap(try other.entry(timer.id)); e.note = "on the sink"; try other.updateEntry(e)
            }),
            ("ask", { tx in
                var a = try XCTUnwrap(try tx.ask(ask.id))
                return { a.decidedBy = "ann"; _ = try tx.updateAsk(a, event: event) }
            }, {
                var a = try XCTUnwrap(try other.ask(ask.id)); a.state = .denied; _ = try other.updateAsk(a, event: event)
            }),
        ]
        for (what, readThenWrite, changeElsewhere) in kinds {
            XCTAssertThrowsError(try first.transaction(cache: nil) { tx in
                let write = try readThenWrite(tx)
                try changeElsewhere()
                try write()
            }, what) { error in
                guard case StoreError.conflict = error else { return XCTFail("\(what): \(error)") }
            }
            // Read again, after the other's commit: the write goes through.
            XCTAssertNoThrow(try first.transaction(cache: nil) { tx in try readThenWrite(tx)() }, what)
        }
        XCTAssertEqual(try first.job(job.id)?.status, .inProgress, "the other's change was kept")
        XCTAssertEqual(try first.job(job.id)?.title, "Sink (first)")
        XCTAssertEqual(try first.chore(named: "Bins", in: "#flat")?.current, 2)
        XCTAssertEqual(try first.request(request.id)?.contractor, "ben")
        XCTAssertEqual(try first.entry(timer.id)?.note, "on the sink")
        XCTAssertEqual(try first.ask(ask.id)?.state, .denied)
    }

    /// Every connection out (one for the store, one that LISTENs): a caller waiting for one gets
    /// the next that is given back at once, not when kept ones are swept a second later.
    func testACallerWaitingForAConnectionGetsTheNextOneGivenBack() throws {
        let store = try PostgresStore(location: try freshLocation("w"), connections: 1)
        defer { store.close() }
        store.whenCommitted { _ in }
        _ = try store.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: Date()))
        let started = Date()
        DispatchQueue.concurrentPerform(iterations: 40) { _ in _ = try? store.allAccounts() }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "40 reads from two threads on one connection")
    }

    func testAConnectionTheServerEndsIsReplacedAndNothingIsLost() throws {
        let location = try freshLocation("r")
        let store = try PostgresStore(location: location, connections: 1)
        defer { store.close() }
        _ = try store.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: Date()))
        // An administrator (or a failover) ends the store's connections: found by the name they give
        // PostgreSQL (`application_name`, as pg_stat_activity shows it).
        let admin = try location.adminConnection()
        defer { try? admin.close().wait() }
        // Each time, the next call meets a dead connection (kept by the store, or idle in the
        // client's pool; seen closed or not yet) before anything ran on it, and runs again on a
        // new one: the caller never hears of it. Several rounds, as whether the end is seen before
        // the statement is sent is a matter of microseconds.
        for round in 1...8 {
            DispatchQueue.concurrentPerform(iterations: 4) { _ in _ = try? store.allAccounts() }  // both connections open
            let ended = try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = \(location.applicationName)",
                                        logger: Logger(label: "test")).wait()
            XCTAssertGreaterThanOrEqual(ended.rows.count, 1, "round \(round)")
            XCTAssertEqual(try store.allAccounts().map(\.name), ["ann"], "round \(round)")
        }
        _ = try store.insertAccount(Account(name: "bob", passwordHash: "x", createdAt: Date()))
        XCTAssertEqual(try store.allAccounts().map(\.name).sorted(), ["ann", "bob"])
    }
}

extension XCTestCase {
    /// The test server's PostgreSQL (`CHORUS_TEST_POSTGRES`); the test is skipped without one.
    func serverURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["CHORUS_TEST_POSTGRES"] else {
            throw XCTSkip("no PostgreSQL server: set CHORUS_TEST_POSTGRES (eval \"$(bash Tests/postgres/cluster.sh start)\")")
        }
        return url
    }

    /// The test server's database, in a schema of the test's own (`prefix` and a UUID).
    func freshLocation(_ prefix: String) throws -> PostgresLocation {
        var location = try PostgresLocation(try serverURL())
        location.schema = prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return location
    }

    /// Two processes' stores on one new schema (`freshLocation(prefix)`), a connection each.
    func twoProcesses(_ prefix: String) throws -> (PostgresLocation, PostgresStore, PostgresStore) {
        let location = try freshLocation(prefix)
        return (location, try PostgresStore(location: location, connections: 1), try PostgresStore(location: location, connections: 1))
    }
}

extension PostgresLocation {
    /// A connection of the test's own, outside any store.
    func adminConnection() throws -> PostgresConnection {
        var configuration = try self.configuration
        configuration.options.additionalStartupParameters = [("application_name", "chorus tests")]
        return try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 0,
                                              logger: Logger(label: "test")).wait()
    }
}
