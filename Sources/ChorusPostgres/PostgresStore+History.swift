import ChorusCore
import Foundation
import PostgresNIO
import ChorusSQL

extension PostgresStore {
    public func appendHistory(_ entries: [HistoryEntry]) throws {
        guard !entries.isEmpty else { return }
        // A statement per thousand lines, in one transaction: a round trip per line would be most
        // of the cost, and a statement takes at most 65,535 values.
        let node = pool.node
        try db.write { link in
            try PostgresStore.takeLog(link, node: node, wake: false)
            for start in stride(from: 0, to: entries.count, by: 1000) {
                let chunk = entries[start..<min(entries.count, start + 1000)]
                let rows = chunk.map { e -> SQL in
                    """
                    (\(e.conversation), \(e.msgid), \(Millis.from(e.time)), \(e.command), \(e.source), \(e.account), \(e.target),
                     \(e.text), \(e.clientTags), \(e.audience.map(StoredForm.audience)), \(node))
                    """
                }.joined(separator: ", ")
                try link.execute(Self.appending(
                    "INSERT INTO history (\(raw: Self.historyColumns), node) VALUES \(rows) RETURNING id, \(raw: Self.historyColumns)",
                    node: node, carrying: "json_agg(json_build_array(\(raw: Self.historyColumns)) ORDER BY id)"))
            }
        }
    }

    /// `insert` (an INSERT into the log `RETURNING id` and what `carried` reads), with the wake-up
    /// for the other processes built in the same statement: `[node, after, last, carried…]`, the
    /// log's end before the rows and the last row's id (`LogNews.appended`), so that a process that
    /// has read up to there delivers them without reading the log. One too long for a
    /// notification carries the node's name only, which says to read it.
    static func appending(_ insert: SQL, node: String, carrying carried: SQL) -> SQL {
        """
        WITH added AS (\(insert))
        SELECT pg_notify(current_setting('chorus.channel'),
          CASE WHEN octet_length(news) <= \(raw: String(longestNews)) THEN news ELSE \(node) END)
        FROM (SELECT json_build_array(\(node)::text, \(raw: logEnd), (SELECT max(id) FROM added), \(carried))::text
              AS news FROM added) appended
        """
    }

    /// The position of the log's last entry (a line's id, a presence change's or a bus message's), as a statement reads it.
    static let logEnd = """
        greatest((SELECT coalesce(max(id), 0) FROM history), (SELECT coalesce(max(seq), 0) FROM presence),
                 (SELECT coalesce(max(id), 0) FROM bus))
        """
    /// PostgreSQL takes a notification's payload up to 8,000 bytes (bytes, not characters: `octet_length`).
    private static let longestNews = 7900

}

extension PostgresStore: SharedLog {

    public func lastLinePosition() throws -> Int64 {
        try db.read { link in try link.query("SELECT coalesce(max(id), 0) FROM history").first?.int64(0) ?? 0 }
    }

    /// Lines and presence take their ids, and commit, one process at a time: a reader that has
    /// seen id N has then seen everything before it (the lock is held until the commit), and
    /// notifications come in the order of the commits. With `wake`, the wake-up for the other
    /// processes goes in the same round trip: PostgreSQL sends it at the commit (one per
    /// transaction), naming this process, whose own listener passes over it.
    static func takeLog(_ link: PostgresLink, node: String, wake: Bool = true) throws {
        // Advisory locks are the database's: the schema's name keeps installations in one apart.
        let lock = "pg_advisory_xact_lock(hashtext('chorus history ' || current_schema()))"
        if wake {
            try link.execute("SELECT \(raw: lock), pg_notify(current_setting('chorus.channel'), \(node))")
        } else {
            try link.execute("SELECT \(raw: lock)")
        }
    }

    /// For tests: runs between the read of the lines and the reads of presence and the bus.
    nonisolated(unsafe) static var afterReadingLines: (() -> Void)?

