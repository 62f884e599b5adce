import ChorusCore
import Foundation

/// An account's tokens, and what it has seen: written once for both databases.
public protocol SQLAccountStore: Store, SQLDatabase {}

extension SQLAccountStore {
    // MARK: Tokens

    public func insertToken(_ token: AccountToken) throws -> AccountToken {
        try writing { c in
            let id = try c.insert("""
                INSERT INTO account_tokens (account, label, digest, created_at)
                VALUES (\(token.account), \(token.label), \(token.digest), \(Millis.from(token.createdAt)))
                """)
            var saved = token
            saved.id = id
            return saved
        }
    }

    public func tokens(of account: String) throws -> [AccountToken] {
        try reading { c in try c.rows("\(raw: Self.selectTokens) WHERE account = \(Account.key(account)) ORDER BY id").map(Self.token) }
    }

    public func token(withDigest digest: String) throws -> AccountToken? {
        try reading { c in try c.rows("\(raw: Self.selectTokens) WHERE digest = \(digest)").first.map(Self.token) }
    }

    public func deleteToken(_ id: Int64, of account: String) throws -> Bool {
        try writing { c in try c.run("DELETE FROM account_tokens WHERE id = \(id) AND account = \(Account.key(account))") > 0 }
    }

    public func noteTokenUse(_ id: Int64, at time: Date) throws {
        try writing { c in try c.run("UPDATE account_tokens SET last_used_at = \(Millis.from(time)) WHERE id = \(id)") }
    }

    private static var selectTokens: String { "SELECT id, account, label, digest, created_at, last_used_at FROM account_tokens" }

    private static func token(_ row: any SQLRow) throws -> AccountToken {
        AccountToken(id: try row.int64("id"), account: try row.string("account"), label: try row.string("label"),
                     digest: try row.string("digest"), createdAt: try row.date("created_at"), lastUsedAt: try row.date("last_used_at"))
    }

    // MARK: Server keys

    public func sharedKey(_ name: String, proposing proposed: Data) throws -> Data {
        try writing { c in
            try c.run("""
                INSERT INTO server_keys (name, value)
                VALUES (\(name), \(proposed.base64EncodedString())) ON CONFLICT (name) DO NOTHING
                """)
            let stored = try c.rows("SELECT value FROM server_keys WHERE name = \(name)").first?.string("value")
            guard let stored, let key = Data(base64Encoded: stored) else { throw StoreError.notFound("server key \(name)") }
            return key
        }
    }

    // MARK: Calendar feeds

    public func insertCalendarFeed(_ feed: CalendarFeed) throws -> CalendarFeed {
        try writing { c in
            var saved = feed
            saved.id = try c.insert("""
                INSERT INTO calendar_feeds (account, room, created_at)
                VALUES (\(feed.account), \(feed.room), \(Millis.from(feed.createdAt)))
                """)
            return saved
        }
    }

    public func calendarFeeds(of account: String) throws -> [CalendarFeed] {
        try reading { c in try c.rows("\(raw: Self.selectFeeds) WHERE account = \(Account.key(account)) ORDER BY id").map(Self.feed) }
    }

    public func calendarFeed(_ id: Int64) throws -> CalendarFeed? {
        try reading { c in try c.rows("\(raw: Self.selectFeeds) WHERE id = \(id)").first.map(Self.feed) }
    }

    public func deleteCalendarFeed(_ id: Int64, of account: String) throws -> Bool {
        try writing { c in try c.run("DELETE FROM calendar_feeds WHERE id = \(id) AND account = \(Account.key(account))") > 0 }
    }

    private static var selectFeeds: String { "SELECT id, account, room, created_at FROM calendar_feeds" }

    private static func feed(_ row: any SQLRow) throws -> CalendarFeed {
        CalendarFeed(id: try row.int64("id"), account: try row.string("account"), room: try row.string("room"),
                     createdAt: try row.date("created_at"))
    }

    // MARK: What each account has seen

    /// When the account's last connection ended: what a login catches up on.
    public func lastSeen(of account: String) throws -> Date? {
        try reading { c in
            try c.rows("SELECT last_seen FROM account_presence WHERE account_key = \(account)").first.flatMap { try $0.date("last_seen") }
        }
    }

    public func setLastSeen(of account: String, at time: Date) throws {
        try writing { c in
            // Not for a deleted account: its last connection ends after it is deleted.
            try c.run("""
                INSERT INTO account_presence (account_key, last_seen)
                SELECT \(account), \(Millis.from(time)) WHERE EXISTS (SELECT 1 FROM accounts WHERE key = \(account) AND deleted_at IS NULL)
                ON CONFLICT (account_key) DO UPDATE SET last_seen = excluded.last_seen
                """)
        }
    }

    /// The IRCv3 read markers its clients keep in step (`MARKREAD`).
    public func readMarker(of account: String, in target: String) throws -> Date? {
        try reading { c in
            try c.rows("""
                SELECT at FROM read_markers WHERE account_key = \(account) AND target = \(target)
                """).first.flatMap { try $0.date("at") }
        }
    }

    public func allReadMarkers() throws -> [(account: String, target: String, at: Date)] {
        try reading { c in
            try c.rows("SELECT account_key, target, at FROM read_markers").map {
                (try $0.string("account_key"), try $0.string("target"), try $0.date("at"))
            }
        }
    }

    /// A marker only moves forward: the later of the stored one and `time`, which is returned.
    public func markRead(of account: String, in target: String, at time: Date) throws -> Date {
        try writing { c in
            try c.rows("""
                INSERT INTO read_markers (account_key, target, at) VALUES (\(account), \(target), \(Millis.from(time)))
                ON CONFLICT (account_key, target) DO UPDATE SET at = \(raw: c.dialect.greatest)(read_markers.at, excluded.at)
                RETURNING at
                """).first.flatMap { try $0.date("at") } ?? time
        }
    }
}
