import ChorusCore
import ChorusStore
import Foundation
import PostgresNIO
import ChorusSQL

extension PostgresStore: JobStore {
    public func role(of account: String, in room: String) throws -> Role? {
        let key = StoreCache.Entries.roleKey(account, room)
        if let known = cache?.with({ $0.roles[key] }) { return known }
        let role: Role? = try db.read { link in
            try link.query("SELECT role FROM memberships WHERE room = ? AND account = ?", [Account.key(room), Account.key(account)])
                .first.flatMap { Role(rawValue: try $0.string(0)) }
        }
        cache?.with { $0.roles[key] = .some(role) }
        return role
    }

    public func roomSettings(_ room: String) throws -> RoomSettings {
        let key = Account.key(room)
        if let known = cache?.with({ $0.settings[key] }) { return known }
        let settings = try db.read { link in
            var settings = RoomSettings()
            if let row = try link.query("SELECT visibility, creators, echo_commands, market, open FROM room_settings WHERE room = ?", [key]).first {
                settings.visibility = RoomSettings.Visibility(rawValue: try row.string(0)) ?? .all
                settings.creators = RoomSettings.Creators(rawValue: try row.string(1)) ?? .everyone
                settings.echoCommands = try row.bool(2)
                settings.market = try row.bool(3)
                settings.open = try row[4].decode(Bool?.self)
            }
            return settings
        }
        cache?.with { $0.settings[key] = settings }
        return settings
    }

    public func saveRoomSettings(_ settings: RoomSettings, room: String, event: Event) throws -> Event {
        try db.write { link in
            try link.execute("""
                INSERT INTO room_settings (room, visibility, creators, echo_commands, market, open) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (room) DO UPDATE SET visibility = excluded.visibility, creators = excluded.creators,
                  echo_commands = excluded.echo_commands, market = excluded.market, open = excluded.open
                """, [Account.key(room), settings.visibility.rawValue, settings.creators.rawValue, settings.echoCommands, settings.market,
                      settings.open])
            forget { $0.settings[Account.key(room)] = nil }
            return try Self.insert(event, link)
        }
    }

    // MARK: Jobs

    /// The last column is the row's version (`RowVersions`).
    private static let jobColumns = "id, room, title, description, status, creator, assignee, due, created_at, updated_at, tasks, photos, xmin::text"

    public func job(_ id: Int64) throws -> Job? {
        let access = db
        let read = { try access.read { try Self.readJob(id, $0) } }
        guard let cache, access.batch != nil else { return try read() }
        return try cache.job(id, read: read)
    }

    private static func readJob(_ id: Int64, _ link: PostgresLink) throws -> Job? {
        try link.queryVersioned("jobs", "SELECT \(jobColumns) FROM jobs WHERE id = ?", [id]).first.map(job)
    }

    public func insertJob(_ job: Job, event: Event) throws -> (Job, Event) {
        try db.write { link in
            // The job and its event, which names it, in one statement.
            var e = event
            e.job = nil
            let rows = try link.query("""
                WITH added AS (
                  INSERT INTO jobs (room, title, description, status, creator, creator_key, assignee, assignee_key, due,
                                    created_at, updated_at, tasks, photos)
                  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id)
                \(Self.eventInsert) SELECT e.type, e.room, added.id, e.actor, e.data, e.at, e.concerns, e.audience, e.request
                FROM added, (VALUES \(Self.eventRow)) AS e(type, room, job, actor, data, at, concerns, audience, request)
                RETURNING id, job
                """, Self.jobValues(job) + Self.eventValues(e))
            var saved = job
            saved.id = try rows[0].int64(1)
            e.id = try rows[0].int64(0)
            e.job = saved.id
            return (saved, e)
        }
    }

    public func updateJob(_ job: Job, events: [Event]) throws -> [Event] {
        try db.write { link in
            forget { $0.jobs[job.id] = nil }
            return try Self.update("jobs", id: job.id, set: """
                room = ?, title = ?, description = ?, status = ?, creator = ?, creator_key = ?, assignee = ?,
                assignee_key = ?, due = ?, created_at = ?, updated_at = ?, tasks = ?, photos = ?
                """, Self.jobValues(job), events: events, what: "job \(job.id)", link)
        }
    }

