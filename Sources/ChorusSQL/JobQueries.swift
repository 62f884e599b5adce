import ChorusCore
import Foundation

/// Jobs, their comments and asks, room settings, roles, time zones and the events the boards
/// write, for both databases.
public protocol SQLJobStore: JobStore, SQLDatabase {}

extension SQLJobStore {
    // MARK: Roles and room settings

    public func role(of account: String, in room: String) throws -> Role? {
        let read = {
            try reading { c in
                try c.rows("SELECT role FROM memberships WHERE room = \(Account.key(room)) AND account = \(Account.key(account))")
                    .first.flatMap { Role(rawValue: try $0.string("role")) }
            }
        }
        guard let cache else { return try read() }
        return try cache.role(StoreCache.Entries.roleKey(account, room), read: read)
    }

    public func roomSettings(_ room: String) throws -> RoomSettings {
        let read = {
            try reading { c in
                var settings = RoomSettings()
                if let row = try c.rows("""
                    SELECT visibility, creators, echo_commands, market, open FROM room_settings
                    WHERE room = \(Account.key(room))
                    """).first {
                    settings.visibility = RoomSettings.Visibility(rawValue: try row.string("visibility")) ?? .all
                    settings.creators = RoomSettings.Creators(rawValue: try row.string("creators")) ?? .everyone
                    settings.echoCommands = try row.bool("echo_commands")
                    settings.market = try row.bool("market")
                    settings.open = try row.bool("open")
                }
                return settings
            }
        }
        guard let cache else { return try read() }
        return try cache.settings(Account.key(room), read: read)
    }

    public func saveRoomSettings(_ settings: RoomSettings, room: String, event: Event) throws -> Event {
        try writing { c in
            try c.run("""
                INSERT INTO room_settings (room, visibility, creators, echo_commands, market, open)
                VALUES (\(Account.key(room)), \(settings.visibility.rawValue), \(settings.creators.rawValue),
                  \(settings.echoCommands), \(settings.market), \(settings.open))
                ON CONFLICT (room) DO UPDATE SET visibility = excluded.visibility, creators = excluded.creators,
                  echo_commands = excluded.echo_commands, market = excluded.market, open = excluded.open
                """)
            forget { $0.settings[Account.key(room)] = nil }
            return try EventRows.insert(event, c)
        }
    }

    // MARK: Jobs

    /// The id first: a versioned read adds the row's version last.
    private static var jobColumns: String { "id, room, title, description, status, creator, assignee, due, created_at, updated_at, tasks, photos" }

    public func job(_ id: Int64) throws -> Job? {
        let read = {
            try reading { c in
                try c.rowsToChange("jobs", "SELECT \(raw: Self.jobColumns)\(raw: c.dialect.rowVersion("jobs")) FROM jobs WHERE id = \(id)")
                    .first.map(Self.job)
            }
        }
        guard let cache, inTransaction else { return try read() }
        return try cache.job(id, read: read)
    }

    public func insertJob(_ job: Job, event: Event) throws -> (Job, Event) {
        try writing { c in
            // The job and its event, which names it: one round trip where the driver can.
            let (id, saved) = try c.insert("INSERT INTO jobs (\(raw: Self.jobWritten)) VALUES (\(list: Self.values(of: job)))",
                                           event: event, eventJob: true)
            var added = job
            added.id = id
            return (added, saved)
        }
    }

    public func updateJob(_ job: Job, events: [Event]) throws -> [Event] {
        try writing { c in
            forget { $0.jobs[job.id] = nil }
            return try c.change("jobs", id: job.id, set: .assignments(Self.jobWritten, Self.values(of: job)), what: "job \(job.id)",
                                events: events)
        }
    }

    public func jobs(_ filter: JobFilter) throws -> [Job] {
        try reading { c in
            let condition = StoredFilters.jobs(filter, like: c.dialect.like)
            return try c.rowsToChange("jobs", """
                SELECT \(raw: Self.jobColumns)\(raw: c.dialect.rowVersion("jobs")) FROM jobs WHERE \(condition)
                ORDER BY id DESC LIMIT \(filter.limit) OFFSET \(filter.offset)
                """).map(Self.job)
        }
    }

