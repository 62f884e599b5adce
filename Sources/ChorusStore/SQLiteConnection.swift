import ChorusCore
import ChorusSQL
import GRDB

/// The shared queries (ChorusSQL) on GRDB's SQLite: statements from the connection's cache.
struct SQLiteConnection: SQLConnection {
    let db: Database

    var dialect: SQLDialect { .sqlite }

    func rows(_ sql: String, _ binds: [any SQLBindable]) throws -> [any SQLRow] {
        try Row.fetchAll(cached: db, sql: sql, arguments: Self.arguments(binds)).map(SQLiteRow.init)
    }

    func eachRow(_ sql: String, _ binds: [any SQLBindable], _ body: (any SQLRow) throws -> Void) throws {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: Self.arguments(binds))
        while let row = try rows.next() { try body(SQLiteRow(row: row)) }
    }

    @discardableResult
    func run(_ sql: String, _ binds: [any SQLBindable]) throws -> Int {
        try db.run(sql: sql, arguments: Self.arguments(binds))
        return db.changesCount
    }

    /// One writer at a time: nobody else changes a row between this transaction's read and write.
    func rowsToChange(_ table: String, _ sql: String, _ binds: [any SQLBindable]) throws -> [any SQLRow] {
        try rows(sql, binds)
    }

    func change(_ table: String, id: Int64, set assignments: String, _ binds: [any SQLBindable], what: String) throws {
        guard try run("UPDATE \(table) SET \(assignments) WHERE id = ?", binds + [id]) == 1 else { throw StoreError.notFound(what) }
    }

    static func arguments(_ binds: [any SQLBindable]) -> StatementArguments {
        StatementArguments(binds.map { bind -> (any DatabaseValueConvertible)? in
            switch bind.sqlValue {
            case .null: return nil
            case .integer(let n): return n
            case .text(let s): return s
            case .bool(let b): return b
            }
        })
    }
}

/// A GRDB row, read by column name.
struct SQLiteRow: SQLRow {
    let row: Row

    func int64(_ column: String) throws -> Int64? { row[column] }
    func string(_ column: String) throws -> String? { row[column] }
    func bool(_ column: String) throws -> Bool? { row[column] }
    func double(_ column: String) throws -> Double? { row[column] }
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

extension SQLCondition {
    /// The values as GRDB binds them.
    var arguments: StatementArguments {
        StatementArguments(values.map { value -> any DatabaseValueConvertible in
            switch value {
            case .text(let text): text
            case .integer(let number): number
            }
        })
    }
}
