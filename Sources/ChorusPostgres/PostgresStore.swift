import ChorusCore
import ChorusSQL
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// The PostgreSQL store: the same store protocols as SQLite's, on a database its operator runs,
/// backs up and replicates with PostgreSQL's own tools. Its queries and migrations are SQLite's too
/// (ChorusSQL), so a row holds the same values in either.
///
/// Store methods are synchronous, as the protocols say: each takes a connection from a small pool,
/// runs its statements on NIO's shared event loops and blocks until they answer, so callers must
/// not be on those loops (the server calls the store from its writer and reader threads only).
///
/// An instance is either the store itself, whose every call is a transaction of its own, or a
/// transaction's handle (`transaction(cache:_:)`), whose calls all run on that transaction's connection.
public final class PostgresStore: Store, Transactional, @unchecked Sendable {
    // `pool` is thread-safe; nothing else here mutates.
    let pool: PostgresConnections
    /// The transaction this handle is bound to, or nil for the store itself.
    let connection: PostgresLink?
    /// The Workspace's cache, on a transaction's handle (see `SQLiteStore.cache`).
    public let cache: StoreCache?

    public var inTransaction: Bool { connection != nil }

    /// Connects to the database `location` names (`postgres://user:password@host:port/database`)
    /// and brings its schema up to date. Throws, saying why, when the database cannot be reached.
    public init(location: PostgresLocation, connections: Int = 4, logger: Logger = Logger(label: "chorus.postgres")) throws {
        pool = try PostgresConnections(location: location, size: connections, logger: logger)
        connection = nil
        cache = nil
        do {
            try pool.with { link in try PostgresSchema.migrate(link, schema: location.schema) }
        } catch {
            pool.close()
            throw error
        }
    }

    private init(store: PostgresStore, connection: PostgresLink, cache: StoreCache?) {
        pool = store.pool
        self.connection = connection
        self.cache = cache
    }

    /// Closes the connections. Calls after this throw.
    public func close() {
        if connection == nil { pool.close() }
    }

    deinit {
        close()
    }

    /// Runs one statement of the caller's, outside the store's own: for tools and tests that
    /// need the database itself (the store's tables are its own business otherwise).
    public func execute(unchecked sql: String) throws {
        try db.write { try $0.execute(SQL(raw: sql)) }
    }

    public func probe() throws {
        _ = try db.read { try $0.query("SELECT 1") }
    }

    public func transaction<T>(cache: StoreCache?, _ body: (any ChorusStorage) throws -> T) throws -> T {
        if connection != nil { return try body(self) }
        do {
            return try pool.with { link in
                try link.inTransaction { try body(PostgresStore(store: self, connection: link, cache: cache)) }
            }
        } catch {
            cache?.forgetAll()  // the transaction read its own writes, and they are gone (a failed COMMIT too)
            if let failure = error as? PostgresStoreError, failure.stoppedToLetAnotherGo { throw StoreError.deadlock }
            throw error
        }
    }

    /// How many times a command that met another process's change to a row it read runs in all.
    static let attemptsOnConflict = 5

    public func savepoint(_ takingBack: TakingBack, _ body: () throws -> Bool) throws {
        guard let link = connection else { throw StoreError.notInTransaction }
        for attempt in 1...Self.attemptsOnConflict {
            let kept = try takingBack == .bySavepoint || !link.changedTransaction
                ? savepointOnce(link, body) : withoutSavepoint(link, body)
            // The locks taken before this savepoint are part of the deadlock: only running the
            // whole transaction again, after the other, can go on (`Workspace` does).
            if link.stoppedByDatabase { throw StoreError.deadlock }
            // Another process changed a row the command read before the command wrote it (`RowVersions`):
            // what it wrote is taken back, and it runs again on what is there now.
            guard link.takeConflict() else { return }
            if attempt == Self.attemptsOnConflict && kept {
                // It said it was kept, and it was taken back: the batch must not say so too.
                throw StoreError.conflict("a change")
            }
        }
    }

    /// Runs `body` once; what it wrote is taken back unless it returned true without meeting a conflict.
    private func savepointOnce(_ link: PostgresLink, _ body: () throws -> Bool) throws -> Bool {
        // Until the transaction has written something, the transaction itself is the savepoint:
        // a refused command is taken back by starting it over. Two round trips fewer for the
        // first command of each batch, which under light load is every command.
        if !link.changedTransaction {
            let kept: Bool
            do { kept = try body() } catch { kept = false }
            if !kept || link.conflicted {
                forgetAll()
                link.forgetVersions()
                if link.changedTransaction { try link.restartTransaction() }
            }
            return kept
        }
        // Each command's savepoint is left open rather than released: the next nests inside it,
        // and releasing the outermost now and then (or the commit) releases them all, a round
        // trip per command fewer. Kept few: many open at once slow every session's snapshots.
        let name = link.openSavepoint()
        try link.execute("SAVEPOINT \(raw: name)")
        let kept: Bool
        do { kept = try body() } catch { kept = false }
        if !kept || link.conflicted {
            forgetAll()
            link.forgetVersions()
            // PostgreSQL refuses every statement of a transaction after an error until this.
            try link.execute("ROLLBACK TO SAVEPOINT \(raw: name)")
        }
        if let outermost = link.savepointsToRelease() {
            try link.execute("RELEASE SAVEPOINT \(raw: outermost)")
        }
        return kept
    }

    /// Runs `body` in the transaction as it stands: what it wrote cannot be taken back alone, so
    /// when it is refused (or met a conflict) after writing, the transaction must run again.
    private func withoutSavepoint(_ link: PostgresLink, _ body: () throws -> Bool) throws -> Bool {
        let changesBefore = link.changes
        let kept: Bool
        do { kept = try body() } catch { kept = false }
        if kept && !link.conflicted { return true }
        // A failed statement counts as a change: it aborted the transaction.
        if link.changes != changesBefore { throw link.stoppedByDatabase ? StoreError.deadlock : StoreError.needsSavepoints }
        forgetAll()
        return false
    }

    var db: Access { Access(pool: pool, batch: connection) }

    struct Access {
        let pool: PostgresConnections
        /// The transaction's connection, on a transaction's handle.
        let batch: PostgresLink?

        @discardableResult
        func read<T>(_ body: (PostgresLink) throws -> T) throws -> T {
            if let link = batch { return try body(link) }
            return try pool.with(body)
        }

        /// On a transaction's handle a write joins that transaction (and the command's savepoint);
        /// otherwise it is a transaction of its own.
        @discardableResult
        func write<T>(_ body: (PostgresLink) throws -> T) throws -> T {
            if let link = batch { return try body(link) }
            return try pool.with { link in try link.inTransaction { try body(link) } }
        }
    }
}