    public func countJobs(_ filter: JobFilter) throws -> Int {
        try reading { c in
            let condition = StoredFilters.jobs(filter, like: c.dialect.like)
            return try c.rows("SELECT count(*) AS n FROM jobs WHERE \(condition)").first?.int("n") ?? 0
        }
    }

    /// What a job's row holds, in the order of `values(of:)`.
    private static var jobWritten: String {
        """
        room, title, description, status, creator, creator_key, assignee, assignee_key, due, created_at, updated_at, tasks, photos
        """
    }

    private static func values(of job: Job) -> [any SQLBindable] {
        [job.room, job.title, job.description, job.status.rawValue, job.creator, Account.key(job.creator),
         job.assignee, job.assignee.map(Account.key), job.due.map(Millis.from), Millis.from(job.createdAt),
         Millis.from(job.updatedAt), StoredForm.list(job.tasks), StoredForm.list(job.photos)]
    }

    private static func job(_ row: any SQLRow) throws -> Job {
        Job(id: try row.int64("id"), room: try row.string("room"), title: try row.string("title"), description: try row.string("description"),
            status: Job.Status(rawValue: try row.string("status")) ?? .created, creator: try row.string("creator"),
            assignee: try row.string("assignee"), due: try row.date("due"), createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"), tasks: StoredForm.decodeList([Job.Task].self, try row.string("tasks")),
            photos: StoredForm.decodeList([Job.Photo].self, try row.string("photos")))
    }

    // MARK: Comments

    public func insertComment(_ comment: Comment, event: Event) throws -> (Comment, Event) {
        try writing { c in
            let (id, saved) = try c.insert("""
                INSERT INTO comments (job, author, text, at)
                VALUES (\(comment.job), \(comment.author), \(comment.text), \(Millis.from(comment.at)))
                """, event: event, eventJob: false)
            var added = comment
            added.id = id
            return (added, saved)
        }
    }

    public func comments(of job: Int64, limit: Int) throws -> [Comment] {
        try reading { c in
            try c.rows("SELECT id, job, author, text, at FROM comments WHERE job = \(job) ORDER BY id DESC LIMIT \(limit)").map {
                Comment(id: try $0.int64("id"), job: try $0.int64("job"), author: try $0.string("author"), text: try $0.string("text"),
                        at: try $0.date("at"))
            }
        }
    }

    // MARK: Asks

    private static var askColumns: String { "id, room, kind, job, by, reason, state, decided_by, at" }

    public func insertAsk(_ ask: Ask, event: Event) throws -> (Ask, Event) {
        try writing { c in
            let id = try c.insert("""
                INSERT INTO asks (room, kind, job, by, reason, state, decided_by, at)
                VALUES (\(ask.room), \(ask.kind.rawValue), \(ask.job), \(ask.by), \(ask.reason), \(ask.state.rawValue),
                  \(ask.decidedBy), \(Millis.from(ask.at)))
                """)
            var saved = ask
            saved.id = id
            var e = event
            e.data["ask"] = String(id)
            return (saved, try EventRows.insert(e, c))
        }
    }

    public func ask(_ id: Int64) throws -> Ask? {
        try asks(where: "id = \(id)").first
    }

    public func updateAsk(_ ask: Ask, event: Event) throws -> Event {
        try writing { c in
            try c.change("asks", id: ask.id, set: "state = \(ask.state.rawValue), decided_by = \(ask.decidedBy)", what: "ask \(ask.id)",
                         events: [event])[0]
        }
    }

    public func openAsks(in room: String) throws -> [Ask] {
        try asks(where: "room = \(Account.key(room)) AND state = 'open' ORDER BY id")
    }

    private func asks(where condition: SQL) throws -> [Ask] {
        try reading { c in
            try c.rowsToChange("asks", "SELECT \(raw: Self.askColumns)\(raw: c.dialect.rowVersion("asks")) FROM asks WHERE \(condition)").map { row in
                Ask(id: try row.int64("id"), room: try row.string("room"), kind: Ask.Kind(rawValue: try row.string("kind")) ?? .work,
                    job: try row.int64("job"), by: try row.string("by"), reason: try row.string("reason"),
                    state: Ask.State(rawValue: try row.string("state")) ?? .open, decidedBy: try row.string("decided_by"), at: try row.date("at"))
            }
        }
    }

    // MARK: Time zones