    /// `UPDATE table SET assignments WHERE id = id`, holding only while the row is as this
    /// transaction read it (`RowVersions`), and the change's events, in one statement (a round
    /// trip is most of a command's time): the events are written only if the row is, in order.
    static func update(_ table: String, id: Int64, set assignments: String, _ values: [any PostgresBindable], events: [Event],
                       what: String, _ link: PostgresLink) throws -> [Event] {
        guard !events.isEmpty else {
            try link.updateRow(table, id: id, set: assignments, values, what: what)
            return []
        }
        let check = link.takeVersionCheck(table, id)
        let rows = Array(repeating: eventRow.dropLast() + ", ?::int)", count: events.count).joined(separator: ", ")
        let ids = try link.query("""
            WITH changed AS (UPDATE \(table) SET \(assignments) WHERE id = ?\(check.condition) RETURNING id)
            \(eventInsert) SELECT e.type, e.room, e.job, e.actor, e.data, e.at, e.concerns, e.audience, e.request
            FROM changed, (VALUES \(rows)) AS e(type, room, job, actor, data, at, concerns, audience, request, n) ORDER BY e.n
            RETURNING id
            """, values + [id] + check.values + events.enumerated().flatMap { eventValues($0.element) + [$0.offset] as [any PostgresBindable] })
            .map { try $0.int64(0) as Int64 }.sorted()  // given in the order of the rows
        guard ids.count == events.count else { throw link.rowNotWritten(what, checked: check.checked) }
        return zip(events, ids).map { event, id in
            var saved = event
            saved.id = id
            return saved
        }
    }

    public func jobs(_ filter: JobFilter) throws -> [Job] {
        // ILIKE: the case-blind match SQLite's LIKE is.
        let condition = StoredFilters.jobs(filter, like: "ILIKE")
        return try db.read { link in
            try link.queryVersioned("jobs", "SELECT \(Self.jobColumns) FROM jobs WHERE \(condition.text) ORDER BY id DESC LIMIT ? OFFSET ?",
                           condition.postgresBinds + [filter.limit, filter.offset]).map(Self.job)
        }
    }

    public func countJobs(_ filter: JobFilter) throws -> Int {
        let condition = StoredFilters.jobs(filter, like: "ILIKE")
        return try db.read { link in try link.query("SELECT count(*) FROM jobs WHERE \(condition.text)", condition.postgresBinds).first?.int(0) ?? 0 }
    }

    private static func jobValues(_ job: Job) -> [any PostgresBindable] {
        [job.room, job.title, job.description, job.status.rawValue, job.creator, Account.key(job.creator),
         job.assignee, job.assignee.map(Account.key), job.due.map(Millis.from), Millis.from(job.createdAt),
         Millis.from(job.updatedAt), StoredForm.list(job.tasks), StoredForm.list(job.photos)]
    }

    private static func job(_ row: PostgresRandomAccessRow) throws -> Job {
        Job(id: try row.int64(0), room: try row.string(1), title: try row.string(2), description: try row.string(3),
            status: Job.Status(rawValue: try row.string(4)) ?? .created, creator: try row.string(5), assignee: try row.string(6),
            due: try row.date(7), createdAt: try row.date(8), updatedAt: try row.date(9),
            tasks: StoredForm.decodeList([Job.Task].self, try row.string(10)),
            photos: StoredForm.decodeList([Job.Photo].self, try row.string(11)))
    }

    // MARK: Comments

    public func insertComment(_ comment: Comment, event: Event) throws -> (Comment, Event) {
        try db.write { link in
            // The comment and its event in one statement: a round trip is most of a command's time.
            let rows = try link.query("""
                WITH added AS (INSERT INTO comments (job, author, text, at) VALUES (?, ?, ?, ?) RETURNING id)
                \(Self.eventInsert) VALUES \(Self.eventRow) RETURNING id, (SELECT id FROM added)
                """, [comment.job, comment.author, comment.text, Millis.from(comment.at)] + Self.eventValues(event))
            var saved = comment, savedEvent = event
            savedEvent.id = try rows[0].int64(0)
            saved.id = try rows[0].int64(1)
            return (saved, savedEvent)
        }
    }

    public func comments(of job: Int64, limit: Int) throws -> [Comment] {
        try db.read { link in
            try link.query("SELECT id, job, author, text, at FROM comments WHERE job = ? ORDER BY id DESC LIMIT ?", [job, limit]).map {
                Comment(id: try $0.int64(0), job: try $0.int64(1), author: try $0.string(2), text: try $0.string(3), at: try $0.date(4))
            }
        }
    }

    // MARK: Asks

    private static let askColumns = "id, room, kind, job, by, reason, state, decided_by, at, xmin::text"

    public func insertAsk(_ ask: Ask, event: Event) throws -> (Ask, Event) {
        try db.write { link in
            let rows = try link.query("""
                INSERT INTO asks (room, kind, job, by, reason, state, decided_by, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """, [ask.room, ask.kind.rawValue, ask.job, ask.by, ask.reason, ask.state.rawValue, ask.decidedBy, Millis.from(ask.at)])
            var saved = ask
            saved.id = try rows[0].int64(0)
            var e = event
            e.data["ask"] = String(saved.id)
            return (saved, try Self.insert(e, link))
        }
    }

