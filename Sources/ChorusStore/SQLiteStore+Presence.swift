import ChorusCore
import Foundation
import GRDB
import ChorusSQL

/// What each account has seen: when its last connection ended (what a login catches up on), and
/// the IRCv3 read markers its clients keep in step (`MARKREAD`).
extension SQLiteStore {
    public func lastSeen(of account: String) throws -> Date? {
        try db.read { db in
            try Int64.fetchOne(db, sql: "SELECT last_seen FROM account_presence WHERE account_key = ?", arguments: [account])
                .map(Millis.date)
        }
    }

    public func setLastSeen(of account: String, at time: Date) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO account_presence (account_key, last_seen) VALUES (?, ?)
                ON CONFLICT(account_key) DO UPDATE SET last_seen = excluded.last_seen
                """, arguments: [account, Millis.from(time)])
        }
    }

    public func readMarker(of account: String, in target: String) throws -> Date? {
        try db.read { db in
            try Int64.fetchOne(db, sql: "SELECT at FROM read_markers WHERE account_key = ? AND target = ?", arguments: [account, target])
                .map(Millis.date)
        }
    }

    public func allReadMarkers() throws -> [(account: String, target: String, at: Date)] {
        try db.read { db in
            try Row.fetchAll(db, sql: "SELECT account_key, target, at FROM read_markers").map { ($0[0], $0[1], Millis.date($0[2])) }
        }
    }

    public func markRead(of account: String, in target: String, at time: Date) throws -> Date {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO read_markers (account_key, target, at) VALUES (?, ?, ?)
                ON CONFLICT(account_key, target) DO UPDATE SET at = max(at, excluded.at)
                """, arguments: [account, target, Millis.from(time)])
            return try Int64.fetchOne(db, sql: "SELECT at FROM read_markers WHERE account_key = ? AND target = ?",
                                      arguments: [account, target]).map(Millis.date) ?? time
        }
    }
}
