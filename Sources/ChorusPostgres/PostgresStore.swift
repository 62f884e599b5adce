import ChorusCore
import ChorusStore
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// The PostgreSQL store: the same store protocols as SQLite's, on a database its operator runs,
/// backs up and replicates with PostgreSQL's own tools. Its schema and migrations are its own
/// (`PostgresSchema`); what a row holds is written the same way as in SQLite (`StoredForm`, `Millis`).
///
/// Store methods are synchronous, as the protocols say: each takes a connection from a small pool,
/// runs its statements on NIO's shared event loops and blocks until they answer, so callers must
/// not be on those loops (the server calls the store from its writer and reader threads only).
///
/// An instance is either the store itself, whose every call is a transaction of its own, or a
/// transaction's handle (`transaction(cache:_:)`), whose calls all run on that transaction's connection.
public final class PostgresStore: Store, Transactional, @unchecked Sendable {
    // `pool` is thread-safe; nothing else here mutates.
    let pool: PostgresPool
    /// The transaction this handle is bound to, or nil for the store itself.
    let connection: PostgresLink?
    /// The Workspace's cache, on a transaction's handle (see `SQLiteStore.cache`).
    let cache: StoreCache?

    /// Connects to the database `location` names (`postgres://user:password@host:port/database`)
    /// and brings its schema up to date. Throws, saying why, when the database cannot be reached.
    public init(location: PostgresLocation, connections: Int = 4, logger: Logger = Logger(label: "chorus.postgres")) throws {
        pool = try PostgresPool(location: location, size: connections, logger: logger)
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
        try db.write { try $0.execute(sql) }
    }

