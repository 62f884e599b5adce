import ChorusCore
import ChorusSQL
import Foundation
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

    func insert(_ sql: String, _ binds: [any SQLBindable]) throws -> Int64 {
        try query(sql + " RETURNING id", Self.values(binds))[0].int64(0)
    }

    func rowsToChange(_ table: String, _ sql: String, _ binds: [any SQLBindable]) throws -> [any SQLRow] {
        try queryVersioned(table, sql, Self.values(binds)).map(PostgresSQLRow.init)
    }

    func change(_ table: String, id: Int64, set assignments: String, _ binds: [any SQLBindable], what: String) throws {
        try updateRow(table, id: id, set: assignments, Self.values(binds), what: what)
    }

    /// The row and its events in one statement, holding only while the row is as this transaction
    /// read it (`RowVersions`): the events are written only if the row is, in order.
    func change(_ table: String, id: Int64, set assignments: String, _ binds: [any SQLBindable], what: String,
                events: [Event]) throws -> [Event] {
        guard !events.isEmpty else {
            try change(table, id: id, set: assignments, binds, what: what)
            return []
        }
        let check = takeVersionCheck(table, id)
        let rows = Array(repeating: Self.eventRow.dropLast() + ", ?::int)", count: events.count).joined(separator: ", ")
        let ids = try query("""
            WITH changed AS (UPDATE \(table) SET \(assignments) WHERE id = ?\(check.condition) RETURNING id)
            \(EventRows.insert) SELECT e.type, e.room, e.job, e.actor, e.data, e.at, e.concerns, e.audience, e.request
            FROM changed, (VALUES \(rows)) AS e(type, room, job, actor, data, at, concerns, audience, request, n) ORDER BY e.n
            RETURNING id
            """, Self.values(binds) + [id] + check.values
                + events.enumerated().flatMap { Self.values(EventRows.values(of: $0.element)) + [$0.offset] as [any PostgresBindable] })
            .map { try $0.int64(0) as Int64 }.sorted()  // given in the order of the rows
        guard ids.count == events.count else { throw rowNotWritten(what, checked: check.checked) }
        return zip(events, ids).map { event, id in
            var saved = event
            saved.id = id
            return saved
        }
    }

    /// The row and its event in one statement.
    func insert(_ sql: String, _ binds: [any SQLBindable], event: Event, eventJob: Bool) throws -> (id: Int64, event: Event) {
        // The event names the new row only as its job: otherwise its values go in as they are,
        // a statement PostgreSQL plans faster than a join.
        let rows = try query(eventJob ? """
            WITH added AS (\(sql) RETURNING id)
            \(EventRows.insert) SELECT e.type, e.room, added.id, e.actor, e.data, e.at, e.concerns, e.audience, e.request
            FROM added, (VALUES \(Self.eventRow)) AS e(type, room, job, actor, data, at, concerns, audience, request)
            RETURNING id, (SELECT id FROM added)
            """ : """
            WITH added AS (\(sql) RETURNING id)
            \(EventRows.insert) VALUES \(Self.eventRow) RETURNING id, (SELECT id FROM added)
            """, Self.values(binds) + Self.values(EventRows.values(of: event)))
        var saved = event
        saved.id = try rows[0].int64(0)
        let id: Int64 = try rows[0].int64(1)
        if eventJob { saved.job = id }
        return (id, saved)
    }

    /// An event's values in a CTE's `VALUES`, where PostgreSQL cannot tell a NULL's type from the column.
    static let eventRow = "(?, ?, ?::bigint, ?, ?, ?::bigint, ?, ?, ?::bigint)"

    static func values(_ binds: [any SQLBindable]) -> [any PostgresBindable] {
        binds.map { bind -> any PostgresBindable in
            switch bind.sqlValue {
            case .null: return Optional<String>.none
            case .integer(let n): return n
            case .text(let s): return s
            case .bool(let b): return b
            case .bytes(let d): return d
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
    func bytes(_ column: String) throws -> Data? { try row[column].decode(Data?.self) }
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
extension PostgresStore: SQLRoomStore {}
extension PostgresStore: SQLJobStore {}
extension PostgresStore: SQLChoreStore {}
extension PostgresStore: SQLWebhookStore {}
