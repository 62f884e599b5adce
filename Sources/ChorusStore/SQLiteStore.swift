import ChorusCore
import ChorusSQL
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
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
    public let cache: StoreCache?

    public var inTransaction: Bool { connection != nil }

    var db: Access { Access(pool: pool, batch: connection) }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date. The log
    /// is copied back every `checkpointEvery` and starts over once longer than `restartLogAfter`
    /// frames (4 KiB each; see `Checkpointer`).
    ///
    /// A commit is in the log once the writer returns, so it survives the process's crash. With
    /// `syncEveryCommit` the log is also synced to the disk at each commit (`synchronous = FULL`),
    /// so it survives a power cut or the kernel's crash; otherwise the log is synced at each
    /// checkpoint, and such a failure may take back the last commits (the file stays whole).
    public init(path: String, checkpointEvery: DispatchTimeInterval = .seconds(1), restartLogAfter frames: Int = 16384,
                syncEveryCommit: Bool = false) throws {
        var config = Configuration()
        // Wait for a lock rather than fail at once: the checkpointer and a second process
        // (`chorusd account add` while the server runs) share the file.
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            try db.execute(sql: syncEveryCommit ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
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

    public func savepoint(_ takingBack: TakingBack, _ body: () throws -> Bool) throws {
        guard let db = connection else { throw StoreError.notInTransaction }
        if takingBack == .byRunningAgain {
            // Rows changed counts every write that would need taking back (a statement that
            // failed took back its own).
            let changesBefore = db.totalChangesCount
            let kept: Bool
            do { kept = try body() } catch { kept = false }
            guard !kept else { return }
            cache?.forgetAll()
            // An error that ended the transaction (a full disk) leaves nothing to go on in.
            if db.totalChangesCount != changesBefore || !db.isInsideTransaction { throw StoreError.needsSavepoints }
            return
        }
        // Cached statements rather than GRDB's inSavepoint, which compiles its SQL each time.
        try db.run(sql: "SAVEPOINT command")
        let kept: Bool
        do { kept = try body() } catch { kept = false }
        if !kept {
            cache?.forgetAll()
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
}