    public func takeDueWork() throws {
        guard let link = connection else { throw StoreError.notInTransaction }
        try link.execute("SELECT pg_advisory_xact_lock(hashtext('chorus due work'))")
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
            throw error
        }
    }

    public func savepoint(_ body: () throws -> Bool) throws {
        guard let link = connection else { throw StoreError.notInTransaction }
        // Until the transaction has written something, the transaction itself is the savepoint:
        // a refused command is taken back by starting it over. Two round trips fewer for the
        // first command of each batch, which under light load is every command.
        if !link.changedTransaction {
            let kept: Bool
            do { kept = try body() } catch { kept = false }
            if !kept {
                forgetAll()
                if link.changedTransaction { try link.restartTransaction() }
            }
            return
        }
        // Each command's savepoint is left open rather than released: the next nests inside it,
        // and releasing the outermost now and then (or the commit) releases them all, a round
        // trip per command fewer. Kept few: many open at once slow every session's snapshots.
        let name = link.openSavepoint()
        try link.execute("SAVEPOINT \(name)")
        let kept: Bool
        do { kept = try body() } catch { kept = false }
        if !kept {
            forgetAll()
            // PostgreSQL refuses every statement of a transaction after an error until this.
            try link.execute("ROLLBACK TO SAVEPOINT \(name)")
        }
        if let outermost = link.savepointsToRelease() {
            try link.execute("RELEASE SAVEPOINT \(outermost)")
        }
    }

    var db: Access { Access(pool: pool, batch: connection) }

    func forget(_ change: (inout StoreCache.Entries) -> Void) {
        cache?.with { change(&$0) }
    }

    func forgetAll() {
        cache?.forgetAll()
    }

    struct Access {
        let pool: PostgresPool
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

/// What went wrong in PostgreSQL, as its server said it: postgres-nio's own error keeps the details
/// out of its description, and an operator needs them in the log.
public struct PostgresStoreError: Error, CustomStringConvertible {
    /// The SQLSTATE (`23505` a unique violation, `57P01` an administrator's shutdown), when the server gave one.
    public var state: String?
    public var description: String

    init(closed reason: String) {
        state = nil
        description = "PostgreSQL: \(reason)"
    }

    init(_ error: any Error, sql: String? = nil) {
        if let psql = error as? PSQLError {
            state = psql.serverInfo?[.sqlState]
            if let message = psql.serverInfo?[.message] {
                description = "PostgreSQL: \(message)" + (state.map { " (\($0))" } ?? "")
            } else if let underlying = psql.underlying {
                description = "PostgreSQL connection: \(underlying)"
            } else {
                description = "PostgreSQL connection: \(psql.code)"
            }
        } else {
            state = nil
            description = "PostgreSQL: \(error)"
        }
        if let sql { description += " in: \(sql.prefix(120))" }
    }

    /// The connection itself is gone (as opposed to a statement refused): it is not given back.
    var connectionLost: Bool { state == nil || state!.hasPrefix("08") || state!.hasPrefix("57P") }
}

/// One connection, used by one thread at a time (the pool's discipline): statements with `?`
/// placeholders, numbered here as PostgreSQL wants them (`$1`, `$2` …).
final class PostgresLink: @unchecked Sendable {
    let connection: PostgresConnection
    private let logger: Logger
    /// Set when a statement found the connection gone: the pool replaces it.
    private(set) var broken = false
    /// In a transaction: whether anything would need taking back (a write, or a statement that
    /// failed and so aborted the transaction).
    private(set) var changedTransaction = false
    /// In a transaction: savepoints made and not yet released, and the number of the last one.
    private var openSavepoints = 0
    private var savepointNumber = 0
    /// At most this many savepoints stay open (PostgreSQL keeps 64 subtransactions per session
    /// in shared memory; past that, other sessions' snapshots must look them up on disk).
    static let maxOpenSavepoints = 32

    /// The name of a new savepoint (`c1`, `c2` … in a transaction).
    func openSavepoint() -> String {
        savepointNumber += 1
        openSavepoints += 1
        return "c\(savepointNumber)"
    }

    /// The outermost open savepoint when it is time to release them all, else nil.
    func savepointsToRelease() -> String? {
        guard openSavepoints >= Self.maxOpenSavepoints else { return nil }
        defer { openSavepoints = 0 }
        return "c\(savepointNumber - openSavepoints + 1)"
    }

    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// The rows a statement returns.
    @discardableResult
    func query(_ sql: String, _ values: [any PostgresBindable] = []) throws -> [PostgresRandomAccessRow] {
        try run(sql, values).rows.map { $0.makeRandomAccess() }
    }

    /// How many rows a statement changed.
    @discardableResult
    func execute(_ sql: String, _ values: [any PostgresBindable] = []) throws -> Int {
        try run(sql, values).metadata.rows ?? 0
    }

    /// How long a statement may take before its connection is given up: nothing Chorus asks
    /// takes a fraction of this, and a connection the server ended can leave a query unanswered.
    static let statementTimeout: TimeInterval = 30

    private func run(_ sql: String, _ values: [any PostgresBindable]) throws -> PostgresQueryResult {
        if !sql.hasPrefix("SELECT") { changedTransaction = true }
        var binds = PostgresBindings(capacity: values.count)
        for value in values { value.bind(to: &binds) }
        let answer = NIOLockedValueBox<Result<PostgresQueryResult, any Error>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        connection.query(PostgresQuery(unsafeSQL: Self.numbered(sql), binds: binds), logger: logger).whenComplete { result in
            answer.withLockedValue { $0 = result }
            answered.signal()
        }
        guard answered.wait(timeout: .now() + Self.statementTimeout) == .success, let result = answer.withLockedValue({ $0 }) else {
            broken = true  // the pool closes it
            throw PostgresStoreError(closed: "no answer within \(Int(Self.statementTimeout)) s; the connection is given up")
        }
        do {
            return try result.get()
        } catch {
            changedTransaction = true
            let failure = PostgresStoreError(error, sql: sql)
            if failure.connectionLost || connection.isClosed { broken = true }
            throw failure
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        changedTransaction = false
        openSavepoints = 0
        let result: T
        do {
            result = try body()
        } catch {
            if !broken { _ = try? execute("ROLLBACK") }
            throw error
        }
        try execute("COMMIT")
        return result
    }

    /// Takes back everything the transaction did and goes on in a new one.
    func restartTransaction() throws {
        try execute("ROLLBACK")
        try execute("BEGIN")
        changedTransaction = false
        openSavepoints = 0
    }

    /// `?` → `$1`, `$2` …, outside quoted text. A statement that names its values by number
    /// (`$1`, used twice) is written that way and has no `?`.
    static func numbered(_ sql: String) -> String {
        guard sql.contains("?") else { return sql }
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var n = 0
        var quoted = false
        for c in sql {
            if c == "'" { quoted.toggle() }
            if c == "?" && !quoted {
                n += 1
                out += "$\(n)"
            } else {
                out.append(c)
            }
        }
        return out
    }
}

/// A fixed number of connections, opened as they are first needed, each used by one caller at a
/// time; a caller waits for one to come back. A connection found broken is closed and replaced by
/// a new one on the next call, so the store recovers by itself once the database is back.
final class PostgresPool: @unchecked Sendable {
    private let location: PostgresLocation
    private let size: Int
    private let logger: Logger
    /// NIO's shared loops: the store's connections wait on them, never the server's own loops.
    private let group = MultiThreadedEventLoopGroup.singleton
    /// This process among those sharing the database: the lines it writes carry it.
    let node = "\(ProcessInfo.processInfo.hostName)/\(getpid())/\(UInt32.random(in: 0...UInt32.max))"
    private let lock = NSCondition()
    private var idle: [PostgresLink] = []
    /// The connection that LISTENs, apart from the pool, and what it wakes.
    private var listener: PostgresConnection?
    private var listeners: [(channel: String, wake: @Sendable () -> Void)] = []
    private var open = 0
    private var closed = false

    init(location: PostgresLocation, size: Int, logger: Logger) throws {
        self.location = location
        self.size = max(1, size)
        self.logger = logger
        // The first connection now, so an unreachable database is reported at start.
        give(try connect())
    }

    func with<T>(_ body: (PostgresLink) throws -> T) throws -> T {
        let link = try take()
        defer { give(link) }
        return try body(link)
    }

    private func take() throws -> PostgresLink {
        lock.lock()
        while true {
            if closed { lock.unlock(); throw PostgresStoreError(closed: "the store is closed") }
            if let link = idle.popLast() {
                // One the server ended while it waited here (a restart, an administrator) is replaced.
                if link.connection.isClosed {
                    open -= 1
                    continue
                }
                lock.unlock()
                return link
            }
            if open < size {
                open += 1
                lock.unlock()
                do {
                    return try connect()
                } catch {
                    lock.lock(); open -= 1; lock.signal(); lock.unlock()
                    throw error
                }
            }
            lock.wait()
        }
    }

    private func give(_ link: PostgresLink) {
        lock.lock()
        defer { lock.signal(); lock.unlock() }
        if link.broken || closed {
            open -= 1
            // The connection is kept until it has closed: one let go open is a leak (and a
            // postgres-nio assertion in debug builds).
            let closing: EventLoopFuture<Void> = link.connection.close()
            closing.whenComplete { _ in withExtendedLifetime(link) {} }
        } else {
            idle.append(link)
        }
    }

    private func connect() throws -> PostgresLink {
        do {
            let connection = try PostgresConnection.connect(on: group.next(), configuration: location.configuration,
                                                            id: Int.random(in: 0..<Int.max), logger: logger).wait()
            let link = PostgresLink(connection, logger: logger)
            if let schema = location.schema {
                do {
                    try link.execute("SET search_path TO \(PostgresLocation.quotedIdentifier(schema))")
                } catch {
                    let closing: EventLoopFuture<Void> = connection.close()
                    try? closing.wait()
                    throw error
                }
            }
            return link
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresLocation.Unreachable(location: location.description, reason: PostgresStoreError(error).description)
        }
    }

    /// Calls `wake` on each NOTIFY on `channel` from another process (the payload names the
    /// sender), from a connection of its own that is opened again (every 2 s until it is) whenever
    /// it is lost.
    func listen(_ channel: String, _ wake: @escaping @Sendable () -> Void) {
        lock.lock()
        listeners.append((channel, wake))
        lock.unlock()
        openListener()
    }

    private func openListener() {
        lock.lock()
        let wanted = listeners
        let closed = self.closed
        lock.unlock()
        guard !closed, !wanted.isEmpty else { return }
        do {
            let connection = try PostgresConnection.connect(on: group.next(), configuration: location.configuration,
                                                            id: Int.random(in: 0..<Int.max), logger: logger).wait()
            let node = self.node
            for (channel, wake) in wanted {
                // A notification this process sent itself is news only to the others.
                connection.addListener(channel: channel) { _, note in if note.payload != node { wake() } }
                _ = try connection.query(PostgresQuery(unsafeSQL: "LISTEN \(channel)"), logger: logger).wait()
            }
            lock.lock()
            if self.closed {
                lock.unlock()
                try? connection.close().wait()
                return
            }
            listener = connection
            lock.unlock()
            // What was committed while no one listened is found by the readers' polls.
            connection.closeFuture.whenComplete { _ in
                self.lock.lock()
                self.listener = nil
                self.lock.unlock()
                self.retryListener()
            }
        } catch {
            logger.warning("cannot LISTEN for other processes' lines; reading them every poll only", metadata: ["error": "\(PostgresStoreError(error))"])
            retryListener()
        }
    }

    private func retryListener() {
        group.next().scheduleTask(in: .seconds(2)) { DispatchQueue.global().async { self.openListener() } }
    }

    func close() {
        lock.lock()
        guard !closed else { return lock.unlock() }
        closed = true
        let links = idle
        idle = []
        open -= links.count
        let listening = listener
        listener = nil
        lock.broadcast()
        lock.unlock()
        if let listening { try? listening.close().wait() }
        for link in links {
            let closing: EventLoopFuture<Void> = link.connection.close()
            try? closing.wait()
        }
    }
}

/// A value a statement takes for a `?`.
protocol PostgresBindable {
    func bind(to binds: inout PostgresBindings)
}

extension String: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(self) } }
extension Int: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(Int64(self)) } }
extension Int64: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(self) } }
extension Bool: PostgresBindable { func bind(to binds: inout PostgresBindings) { binds.append(self) } }
extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    func bind(to binds: inout PostgresBindings) {
        if let value = self { value.bind(to: &binds) } else { binds.appendNull() }
    }
}

extension SQLCondition {
    /// The values as PostgreSQL binds them.
    var binds: [any PostgresBindable] {
        values.map { value -> any PostgresBindable in
            switch value {
            case .text(let text): text
            case .integer(let number): number
            }
        }
    }
}

/// A row's columns by position, as the store's statements list them.
extension PostgresRandomAccessRow {
    func string(_ i: Int) throws -> String { try self[i].decode(String.self) }
    func string(_ i: Int) throws -> String? { try self[i].decode(String?.self) }
    func int64(_ i: Int) throws -> Int64 { try self[i].decode(Int64.self) }
    func int64(_ i: Int) throws -> Int64? { try self[i].decode(Int64?.self) }
    func int(_ i: Int) throws -> Int { Int(try self[i].decode(Int64.self)) }
    func int(_ i: Int) throws -> Int? { try self[i].decode(Int64?.self).map { Int($0) } }
    func bool(_ i: Int) throws -> Bool { try self[i].decode(Bool.self) }
    func date(_ i: Int) throws -> Date { Millis.date(try self[i].decode(Int64.self)) }
    func date(_ i: Int) throws -> Date? { try self[i].decode(Int64?.self).map(Millis.date) }
}
