import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import ChorusSQL

/// One connection, used by one thread at a time (the pool's discipline), running `SQL` statements
/// with their values in PostgreSQL's spelling (`$1`, `$2` …).
final class PostgresLink: @unchecked Sendable {
    let connection: PostgresConnection
    private let logger: Logger
    /// Set when a statement found the connection gone: the pool replaces it.
    private(set) var broken = false
    /// Statements answered on this connection, and whether the last one was lost with its
    /// connection in a way that left nothing of it behind: never sent, refused because the
    /// server was ending the session, or a read or a BEGIN (a connection's end takes back its
    /// open transaction). A caller that had nothing else answered may ask again elsewhere.
    private(set) var answers = 0
    private(set) var lostWithoutEffect = false
    /// In a transaction: how many statements would need taking back (writes, and a statement that
    /// failed and so aborted the transaction).
    private(set) var changes = 0
    var changedTransaction: Bool { changes > 0 }
    /// In a transaction: savepoints made and not yet released, and the number of the last one.
    private var openSavepoints = 0
    private var savepointNumber = 0
    /// In a transaction: the version of each row read to be changed (`RowVersions`), and whether
    /// a write found one changed by another process since.
    var versionsRead: [String: String] = [:]
    var conflicted = false
    /// In a transaction: the database ended it to break a deadlock (or refused it to keep
    /// transactions apart): no savepoint can go on from here, only the whole transaction again.
    private(set) var stoppedByDatabase = false
    /// Whether a transaction is open on this connection (a version read outside one means nothing).
    private(set) var inOpenTransaction = false
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
    func query(_ sql: SQL) throws -> [PostgresRandomAccessRow] {
        try run(sql).rows.map { $0.makeRandomAccess() }
    }

    /// How many rows a statement changed.
    @discardableResult
    func execute(_ sql: SQL) throws -> Int {
        try run(sql).metadata.rows ?? 0
    }

    /// How long a statement may take before its connection is given up: nothing Chorus asks
    /// takes a fraction of this, and a connection the server ended can leave a query unanswered.
    static let statementTimeout: TimeInterval = 30

    private func run(_ statement: SQL) throws -> PostgresQueryResult {
        let sql = statement.numbered
        if !sql.hasPrefix("SELECT") { changes += 1 }
        lostWithoutEffect = false
        // A connection the server ended (an administrator, a failover) may leave a query sent on
        // it unanswered: it is given up before asking, or while waiting once it is seen closed.
        guard !connection.isClosed else {
            lostWithoutEffect = true
            throw givenUp("the server ended the connection")
        }
        let answer = NIOLockedValueBox<Result<PostgresQueryResult, any Error>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        connection.query(PostgresQuery(unsafeSQL: sql, binds: Self.binds(statement.values)), logger: logger).whenComplete { result in
            answer.withLockedValue { $0 = result }
            answered.signal()
        }
        let deadline = DispatchTime.now() + Self.statementTimeout
        while answered.wait(timeout: min(deadline, .now() + Self.closedCheckInterval)) == .timedOut {
            if connection.isClosed && answer.withLockedValue({ $0 == nil }) {
                lostWithoutEffect = Self.changesNothingAlone(sql)
                throw givenUp("the server ended the connection")
            }
            if DispatchTime.now() >= deadline {
                throw givenUp("no answer within \(Int(Self.statementTimeout)) s; the connection is given up")
            }
        }
        guard let result = answer.withLockedValue({ $0 }) else { throw givenUp("no answer") }
        do {
            let rows = try result.get()
            answers += 1
            return rows
        } catch {
            changes += 1
            let failure = PostgresStoreError(error, sql: sql)
            if failure.connectionLost || connection.isClosed { broken = true }
            lostWithoutEffect = failure.sessionEnded || (broken && Self.changesNothingAlone(sql))
            if failure.stoppedToLetAnotherGo { stoppedByDatabase = true }
            throw failure
        }
    }

    /// A read or a BEGIN: lost with its connection, it leaves nothing behind (a COMMIT or a write
    /// outside a transaction may have been done before the connection went).
    private static func changesNothingAlone(_ sql: String) -> Bool {
        sql.hasPrefix("SELECT") || sql == "BEGIN"
    }

    /// How often a statement that waits for its answer looks whether its connection was ended.
    static let closedCheckInterval: TimeInterval = 0.1

    /// Marks the connection for the pool to close, and says why.
    private func givenUp(_ reason: String) -> PostgresStoreError {
        broken = true
        return PostgresStoreError(closed: reason)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        changes = 0
        openSavepoints = 0
        versionsRead.removeAll(keepingCapacity: true)
        conflicted = false
        stoppedByDatabase = false
        inOpenTransaction = true
        defer { inOpenTransaction = false }
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

    /// Takes back everything the transaction did and goes on in a new one (`conflicted` stays for
    /// the savepoint that asked to read it).
    func restartTransaction() throws {
        try execute("ROLLBACK")
        try execute("BEGIN")
        changes = 0
        openSavepoints = 0
        versionsRead.removeAll(keepingCapacity: true)
    }

    static func binds(_ values: [SQLValue]) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: binds.appendNull()
            case .integer(let n): binds.append(n)
            case .text(let s): binds.append(s)
            case .bool(let b): binds.append(b)
            case .bytes(let d): binds.append(ByteBuffer(bytes: d))
            }
        }
        return binds
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
        if let already = error as? PostgresStoreError {
            self = already
        } else if let psql = error as? PSQLError {
            // A statement on a connection the server had closed carries what closed it underneath.
            let info = psql.serverInfo ?? (psql.underlying as? PSQLError)?.serverInfo
            state = info?[.sqlState]
            if let message = info?[.message] {
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

    /// A deadlock broken (`40P01`) or a serialization failure (`40001`): the transaction may succeed run again.
    var stoppedToLetAnotherGo: Bool { state == "40P01" || state == "40001" }

    /// The server ended the session (`57P01` an administrator, `57P02` a crash, `57P03` not
    /// accepting connections): a statement it answers so was not run, or was rolled back.
    var sessionEnded: Bool { state?.hasPrefix("57P") == true }

    /// The connection itself is gone (as opposed to a statement refused): it is not given back.
    var connectionLost: Bool { state == nil || state!.hasPrefix("08") || state!.hasPrefix("57P") }
}