    public func ask(_ id: Int64) throws -> Ask? {
        try db.read { link in try link.queryVersioned("asks", "SELECT \(Self.askColumns) FROM asks WHERE id = ?", [id]).first.map(Self.ask) }
    }

    public func updateAsk(_ ask: Ask, event: Event) throws -> Event {
        try db.write { link in
            try link.updateRow("asks", id: ask.id, set: "state = ?, decided_by = ?", [ask.state.rawValue, ask.decidedBy], what: "ask \(ask.id)")
            return try Self.insert(event, link)
        }
    }

    public func openAsks(in room: String) throws -> [Ask] {
        try db.read { link in
            try link.queryVersioned("asks", "SELECT \(Self.askColumns) FROM asks WHERE room = ? AND state = 'open' ORDER BY id", [Account.key(room)]).map(Self.ask)
        }
    }

    private static func ask(_ row: PostgresRandomAccessRow) throws -> Ask {
        Ask(id: try row.int64(0), room: try row.string(1), kind: Ask.Kind(rawValue: try row.string(2)) ?? .work, job: try row.int64(3),
            by: try row.string(4), reason: try row.string(5), state: Ask.State(rawValue: try row.string(6)) ?? .open,
            decidedBy: try row.string(7), at: try row.date(8))
    }

    // MARK: Time zones

    public func timeZone(of account: String) throws -> String? {
        let key = Account.key(account)
        if let known = cache?.with({ $0.timeZones[key] }) { return known }
        let zone: String? = try db.read { link in
            try link.query("SELECT time_zone FROM account_settings WHERE account = ?", [key]).first.flatMap { try $0.string(0) }
        }
        cache?.with { $0.timeZones[key] = .some(zone) }
        return zone
    }

    public func setTimeZone(_ identifier: String?, of account: String) throws {
        try db.write { link in
            try link.execute("""
                INSERT INTO account_settings (account, time_zone) VALUES (?, ?)
                ON CONFLICT (account) DO UPDATE SET time_zone = excluded.time_zone
                """, [Account.key(account), identifier])
            forget { $0.timeZones[Account.key(account)] = nil }
        }
    }

    // MARK: Events

    public func insertEvents(_ events: [Event]) throws -> [Event] {
        try db.write { link in try events.map { try Self.insert($0, link) } }
    }

    static func insert(_ event: Event, _ link: PostgresLink) throws -> Event {
        let rows = try link.query("\(eventInsert) VALUES \(eventRow) RETURNING id", eventValues(event))
        var saved = event
        saved.id = try rows[0].int64(0)
        return saved
    }

    /// An event's row: `eventInsert`, then `VALUES eventRow` (or rows of it) with `eventValues`.
    static let eventInsert = "INSERT INTO events (type, room, job, actor, data, at, concerns, audience, request)"
    static let eventRow = "(?, ?, ?::bigint, ?, ?, ?::bigint, ?, ?, ?::bigint)"

    static func eventValues(_ event: Event) -> [any PostgresBindable] {
        [event.type, event.room, event.job, event.actor, StoredForm.json(event.data), Millis.from(event.at),
         StoredForm.json(event.concerns), event.audience.map { StoredForm.json($0) }, StoredForm.requestNumber(of: event)]
    }

    static let eventColumns = "events.id, events.type, events.room, events.job, events.actor, events.data, events.at, events.concerns, events.audience"

    static func event(_ row: PostgresRandomAccessRow) throws -> Event {
        Event(id: try row.int64(0), type: try row.string(1), room: try row.string(2), job: try row.int64(3), actor: try row.string(4),
              data: StoredForm.decode([String: String].self, try row.string(5)) ?? [:], at: try row.date(6),
              concerns: StoredForm.decodeList([String].self, try row.string(7)),
              audience: (try row.string(8) as String?).flatMap { StoredForm.decode([String].self, $0) })
    }

    public func events(of job: Int64, limit: Int) throws -> [Event] {
        try db.read { link in
            try link.query("SELECT \(Self.eventColumns) FROM events WHERE job = ? ORDER BY id DESC LIMIT ?", [job, limit]).map(Self.event)
        }
    }

    public func queueEvent(_ eventID: Int64, for account: String) throws {
        try db.write { link in
            try link.execute("INSERT INTO queued_events (account, event) VALUES (?, ?) ON CONFLICT DO NOTHING", [Account.key(account), eventID])
        }
    }

    public func takeQueuedEvents(for account: String) throws -> [Event] {
        let key = Account.key(account)
        return try db.write { link in
            let events = try link.query("""
                SELECT \(Self.eventColumns) FROM queued_events JOIN events ON events.id = queued_events.event
                WHERE queued_events.account = ? ORDER BY events.id
                """, [key]).map(Self.event)
            try link.execute("DELETE FROM queued_events WHERE account = ?", [key])
            return events
        }
    }
}
