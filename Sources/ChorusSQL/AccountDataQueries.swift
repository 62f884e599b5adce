import ChorusCore
import Foundation

/// An account's end and its data (`AccountData`): retiring it, erasing what is personal, exporting
/// every row that is its own or names it as a party.
extension SQLRoomStore {
    public func deleteAccount(named name: String) throws -> Bool {
        let key = Account.key(name)
        return try writing { c in
            // The row stays, wiped, as a tombstone: the name is never given to anyone else.
            guard try c.run("""
                UPDATE accounts
                SET deleted_at = \(Millis.from(Date())), password_hash = '', email = NULL, first_name = NULL,
                  last_name = NULL
                WHERE key = \(key) AND deleted_at IS NULL
                """) > 0 else { return false }
            for table in ["held_lines WHERE account", "account_tokens WHERE account", "contractor_skills WHERE account_key",
                          "contractors WHERE account_key", "account_presence WHERE account_key", "read_markers WHERE account_key",
                          "memberships WHERE account", "account_settings WHERE account", "queued_events WHERE account",
                          "calendar_feeds WHERE account", "push_subscriptions WHERE account"] {
                try c.run("DELETE FROM \(raw: table) = \(key)")
            }
            forgetAll()
            return true
        }
    }

    public func eraseAccount(named name: String) throws -> Bool {
        let key = Account.key(name)
        return try writing { c in
            guard try !c.rows("SELECT 1 AS one FROM accounts WHERE key = \(key) AND deleted_at IS NOT NULL").isEmpty else { return false }
            let conversations = Self.privateConversations(of: key)
            try c.run("DELETE FROM held_lines WHERE msgid IN (SELECT msgid FROM history WHERE \(conversations))")
            try c.run("DELETE FROM history WHERE \(conversations)")
            for table in ["time_entries", "time_modes", "time_plan", "time_settings"] {
                try c.run("DELETE FROM \(raw: table) WHERE account_key = \(key)")
            }
            forgetAll()
            return true
        }
    }

    public func accountDeleted(named name: String) throws -> Date? {
        try reading { c in
            try c.rows("""
                SELECT deleted_at FROM accounts WHERE key = \(Account.key(name)) AND deleted_at IS NOT NULL
                """).first?.date("deleted_at")
        }
    }

    public func accountsDeleted(after time: Date) throws -> [String] {
        try reading { c in
            try c.rows("SELECT key FROM accounts WHERE deleted_at > \(Millis.from(time)) ORDER BY deleted_at").map { try $0.string("key") }
        }
    }

    public func exportAccount(named name: String) throws -> AccountData? {
        let key = Account.key(name)
        return try reading { c in
            guard try !c.rows("SELECT 1 AS one FROM accounts WHERE key = \(key)").isEmpty else { return nil }
            var data = AccountData(tables: [:])
            for part in Self.exported(key) {
                let columns = part.columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let selected = columns.map { $0 == "window" ? "\"window\"" : $0 }.joined(separator: ", ")
                data.tables[part.table] = try c.rows("""
                    SELECT \(raw: selected) FROM \(raw: part.table) WHERE \(part.condition) ORDER BY 1
                    """).map { row in
                    Dictionary(uniqueKeysWithValues: try columns.map { ($0, try Self.value(row, $0)) })
                }
            }
            return data
        }
    }

    /// What the export reads: each table, the columns worth giving (never a password hash or a
    /// token's digest), and which rows are the account's or name it as a party.
    private static func exported(_ key: String) -> [(table: String, columns: String, condition: SQL)] {
        let conversations = privateConversations(of: key)
        return [
            ("accounts", "name, email, first_name, last_name, created_at, deleted_at", "key = \(key)"),
            ("account_settings", "time_zone", "account = \(key)"),
            ("account_tokens", "id, label, created_at, last_used_at", "account = \(key)"),
            ("calendar_feeds", "id, room, created_at", "account = \(key)"),
            ("photos", "id, kind, created_at", "account = \(key)"),
            ("push_subscriptions", "id, endpoint, created_at", "account = \(key)"),
            ("account_presence", "last_seen", "account_key = \(key)"),
            ("memberships", "room, role, voiced, since, away_until", "account = \(key)"),
            ("read_markers", "target, at", "account_key = \(key)"),
            ("history", "conversation, msgid, time, command, source, target, text",
             "lower(account) = \(key) OR \(conversations)"),
            ("jobs", "id, room, title, description, status, creator, assignee, due, created_at, updated_at, tasks, photos",
             "creator_key = \(key) OR assignee_key = \(key)"),
            ("comments", "id, job, author, text, at", "lower(author) = \(key)"),
            ("service_requests", "id, customer, category, description, window, window_end, budget, place, estimate, status, contractor, created_at, updated_at",
             "customer_key = \(key) OR contractor_key = \(key)"),
            ("offers", "request, contractor, price, note, at", "contractor_key = \(key)"),
            ("reviews", "request, customer, contractor, rating, text, reply, at", "contractor_key = \(key) OR lower(customer) = \(key)"),
            ("contractors", "account, active, skills, rate, area, bio", "account_key = \(key)"),
            ("time_entries", "id, mode, job, room, start_at, end_at, note", "account_key = \(key)"),
            ("time_modes", "mode", "account_key = \(key)"),
            ("time_plan", "id, mode, days, start_minute, end_minute", "account_key = \(key)"),
            ("time_settings", "limit_minutes, plan_remind, reminded_until", "account_key = \(key)"),
        ]
    }

    /// The account's private conversations (`HistoryEntry.conversation`: `@a b`, the two keys in
    /// order), as a condition on `conversation`.
    private static func privateConversations(of key: String) -> SQL {
        let escaped = key.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
        let (first, second) = ("@" + escaped + " %", "@% " + escaped)
        return "(conversation LIKE \(first) ESCAPE '\\' OR conversation LIKE \(second) ESCAPE '\\')"
    }

    /// A column's value, whatever its type in either database.
    private static func value(_ row: any SQLRow, _ column: String) throws -> AccountData.Value {
        do {
            let n: Int64? = try row.int64(column)
            return n.map { .integer($0) } ?? .null
        } catch {}
        do {
            let s: String? = try row.string(column)
            return s.map { .text($0) } ?? .null
        } catch {}
        do {
            let b: Bool? = try row.bool(column)
            return b.map { .bool($0) } ?? .null
        } catch {}
        let d: Double? = try row.double(column)
        return d.map { .real($0) } ?? .null
    }
}
