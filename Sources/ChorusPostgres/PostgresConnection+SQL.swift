import ChorusCore
import ChorusSQL
import Foundation
import PostgresNIO

/// The shared queries (ChorusSQL) on a PostgreSQL link.
extension PostgresLink: SQLConnection {
    var dialect: SQLDialect { .postgres }

    func rows(_ sql: SQL) throws -> [any SQLRow] {
        try query(sql).map(PostgresSQLRow.init)
    }

    @discardableResult
    func run(_ sql: SQL) throws -> Int {
        try execute(sql)
    }

    func insert(_ sql: SQL) throws -> Int64 {
        try query(sql + " RETURNING id")[0].int64(0)
    }

    func rowsToChange(_ table: String, _ sql: SQL) throws -> [any SQLRow] {
        try queryVersioned(table, sql).map(PostgresSQLRow.init)
    }

    func change(_ table: String, id: Int64, set assignments: SQL, what: String) throws {
        try updateRow(table, id: id, set: assignments, what: what)
    }

    /// The row and its events in one statement, holding only while the row is as this transaction
    /// read it (`RowVersions`): the events are written only if the row is, in order.
    func change(_ table: String, id: Int64, set assignments: SQL, what: String, events: [Event]) throws -> [Event] {
        guard !events.isEmpty else {
            try change(table, id: id, set: assignments, what: what)
            return []
        }
        let check = takeVersionCheck(table, id)
        let rows = events.enumerated().map { n, event in Self.eventRow(event, number: n) }.joined(separator: ", ")
        let ids = try query("""
            WITH changed AS (UPDATE \(raw: table) SET \(assignments) WHERE id = \(id)\(check.condition) RETURNING id)
            \(raw: EventRows.insert) SELECT e.type, e.room, e.job, e.actor, e.data, e.at, e.concerns, e.audience, e.request, e.reach
            FROM changed, (VALUES \(rows)) AS e(type, room, job, actor, data, at, concerns, audience, request, reach, n) ORDER BY e.n
            RETURNING id
            """).map { try $0.int64(0) as Int64 }.sorted()  // given in the order of the rows
        guard ids.count == events.count else { throw rowNotWritten(what, checked: check.checked) }
        return zip(events, ids).map { event, id in
            var saved = event
            saved.id = id
            return saved
        }
    }

    /// The row and its event in one statement.
    func insert(_ sql: SQL, event: Event, eventJob: Bool) throws -> (id: Int64, event: Event) {
        // The event names the new row only as its job: otherwise its values go in as they are,
        // a statement PostgreSQL plans faster than a join.
        let rows = try query(eventJob ? """
            WITH added AS (\(sql) RETURNING id)
            \(raw: EventRows.insert) SELECT e.type, e.room, added.id, e.actor, e.data, e.at, e.concerns, e.audience, e.request, e.reach
            FROM added, (VALUES \(Self.eventRow(event))) AS e(type, room, job, actor, data, at, concerns, audience, request, reach)
            RETURNING id, (SELECT id FROM added)
            """ : """
            WITH added AS (\(sql) RETURNING id)
            \(raw: EventRows.insert) VALUES \(Self.eventRow(event)) RETURNING id, (SELECT id FROM added)
            """)
        var saved = event
        saved.id = try rows[0].int64(0)
        let id: Int64 = try rows[0].int64(1)
        if eventJob { saved.job = id }
        return (id, saved)
    }

    /// An event's values in a CTE's `VALUES` (with its place among the rows, if `number`), typed
    /// where PostgreSQL cannot tell a NULL's type from the column.
    static func eventRow(_ event: Event, number: Int? = nil) -> SQL {
        let v = EventRows.values(of: event)
        let place: SQL = number.map { ", \($0)::int" } ?? ""
        return """
            (\(v[0].sqlValue), \(v[1].sqlValue), \(v[2].sqlValue)::bigint, \(v[3].sqlValue), \(v[4].sqlValue), \(v[5].sqlValue)::bigint, \
            \(v[6].sqlValue), \(v[7].sqlValue), \(v[8].sqlValue)::bigint, \(v[9].sqlValue)\(place))
            """
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
