import ChorusCore
import Foundation
import GRDB

extension SQLiteStore: TimeStore {
    // MARK: Modes

    public func modes(of account: String) throws -> [String] {
        try db.read { db in
            try String.fetchAll(cached: db, sql: "SELECT mode FROM time_modes WHERE account_key = ? ORDER BY mode",
                                arguments: [Account.key(account)])
        }
    }

    public func addMode(_ mode: String, of account: String) throws {
        try db.write { db in
            try db.run(sql: "INSERT OR IGNORE INTO time_modes (account_key, mode) VALUES (?, ?)", arguments: [Account.key(account), mode])
        }
    }

    public func removeMode(_ mode: String, of account: String) throws -> Bool {
        try db.write { db in
            try db.run(sql: "DELETE FROM time_modes WHERE account_key = ? AND mode = ?", arguments: [Account.key(account), mode])
            return db.changesCount > 0
        }
    }

    // MARK: Limits

    public func timerLimit(of account: String) throws -> Int? {
        try db.read { db in
            try Int.fetchOne(cached: db, sql: "SELECT limit_minutes FROM time_settings WHERE account_key = ?", arguments: [Account.key(account)])
        }
    }

    public func setTimerLimit(_ minutes: Int?, of account: String) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO time_settings (account_key, limit_minutes) VALUES (?, ?)
                ON CONFLICT(account_key) DO UPDATE SET limit_minutes = excluded.limit_minutes
                """, arguments: [Account.key(account), minutes])
        }
    }

    public func setPlanReminders(_ on: Bool, of account: String, from time: Date) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO time_settings (account_key, plan_remind, reminded_until) VALUES (?, ?, ?)
                ON CONFLICT(account_key) DO UPDATE SET plan_remind = excluded.plan_remind, reminded_until = excluded.reminded_until
                """, arguments: [Account.key(account), on, Millis.from(time)])
        }
    }

    public func planReminderAccounts() throws -> [(account: String, until: Date)] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: """
                SELECT time_settings.account_key, time_settings.reminded_until FROM time_settings
                WHERE plan_remind AND EXISTS (SELECT 1 FROM time_plan WHERE time_plan.account_key = time_settings.account_key)
                """).map { row in (row[0], Millis.date(row[1] as Int64? ?? 0)) }
        }
    }

    public func setRemindedUntil(_ time: Date, of account: String) throws {
        try db.write { db in
            try db.run(sql: "UPDATE time_settings SET reminded_until = ? WHERE account_key = ?", arguments: [Millis.from(time), Account.key(account)])
        }
    }

    /// Running, not nudged, with each owner's limit: the few timers running now, by the partial index.
    private static let limitExpression = "time_entries.start_at + coalesce(time_settings.limit_minutes, ?) * 60000"

    public func runningPastLimit(at now: Date, defaultMinutes: Int) throws -> [TimeEntry] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: """
                SELECT \(Self.entryColumns.split(separator: ",").map { "time_entries." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
                FROM time_entries LEFT JOIN time_settings USING (account_key)
                WHERE time_entries.end_at IS NULL AND NOT time_entries.nudged AND \(Self.limitExpression) <= ?
                """, arguments: [defaultMinutes, Millis.from(now)]).map(Self.entry)
        }
    }

    public func nextTimerLimit(defaultMinutes: Int) throws -> Date? {
        try db.read { db in
            try Int64.fetchOne(cached: db, sql: """
                SELECT min(\(Self.limitExpression)) FROM time_entries LEFT JOIN time_settings USING (account_key)
                WHERE time_entries.end_at IS NULL AND NOT time_entries.nudged
                """, arguments: [defaultMinutes]).map(Millis.date)
        }
    }

    public func markNudged(_ id: Int64) throws {
        try db.write { db in try db.run(sql: "UPDATE time_entries SET nudged = 1 WHERE id = ?", arguments: [id]) }
    }

    // MARK: The weekly plan

    public func planBlocks(of account: String) throws -> [PlanBlock] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: """
                SELECT id, account, mode, days, start_minute, end_minute FROM time_plan WHERE account_key = ? ORDER BY id
                """, arguments: [Account.key(account)]).map { row in
                let mask: Int = row[3]
                return PlanBlock(id: row[0], account: row[1], mode: row[2], days: Set((1...7).filter { mask & (1 << $0) != 0 }),
                                 start: row[4], end: row[5])
            }
        }
    }

    public func insertPlanBlock(_ b: PlanBlock) throws -> PlanBlock {
        try db.write { db in
            // Weekdays as bits 1 (Sunday) to 7 (Saturday).
            try db.run(sql: "INSERT INTO time_plan (account_key, account, mode, days, start_minute, end_minute) VALUES (?, ?, ?, ?, ?, ?)",
                       arguments: [Account.key(b.account), b.account, b.mode, b.days.reduce(0) { $0 | (1 << $1) }, b.start, b.end])
            var saved = b
            saved.id = db.lastInsertedRowID
            return saved
        }
    }

    public func deletePlanBlock(_ id: Int64, of account: String) throws -> Bool {
        try db.write { db in
            try db.run(sql: "DELETE FROM time_plan WHERE id = ? AND account_key = ?", arguments: [id, Account.key(account)])
            return db.changesCount > 0
        }
    }

    // MARK: Entries

    public func insertEntry(_ e: TimeEntry) throws -> TimeEntry {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO time_entries (account_key, account, mode, job, room, start_at, end_at, note, left_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [Account.key(e.account), e.account, e.mode, e.job, e.room, Millis.from(e.start), e.end.map(Millis.from), e.note,
                                 e.leftAt.map(Millis.from)])
            var saved = e
            saved.id = db.lastInsertedRowID
            return saved
        }
    }

    public func updateEntry(_ e: TimeEntry) throws {
        try db.write { db in
            try db.run(sql: "UPDATE time_entries SET mode = ?, job = ?, room = ?, start_at = ?, end_at = ?, note = ?, left_at = ? WHERE id = ?",
                       arguments: [e.mode, e.job, e.room, Millis.from(e.start), e.end.map(Millis.from), e.note, e.leftAt.map(Millis.from), e.id])
        }
    }

    public func deleteEntry(_ id: Int64) throws {
        try db.write { db in try db.run(sql: "DELETE FROM time_entries WHERE id = ?", arguments: [id]) }
    }

    public func entry(_ id: Int64) throws -> TimeEntry? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT \(Self.entryColumns) FROM time_entries WHERE id = ?", arguments: [id]).map(Self.entry)
        }
    }

    public func runningEntry(of account: String) throws -> TimeEntry? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT \(Self.entryColumns) FROM time_entries WHERE account_key = ? AND end_at IS NULL",
                             arguments: [Account.key(account)]).map(Self.entry)
        }
    }

    public func overlapping(_ account: String, from start: Date, to end: Date, now: Date, excluding: Int64?) throws -> [TimeEntry] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: """
                SELECT \(Self.entryColumns) FROM time_entries
                WHERE account_key = ? AND start_at < ? AND coalesce(end_at, ?) > ? AND id != ?
                ORDER BY start_at LIMIT 5
                """, arguments: [Account.key(account), Millis.from(end), Millis.from(now), Millis.from(start), excluding ?? -1]).map(Self.entry)
        }
    }

    public func entries(of account: String, from: Date, to: Date) throws -> [TimeEntry] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: """
                SELECT \(Self.entryColumns) FROM time_entries
                WHERE account_key = ? AND start_at < ? AND (end_at IS NULL OR end_at > ?)
                ORDER BY start_at
                """, arguments: [Account.key(account), Millis.from(to), Millis.from(from)]).map(Self.entry)
        }
    }

    public func seconds(onJob id: Int64) throws -> Int {
        try db.read { db in
            Int((try Int64.fetchOne(cached: db, sql: "SELECT sum(end_at - start_at) FROM time_entries WHERE job = ? AND end_at IS NOT NULL",
                                    arguments: [id]) ?? 0) / 1000)
        }
    }

    public func totals(of account: String, from: Date, to: Date, now: Date, by grouping: TimeGrouping) throws -> [TimeTotal] {
        let group: String
        switch grouping {
        case .mode: group = "mode"
        case .job: group = "coalesce(CAST(job AS TEXT), '')"
        case .room: group = "coalesce(room, '')"
        case .person: group = "account"
        }
        // Each entry cut to the range, a running one counted until now; summed per group in SQLite.
        // An entry that began before the range is found by the index too: none lasts more than
        // `longest` (the scan starts that much earlier).
        let (f, t, n) = (Millis.from(from), Millis.from(to), Millis.from(now))
        return try db.read { db in
            try Row.fetchAll(cached: db, sql: """
                SELECT \(group) AS key, sum(min(coalesce(end_at, ?3), ?2) - max(start_at, ?1)) AS ms FROM time_entries
                WHERE account_key = ?4 AND start_at < ?2 AND start_at >= ?5 AND coalesce(end_at, ?3) > ?1
                GROUP BY key ORDER BY ms DESC, key
                """, arguments: [f, t, n, Account.key(account), f - Self.longest]).map { row in
                TimeTotal(key: row[0], seconds: Int((row[1] as Int64? ?? 0) / 1000))
            }
        }
    }

    public func roomTotals(_ room: String, from: Date, to: Date, now: Date, byJob: Bool, account: String?) throws -> [TimeTotal] {
        let (f, t, n) = (Millis.from(from), Millis.from(to), Millis.from(now))
        let group = byJob ? "CAST(job AS TEXT)" : "account"
        return try db.read { db in
            try Row.fetchAll(cached: db, sql: """
                SELECT \(group) AS key, sum(min(coalesce(end_at, ?3), ?2) - max(start_at, ?1)) AS ms FROM time_entries
                WHERE room = ?4 AND job IS NOT NULL AND start_at < ?2 AND coalesce(end_at, ?3) > ?1 AND (?5 IS NULL OR account_key = ?5)
                GROUP BY key ORDER BY ms DESC, key
                """, arguments: [f, t, n, Account.key(room), account.map(Account.key)]).map { row in
                TimeTotal(key: row[0], seconds: Int((row[1] as Int64? ?? 0) / 1000))
            }
        }
    }

    /// How far back an entry that overlaps a range may have started: a timer left running for a
    /// month is still counted, and the index scan stays short.
    private static let longest: Int64 = 31 * 24 * 3600 * 1000

    private static let entryColumns = "id, account, mode, job, room, start_at, end_at, note, left_at"

    private static func entry(_ row: Row) -> TimeEntry {
        TimeEntry(id: row[0], account: row[1], mode: row[2], job: row[3], room: row[4], start: Millis.date(row[5]),
                  end: (row[6] as Int64?).map(Millis.date), note: row[7], leftAt: (row[8] as Int64?).map(Millis.date))
    }
}
