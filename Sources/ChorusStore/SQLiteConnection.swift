import ChorusCore
import ChorusSQL
import Foundation
import GRDB

/// In this module `SQL` is ChorusSQL's statement, not GRDB's type of that name.
typealias SQL = ChorusSQL.SQL

/// The shared queries (ChorusSQL) on GRDB's SQLite: statements from the connection's cache.
struct SQLiteConnection: SQLConnection {
    let db: Database

    var dialect: SQLDialect { .sqlite }

    func rows(_ sql: SQL) throws -> [any SQLRow] {
        let statement = try db.cachedStatement(sql: sql.questionMarked)
        let columns = SQLiteRow.columns(of: statement)
        return try Row.fetchAll(statement, arguments: Self.arguments(sql)).map { SQLiteRow(row: $0, columns: columns) }
    }

    func eachRow(_ sql: SQL, _ body: (any SQLRow) throws -> Void) throws {
        let statement = try db.cachedStatement(sql: sql.questionMarked)
        let columns = SQLiteRow.columns(of: statement)
        let rows = try Row.fetchCursor(statement, arguments: Self.arguments(sql))
        while let row = try rows.next() { try body(SQLiteRow(row: row, columns: columns)) }
    }

    @discardableResult
    func run(_ sql: SQL) throws -> Int {
        try db.run(sql: sql.questionMarked, arguments: Self.arguments(sql))
        return db.changesCount
    }

    func insert(_ sql: SQL) throws -> Int64 {
        try run(sql)
        return db.lastInsertedRowID
    }

    /// One writer at a time: nobody else changes a row between this transaction's read and write.
    func rowsToChange(_ table: String, _ sql: SQL) throws -> [any SQLRow] {
        try rows(sql)
    }

    func change(_ table: String, id: Int64, set assignments: SQL, what: String) throws {
        guard try run("UPDATE \(raw: table) SET \(assignments) WHERE id = \(id)") == 1 else { throw StoreError.notFound(what) }
    }

    /// GRDB's arguments from the statement's values.
    static func arguments(_ sql: SQL) -> StatementArguments {
        StatementArguments(sql.values.map { value -> (any DatabaseValueConvertible)? in
            switch value {
            case .null: nil
            case .integer(let n): n
            case .text(let s): s
            case .bool(let b): b
            case .bytes(let d): d
            }
        })
    }
}

/// A GRDB row, read by column name. The name is found among the statement's few column names,
/// read once per statement and compared as they are: GRDB's own lookup lowercases the name and
/// hashes it each time, six times a row for the thousand contractors a posting reads.
struct SQLiteRow: SQLRow {
    let row: Row
    let columns: [String]

    static func columns(of statement: Statement) -> [String] { statement.columnNames }

    private func at(_ column: String) -> Int? { columns.firstIndex(of: column) }

    /// The value as SQLite stored it. GRDB's typed subscript decodes through a context it builds
    /// for its error messages (a third of the time serving an event feed), and its untyped one
    /// answers an existential that each read must cast: the stored form is read as it is.
    private func value(_ column: String) -> DatabaseValue.Storage {
        guard let i = at(column) else { return (row[column] as DatabaseValue?)?.storage ?? .null }
        return row[row.index(row.startIndex, offsetBy: i)].1.storage
    }

    func int64(_ column: String) throws -> Int64? {
        switch value(column) {
        case .null: return nil
        case .int64(let n): return n
        case .double(let d): return Int64(exactly: d)
        case let other: throw SQLReadError(description: "column \(column) is not an integer: \(other)")
        }
    }

    func string(_ column: String) throws -> String? {
        switch value(column) {
        case .null: return nil
        case .string(let text): return text
        case let other: throw SQLReadError(description: "column \(column) is not text: \(other)")
        }
    }

    func bool(_ column: String) throws -> Bool? { try int64(column).map { $0 != 0 } }

    func bytes(_ column: String) throws -> Data? {
        switch value(column) {
        case .null: return nil
        case .blob(let data): return data
        case let other: throw SQLReadError(description: "column \(column) is not a blob: \(other)")
        }
    }

    func double(_ column: String) throws -> Double? {
        switch value(column) {
        case .null: return nil
        case .double(let d): return d
        case .int64(let n): return Double(n)
        case let other: throw SQLReadError(description: "column \(column) is not a number: \(other)")
        }
    }
}

extension SQLiteStore: SQLDatabase {
    public func reading<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try db.read { try body(SQLiteConnection(db: $0)) }
    }

    public func writing<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try db.write { try body(SQLiteConnection(db: $0)) }
    }
}

extension SQLiteStore: SQLTimeStore {}
extension SQLiteStore: SQLHistoryStore {}
extension SQLiteStore: SQLMarketStore {}
extension SQLiteStore: SQLDueStore {}
extension SQLiteStore: SQLAccountStore {}
extension SQLiteStore: SQLRoomStore {}
extension SQLiteStore: SQLJobStore {}
extension SQLiteStore: SQLChoreStore {}
extension SQLiteStore: SQLWebhookStore {}