    public func changes(after position: Int64, limit: Int) throws -> (changes: [SharedChange], next: Int64, more: Bool) {
        let node = pool.node
        return try db.read { link in
            // The lines, and in the same round trip whether presence or the bus moved at all
            // (seldom, next to lines): a row even when there are no lines, whose line columns are then null.
            let rows = try link.query("""
                SELECT coalesce((SELECT max(seq) FROM presence), 0), coalesce((SELECT max(id) FROM bus), 0), h.*
                FROM (SELECT 1) one LEFT JOIN LATERAL (
                  SELECT id, node, \(raw: Self.historyColumns) FROM history WHERE id > \(position) ORDER BY id LIMIT \(limit)) h ON true
                """)
            let presenceTop: Int64 = try rows.first?.int64(0) ?? 0
            let busTop: Int64 = try rows.first?.int64(1) ?? 0
            let lines = try rows.filter { try $0.int64(2) as Int64? != nil }
            Self.afterReadingLines?()
            // Presence and the bus as far as the first statement saw them, no further. What commits
            // after it commits after everything it saw (the log's lock), and its lines were not
            // read: a bus message of a transaction that commits now would carry the position past
            // that transaction's own lines, which no later read would then look at.
            let presence = presenceTop <= position ? [] : try link.query("""
                SELECT seq, \(raw: Self.presenceColumns) FROM presence WHERE seq > \(position) AND seq <= \(presenceTop)
                ORDER BY seq LIMIT \(limit)
                """)
            let bus = busTop <= position ? [] : try link.query(
                "SELECT id, node, kind, body::text FROM bus WHERE id > \(position) AND id <= \(busTop) ORDER BY id LIMIT \(limit)")
            // All in one order; where a kind filled its limit, nothing after its last is taken yet.
            var end = Int64.max
            if lines.count == limit, let last = lines.last { end = min(end, try last.int64(2) as Int64) }
            if presence.count == limit, let last = presence.last { end = min(end, try last.int64(0) as Int64) }
            if bus.count == limit, let last = bus.last { end = min(end, try last.int64(0) as Int64) }
            var merged: [(id: Int64, change: SharedChange?)] = []
            for row in lines {
                let id: Int64 = try row.int64(2)
                guard id <= end else { break }
                merged.append((id, try row.string(3) as String? == node ? nil : .line(try Self.entry(PostgresSQLRow(row: row)))))
            }
            for row in presence {
                let id: Int64 = try row.int64(0)
                guard id <= end else { break }
                let record = try Self.presenceRecord(row, from: 1)
                let gone: Bool = try row.bool(Self.presenceGoneColumn + 1)
                let change: PresenceChange = gone ? .gone(connection: record.connection, reason: record.note ?? "Quit")
                                                  : .here(record)
                merged.append((id, record.node == node ? nil : .presence(change)))
            }
            for row in bus {
                let id: Int64 = try row.int64(0)
                guard id <= end else { break }
                let own = try row.string(1) as String == node
                // A kind this build does not know (a newer node's) is passed over.
                let message = own ? nil : try BusMessage(kind: try row.string(2), body: Data((try row.string(3) as String).utf8))
                merged.append((id, message.map { .bus($0) }))
            }
            merged.sort { $0.id < $1.id }
            return (merged.compactMap(\.change), merged.last?.id ?? position, end != Int64.max)
        }
    }

    public func post(_ messages: [BusMessage]) throws {
        guard !messages.isEmpty else { return }
        let node = pool.node
        let rows = try messages.map { message -> SQL in
            let body = String(decoding: try message.body(), as: UTF8.self)
            return "(\(raw: Self.nextPosition), \(node), \(message.kind), \(body)::jsonb, \(raw: Self.databaseNow))"
        }.joined(separator: ", ")
        try db.write { link in
            try Self.takeLog(link, node: node, wake: false)
            // A typing notice reaches the other nodes without a read of the log.
            try link.execute(Self.appending(
                "INSERT INTO bus (id, node, kind, body, created) VALUES \(rows) RETURNING id, kind, body",
                node: node, carrying: "'[]'::json, json_agg(json_build_array(kind, body::text) ORDER BY id)"))
        }
    }

    public func whenCommitted(_ news: @escaping @Sendable (LogNews) -> Void) {
        // Presence wakes with the writer's node, the room triggers with `rooms <node>`, and lines
        // with the lines (`appendHistory`): this process's own too, for where they end.
        let node = pool.node
        let ownRooms = "rooms " + node
        let ownLines = "[\"\(node)\","
        let decoder = JSONDecoder()  // one for every wake-up: the listener calls one at a time
        pool.listen(pool.location.channel) { payload in
            if payload == ownRooms { return }
            guard payload.hasPrefix("[") else { return news(.look(roomsChanged: payload.hasPrefix("rooms "))) }
            // Its own lines are its clients' already: only where they end is read, without a decoder.
            if payload.hasPrefix(ownLines), let ends = Self.ends(of: payload.dropFirst(ownLines.count)) {
                return news(.appended(after: ends.after, last: ends.last, lines: [], messages: []))
            }
            guard let appended = try? decoder.decode(AppendedLines.self, from: Data(payload.utf8)) else {
                return news(.look(roomsChanged: false))
            }
            let own = appended.node == node
            news(.appended(after: appended.after, last: appended.last, lines: own ? [] : appended.lines.map(\.entry),
                           messages: own ? [] : appended.messages.compactMap(\.message)))
        }
    }

