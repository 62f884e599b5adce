import ChorusCore
@testable import ChorusStore
import Foundation
import GRDB
import Synchronization
import XCTest

final class StoreTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    var path: String { folder.appendingPathComponent("test.sqlite").path }
    let fastHasher = PasswordHasher(logRounds: 4)

    /// The database holds password hashes and private messages: a new one, with its log and
    /// shared-memory files, is readable by its owner only, whatever the process's umask.
    /// `durability = power-loss` syncs the disk at every commit; the default at checkpoints only.
    func testPowerLossDurabilitySyncsEveryCommit() throws {
        let synchronous = { (store: SQLiteStore) in try store.pool.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } }
        let normal = try SQLiteStore(path: path)
        XCTAssertEqual(try synchronous(normal), 1, "NORMAL")
        normal.close()
        let full = try SQLiteStore(path: path, syncEveryCommit: true)
        defer { full.close() }
        XCTAssertEqual(try synchronous(full), 2, "FULL")
    }

    /// The server starting while `chorusd account add` runs: two openers of a new database both
    /// migrate it. Each must come out with the whole schema, not "duplicate column".
    func testOpenersMigratingANewDatabaseAtOnceAllSucceed() throws {
        for round in 0..<5 {
            let file = path + ".race\(round)"
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                do {
                    let store = try SQLiteStore(path: file)
                    _ = try store.accountKeys()
                    store.close()
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            XCTAssertEqual(failures.withLock { $0 }, [], "round \(round)")
        }
    }

    func testANewDatabaseIsTheOwnersAlone() throws {
        let store = try SQLiteStore(path: path)
        _ = try Accounts(store: store, hasher: fastHasher).register(name: "alice", password: "hunter22")
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            XCTAssertEqual(mode.map { String($0, radix: 8) }, "600", file)
        }
        store.close()
    }

    /// Commits that never pause must not make the write-ahead log grow without end: SQLite alone
    /// rewinds it only when a write finds every frame copied back, which a busy writer never does.
    func testTheLogStartsOverUnderEndlessWrites() throws {
        let store = try SQLiteStore(path: path, checkpointEvery: .milliseconds(50), restartLogAfter: 64)
        let base = Date(timeIntervalSince1970: 1_800_000_000)
        let started = Date()
        var commits = 0
        while Date().timeIntervalSince(started) < 1.5 {
            try store.appendHistory([HistoryEntry(conversation: "#c", msgid: "m\(commits)", time: base, command: "PRIVMSG",
                                                  source: "a!a@h", account: "a", target: "#c", text: String(repeating: "x", count: 200))])
            commits += 1
        }
        // The log's header counts its new starts (bytes 12-15, "checkpoint sequence number").
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        let starts = log.count >= 16 ? log[12..<16].reduce(0) { $0 << 8 | Int($1) } : 0
        XCTAssertGreaterThan(commits, 200)
        XCTAssertGreaterThanOrEqual(starts, 2, "the log never started over in \(commits) commits")
        // A commit here writes about four 4 KiB frames: a log that never started over holds them all.
        XCTAssertLessThan(log.count, commits * 8192, "\(commits) commits left a \(log.count)-byte log")
        store.close()
    }

    /// The checkpointer copies the log back after writes, and leaves an idle database alone
    /// (it took two file locks a second on an idle server).
    func testCheckpointsFollowWritesAndStopWhenIdle() throws {
        let store = try SQLiteStore(path: path, checkpointEvery: .milliseconds(20))
        let checkpointer = try XCTUnwrap(store.checkpointer)
        func passes() -> Int { checkpointer.passes.load(ordering: .relaxed) }
        func waitForPass(after count: Int) throws {
            let deadline = Date().addingTimeInterval(5)
            while passes() <= count && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            XCTAssertGreaterThan(passes(), count, "no checkpoint within 5 s of a write")
        }
        func write(_ id: String) throws {
            try store.appendHistory([HistoryEntry(conversation: "#c", msgid: id, time: Date(), command: "PRIVMSG",
                                                  source: "a!a@h", account: nil, target: "#c", text: "hello")])
        }
        try write("m1")
        try waitForPass(after: 0)
        // Let a pass that had begun before the write's stamp was taken finish, then stay idle.
        Thread.sleep(forTimeInterval: 0.1)
        let idle = passes()
        Thread.sleep(forTimeInterval: 0.4)  // some 20 ticks
        XCTAssertEqual(passes(), idle, "checkpoints ran while nothing was written")

        try write("m2")
        try waitForPass(after: idle)
        store.close()
    }

    /// A token stands for the password of its own account only; a password that looks like a
    /// token is still a password; deleting the account deletes its tokens.
    func testTokensStandForTheirAccountsPassword() throws {
        let store = try SQLiteStore(path: path)
        let accounts = Accounts(store: store, hasher: fastHasher)
        _ = try accounts.register(name: "bob", password: "chorus-but-a-password")
        _ = try accounts.register(name: "carol", password: "carol-password")
        let secret = AccountToken.newSecret()
        XCTAssertNotEqual(secret, AccountToken.newSecret())
        let token = try store.insertToken(AccountToken(account: "Bob", label: "ci", digest: AccountToken.digest(of: secret), createdAt: Date()))
        XCTAssertFalse(try store.tokens(of: "bob").contains { $0.digest.contains(secret) || secret.contains($0.digest) }, "only a digest is kept")

        let (bob, used) = try accounts.logIn(name: "BOB", password: secret)
        XCTAssertEqual(bob.name, "bob")
        XCTAssertEqual(used, token.id, "the token that logged in is named, for its use to be noted")
        XCTAssertEqual(try accounts.authenticate(name: "bob", password: "chorus-but-a-password").name, "bob")
        XCTAssertThrowsError(try accounts.authenticate(name: "carol", password: secret))
        XCTAssertThrowsError(try accounts.authenticate(name: "bob", password: secret + "0"))

        XCTAssertFalse(try store.deleteToken(token.id, of: "carol"), "only the owner ends a token")
        for i in 2...AccountToken.maxPerAccount {
            XCTAssertEqual(try store.issueToken(for: "bob", label: "  bot \(i)  ", secret: "s\(i)", at: Date()).label, "bot \(i)")
        }
        XCTAssertThrowsError(try store.issueToken(for: "bob", label: "", secret: "one too many", at: Date())) {
            XCTAssertEqual($0 as? AccountError, .tooManyTokens)
        }
        XCTAssertThrowsError(try store.issueToken(for: "nobody", label: "", secret: "x", at: Date())) {
            XCTAssertEqual($0 as? AccountError, .noSuchAccount("nobody"))
        }
        try accounts.delete(name: "bob")
        XCTAssertNil(try store.token(withDigest: token.digest))
    }

    func testAccountsRegisterAuthenticateAndRefuseDuplicates() throws {
        let accounts = Accounts(store: try SQLiteStore(path: path), hasher: fastHasher)
        let alice = try accounts.register(name: "Alice", password: "correct horse".replacingOccurrences(of: " ", with: "-"), email: "a@example.org")
        XCTAssertEqual(alice.name, "Alice")
        XCTAssertFalse(alice.passwordHash.contains("correct"), "only a hash is stored")
        XCTAssertEqual(try accounts.authenticate(name: "alice", password: "correct-horse").id, alice.id)
        XCTAssertThrowsError(try accounts.authenticate(name: "alice", password: "wrong-horse")) {
            XCTAssertEqual($0 as? AccountError, .wrongPassword)
        }
        XCTAssertThrowsError(try accounts.authenticate(name: "nobody", password: "whatever1"))
        XCTAssertThrowsError(try accounts.register(name: "ALICE", password: "another-pw")) {
            XCTAssertEqual($0 as? AccountError, .nameTaken("ALICE"))
        }
        XCTAssertThrowsError(try accounts.register(name: "bob", password: "short")) { XCTAssertEqual($0 as? AccountError, .weakPassword(minimum: 8)) }
        XCTAssertThrowsError(try accounts.register(name: "9bob", password: "long-enough")) {
            XCTAssertEqual($0 as? AccountError, .invalidName("9bob"))
        }
        XCTAssertThrowsError(try accounts.register(name: "bob", password: "long-enough", email: "nope")) {
            XCTAssertEqual($0 as? AccountError, .invalidEmail("nope"))
        }
        try accounts.changePassword(name: "alice", to: "new-password")
        XCTAssertNoThrow(try accounts.authenticate(name: "Alice", password: "new-password"))
        try accounts.delete(name: "alice")
        XCTAssertNil(try accounts.store.account(named: "alice"))
    }

    func testPasswordHashesAreSaltedAndVerify() throws {
        let a = try fastHasher.hash("same-password"), b = try fastHasher.hash("same-password")
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(fastHasher.verify("same-password", against: a))
        XCTAssertFalse(fastHasher.verify("Same-password", against: a))
        XCTAssertFalse(fastHasher.verify("same-password", against: "$scrypt$garbage"))
    }

    func testRoomsAndMembershipsSurviveReopening() throws {
        do {
            let store = try SQLiteStore(path: path)
            _ = try store.insertAccount(Account(name: "alice", passwordHash: "x", createdAt: Date()))
            var room = Room(name: "#Kitchen", topic: "Dishes", topicSetBy: "alice", topicSetAt: Date(), createdAt: Date())
            room.modes.inviteOnly = true
            room.modes.key = "sesame"
            room.modes.limit = 12
            room.bans = ["*!*@bad", "$a:mallory"]
            try store.saveRoom(room)
            try store.saveMembership(Membership(room: room.key, account: "alice", role: .manager, since: Date()))
        }
        let store = try SQLiteStore(path: path)
        let rooms = try store.allRooms()
        XCTAssertEqual(rooms.count, 1)
        XCTAssertEqual(rooms[0].name, "#Kitchen")
        XCTAssertEqual(rooms[0].topic, "Dishes")
        XCTAssertTrue(rooms[0].modes.inviteOnly)
        XCTAssertEqual(rooms[0].modes.key, "sesame")
        XCTAssertEqual(rooms[0].modes.limit, 12)
        XCTAssertEqual(rooms[0].bans, ["*!*@bad", "$a:mallory"])
        XCTAssertEqual(try store.memberships(ofAccount: "ALICE").map(\.role), [.manager])
        // Deleting the room removes its memberships too.
        try store.deleteRoom(named: "#kitchen")
        XCTAssertEqual(try store.allMemberships(), [])
    }

    func testHistoryPaging() throws {
        let store = try SQLiteStore(path: path)
        let base = Date(timeIntervalSince1970: 1_800_000_000)
        let entries = (0..<10).map { i in
            HistoryEntry(conversation: "#c", msgid: "m\(i)", time: base.addingTimeInterval(Double(i)), command: "PRIVMSG",
                         source: "a!a@h", account: "a", target: "#c", text: "line \(i)")
        }
        try store.appendHistory(entries)
        try store.appendHistory([HistoryEntry(conversation: "#other", msgid: "x", time: base, command: "PRIVMSG",
                                              source: "a!a@h", account: nil, target: "#other", text: "elsewhere")])
        func texts(_ q: HistoryQuery) throws -> [String] { try store.history(of: "#c", q).map(\.text) }
        XCTAssertEqual(try texts(.latest(after: nil, limit: 3)), ["line 7", "line 8", "line 9"])
        XCTAssertEqual(try texts(.latest(after: .msgid("m7"), limit: 10)), ["line 8", "line 9"])
        XCTAssertEqual(try texts(.before(.msgid("m5"), limit: 2)), ["line 3", "line 4"])
        XCTAssertEqual(try texts(.after(.time(base.addingTimeInterval(7.5)), limit: 5)), ["line 8", "line 9"])
        XCTAssertEqual(try texts(.around(.msgid("m5"), limit: 4)), ["line 3", "line 4", "line 5", "line 6"])
        XCTAssertEqual(try texts(.between(.msgid("m2"), .msgid("m6"), limit: 10)), ["line 3", "line 4", "line 5"])
        XCTAssertEqual(try texts(.between(.msgid("m8"), .msgid("m1"), limit: 2)), ["line 6", "line 7"])
        XCTAssertEqual(try texts(.before(.msgid("unknown"), limit: 2)), [])
        let targets = try store.historyTargets(among: ["#c", "#other", "#none"], from: base.addingTimeInterval(-1),
                                               to: base.addingTimeInterval(100), limit: 10)
        XCTAssertEqual(targets.map(\.conversation), ["#other", "#c"], "oldest latest line first: #other's one line came first")
        XCTAssertEqual(targets.last?.latest, base.addingTimeInterval(9))
        // Matched on the latest line only: #c has lines in [0, 5] but its latest (9) is after it.
        let early = try store.historyTargets(among: ["#c", "#other"], from: base.addingTimeInterval(-1), to: base.addingTimeInterval(5), limit: 10)
        XCTAssertEqual(early.map(\.conversation), ["#other"])
        XCTAssertEqual(HistoryEntry.conversation(between: "Bob", and: "alice"), HistoryEntry.conversation(between: "alice", and: "bob"))
    }

    /// A database from before v8 (history ids by AUTOINCREMENT) keeps every line, its id and its
    /// audience; new lines follow the largest id.
    func testHistoryFromBeforeV8KeepsItsLinesAndIds() throws {
        let old = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(old, upTo: "v7: history lines for some members only")
        try old.write { db in
            for (id, audience) in [(1, nil), (2, " mel "), (5, nil)] as [(Int, String?)] {
                try db.execute(sql: """
                    INSERT INTO history (id, conversation, msgid, time, command, source, account, target, text, audience)
                    VALUES (?, '#c', ?, ?, 'PRIVMSG', 'a!a@h', 'a', '#c', ?, ?)
                    """, arguments: [id, "m\(id)", 1_800_000_000_000 + id, "line \(id)", audience])
            }
        }
        try old.close()

        let store = try SQLiteStore(path: path)
        XCTAssertEqual(try store.history(of: "#c", .latest(after: nil, limit: 10)).map(\.text), ["line 1", "line 2", "line 5"])
        XCTAssertEqual(try store.history(of: "#c", .latest(after: nil, limit: 10), reader: .member(nil)).map(\.text),
                       ["line 1", "line 5"], "the line for some members only is still theirs")
        try store.appendHistory([HistoryEntry(conversation: "#c", msgid: "m6", time: Date(timeIntervalSince1970: 1_800_000_001),
                                              command: "PRIVMSG", source: "a!a@h", account: "a", target: "#c", text: "line 6")])
        try store.pool.read { db in
            XCTAssertEqual(try Int.fetchAll(db, sql: "SELECT id FROM history ORDER BY id"), [1, 2, 5, 6])
            let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'history'") ?? ""
            XCTAssertFalse(sql.contains("AUTOINCREMENT"), sql)
            XCTAssertEqual(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE tbl_name = 'history' AND type = 'index' AND sql IS NOT NULL"),
                           ["history_conversation_time"])
        }
    }

    /// A write that fails halfway stores none of it, and leaves no transaction open behind it.
    func testAFailedWriteStoresNothingAndTheNextOneWorks() throws {
        let store = try SQLiteStore(path: path)
        func line(_ msgid: String, _ text: String) -> HistoryEntry {
            HistoryEntry(conversation: "#c", msgid: msgid, time: Date(), command: "PRIVMSG", source: "a!a@h", account: nil,
                         target: "#c", text: text)
        }
        try store.appendHistory([line("m1", "kept")])
        XCTAssertThrowsError(try store.appendHistory([line("m2", "taken back"), line("m1", "a duplicate msgid")]))
        try store.appendHistory([line("m3", "after")])
        XCTAssertEqual(try store.history(of: "#c", .latest(after: nil, limit: 10)).map(\.text), ["kept", "after"])
    }

    func testGroupCommitSeesItsOwnWritesAndFailsWhole() throws {
        let store = try SQLiteStore(path: path)
        let t = Date()
        try store.transaction(cache: StoreCache()) { tx in
            try tx.savepoint(.bySavepoint) { (try? tx.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: t))) != nil }
            XCTAssertNotNil(try tx.account(named: "ann"), "a later command in the batch sees an earlier one's write")
            // A refused step is taken back whole, even the writes it made before failing; the others stand.
            try tx.savepoint(.bySavepoint) {
                _ = try? tx.insertAccount(Account(name: "dan", passwordHash: "y", createdAt: t))
                return (try? tx.insertAccount(Account(name: "ANN", passwordHash: "y", createdAt: t))) != nil
            }
            // A step that throws is taken back too.
            try tx.savepoint(.bySavepoint) {
                _ = try tx.insertAccount(Account(name: "eve", passwordHash: "y", createdAt: t))
                _ = try tx.insertAccount(Account(name: "ann", passwordHash: "y", createdAt: t))
                return true
            }
            try tx.savepoint(.bySavepoint) { (try? tx.insertAccount(Account(name: "ben", passwordHash: "x", createdAt: t))) != nil }
        }
        XCTAssertEqual(try store.allAccounts().map(\.name), ["ann", "ben"])
        XCTAssertThrowsError(try store.savepoint(.bySavepoint) { true }, "a savepoint needs a transaction's handle")

        struct Stop: Error {}
        XCTAssertThrowsError(try store.transaction(cache: nil) { tx in
            _ = try tx.insertAccount(Account(name: "cat", passwordHash: "x", createdAt: t))
            throw Stop()
        })
        XCTAssertNil(try store.account(named: "cat"), "a batch that fails commits nothing")
    }

    /// A transaction keeps the jobs it reads in the cache it is given; a change, a refused command
    /// and a failed batch must never leave it showing a job other than the one stored.
    func testTheWriterNeverShowsAStaleJob() throws {
        let store = try SQLiteStore(path: path)
        let cache = StoreCache()
        let t = Date(timeIntervalSince1970: 1_790_000_000)
        let created = Event(type: "job.created", room: nil, job: nil, actor: "ann", at: t)
        let (job, _) = try store.insertJob(Job(room: nil, title: "first", creator: "ann", createdAt: t), event: created)
        try store.transaction(cache: cache) { tx in
            let title = { () throws -> String? in try tx.job(job.id)?.title }
            XCTAssertEqual(try title(), "first")
            XCTAssertEqual(cache.with { $0.jobs[job.id]?.title }, "first", "the read is kept")
            var renamed = job
            renamed.title = "second"
            _ = try tx.updateJob(renamed, events: [])
            XCTAssertEqual(try title(), "second", "a later command sees the change")
            try tx.savepoint(.bySavepoint) {
                var taken = renamed
                taken.title = "refused"
                _ = try? tx.updateJob(taken, events: [])
                XCTAssertEqual(try? title(), "refused")
                return false
            }
            XCTAssertEqual(try title(), "second", "a refused command's change is gone")
        }
        struct Stop: Error {}
        XCTAssertThrowsError(try store.transaction(cache: cache) { tx in
            var lost = job
            lost.title = "lost"
            _ = try tx.updateJob(lost, events: [])
            XCTAssertEqual(try tx.job(job.id)?.title, "lost")
            throw Stop()
        })
        XCTAssertNil(cache.with { $0.jobs[job.id] }, "a failed batch forgets what it read")
        try store.transaction(cache: cache) { tx in XCTAssertEqual(try tx.job(job.id)?.title, "second", "a failed batch's change is gone") }
        XCTAssertEqual(try store.job(job.id)?.title, "second")
    }

    /// A database from before asks were called asks: its open requests become open asks, and its
    /// events read as ask events, with the ask's number where the request's was.
    func testRequestsOfAnOlderDatabaseBecomeAsks() throws {
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v10: tokens bots log in with")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO rooms (key, name, created_at) VALUES ('#c', '#c', 0)")
            try db.execute(sql: "INSERT INTO requests (room, kind, by, reason, state, at) VALUES ('#c', 'work', 'ann', 'bored', 'open', 0)")
            try db.execute(sql: """
                INSERT INTO events (type, room, actor, data, at) VALUES ('request.opened', '#c', 'ann', '{"kind":"work","request":"1"}', 0)
                """)
        }
        try queue.close()
        let store = try SQLiteStore(path: path)
        XCTAssertEqual(try store.openAsks(in: "#c").map(\.reason), ["bored"])
        try store.queueEvent(1, for: ["ann"])
        let event = try XCTUnwrap(store.takeQueuedEvents(for: "ann").first)
        XCTAssertEqual(event.type, EventType.askOpened)
        XCTAssertEqual(event.data["ask"], "1")
        XCTAssertNil(event.data["request"])
    }

    /// Event fields are written as JSON by hand: whatever a user typed must come back unchanged.
    func testEventFieldsSurviveAnyText() throws {
        let store = try SQLiteStore(path: path)
        let t = Date(timeIntervalSince1970: 1_790_000_000)
        let (job, _) = try store.insertJob(Job(room: nil, title: "t", creator: "ann", createdAt: t),
                                           event: Event(type: "job.created", room: nil, job: nil, actor: "ann", at: t))
        let texts = ["plain", "quote \" and backslash \\ and slash /", "tab\tnew\nline\rbell\u{07}nul\u{0}",
                     "émoji 🧽 and ‮ bidi", "{\"looks\":\"like json\"}", ""]
        for (i, text) in texts.enumerated() {
            let event = Event(type: "job.comment", room: nil, job: job.id, actor: "ann", data: ["text": text, "n\"\(i)": "\\"],
                              at: t, concerns: ["b\"ob", text], audience: [text])
            _ = try store.insertComment(Comment(job: job.id, author: "ann", text: text, at: t), event: event)
        }
        let stored = try store.events(of: job.id, limit: 100).filter { $0.type == "job.comment" }.reversed()
        XCTAssertEqual(stored.map { $0.data["text"] }, texts)
        for (i, (event, text)) in zip(stored, texts).enumerated() {
            XCTAssertEqual(event.data["n\"\(i)"], "\\")
            XCTAssertEqual(event.concerns, ["b\"ob", text])
            XCTAssertEqual(event.audience, [text])
        }
    }

    /// Checkpoints run off the writer, in the background; closing folds the whole log back into the
    /// database file, and nothing is lost.
    func testCloseFoldsTheLogIntoTheDatabase() throws {
        let store = try SQLiteStore(path: path)
        let t = Date()
        try store.appendHistory((0..<3000).map {
            HistoryEntry(conversation: "#c", msgid: "m\($0)", time: t, command: "PRIVMSG", source: "a!a@h",
                         account: nil, target: "#c", text: String(repeating: "x", count: 200))
        })
        let wal = path + "-wal"
        let logged = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int)
        XCTAssertGreaterThan(logged, 600_000, "the commit left its pages in the log")
        store.close()
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int, 0)
        XCTAssertEqual(try SQLiteStore(path: path).history(of: "#c", .latest(after: nil, limit: 5000)).count, 3000)
    }

    /// Roles, room settings, room names and time zones are kept in the transaction's cache: every
    /// write that changes them, and a refused command's rollback, must show through.
    func testRolesSettingsAndZonesFollowTheirWrites() throws {
        let store = try SQLiteStore(path: path)
        let cache = StoreCache()
        let t = Date()
        try store.transaction(cache: cache) { tx in
            _ = try tx.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: t))
            XCTAssertNil(try tx.roomName("#c"))
            try tx.saveRoom(Room(name: "#C", createdAt: t))
            XCTAssertEqual(try tx.roomName("#c"), "#C", "a room made after its name was asked for is seen")
            XCTAssertNil(try tx.role(of: "ann", in: "#c"))
            try tx.saveMembership(Membership(room: "#c", account: "ann", role: .member, since: t))
            XCTAssertEqual(try tx.role(of: "ANN", in: "#C"), .member)
            try tx.saveMembership(Membership(room: "#c", account: "ann", role: .manager, since: t))
            XCTAssertEqual(try tx.role(of: "ann", in: "#c"), .manager)
            try tx.deleteMembership(room: "#c", account: "ann")
            XCTAssertNil(try tx.role(of: "ann", in: "#c"))

            XCTAssertNil(try tx.timeZone(of: "ann"))
            try tx.setTimeZone("Europe/Paris", of: "Ann")
            XCTAssertEqual(try tx.timeZone(of: "ann"), "Europe/Paris")

            XCTAssertEqual(try tx.roomSettings("#c").visibility, .all)
            var own = RoomSettings()
            own.visibility = .own
            _ = try tx.saveRoomSettings(own, room: "#c", event: Event(type: "room.settings", room: "#c", job: nil, actor: "ann", at: t))
            XCTAssertEqual(try tx.roomSettings("#c").visibility, .own)

            // A refused command's writes are taken back, and so is what was read of them.
            try tx.savepoint(.bySavepoint) {
                try? tx.setTimeZone("Asia/Tokyo", of: "ann")
                XCTAssertEqual(try? tx.timeZone(of: "ann"), "Asia/Tokyo")
                return false
            }
            XCTAssertEqual(try tx.timeZone(of: "ann"), "Europe/Paris")
            // Deleting the room takes its settings, name and memberships with it.
            try tx.saveMembership(Membership(room: "#c", account: "ann", role: .member, since: t))
            XCTAssertEqual(try tx.role(of: "ann", in: "#c"), .member)
            try tx.deleteRoom(named: "#c")
            XCTAssertNil(try tx.role(of: "ann", in: "#c"))
            XCTAssertNil(try tx.roomName("#c"))
            XCTAssertEqual(try tx.roomSettings("#c").visibility, .all)
        }
    }
}
