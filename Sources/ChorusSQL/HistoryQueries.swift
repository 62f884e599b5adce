import ChorusCore
import Foundation

/// Stored history, written once for both databases.
public protocol SQLHistoryStore: Store, SQLDatabase {}

extension SQLHistoryStore {
    /// The conversations among `conversations` whose latest line falls strictly between `from` and
    /// `to` (either order), with that line's time and target, oldest first. A conversation is
    /// matched on its latest line only (IRCv3 `CHATHISTORY TARGETS`): one with older lines in the
    /// window and a newer one after it is not listed. One index seek a conversation, however long.
    public func historyTargets(among conversations: [String], from: Date, to: Date,
                               limit: Int) throws -> [(conversation: String, latest: Date, target: String)] {
        guard !conversations.isEmpty else { return [] }
        let (lo, hi) = from <= to ? (from, to) : (to, from)
        let values = Array(repeating: "(?)", count: conversations.count).joined(separator: ", ")
        return try reading { c in
            try c.rows("""
                SELECT history.conversation, history.time, history.target FROM history
                WHERE history.id IN (
                  SELECT (SELECT latest.id FROM history AS latest WHERE latest.conversation = asked.column1
                          ORDER BY latest.time DESC, latest.id DESC LIMIT 1)
                  FROM (VALUES \(values)) AS asked)
                AND history.time > ? AND history.time < ?
                ORDER BY history.time, history.id LIMIT ?
                """, conversations.map { $0 as any SQLBindable } + [Millis.from(lo), Millis.from(hi), limit])
                .map { (conversation: try $0.string("conversation"), latest: try $0.date("time"), target: try $0.string("target")) }
        }
    }
}
