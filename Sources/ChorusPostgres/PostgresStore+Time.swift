import ChorusCore
import ChorusStore
import Foundation
import PostgresNIO

extension PostgresStore: TimeStore {
    // MARK: Modes

    public func modes(of account: String) throws -> [String] {
        try db.read { link in
            try link.query("SELECT mode FROM time_modes WHERE account_key = ? ORDER BY mode", [Account.key(account)]).map { try $0.string(0) }
        }
    }

    public func addMode(_ mode: String, of account: String) throws {
        try db.write { link in
            try link.execute("INSERT INTO time_modes (account_key, mode) VALUES (?, ?) ON CONFLICT DO NOTHING", [Account.key(account), mode])
        }
    }

    public func removeMode(_ mode: String, of account: String) throws -> Bool {
        try db.write { link in try link.execute("DELETE FROM time_modes WHERE account_key = ? AND mode = ?", [Account.key(account), mode]) > 0 }
    }

    // MARK: Limits and reminders

    public func timerLimit(of account: String) throws -> Int? {
        try db.read { link in
            try link.query("SELECT limit_minutes FROM time_settings WHERE account_key = ?", [Account.key(account)]).first.flatMap { try $0.int(0) }
        }
    }

    public func setTimerLimit(_ minutes: Int?, of account: String) throws {
        try db.write { link in
            try link.execute("""
                INSERT INTO time_settings (account_key, limit_minutes) VALUES (?, ?)
                ON CONFLICT (account_key) DO UPDATE SET limit_minutes = excluded.limit_minutes
                """, [Account.key(account), minutes])
        }
    }

    public func setPlanReminders(_ on: Bool, of account: String, from time: Date) throws {
        try db.write { link in
            try link.execute("""
                INSERT INTO time_settings (account_key, plan_remind, reminded_until) VALUES (?, ?, ?)
                ON CONFLICT (account_key) DO UPDATE SET plan_remind = excluded.plan_remind, reminded_until = excluded.reminded_until
                """, [Account.key(account), on, Millis.from(time)])
        }
    }

    public func planReminderAccounts() throws -> [(account: String, until: Date)] {
        try db.read { link in
            try link.query("""
                SELECT time_settings.account_key, coalesce(time_settings.reminded_until, 0) FROM time_settings
                WHERE plan_remind AND EXISTS (SELECT 1 FROM time_plan WHERE time_plan.account_key = time_settings.account_key)
                """).map { (try $0.string(0), try $0.date(1)) }
        }
    }

    public func setRemindedUntil(_ time: Date, of account: String) throws {
        try db.write { link in
            try link.execute("UPDATE time_settings SET reminded_until = ? WHERE account_key = ?", [Millis.from(time), Account.key(account)])
        }
    }

    /// When a running entry earns its nudge: its start plus its owner's limit, or `$1` minutes.
    private static let limitAt = "time_entries.start_at + coalesce(time_settings.limit_minutes, $1) * 60000"

    public func runningPastLimit(at now: Date, defaultMinutes: Int) throws -> [TimeEntry] {
        try db.read { link in
            try link.queryVersioned("time_entries", """
                SELECT \(Self.entryColumns) FROM time_entries LEFT JOIN time_settings USING (account_key)
                WHERE time_entries.end_at IS NULL AND NOT time_entries.nudged AND \(Self.limitAt) <= $2
                """, [defaultMinutes, Millis.from(now)]).map(Self.entry)
        }
    }

    public func nextTimerLimit(defaultMinutes: Int) throws -> Date? {
        try db.read { link in
            try link.query("""
                SELECT min(\(Self.limitAt)) FROM time_entries LEFT JOIN time_settings USING (account_key)
                WHERE time_entries.end_at IS NULL AND NOT time_entries.nudged
                """, [defaultMinutes]).first.flatMap { try $0.date(0) }
        }
    }

    public func markNudged(_ id: Int64) throws {
        try db.write { link in try link.execute("UPDATE time_entries SET nudged = true WHERE id = ?", [id]) }
    }

    // MARK: The weekly plan

    public func planBlocks(of account: String) throws -> [PlanBlock] {
        try db.read { link in
            try link.query("""
                SELECT id, account, mode, days, start_minute, end_minute FROM time_plan WHERE account_key = ? ORDER BY id
                """, [Account.key(account)]).map { row in
                let mask: Int = try row.int(3)
                return PlanBlock(id: try row.int64(0), account: try row.string(1), mode: try row.string(2),
                                 days: Set((1...7).filter { mask & (1 << $0) != 0 }), start: try row.int(4), end: try row.int(5))
            }
        }
    }

    public func insertPlanBlock(_ b: PlanBlock) throws -> PlanBlock {
        try db.write { link in
            // Weekdays as bits 1 (Sunday) to 7 (Saturday), as in SQLite.
            let rows = try link.query("""
                INSERT INTO time_plan (account_key, account, mode, days, start_minute, end_minute) VALUES (?, ?, ?, ?, ?, ?) RETURNING id
                """, [Account.key(b.account), b.account, b.mode, b.days.reduce(0) { $0 | (1 << $1) }, b.start, b.end])
            var saved = b
            saved.id = try rows[0].int64(0)
            return saved
        }
    }

    public func deletePlanBlock(_ id: Int64, of account: String) throws -> Bool {
        try db.write { link in try link.execute("DELETE FROM time_plan WHERE id = ? AND account_key = ?", [id, Account.key(account)]) > 0 }
    }

    // MARK: Entries

