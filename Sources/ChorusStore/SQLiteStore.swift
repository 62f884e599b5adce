import ChorusCore
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
import ChorusSQL
#endif

/// The SQLite store: one file in WAL mode, one writer, concurrent readers (GRDB's `DatabasePool`).
/// An in-memory store (`SQLiteStore.inMemory()`) runs the same schema for fast tests.
///
/// An instance is either the store itself, whose every call is a transaction of its own, or a
/// transaction's handle (`transaction(cache:_:)`), whose calls all use that transaction's connection.
public final class SQLiteStore: Store, Transactional, @unchecked Sendable {
    // `DatabaseWriter` is thread-safe; nothing else here mutates.
    let pool: any DatabaseWriter
    let checkpointer: Checkpointer?
    /// The transaction this handle is bound to, or nil for the store itself.
    let connection: Database?
    /// The Workspace's cache, on a transaction's handle: reads of roles, settings, room names, time
    /// zones and jobs go through it, and writes forget what they touch.
    let cache: StoreCache?

    var db: Access { Access(pool: pool, batch: connection) }

    func forget(_ change: (inout StoreCache.Entries) -> Void) {
        cache?.with { change(&$0) }
    }

    /// Forgets everything cached (a change that touches many entries: a room or account deleted).
    func forgetAll() {
        cache?.forgetAll()
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
        // Made with O_EXCL, never replaced: `FileManager.createFile` writes a new file and renames
        // it into place, which swapped an empty file under a second opener already migrating.
        let made = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if made >= 0 {
            Glibc.close(made)
        } else if errno != EEXIST {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        pool = try Self.open(path, config)
        connection = nil
        cache = nil
        checkpointer = try Checkpointer(path: path, writer: pool, every: checkpointEvery, restartFrames: frames)
    }

    /// Opens the pool and brings the schema up to date. Two processes opening a new database at
    /// once (the server starting while `chorusd account add` runs) race: one may find the file
    /// locked while the other turns WAL on, or find a migration missing that the other is applying
    /// (its attempt fails with "duplicate column" and is rolled back). Trying again a moment later
    /// finds the work done and goes on. On a loaded machine the other's work can take seconds (a
    /// disk I/O error while it sets up the log's shared memory, say): up to 10 s are given.
    private static func open(_ path: String, _ config: Configuration) throws -> DatabasePool {
        let deadline = Date().addingTimeInterval(10)
        while true {
            do {
                let pool = try DatabasePool(path: path, configuration: config)
                try Schema.migrator.migrate(pool)
                return pool
            } catch where Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    private init(queue: DatabaseQueue) throws {
        pool = queue
        checkpointer = nil
        connection = nil
        cache = nil
        try Schema.migrator.migrate(pool)
    }

    /// A handle bound to the transaction on `connection`.
    private init(store: SQLiteStore, connection: Database, cache: StoreCache?) {
        pool = store.pool
        checkpointer = nil
        self.connection = connection
        self.cache = cache
    }

    /// Stops the background checkpoints and folds the log back into the database file.
    public func close() {
        checkpointer?.finish()
    }

    public func transaction<T>(cache: StoreCache?, _ body: (any ChorusStorage) throws -> T) throws -> T {
        if connection != nil { return try body(self) }
        do {
            return try pool.writeTransaction { db in
                try body(SQLiteStore(store: self, connection: db, cache: cache))
            }
        } catch {
            cache?.forgetAll()  // the transaction read its own writes, and they are gone (a failed COMMIT too)
            throw error
        }
    }

    public func savepoint(_ body: () throws -> Bool) throws {
        guard let db = connection else { throw StoreError.notInTransaction }
        // Cached statements rather than GRDB's inSavepoint, which compiles its SQL each time.
        try db.run(sql: "SAVEPOINT command")
        let kept: Bool
        do { kept = try body() } catch { kept = false }
        if !kept {
            forgetAll()
            try db.run(sql: "ROLLBACK TO SAVEPOINT command")
        }
        try db.run(sql: "RELEASE SAVEPOINT command")
    }

    struct Access {
        let pool: any DatabaseWriter
        /// The transaction's connection, on a transaction's handle.
        let batch: Database?

        func read<T>(_ body: (Database) throws -> T) throws -> T {
            if let db = batch { return try body(db) }
            return try pool.read(body)
        }

        /// On a transaction's handle a write joins that transaction (and the command's savepoint):
        /// a command that fails halfway is refused, and the savepoint takes back all of it.
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
            try db.run(sql: "DELETE FROM contractors WHERE account_key = ?", arguments: [Account.key(name)])
            try db.run(sql: "DELETE FROM account_presence WHERE account_key = ?", arguments: [Account.key(name)])
            try db.run(sql: "DELETE FROM read_markers WHERE account_key = ?", arguments: [Account.key(name)])
            forgetAll()
            return deleted
        }
    }

    public func allAccounts() throws -> [Account] {
        try db.read { db in try Row.fetchAll(cached: db, sql: "SELECT * FROM accounts ORDER BY key").map(Self.account) }
    }

    /// Caps the database file (SQLite's `max_page_count`, on the writer): past it, writes fail as on
    /// a full disk. nil lifts the cap. For operators who give the database a budget, and for the
    /// tests of what the server does when it cannot write.
    public func limitSize(toBytes bytes: Int64?) throws {
        try pool.write { db in
            let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            let pages = bytes.map { max(1, $0 / pageSize) } ?? 4_294_967_294
            _ = try Int64.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)")
        }
    }

    public func probe() throws {
        _ = try db.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
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

    public func roomName(_ key: String) throws -> String? {
        let key = Account.key(key)
        if let known = cache?.with({ $0.roomNames[key] }) { return known }
        let name = try db.read { db in try String.fetchOne(cached: db, sql: "SELECT name FROM rooms WHERE key = ?", arguments: [key]) }
        cache?.with { $0.roomNames[key] = .some(name) }
        return name
    }

    /// One process writes a SQLite file, one transaction at a time: nobody else decides meanwhile.
    public func holdRoom(_ key: String) throws {}

    public func saveRoom(_ room: Room) throws {
        forget { $0.roomNames[room.key] = nil }
        try db.write { db in
            try db.run(sql: StoredStatements.saveRoom, arguments: [
                room.key, room.name, room.topic, room.topicSetBy, room.topicSetAt.map(Millis.from), room.modes.inviteOnly,
                room.modes.topicLocked, room.modes.noExternal, room.modes.secret, room.modes.moderated, room.modes.key,
                room.modes.limit, room.bans.joined(separator: "\n"), Millis.from(room.createdAt),
            ])
        }
    }

    public func deleteRoom(named name: String) throws {
        try db.write { db in
            // Memberships, jobs, asks and settings go with the room (ON DELETE CASCADE).
            try db.run(sql: "DELETE FROM rooms WHERE key = ?", arguments: [Account.key(name)])
            try db.run(sql: "DELETE FROM history WHERE conversation = ?", arguments: [Account.key(name)])
            try db.run(sql: "DELETE FROM events WHERE room = ?", arguments: [Account.key(name)])
            forgetAll()
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
            forget { $0.roles[StoreCache.Entries.roleKey(m.account, m.room)] = nil }
        }
    }

    public func deleteMembership(room: String, account: String) throws {
        try db.write { db in
            try db.run(sql: "DELETE FROM memberships WHERE room = ? AND account = ?", arguments: [room, account])
            forget { $0.roles[StoreCache.Entries.roleKey(account, room)] = nil }
        }
    }

    private static func membership(_ row: Row) -> Membership {
        Membership(room: row["room"], account: row["account"], role: Role(rawValue: row["role"]) ?? .member,
                   voiced: row["voiced"], since: Millis.date(row["since"]))
    }
}