    public func timeZone(of account: String) throws -> String? {
        let read = {
            try reading { c in
                try c.rows("""
                    SELECT time_zone FROM account_settings WHERE account = \(Account.key(account))
                    """).first.flatMap { try $0.string("time_zone") }
            }
        }
        guard let cache else { return try read() }
        return try cache.timeZone(Account.key(account), read: read)
    }

    public func timeZone(of account: String, readingRoleIn room: String?) throws -> String? {
        let key = Account.key(account)
        guard let cache, let room else { return try timeZone(of: account) }
        if let known = cache.with({ $0.timeZones[key] }) { return known }
        let roleKey = StoreCache.Entries.roleKey(account, room)
        guard cache.with({ $0.roles[roleKey] }) == nil else { return try timeZone(of: account) }
        let row = try reading { c in
            try c.rows("""
                SELECT (SELECT time_zone FROM account_settings WHERE account = \(key)) AS time_zone,
                  (SELECT role FROM memberships WHERE room = \(Account.key(room)) AND account = \(key)) AS role
                """).first
        }
        let zone: String? = try row?.string("time_zone")
        let role = try (row?.string("role") as String?).flatMap(Role.init(rawValue:))
        cache.with {
            $0.timeZones[key] = .some(zone)
            $0.roles[roleKey] = .some(role)
        }
        return zone
    }

    public func setTimeZone(_ identifier: String?, of account: String) throws {
        try writing { c in
            try c.run("""
                INSERT INTO account_settings (account, time_zone) VALUES (\(Account.key(account)), \(identifier))
                ON CONFLICT (account) DO UPDATE SET time_zone = excluded.time_zone
                """)
            forget { $0.timeZones[Account.key(account)] = nil }
        }
    }

    // MARK: Events

    public func insertEvents(_ events: [Event]) throws -> [Event] {
        try writing { c in try EventRows.insert(events, c) }
    }

    public func events(of job: Int64, limit: Int) throws -> [Event] {
        try reading { c in
            try c.rows("""
                SELECT \(raw: EventRows.columns) FROM events WHERE job = \(job) ORDER BY id DESC LIMIT \(limit)
                """).map(EventRows.event)
        }
    }

    public func events(after position: Int64, rooms: [String], account: String, limit: Int) throws -> [Event] {
        try reading { c in
            // Concerns are names as typed, in a JSON list: lowercased, a key is found between quotes.
            let inRooms: SQL = rooms.isEmpty ? "" : "room IN (\(list: rooms)) OR "
            let quoted = "\"\(account)\""
            // Each event is made where the cursor stands: a feed reads pages of hundreds.
            var events: [Event] = []
            try c.eachRow("""
                SELECT \(raw: EventRows.columns) FROM events
                WHERE id > \(position)
                  AND (\(inRooms)\(raw: c.dialect.instr)(lower(concerns), \(quoted)) > 0 OR (room IS NULL AND lower(actor) = \(account)))
                ORDER BY id LIMIT \(max(0, limit))
                """) { events.append(try EventRows.event($0)) }
            return events
        }
    }

    public func eventIDs(after position: Int64, limit: Int) throws -> [Int64] {
        try reading { c in
            try c.rows("SELECT id FROM events WHERE id > \(position) ORDER BY id LIMIT \(max(0, limit))").map { try $0.int64("id") }
        }
    }

    public func queueEvent(_ eventID: Int64, for accounts: [String]) throws {
        try writing { c in
            // A new request may reach a thousand contractors: a statement per few hundred, not per account.
            for start in stride(from: 0, to: accounts.count, by: 400) {
                let chunk = accounts[start..<min(accounts.count, start + 400)]
                let rows = chunk.map { "(\(Account.key($0)), \(eventID))" as SQL }.joined(separator: ", ")
                try c.run("INSERT INTO queued_events (account, event) VALUES \(rows) ON CONFLICT DO NOTHING")
            }
        }
    }

    public func takeQueuedEvents(for account: String) throws -> [Event] {
        let key = Account.key(account)
        return try writing { c in
            let events = try c.rows("""
                SELECT \(raw: EventRows.columns) FROM queued_events JOIN events ON events.id = queued_events.event
                WHERE queued_events.account = \(key) ORDER BY events.id
                """).map(EventRows.event)
            try c.run("DELETE FROM queued_events WHERE account = \(key)")
            return events
        }
    }
}
