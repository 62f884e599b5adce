import ChorusCore
import Foundation

/// Tracked time, written once for both databases.
public protocol SQLTimeStore: TimeStore, SQLDatabase {}

extension SQLTimeStore {
    // MARK: Modes

    public func modes(of account: String) throws -> [String] {
        try reading { c in
            try c.rows("""
                SELECT mode FROM time_modes WHERE account_key = \(Account.key(account)) ORDER BY mode
                """).map { try $0.string("mode") }
        }
    }

    public func addMode(_ mode: String, of account: String) throws {
        try writing { c in
            try c.run("INSERT INTO time_modes (account_key, mode) VALUES (\(Account.key(account)), \(mode)) ON CONFLICT DO NOTHING")
        }
    }

    public func removeMode(_ mode: String, of account: String) throws -> Bool {
        try writing { c in try c.run("DELETE FROM time_modes WHERE account_key = \(Account.key(account)) AND mode = \(mode)") > 0 }
    }

    // MARK: Limits and reminders

    public func timerLimit(of account: String) throws -> Int? {
        try reading { c in
            try c.rows("SELECT limit_minutes FROM time_settings WHERE account_key = \(Account.key(account))").first
                .flatMap { try $0.int64("limit_minutes") }.map { Int($0) }
        }
    }

    public func setTimerLimit(_ minutes: Int?, of account: String) throws {
        try writing { c in
            try c.run("""
                INSERT INTO time_settings (account_key, limit_minutes) VALUES (\(Account.key(account)), \(minutes))
                ON CONFLICT (account_key) DO UPDATE SET limit_minutes = excluded.limit_minutes
                """)
        }
    }

    public func setPlanReminders(_ on: Bool, of account: String, from time: Date) throws {
        try writing { c in
            try c.run("""
                INSERT INTO time_settings (account_key, plan_remind, reminded_until)
                VALUES (\(Account.key(account)), \(on), \(Millis.from(time)))
                ON CONFLICT (account_key) DO UPDATE SET plan_remind = excluded.plan_remind, reminded_until = excluded.reminded_until
                """)
        }
    }

    public func planReminderAccounts() throws -> [(account: String, until: Date)] {
        try reading { c in
            try c.rows("""
                SELECT time_settings.account_key, coalesce(time_settings.reminded_until, 0) AS reminded FROM time_settings
                WHERE plan_remind AND EXISTS (SELECT 1 FROM time_plan WHERE time_plan.account_key = time_settings.account_key)
                """).map { (try $0.string("account_key"), try $0.date("reminded")) }
        }
    }

    public func setRemindedUntil(_ time: Date, of account: String) throws {
        try writing { c in
            try c.run("UPDATE time_settings SET reminded_until = \(Millis.from(time)) WHERE account_key = \(Account.key(account))")
        }
    }

    /// When a running entry earns its nudge: its start plus its owner's limit, or the default's minutes.
    private static func limitAt(_ defaultMinutes: Int) -> SQL {
        "time_entries.start_at + coalesce(time_settings.limit_minutes, \(defaultMinutes)) * 60000"
    }

    public func runningPastLimit(at now: Date, defaultMinutes: Int) throws -> [TimeEntry] {
        try reading { c in
            try c.rowsToChange("time_entries", """
                SELECT \(raw: Self.entryColumns)\(raw: c.dialect.rowVersion("time_entries"))
                FROM time_entries LEFT JOIN time_settings USING (account_key)
                WHERE time_entries.end_at IS NULL AND NOT time_entries.nudged AND \(Self.limitAt(defaultMinutes)) <= \(Millis.from(now))
                """).map(Self.entry)
        }
    }

    public func nextTimerLimit(defaultMinutes: Int) throws -> Date? {
        try reading { c in
            try c.rows("""
                SELECT min(\(Self.limitAt(defaultMinutes))) AS due FROM time_entries LEFT JOIN time_settings USING (account_key)
                WHERE time_entries.end_at IS NULL AND NOT time_entries.nudged
                """).first.flatMap { try $0.date("due") }
        }
    }

    public func markNudged(_ id: Int64) throws {
        try writing { c in try c.run("UPDATE time_entries SET nudged = \(true) WHERE id = \(id)") }
    }

    // MARK: The weekly plan

    public func planBlocks(of account: String) throws -> [PlanBlock] {
        try reading { c in
            try c.rows("""
                SELECT id, account, mode, days, start_minute, end_minute FROM time_plan
                WHERE account_key = \(Account.key(account)) ORDER BY id
                """).map { row in
                let mask = try row.int("days")
                return PlanBlock(id: try row.int64("id"), account: try row.string("account"), mode: try row.string("mode"),
                                 days: Set((1...7).filter { mask & (1 << $0) != 0 }), start: try row.int("start_minute"),
                                 end: try row.int("end_minute"))
            }
        }
    }

    public func insertPlanBlock(_ b: PlanBlock) throws -> PlanBlock {
        try writing { c in
            // Weekdays as bits 1 (Sunday) to 7 (Saturday).
            let id = try c.insert("""
                INSERT INTO time_plan (account_key, account, mode, days, start_minute, end_minute)
                VALUES (\(Account.key(b.account)), \(b.account), \(b.mode), \(b.days.reduce(0) { $0 | (1 << $1) }),
                  \(b.start), \(b.end))
                """)
            var saved = b
            saved.id = id
            return saved
        }
    }

    public func deletePlanBlock(_ id: Int64, of account: String) throws -> Bool {
        try writing { c in try c.run("DELETE FROM time_plan WHERE id = \(id) AND account_key = \(Account.key(account))") > 0 }
    }

    // MARK: Entries