    private static let entryColumns = """
        time_entries.id, time_entries.account, time_entries.mode, time_entries.job, time_entries.room, time_entries.start_at,
        time_entries.end_at, time_entries.note, time_entries.left_at, time_entries.xmin::text
        """

    public func insertEntry(_ e: TimeEntry) throws -> TimeEntry {
        try db.write { link in
            let rows = try link.query("""
                INSERT INTO time_entries (account_key, account, mode, job, room, start_at, end_at, note, left_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """, [Account.key(e.account), e.account, e.mode, e.job, e.room, Millis.from(e.start), e.end.map(Millis.from), e.note,
                      e.leftAt.map(Millis.from)])
            var saved = e
            saved.id = try rows[0].int64(0)
            return saved
        }
    }

    public func updateEntry(_ e: TimeEntry) throws {
        try db.write { link in
            try link.updateRow("time_entries", id: e.id, set: "mode = ?, job = ?, room = ?, start_at = ?, end_at = ?, note = ?, left_at = ?",
                               [e.mode, e.job, e.room, Millis.from(e.start), e.end.map(Millis.from), e.note, e.leftAt.map(Millis.from)],
                               what: "timer \(e.id)")
        }
    }

    public func deleteEntry(_ id: Int64) throws {
        try db.write { link in try link.execute("DELETE FROM time_entries WHERE id = ?", [id]) }
    }

    public func entry(_ id: Int64) throws -> TimeEntry? {
        try db.read { link in try link.queryVersioned("time_entries", "SELECT \(Self.entryColumns) FROM time_entries WHERE id = ?", [id]).first.map(Self.entry) }
    }

    public func runningEntry(of account: String) throws -> TimeEntry? {
        try db.read { link in
            try link.queryVersioned("time_entries", "SELECT \(Self.entryColumns) FROM time_entries WHERE account_key = ? AND end_at IS NULL",
                           [Account.key(account)]).first.map(Self.entry)
        }
    }

    public func overlapping(_ account: String, from start: Date, to end: Date, now: Date, excluding: Int64?) throws -> [TimeEntry] {
        try db.read { link in
            try link.queryVersioned("time_entries", """
                SELECT \(Self.entryColumns) FROM time_entries
                WHERE account_key = ? AND start_at < ? AND coalesce(end_at, ?) > ? AND id != ?
                ORDER BY start_at LIMIT 5
                """, [Account.key(account), Millis.from(end), Millis.from(now), Millis.from(start), excluding ?? -1]).map(Self.entry)
        }
    }

    public func entries(of account: String, from: Date, to: Date) throws -> [TimeEntry] {
        try db.read { link in
            try link.queryVersioned("time_entries", """
                SELECT \(Self.entryColumns) FROM time_entries
                WHERE account_key = ? AND start_at < ? AND (end_at IS NULL OR end_at > ?)
                ORDER BY start_at
                """, [Account.key(account), Millis.from(to), Millis.from(from)]).map(Self.entry)
        }
    }

    public func seconds(onJob id: Int64) throws -> Int {
        try db.read { link in
            let ms: Int64? = try link.query("SELECT sum(end_at - start_at)::bigint FROM time_entries WHERE job = ? AND end_at IS NOT NULL",
                                            [id]).first.flatMap { try $0.int64(0) }
            return Int((ms ?? 0) / 1000)
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
        // Each entry cut to the range, a running one counted until now, summed per group in the
        // database; an entry that began more than `longest` before the range is not looked for.
        let (f, t, n) = (Millis.from(from), Millis.from(to), Millis.from(now))
        return try db.read { link in
            try link.query("""
                SELECT \(group) AS key, sum(LEAST(coalesce(end_at, $3), $2) - GREATEST(start_at, $1))::bigint AS ms FROM time_entries
                WHERE account_key = $4 AND start_at < $2 AND start_at >= $5 AND coalesce(end_at, $3) > $1
                GROUP BY 1 ORDER BY ms DESC, key
                """, [f, t, n, Account.key(account), f - Self.longest]).map(Self.total)
        }
    }

    public func roomTotals(_ room: String, from: Date, to: Date, now: Date, byJob: Bool, account: String?) throws -> [TimeTotal] {
        let (f, t, n) = (Millis.from(from), Millis.from(to), Millis.from(now))
        let group = byJob ? "CAST(job AS TEXT)" : "account"
        return try db.read { link in
            try link.query("""
                SELECT \(group) AS key, sum(LEAST(coalesce(end_at, $3), $2) - GREATEST(start_at, $1))::bigint AS ms FROM time_entries
                WHERE room = $4 AND job IS NOT NULL AND start_at < $2 AND coalesce(end_at, $3) > $1
                  AND ($5::text IS NULL OR account_key = $5)
                GROUP BY 1 ORDER BY ms DESC, key
                """, [f, t, n, Account.key(room), account.map(Account.key)]).map(Self.total)
        }
    }

    /// How far back an entry that overlaps a range may have started (as SQLite's store has it).
    private static let longest: Int64 = 31 * 24 * 3600 * 1000

    private static func total(_ row: PostgresRandomAccessRow) throws -> TimeTotal {
        TimeTotal(key: try row.string(0), seconds: Int((try row.int64(1) as Int64? ?? 0) / 1000))
    }

    private static func entry(_ row: PostgresRandomAccessRow) throws -> TimeEntry {
        TimeEntry(id: try row.int64(0), account: try row.string(1), mode: try row.string(2), job: try row.int64(3), room: try row.string(4),
                  start: try row.date(5), end: try row.date(6), note: try row.string(7), leftAt: try row.date(8))
    }
}
