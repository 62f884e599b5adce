import ChorusCore
import Foundation

// The store's queries are written once, here and beside this file, over the small interface below;
// each database's driver (GRDB's SQLite in ChorusStore, postgres-nio in ChorusPostgres) supplies a
// connection and says how its SQL differs (`SQLDialect`). Statements are `SQL`, each value written
// where it is bound; rows are read by column name.

/// A value a statement binds.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case bool(Bool)
    case bytes(Data)
}

/// What may be bound: the few kinds the store writes.
public protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension Int64: SQLBindable { public var sqlValue: SQLValue { .integer(self) } }
extension Int: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .bool(self) } }
extension Data: SQLBindable { public var sqlValue: SQLValue { .bytes(self) } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// A row of a result, read by column name.
public protocol SQLRow {
    func int64(_ column: String) throws -> Int64?
    func string(_ column: String) throws -> String?
    func bool(_ column: String) throws -> Bool?
    func double(_ column: String) throws -> Double?
    func bytes(_ column: String) throws -> Data?
}

public struct SQLReadError: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

extension SQLRow {
    public func int64(_ column: String) throws -> Int64 {
        guard let value: Int64 = try int64(column) else { throw SQLReadError(description: "column \(column) is NULL") }
        return value
    }

    public func int(_ column: String) throws -> Int { Int(try int64(column) as Int64) }

    public func string(_ column: String) throws -> String {
        guard let value: String = try string(column) else { throw SQLReadError(description: "column \(column) is NULL") }
        return value
    }

    public func bool(_ column: String) throws -> Bool {
        guard let value: Bool = try bool(column) else { throw SQLReadError(description: "column \(column) is NULL") }
        return value
    }

    /// A time stored as milliseconds (`Millis`).
    public func date(_ column: String) throws -> Date { Millis.date(try int64(column)) }
    public func date(_ column: String) throws -> Date? { (try int64(column) as Int64?).map(Millis.date) }
}

/// Where the two databases spell a thing differently.
public struct SQLDialect: Sendable {
    /// The smaller and the larger of two values: SQLite's `min`/`max`, PostgreSQL's `LEAST`/`GREATEST`.
    public var least: String
    public var greatest: String
    /// The case-blind match: SQLite's `LIKE`, PostgreSQL's `ILIKE`.
    public var like: String
    /// Where a text is found in another (`instr(haystack, needle)`, PostgreSQL's `strpos`), 0 if not.
    public var instr: String
    /// The column a versioned read adds last (PostgreSQL's `xmin`, for a write to check that no
    /// other process changed the row since; `RowVersions`), or nothing.
    public var rowVersion: @Sendable (_ table: String) -> String
    /// What ends a SELECT of rows this transaction holds until it ends (`FOR UPDATE`), and of rows
    /// it takes unless another transaction holds them (`FOR UPDATE SKIP LOCKED`): nothing in
    /// SQLite, whose one writer holds the whole file.
    public var forUpdate: String
    public var skipLocked: String

    public init(least: String, greatest: String, like: String, instr: String, rowVersion: @escaping @Sendable (String) -> String, forUpdate: String, skipLocked: String) {
        self.least = least
        self.greatest = greatest
        self.like = like
        self.instr = instr
        self.rowVersion = rowVersion
        self.forUpdate = forUpdate
        self.skipLocked = skipLocked
    }

    public static let sqlite = SQLDialect(least: "min", greatest: "max", like: "LIKE", instr: "instr", rowVersion: { _ in "" }, forUpdate: "", skipLocked: "")
    public static let postgres = SQLDialect(least: "LEAST", greatest: "GREATEST", like: "ILIKE", instr: "strpos",
                                            rowVersion: { ", \($0).xmin::text" },
                                            forUpdate: " FOR UPDATE", skipLocked: " FOR UPDATE SKIP LOCKED")
}

/// One connection, in the transaction the store is in.
public protocol SQLConnection {
    var dialect: SQLDialect { get }
    /// The rows a statement returns (`INSERT … RETURNING id` included).
    func rows(_ sql: SQL) throws -> [any SQLRow]
    /// Each row a statement returns, read where it stands (a cursor, where the driver has one):
    /// for results of a thousand rows, such as the contractors a posting reaches.
    func eachRow(_ sql: SQL, _ body: (any SQLRow) throws -> Void) throws
    /// How many rows a statement changed.
    @discardableResult
    func run(_ sql: SQL) throws -> Int
    /// An `INSERT` of one row (`sql`, without `RETURNING`): the new row's id. SQLite's connection
    /// knows it without a result row, a third of an `!comment`'s insert.
    func insert(_ sql: SQL) throws -> Int64
    /// A read of rows to be changed in this transaction: where the database keeps row versions
    /// (PostgreSQL), the id (first column) and version (last, `dialect.rowVersion`) of each are kept.
    func rowsToChange(_ table: String, _ sql: SQL) throws -> [any SQLRow]
    /// `UPDATE table SET assignments WHERE id = …`, refused with `StoreError.conflict` where another
    /// process changed the row since this transaction read it, `StoreError.notFound` if it is gone.
    func change(_ table: String, id: Int64, set assignments: SQL, what: String) throws
    /// `change`, and the change's events, which are written only if the row is: in one round trip
    /// where the driver can (on PostgreSQL a round trip is most of a command's time).
    func change(_ table: String, id: Int64, set assignments: SQL, what: String, events: [Event]) throws -> [Event]
    /// An `INSERT` (`sql`, without `RETURNING`) of one row, and `event`, which is about it (with
    /// `eventJob`, the new row's id is the event's job): the new id and the saved event.
    func insert(_ sql: SQL, event: Event, eventJob: Bool) throws -> (id: Int64, event: Event)
}

extension SQLConnection {
    public func eachRow(_ sql: SQL, _ body: (any SQLRow) throws -> Void) throws {
        for row in try rows(sql) { try body(row) }
    }

    public func change(_ table: String, id: Int64, set assignments: SQL, what: String, events: [Event]) throws -> [Event] {
        try change(table, id: id, set: assignments, what: what)
        return try EventRows.insert(events, self)
    }

    public func insert(_ sql: SQL, event: Event, eventJob: Bool) throws -> (id: Int64, event: Event) {
        let id = try insert(sql)
        var e = event
        if eventJob { e.job = id }
        return (id, try EventRows.insert(e, self))
    }
}

/// A store whose queries run on `SQLConnection`s: reads and writes on the transaction's connection
/// when one is open, else each on a connection of its own.
public protocol SQLDatabase: Sendable {
    /// The Workspace's cache, on a transaction's handle (`StoreCache`): reads of roles, settings,
    /// room names, time zones and jobs go through it, and writes forget what they touch.
    var cache: StoreCache? { get }
    /// Whether this is a transaction's handle, whose reads see its writes (a reader's snapshot
    /// may be older than a write that has already forgotten a job: only a transaction caches jobs).
    var inTransaction: Bool { get }
    func reading<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    @discardableResult
    func writing<T>(_ body: (any SQLConnection) throws -> T) throws -> T
}

extension SQLDatabase {
    public func forget(_ change: (inout StoreCache.Entries) -> Void) {
        cache?.with { change(&$0) }
    }

    /// Forgets everything cached (a change that touches many entries: a room or account deleted).
    public func forgetAll() {
        cache?.forgetAll()
    }

}
