import ChorusCore
import ChorusSQL
import Foundation
import GRDB

extension SQLiteStore {
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
}