    /// `after, last, …` of a notification's lines, from just past the node's name.
    private static func ends(of fields: Substring) -> (after: Int64, last: Int64)? {
        let parts = fields.split(separator: ",", maxSplits: 2)
        guard parts.count == 3, let after = Int64(parts[0].trimmingCharacters(in: .whitespaces)),
              let last = Int64(parts[1].trimmingCharacters(in: .whitespaces)) else { return nil }
        return (after, last)
    }

    /// A notification's lines, as `appendHistory` builds it: `[node, after, last, [[columns…]…]]`,
    /// or its bus messages, as `post` does: `[node, after, last, [], [[kind, body]…]]`.
    private struct AppendedLines: Decodable {
        let node: String
        let after: Int64
        let last: Int64
        let lines: [Line]
        let messages: [Message]

        init(from decoder: any Decoder) throws {
            var fields = try decoder.unkeyedContainer()
            node = try fields.decode(String.self)
            after = try fields.decode(Int64.self)
            last = try fields.decode(Int64.self)
            lines = try fields.decode([Line].self)
            messages = fields.isAtEnd ? [] : try fields.decode([Message].self)
        }

        struct Message: Decodable {
            /// nil for a kind this build does not know (a newer node's).
            let message: BusMessage?

            init(from decoder: any Decoder) throws {
                var c = try decoder.unkeyedContainer()
                message = try BusMessage(kind: try c.decode(String.self), body: Data(try c.decode(String.self).utf8))
            }
        }

        struct Line: Decodable {
            let entry: HistoryEntry

            init(from decoder: any Decoder) throws {
                var c = try decoder.unkeyedContainer()
                entry = HistoryEntry(conversation: try c.decode(String.self), msgid: try c.decode(String.self),
                                     time: Millis.date(try c.decode(Int64.self)), command: try c.decode(String.self),
                                     source: try c.decode(String.self), account: try c.decodeIfPresent(String.self),
                                     target: try c.decode(String.self), text: try c.decode(String.self),
                                     clientTags: try c.decode(String.self),
                                     audience: try c.decodeIfPresent(String.self).map(StoredForm.audience))
            }
        }
    }

    public func roomsChanged(since: Int64?) throws -> (rooms: [(room: String, changed: Int64)], now: Int64) {
        try db.read { link in
            // The clock and the rooms in one round trip: a row even when no room changed.
            let rows = try link.query("""
                SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint, r.room, r.changed FROM (SELECT 1) one
                LEFT JOIN LATERAL (SELECT room, max(changed) AS changed FROM room_changes
                                   WHERE changed > \(since ?? Int64.max) AND node <> \(pool.node) GROUP BY room ORDER BY 2) r ON true
                """)
            let now: Int64 = try rows.first?.int64(0) ?? 0
            let rooms = try rows.compactMap { row -> (room: String, changed: Int64)? in
                guard let room: String = try row.string(1), let changed: Int64 = try row.int64(2) else { return nil }
                return (room, changed)
            }
            return (rooms, now)
        }
    }

    public func makeRoom(_ room: Room) throws -> StoredRoom? {
        // Closed by its last manager between the two statements: made again, here.
        for _ in 0..<3 {
            let made = try db.write { link in
                try link.query(StoredStatements.insertRoom(room) + " ON CONFLICT (key) DO NOTHING RETURNING key")
            }
            forget { $0.roomNames[room.key] = nil }
            if !made.isEmpty { return nil }
            if let stored = try storedRoom(room.key) { return stored }
        }
        throw StoreError.conflict("room \(room.name)")
    }

    public func storedRoom(_ key: String) throws -> StoredRoom? {
        guard let room = try rooms(where: "key = \(key)").first else { return nil }
        return StoredRoom(room: room, settings: try roomSettings(key), memberships: try memberships(ofRoom: key))
    }
}
