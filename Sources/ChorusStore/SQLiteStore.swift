import ChorusCore
import Foundation
import GRDB
import Synchronization

/// The SQLite store: one file in WAL mode, one writer, concurrent readers (GRDB's `DatabasePool`).
/// An in-memory store (`SQLiteStore.inMemory()`) runs the same schema for fast tests.
public final class SQLiteStore: Store, TransactionBatching, @unchecked Sendable {
    // `DatabaseWriter` is thread-safe; the class holds nothing else that mutates.
    let pool: any DatabaseWriter
    let checkpointer: Checkpointer?

    /// Every read and write goes through here: inside `inOneTransaction` they use that
    /// transaction's connection (so later commands see earlier ones' writes), elsewhere the pool.
    var db: Access { Access(pool: pool, batch: batchConnection()) }

    /// The connection of the batch in progress and the thread running it. (A lock and a thread id
    /// rather than the thread dictionary, which cost 4 % of the writer's time in a profile.)
    private let batch = Mutex<Batch?>(nil)

    /// What every command reads and rarely changes: roles, room settings, time zones. The writes
    /// that change them come through this store and forget what they touch; a batch that is
    /// rolled back forgets everything (it may have read its own uncommitted writes). Three of a
    /// `!comment`'s five reads in a profile of the writer.
    let memo = Mutex(Memo())

    struct Memo: Sendable {
        var roles: [String: Role?] = [:]
        var settings: [String: RoomSettings] = [:]
        var timeZones: [String: String?] = [:]
        /// Jobs as the writer last read them (a quarter of a `!comment`'s instructions were that
        /// read: GRDB builds a Row and its column index per fetch). Forgotten by any write to the job.
        var jobs: [Int64: Job] = [:]
        static let maxJobs = 4096

        static func roleKey(_ account: String, _ room: String) -> String { Account.key(room) + " " + Account.key(account) }
    }

    func forget(_ change: (inout Memo) -> Void = { $0 = Memo() }) {
        memo.withLock { change(&$0) }
    }

    private struct Batch: @unchecked Sendable {
        let thread: pthread_t
        let connection: Database
    }

