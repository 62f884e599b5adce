import ChorusCore
import ChorusSQL
import Foundation
import GRDB
import GRDBSQLite

/// In this module `SQL` is ChorusSQL's statement, not GRDB's type of that name.
typealias SQL = ChorusSQL.SQL

/// The shared queries (ChorusSQL) on GRDB's SQLite: statements from the connection's cache.
struct SQLiteConnection: SQLConnection {
    let db: Database

    var dialect: SQLDialect { .sqlite }

    func rows(_ sql: SQL) throws -> [any SQLRow] {
        var rows: [any SQLRow] = []
        try eachLiveRow(sql) { rows.append(SQLiteRow(copying: $0)) }
        return rows
    }

    func eachRow(_ sql: SQL, _ body: (any SQLRow) throws -> Void) throws {
        try eachLiveRow(sql, body)
    }

    /// Each row read where the statement stands, as SQLite stored it: GRDB's `Row` would make a
    /// `DatabaseValue` of each column (its text measured with `strlen`, then copied) to be read
    /// again here.
    private func eachLiveRow(_ sql: SQL, _ body: (SQLiteLiveRow) throws -> Void) throws {
        let statement = try db.cachedStatement(sql: sql.questionMarked)
        let row = SQLiteLiveRow(statement: statement.sqliteStatement, columns: statement.columnNames)
        let cursor = try Row.fetchCursor(statement, arguments: Self.arguments(sql))
        while try cursor.next() != nil { try body(row) }
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

/// A column's value as SQLite stored it.
enum SQLiteValue {
    case null, integer(Int64), real(Double), text(String), blob(Data)
}

/// A row read by column name. The name is found among the statement's few column names, read once
/// per statement and compared as they are: GRDB's own lookup lowercases the name and hashes it
/// each time, six times a row for the thousand contractors a posting reads.
protocol SQLiteValues: SQLRow {
    var columns: [String] { get }
    func value(at index: Int) -> SQLiteValue
}

extension SQLiteValues {
    private func value(_ column: String) -> SQLiteValue {
        // Lengths first: most names differ in length, and comparing those is a load, not a call.
        let length = column.utf8.count
        guard let i = columns.firstIndex(where: { $0.utf8.count == length && $0 == column })
            ?? columns.firstIndex(where: { $0.lowercased() == column.lowercased() }) else {
            return .null
        }
        return value(at: i)
    }

    func int64(_ column: String) throws -> Int64? {
        switch value(column) {
        case .null: return nil
        case .integer(let n): return n
        case .real(let d): return Int64(exactly: d)
        case let other: throw SQLReadError(description: "column \(column) is not an integer: \(other)")
        }
    }

    func string(_ column: String) throws -> String? {
        switch value(column) {
        case .null: return nil
        case .text(let text): return text
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
        case .real(let d): return d
        case .integer(let n): return Double(n)
        case let other: throw SQLReadError(description: "column \(column) is not a number: \(other)")
        }
    }
}

/// The row a statement stands on, valid until it steps again.
struct SQLiteLiveRow: SQLiteValues {
    let statement: SQLiteStatement
    let columns: [String]

    func value(at index: Int) -> SQLiteValue {
        let i = Int32(index)
        switch sqlite3_column_type(statement, i) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, i))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, i))
        case SQLITE_TEXT:
            // The pointer, then the length SQLite keeps (in the order its documentation asks): the
            // text is read once, not measured with `strlen` as well.
            guard let text = sqlite3_column_text(statement, i) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, i))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let bytes = sqlite3_column_blob(statement, i) else { return .blob(Data()) }
            let count = Int(sqlite3_column_bytes(statement, i))
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }
}

/// A row kept after the statement has gone on (`rows`).
struct SQLiteRow: SQLiteValues {
    let columns: [String]
    let values: [SQLiteValue]

    init(copying row: SQLiteLiveRow) {
        columns = row.columns
        values = row.columns.indices.map(row.value(at:))
    }

    func value(at index: Int) -> SQLiteValue { values[index] }
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
