import ChorusCore
import Foundation
import PostgresNIO
import ChorusSQL

/// Who is connected to which process. Every change takes the log's lock and a position from the
/// history's sequence (`takeLog`), so other processes read it in order with the lines around it.
/// Leases are judged by the database's clock, so the processes' clocks need not agree.
extension PostgresStore: SharedPresence {
    /// How long a process may stay silent before the others give it up: three missed heartbeats.
    public static let lease: TimeInterval = 6
    /// How often a process renews its lease.
    public static let heartbeatInterval: TimeInterval = 2
    /// How long a departed connection's row and a bus message stay, for processes that have not read them yet.
    static let goneKept: TimeInterval = 60

    static let presenceColumns = "connection, node, nick, nick_key, user_name, host, realname, account, away, modes, rooms, since, note, gone, server"
    /// Where `gone` is among `presenceColumns`.
    static let presenceGoneColumn = 13
    static let databaseNow = "(extract(epoch from clock_timestamp()) * 1000)::bigint"
    /// A place in the log's one order: lines, presence changes and bus messages all take theirs here.
    static let nextPosition = "nextval('history_id_seq')"

    public var node: String { pool.node }
    public var heartbeatInterval: TimeInterval { Self.heartbeatInterval }
    public var lease: TimeInterval { Self.lease }

    private static func millis(_ interval: TimeInterval) -> Int64 { Int64(interval * 1000) }

    public func publish(_ record: PresenceRecord) throws -> Bool {
        try db.write { link in
            try Self.takeLog(link, node: node)
            // A nick is free unless a connection of a live process holds it, or is shared by one
            // person's connections (of one account); one whose process lapsed is let go here
            // rather than waiting for someone to withdraw it.
            let holders = try link.query("""
                SELECT p.connection, coalesce(n.heartbeat > \(raw: Self.databaseNow) - \(Self.millis(Self.lease)), false), p.account
                FROM presence p LEFT JOIN nodes n ON n.node = p.node
                WHERE p.nick_key = \(record.nickKey) AND NOT p.gone AND p.connection <> \(record.connection)
                """)
            for holder in holders {
                if try holder.bool(1) {
                    if PresenceRecord.samePerson(try holder.string(2), record.account) { continue }
                    return false
                }
                try Self.markGone(link, "connection = \(try holder.string(0) as String)", reason: "Server lost")
            }
            try link.execute("""
                INSERT INTO presence (\(raw: Self.presenceColumns), seq, changed)
                VALUES (\(record.connection), \(record.node), \(record.nick), \(record.nickKey), \(record.user),
                  \(record.host), \(record.realname), \(record.account), \(record.away), \(record.modes),
                  \(record.storedRooms), \(Millis.from(record.since)), \(record.note), false, \(record.server),
                  \(raw: Self.nextPosition), \(raw: Self.databaseNow))
                ON CONFLICT (connection) DO UPDATE SET nick = excluded.nick, nick_key = excluded.nick_key,
                  user_name = excluded.user_name, host = excluded.host, realname = excluded.realname,
                  account = excluded.account, away = excluded.away, modes = excluded.modes, rooms = excluded.rooms,
                  note = excluded.note, gone = false, seq = excluded.seq, changed = excluded.changed
                """)
            return true
        }
    }

    public func withdraw(connection: String, reason: String) throws {
        try db.write { link in
            try Self.takeLog(link, node: node)
            try Self.markGone(link, "connection = \(connection)", reason: reason)
        }
    }

    public func withdrawOthers(keeping: [String], reason: String) throws {
        try db.write { link in
            try Self.takeLog(link, node: node)
            // Connection ids are `node#number`: no commas.
            try Self.markGone(link, "node = \(node) AND NOT gone AND connection <> ALL(string_to_array(\(keeping.joined(separator: ",")), ','))",
                              reason: reason)
        }
    }