    /// The id first and nothing after the note's times: a versioned read adds the row's version last.
    private static var entryColumns: String {
        """
        time_entries.id, time_entries.account, time_entries.mode, time_entries.job, time_entries.room, time_entries.start_at,
        time_entries.end_at, time_entries.note, time_entries.left_at
        """
    }

    public func insertEntry(_ e: TimeEntry) throws -> TimeEntry {
        try writing { c in
            let id = try c.insert("""
                INSERT INTO time_entries (account_key, account, mode, job, room, start_at, end_at, note, left_at)
                VALUES (\(Account.key(e.account)), \(e.account), \(e.mode), \(e.job), \(e.room),
                  \(Millis.from(e.start)), \(e.end.map(Millis.from)), \(e.note), \(e.leftAt.map(Millis.from)))
                """)
            var saved = e
            saved.id = id
            return saved
        }
    }

    public func updateEntry(_ e: TimeEntry) throws {
        try writing { c in
            try c.change("time_entries", id: e.id, set: """
                mode = \(e.mode), job = \(e.job), room = \(e.room), start_at = \(Millis.from(e.start)), end_at = \(e.end.map(Millis.from)),
                note = \(e.note), left_at = \(e.leftAt.map(Millis.from))
                """, what: "timer \(e.id)")
        }
    }

    public func deleteEntry(_ id: Int64) throws {
        try writing { c in try c.run("DELETE FROM time_entries WHERE id = \(id)") }
    }

    public func entry(_ id: Int64) throws -> TimeEntry? {
        try entries(where: "id = \(id)").first
    }

    public func runningEntry(of account: String) throws -> TimeEntry? {
        try entries(where: "account_key = \(Account.key(account)) AND end_at IS NULL").first
    }

    public func overlapping(_ account: String, from start: Date, to end: Date, now: Date, excluding: Int64?) throws -> [TimeEntry] {
        try entries(where: """
            account_key = \(Account.key(account)) AND start_at < \(Millis.from(end)) AND coalesce(end_at, \(Millis.from(now))) > \(Millis.from(start))
              AND id != \(excluding ?? -1) ORDER BY start_at LIMIT 5
            """)
    }

    public func entries(of account: String, from: Date, to: Date) throws -> [TimeEntry] {
        try entries(where: """
            account_key = \(Account.key(account)) AND start_at < \(Millis.from(to)) AND (end_at IS NULL OR end_at > \(Millis.from(from)))
            ORDER BY start_at
            """)
    }

    /// Entries, read to be changed: the board edits what it reads.
    private func entries(where condition: SQL) throws -> [TimeEntry] {
        try reading { c in
            try c.rowsToChange("time_entries", """
                SELECT \(raw: Self.entryColumns)\(raw: c.dialect.rowVersion("time_entries")) FROM time_entries WHERE \(condition)
                """).map(Self.entry)
        }
    }

    public func seconds(onJob id: Int64) throws -> Int {
        try reading { c in
            let ms: Int64? = try c.rows("""
                SELECT CAST(sum(end_at - start_at) AS BIGINT) AS ms FROM time_entries
                WHERE job = \(id) AND end_at IS NOT NULL
                """).first.flatMap { try $0.int64("ms") }
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
        // database. An entry that began before the range is found by the index too: none lasts
        // more than `longest` (the scan starts that much earlier).
        let (f, t, n) = (Millis.from(from), Millis.from(to), Millis.from(now))
        return try reading { c in
            try c.rows("""
                SELECT \(raw: group) AS key, CAST(sum(\(raw: c.dialect.least)(coalesce(end_at, \(n)),
                  \(t)) - \(raw: c.dialect.greatest)(start_at, \(f))) AS BIGINT) AS ms
                FROM time_entries
                WHERE account_key = \(Account.key(account))
                AND start_at < \(t)
                AND start_at >= \(f - Self.longest)
                AND coalesce(end_at, \(n)) > \(f)
                GROUP BY 1 ORDER BY ms DESC, key
                """).map(Self.total)
        }
    }

    public func roomTotals(_ room: String, from: Date, to: Date, now: Date, byJob: Bool, account: String?) throws -> [TimeTotal] {
        let (f, t, n) = (Millis.from(from), Millis.from(to), Millis.from(now))
        let group = byJob ? "CAST(job AS TEXT)" : "account"
        let who = account.map(Account.key)
        return try reading { c in
            try c.rows("""
                SELECT \(raw: group) AS key, CAST(sum(\(raw: c.dialect.least)(coalesce(end_at, \(n)),
                  \(t)) - \(raw: c.dialect.greatest)(start_at, \(f))) AS BIGINT) AS ms
                FROM time_entries
                WHERE room = \(Account.key(room)) AND job IS NOT NULL AND start_at < \(t) AND coalesce(end_at, \(n)) > \(f)
                  AND (CAST(\(who) AS TEXT) IS NULL OR account_key = \(who))
                GROUP BY 1 ORDER BY ms DESC, key
                """).map(Self.total)
        }
    }

    /// How far back an entry that overlaps a range may have started: a timer left running for a
    /// month is still counted, and the index scan stays short.
    private static var longest: Int64 { 31 * 24 * 3600 * 1000 }

    private static func total(_ row: any SQLRow) throws -> TimeTotal {
        TimeTotal(key: try row.string("key"), seconds: Int((try row.int64("ms") as Int64? ?? 0) / 1000))
    }

    private static func entry(_ row: any SQLRow) throws -> TimeEntry {
        TimeEntry(id: try row.int64("id"), account: try row.string("account"), mode: try row.string("mode"), job: try row.int64("job"),
                  room: try row.string("room"), start: try row.date("start_at"), end: try row.date("end_at"), note: try row.string("note"),
                  leftAt: try row.date("left_at"))
    }
}
