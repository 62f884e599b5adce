import ChorusCore
import Foundation

/// Stored history, written once for both databases.
public protocol SQLHistoryStore: Store, SQLDatabase {}

extension SQLHistoryStore {
    /// A history line's columns, written and read in this order.
    public static var historyColumns: String { "conversation, msgid, time, command, source, account, target, text, client_tags, audience" }

    public static func entry(_ row: any SQLRow) throws -> HistoryEntry {
        HistoryEntry(conversation: try row.string("conversation"), msgid: try row.string("msgid"), time: try row.date("time"),
                     command: try row.string("command"), source: try row.string("source"), account: try row.string("account"),
                     target: try row.string("target"), text: try row.string("text"), clientTags: try row.string("client_tags"),
                     audience: (try row.string("audience") as String?).map(StoredForm.audience))
    }

    public func history(of conversation: String, _ query: HistoryQuery, reader: HistoryReader) throws -> [HistoryEntry] {
        try reading { c in
            // Lines with an audience are read by it and the managers only; a guest reads the lines for everyone.
            let visible: SQL = switch reader {
            // ` key ` is found only as a whole key (`StoredForm.audience`).
            case .everything: ""
            case .member(nil): "AND audience IS NULL"
            case .member(let key?): "AND (audience IS NULL OR \(raw: c.dialect.instr)(audience, \(StoredForm.audience([key]))) > 0)"
            }
            return try HistoryPlan.run(query, place: { msgid in
                try c.rows("SELECT time, id FROM history WHERE msgid = \(msgid) AND conversation = \(conversation)")
                    .first.map { (time: try $0.int64("time"), id: try $0.int64("id")) }
            }, fetch: { condition, descending, limit in
                let order = descending ? "DESC" : "ASC"
                // Each line is made into an entry where the cursor stands.
                var entries: [HistoryEntry] = []
                try c.eachRow("""
                    SELECT \(raw: Self.historyColumns) FROM history WHERE conversation = \(conversation) \(visible) \(condition)
                    ORDER BY time \(raw: order), id \(raw: order) LIMIT \(max(0, limit))
                    """) { entries.append(try Self.entry($0)) }
                return descending ? entries.reversed() : entries
            })
        }
    }

    public func holdPrivateLine(_ msgid: String, for account: String) throws {
        try writing { c in
            try c.run("INSERT INTO held_lines (account, msgid) VALUES (\(Account.key(account)), \(msgid)) ON CONFLICT DO NOTHING")
        }
    }

    public func takeHeldPrivateLines(for account: String, limit: Int) throws -> (lines: [HistoryEntry], held: Int) {
        let key = Account.key(account)
        return try writing { c in
            let held = try c.rows("SELECT count(*) AS n FROM held_lines WHERE account = \(key)").first?.int("n") ?? 0
            guard held > 0 else { return ([], 0) }
            let latest = try c.rows("""
                SELECT \(raw: Self.historyColumns) FROM history
                WHERE msgid IN (SELECT msgid FROM held_lines WHERE account = \(key)) ORDER BY time DESC, id DESC LIMIT \(max(0, limit))
                """).map(Self.entry)
            try c.run("DELETE FROM held_lines WHERE account = \(key)")
            return (latest.reversed(), held)
        }
    }

    /// The conversations among `conversations` whose latest line falls strictly between `from` and
    /// `to` (either order), with that line's time and target, oldest first. A conversation is
    /// matched on its latest line only (IRCv3 `CHATHISTORY TARGETS`): one with older lines in the
    /// window and a newer one after it is not listed. One index seek a conversation, however long.
    public func historyTargets(among conversations: [String], from: Date, to: Date,
                               limit: Int) throws -> [(conversation: String, latest: Date, target: String)] {
        guard !conversations.isEmpty else { return [] }
        let (lo, hi) = from <= to ? (from, to) : (to, from)
        return try reading { c in
            try c.rows("""
                SELECT history.conversation, history.time, history.target FROM history
                WHERE history.id IN (
                  SELECT (SELECT latest.id FROM history AS latest WHERE latest.conversation = asked.column1
                          ORDER BY latest.time DESC, latest.id DESC LIMIT 1)
                  FROM (VALUES \(conversations.map { "(\($0))" as SQL }.joined(separator: ", "))) AS asked)
                AND history.time > \(Millis.from(lo)) AND history.time < \(Millis.from(hi))
                ORDER BY history.time, history.id LIMIT \(limit)
                """)
                .map { (conversation: try $0.string("conversation"), latest: try $0.date("time"), target: try $0.string("target")) }
        }
    }
}