    public func join() throws -> (records: [PresenceRecord], position: Int64) {
        try db.write { link in
            // The lock keeps writers out while the records and the position are read together.
            try Self.takeLog(link, node: node)
            try link.execute("""
                INSERT INTO nodes (node, started, heartbeat) VALUES (\(node), \(raw: Self.databaseNow), \(raw: Self.databaseNow))
                ON CONFLICT (node) DO UPDATE SET heartbeat = excluded.heartbeat
                """)
            let records = try link.query("""
                SELECT \(raw: Self.presenceColumns) FROM presence WHERE NOT gone AND node <> \(node)
                  AND node IN (SELECT node FROM nodes WHERE heartbeat > \(raw: Self.databaseNow) - \(Self.millis(Self.lease))) ORDER BY seq
                """).map { try Self.presenceRecord($0, from: 0) }
            let position = try link.query("SELECT \(raw: Self.logEnd)")
                .first?.int64(0) ?? 0
            return (records, position)
        }
    }

    public func heartbeat() throws -> Bool {
        try db.write { link in
            let renewed = try link.execute("UPDATE nodes SET heartbeat = \(raw: Self.databaseNow) WHERE node = \(node)")
            if renewed > 0 { return true }
            try link.execute("""
                INSERT INTO nodes (node, started, heartbeat)
                VALUES (\(node), \(raw: Self.databaseNow), \(raw: Self.databaseNow))
                """)
            return false
        }
    }

    public func withdrawSilentNodes() throws -> [String] {
        let lease = Self.millis(Self.lease)
        // A look without the lock first: nearly always nobody has lapsed.
        let lapsed = try db.read { link in
            try link.query("SELECT 1 FROM nodes WHERE heartbeat < \(raw: Self.databaseNow) - \(lease) LIMIT 1")
        }
        let kept = Self.millis(Self.goneKept)
        let old = try db.read { link in
            try link.query("""
                SELECT 1 FROM presence WHERE gone AND changed < \(raw: Self.databaseNow) - \(kept)
                UNION ALL SELECT 1 FROM bus WHERE created < \(raw: Self.databaseNow) - \(kept) LIMIT 1
                """)
        }
        if lapsed.isEmpty && old.isEmpty { return [] }
        return try db.write { link in
            try Self.takeLog(link, node: node)
            try link.execute("DELETE FROM presence WHERE gone AND changed < \(raw: Self.databaseNow) - \(kept)")
            try link.execute("DELETE FROM bus WHERE created < \(raw: Self.databaseNow) - \(kept)")
            let nodes = try link.query("DELETE FROM nodes WHERE heartbeat < \(raw: Self.databaseNow) - \(lease) RETURNING node")
                .map { try $0.string(0) as String }
            for lost in nodes { try Self.markGone(link, "node = \(lost) AND NOT gone", reason: "Server lost") }
            return nodes
        }
    }

    public func leave(reason: String) throws {
        try db.write { link in
            try Self.takeLog(link, node: node)
            try Self.markGone(link, "node = \(node) AND NOT gone", reason: reason)
            try link.execute("DELETE FROM nodes WHERE node = \(node)")
        }
    }

    private static func markGone(_ link: PostgresLink, _ condition: SQL, reason: String) throws {
        try link.execute("""
            UPDATE presence SET gone = true, note = \(reason), seq = \(raw: nextPosition), changed = \(raw: databaseNow) WHERE \(condition)
            """)
    }

    /// A record from its columns (`presenceColumns`), starting at column `first`.
    static func presenceRecord(_ row: PostgresRandomAccessRow, from first: Int) throws -> PresenceRecord {
        PresenceRecord(connection: try row.string(first), node: try row.string(first + 1), server: try row.string(first + 14),
                       nick: try row.string(first + 2),
                       nickKey: try row.string(first + 3), user: try row.string(first + 4), host: try row.string(first + 5),
                       realname: try row.string(first + 6), account: try row.string(first + 7), away: try row.string(first + 8),
                       modes: try row.string(first + 9), rooms: PresenceRecord.rooms(stored: try row.string(first + 10)),
                       since: try row.date(first + 11), note: try row.string(first + 12))
    }
}
