import ChorusCore
import Foundation
import GRDB
import ChorusSQL

extension SQLiteStore {
    /// A history line's columns, written and read in this order. `entry(_:)` reads them by position:
    /// by name, GRDB compares each name case-insensitively, a `lowercased()` per column of every row.
    static let historyColumns = "conversation, msgid, time, command, source, account, target, text, client_tags, audience"

    private static let insertHistory = "INSERT INTO history (\(historyColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    public func appendHistory(_ entries: [HistoryEntry]) throws {
        guard !entries.isEmpty else { return }
        // One transaction for the whole batch: the server groups lines that arrive together.
        try db.write { db in
            let statement = try db.cachedStatement(sql: Self.insertHistory)
            for e in entries {
                try statement.execute(arguments: [e.conversation, e.msgid, Millis.from(e.time), e.command, e.source,
                                                  e.account, e.target, e.text, e.clientTags, e.audience.map(StoredForm.audience)])
            }
        }
    }

    public func history(of conversation: String, _ query: HistoryQuery, reader: HistoryReader) throws -> [HistoryEntry] {
        // Lines with an audience are read by it and the managers only; a guest reads the lines for everyone.
        let visible: String
        var visibleArgs: [any DatabaseValueConvertible] = []
        switch reader {
        case .everything: visible = ""
        case .member(nil): visible = "AND audience IS NULL"
        case .member(let key?):
            visible = "AND (audience IS NULL OR instr(audience, ?) > 0)"
            visibleArgs = [" \(key) "]
        }
        return try db.read { db in
            try HistoryPlan.run(query, place: { msgid in
                try Row.fetchOne(cached: db, sql: "SELECT time, id FROM history WHERE msgid = ? AND conversation = ?",
                                 arguments: [msgid, conversation]).map { (time: $0[0], id: $0[1]) }
            }, fetch: { condition, values, descending, limit in
                let order = descending ? "DESC" : "ASC"
                // A few dozen shapes at most (reader × bound × order), so they are cached too.
                let statement = try db.cachedStatement(sql: """
                    SELECT \(Self.historyColumns) FROM history WHERE conversation = ? \(visible) \(condition)
                    ORDER BY time \(order), id \(order) LIMIT ?
                    """)
                // A cursor's row is read in place and made into an entry; `fetchAll` would copy each row first.
                let entries = try Array(Row.fetchCursor(statement, arguments: StatementArguments(
                    [conversation] + visibleArgs + values + [max(0, limit)])).map(Self.entry))
                return descending ? entries.reversed() : entries
            })
        }
    }

    public func holdPrivateLine(_ msgid: String, for account: String) throws {
        try db.write { db in
            try db.run(sql: "INSERT OR IGNORE INTO held_lines (account, msgid) VALUES (?, ?)", arguments: [Account.key(account), msgid])
        }
    }

    public func takeHeldPrivateLines(for account: String, limit: Int) throws -> (lines: [HistoryEntry], held: Int) {
        let key = Account.key(account)
        return try db.write { db in
            let held = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM held_lines WHERE account = ?"),
                                        arguments: [key]) ?? 0
            guard held > 0 else { return ([], 0) }
            let statement = try db.cachedStatement(sql: """
                SELECT \(Self.historyColumns) FROM history
                WHERE msgid IN (SELECT msgid FROM held_lines WHERE account = ?) ORDER BY time DESC, id DESC LIMIT ?
                """)
            let latest = try Array(Row.fetchCursor(statement, arguments: [key, max(0, limit)]).map(Self.entry))
            try db.run(sql: "DELETE FROM held_lines WHERE account = ?", arguments: [key])
            return (latest.reversed(), held)
        }
    }

    static func entry(_ row: Row) -> HistoryEntry {
        HistoryEntry(conversation: row[0], msgid: row[1], time: Millis.date(row[2]),
                     command: row[3], source: row[4], account: row[5],
                     target: row[6], text: row[7], clientTags: row[8],
                     audience: (row[9] as String?).map(StoredForm.audience))
    }
}
