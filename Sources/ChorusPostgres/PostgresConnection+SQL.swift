import ChorusCore
import ChorusSQL
import PostgresNIO

/// The shared queries (ChorusSQL) on a PostgreSQL link.
extension PostgresLink: SQLConnection {
    var dialect: SQLDialect { .postgres }

    func rows(_ sql: String, _ binds: [any SQLBindable]) throws -> [any SQLRow] {
        try query(sql, Self.values(binds)).map(PostgresSQLRow.init)
    }

    @discardableResult
    func run(_ sql: String, _ binds: [any SQLBindable]) throws -> Int {
        try execute(sql, Self.values(binds))
    }

    func rowsToChange(_ table: String, _ sql: String, _ binds: [any SQLBindable]) throws -> [any SQLRow] {
        try queryVersioned(table, sql, Self.values(binds)).map(PostgresSQLRow.init)
    }

    func change(_ table: String, id: Int64, set assignments: String, _ binds: [any SQLBindable], what: String) throws {
        try updateRow(table, id: id, set: assignments, Self.values(binds), what: what)
    }

    static func values(_ binds: [any SQLBindable]) -> [any PostgresBindable] {
        binds.map { bind -> any PostgresBindable in
            switch bind.sqlValue {
            case .null: return Optional<String>.none
            case .integer(let n): return n
            case .text(let s): return s
            case .bool(let b): return b
            }
        }
    }
}

/// A postgres-nio row, read by column name.
struct PostgresSQLRow: SQLRow {
    let row: PostgresRandomAccessRow

    func int64(_ column: String) throws -> Int64? { try row[column].decode(Int64?.self) }
    func string(_ column: String) throws -> String? { try row[column].decode(String?.self) }
    func bool(_ column: String) throws -> Bool? { try row[column].decode(Bool?.self) }
    func double(_ column: String) throws -> Double? { try row[column].decode(Double?.self) }
}

extension PostgresStore: SQLDatabase {
    public func reading<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try db.read { try body($0) }
    }

    public func writing<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try db.write { try body($0) }
    }
}

extension PostgresStore: SQLTimeStore {}
extension PostgresStore: SQLHistoryStore {}
extension PostgresStore: SQLMarketStore {}
extension PostgresStore: SQLDueStore {}
extension PostgresStore: SQLAccountStore {}