    private func batchConnection() -> Database? {
        batch.withLock { b in b.flatMap { pthread_equal($0.thread, pthread_self()) != 0 ? $0.connection : nil } }
    }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date. The log
    /// is copied back every `checkpointEvery` and starts over once longer than `restartLogAfter`
    /// frames (4 KiB each; see `Checkpointer`).
    public init(path: String, checkpointEvery: DispatchTimeInterval = .seconds(1), restartLogAfter frames: Int = 16384) throws {
        var config = Configuration()
        // Wait for a lock rather than fail at once: the checkpointer and a second process
        // (`chorusd account add` while the server runs) share the file.
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")  // WAL + NORMAL: durable across process crashes
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")  // the Checkpointer's job, off the writer
            // A burst can leave a long log behind: cut it back when the log starts over.
            try db.execute(sql: "PRAGMA journal_size_limit = 134217728")
        }
        // Password hashes and private messages: a new database is the owner's alone. SQLite gives
        // its -wal and -shm files the database file's mode, so they follow.
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
        }
        pool = try DatabasePool(path: path, configuration: config)
        try Schema.migrator.migrate(pool)
        checkpointer = try Checkpointer(path: path, writer: pool, every: checkpointEvery, restartFrames: frames)
    }

    private init(queue: DatabaseQueue) throws {
        pool = queue
        checkpointer = nil
        try Schema.migrator.migrate(pool)
    }

    /// Stops the background checkpoints and folds the log back into the database file.
    public func close() {
        checkpointer?.finish()
    }

    /// Runs `body` as one transaction (group commit): a burst of commands shares one commit. Each
    /// command inside runs in its own savepoint (`attempt`), so one that fails takes back only itself.
    public func inOneTransaction(_ body: () throws -> Void) throws {
        do {
            try pool.writeTransaction { db in
                batch.withLock { $0 = Batch(thread: pthread_self(), connection: db) }
                defer { batch.withLock { $0 = nil } }
                try body()
            }
        } catch {
            forget()  // the batch read its own writes, and they are gone (a failed COMMIT too)
            throw error
        }
    }

    /// Runs one command of a batch in a savepoint of its own: when it returns false (the command was
    /// refused), what it wrote is taken back and the rest of the batch goes on.
    public func attempt(_ body: () -> Bool) throws {
        guard let db = batchConnection() else { _ = body(); return }
        // Cached statements rather than GRDB's inSavepoint, which compiles its SQL each time.
        try db.run(sql: "SAVEPOINT command")
        if !body() {
            forget()
            try db.run(sql: "ROLLBACK TO SAVEPOINT command")
        }
        try db.run(sql: "RELEASE SAVEPOINT command")
    }

    struct Access {
        let pool: any DatabaseWriter
        /// The batch's connection when called from inside `inOneTransaction`.
        let batch: Database?

        func read<T>(_ body: (Database) throws -> T) throws -> T {
            if let db = batch { return try body(db) }
            return try pool.read(body)
        }

        /// Inside a batch a write joins the command's savepoint: a command that fails halfway is
        /// refused, and `attempt` takes back all of it.
        func write<T>(_ body: (Database) throws -> T) throws -> T {
            guard let db = batch else { return try pool.writeTransaction(body) }
            return try body(db)
        }
    }

    public static func inMemory() throws -> SQLiteStore {
        try SQLiteStore(queue: DatabaseQueue())
    }

    // MARK: Accounts

    public func insertAccount(_ account: Account) throws -> Account {
        try db.write { db in
            if try Row.fetchOne(cached: db, sql: "SELECT 1 FROM accounts WHERE key = ?", arguments: [account.key]) != nil {
                throw StoreError.duplicate(account.name)
            }
            try db.run(sql: """
                INSERT INTO accounts (key, name, email, first_name, last_name, password_hash, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [account.key, account.name, account.email, account.firstName, account.lastName,
                                 account.passwordHash, Millis.from(account.createdAt)])
            var saved = account
            saved.id = db.lastInsertedRowID
            return saved
        }
    }

    public func account(named name: String) throws -> Account? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM accounts WHERE key = ?", arguments: [Account.key(name)]).map(Self.account)
        }
    }

    public func updateAccount(_ account: Account) throws {
        try db.write { db in
            try db.run(sql: """
                UPDATE accounts SET name = ?, email = ?, first_name = ?, last_name = ?, password_hash = ? WHERE key = ?
                """, arguments: [account.name, account.email, account.firstName, account.lastName,
                                 account.passwordHash, account.key])
            if db.changesCount == 0 { throw StoreError.notFound(account.name) }
        }
    }

    public func deleteAccount(named name: String) throws -> Bool {
        try db.write { db in
            try db.run(sql: "DELETE FROM accounts WHERE key = ?", arguments: [Account.key(name)])
            let deleted = db.changesCount > 0
            try db.run(sql: "DELETE FROM held_lines WHERE account = ?", arguments: [Account.key(name)])
            try db.run(sql: "DELETE FROM account_tokens WHERE account = ?", arguments: [Account.key(name)])
            forget()
            return deleted
        }
    }

    public func allAccounts() throws -> [Account] {
        try db.read { db in try Row.fetchAll(cached: db, sql: "SELECT * FROM accounts ORDER BY key").map(Self.account) }
    }

    public func accountKeys() throws -> [String] {
        try db.read { db in try String.fetchAll(cached: db, sql: "SELECT key FROM accounts") }
    }

    private static func account(_ row: Row) -> Account {
        Account(id: row["id"], name: row["name"], email: row["email"], firstName: row["first_name"],
                lastName: row["last_name"], passwordHash: row["password_hash"],
                createdAt: Millis.date(row["created_at"]))
    }

    // MARK: Rooms

    public func allRooms() throws -> [Room] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM rooms ORDER BY created_at, key").map { row in
                var modes = RoomModes()
                modes.inviteOnly = row["invite_only"]
                modes.topicLocked = row["topic_locked"]
                modes.noExternal = row["no_external"]
                modes.secret = row["secret"]
                modes.moderated = row["moderated"]
                modes.key = row["channel_key"]
                modes.limit = row["user_limit"]
                let bans: String = row["bans"]
                return Room(name: row["name"], topic: row["topic"], topicSetBy: row["topic_set_by"],
                            topicSetAt: (row["topic_set_at"] as Int64?).map(Millis.date), modes: modes,
                            bans: bans.split(separator: "\n").map(String.init),
                            createdAt: Millis.date(row["created_at"]))
            }
        }
    }

    public func saveRoom(_ room: Room) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO rooms (key, name, topic, topic_set_by, topic_set_at, invite_only, topic_locked,
                                   no_external, secret, moderated, channel_key, user_limit, bans, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET
                  name = excluded.name, topic = excluded.topic, topic_set_by = excluded.topic_set_by,
                  topic_set_at = excluded.topic_set_at, invite_only = excluded.invite_only,
                  topic_locked = excluded.topic_locked, no_external = excluded.no_external,
                  secret = excluded.secret, moderated = excluded.moderated, channel_key = excluded.channel_key,
                  user_limit = excluded.user_limit, bans = excluded.bans
                """, arguments: [room.key, room.name, room.topic, room.topicSetBy, room.topicSetAt.map(Millis.from),
                                 room.modes.inviteOnly, room.modes.topicLocked, room.modes.noExternal,
                                 room.modes.secret, room.modes.moderated, room.modes.key, room.modes.limit,
                                 room.bans.joined(separator: "\n"), Millis.from(room.createdAt)])
        }
    }

    public func deleteRoom(named name: String) throws {
        try db.write { db in
            // Memberships, jobs, requests and settings go with the room (ON DELETE CASCADE).
            try db.run(sql: "DELETE FROM rooms WHERE key = ?", arguments: [Account.key(name)])
            try db.run(sql: "DELETE FROM history WHERE conversation = ?", arguments: [Account.key(name)])
            try db.run(sql: "DELETE FROM events WHERE room = ?", arguments: [Account.key(name)])
            forget()
        }
    }

    public func allMemberships() throws -> [Membership] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM memberships ORDER BY seq").map(Self.membership)
        }
    }

    public func memberships(ofAccount account: String) throws -> [Membership] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM memberships WHERE account = ? ORDER BY seq",
                             arguments: [Account.key(account)]).map(Self.membership)
        }
    }

    public func saveMembership(_ m: Membership) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO memberships (room, account, role, voiced, since) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(room, account) DO UPDATE SET role = excluded.role, voiced = excluded.voiced
                """, arguments: [m.room, m.account, m.role.rawValue, m.voiced, Millis.from(m.since)])
            forget { $0.roles[Memo.roleKey(m.account, m.room)] = nil }
        }
    }

    public func deleteMembership(room: String, account: String) throws {
        try db.write { db in
            try db.run(sql: "DELETE FROM memberships WHERE room = ? AND account = ?", arguments: [room, account])
            forget { $0.roles[Memo.roleKey(account, room)] = nil }
        }
    }

    private static func membership(_ row: Row) -> Membership {
        Membership(room: row["room"], account: row["account"], role: Role(rawValue: row["role"]) ?? .member,
                   voiced: row["voiced"], since: Millis.date(row["since"]))
    }
}

/// Times are stored as integer milliseconds since 1970: exact, sortable, and compact.
enum Millis {
    static func from(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
