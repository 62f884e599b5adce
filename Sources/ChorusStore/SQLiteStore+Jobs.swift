import ChorusCore
import Foundation
import GRDB
import ChorusSQL

extension SQLiteStore: JobStore {
    public func role(of account: String, in room: String) throws -> Role? {
        let key = StoreCache.Entries.roleKey(account, room)
        if let known = cache?.with({ $0.roles[key] }) { return known }
        let role = try db.read { db in
            try String.fetchOne(cached: db, sql: "SELECT role FROM memberships WHERE room = ? AND account = ?",
                                arguments: [Account.key(room), Account.key(account)]).flatMap(Role.init)
        }
        cache?.with { $0.roles[key] = .some(role) }
        return role
    }

    public func roomSettings(_ room: String) throws -> RoomSettings {
        let key = Account.key(room)
        if let known = cache?.with({ $0.settings[key] }) { return known }
        let settings = try readRoomSettings(room)
        cache?.with { $0.settings[key] = settings }
        return settings
    }

    private func readRoomSettings(_ room: String) throws -> RoomSettings {
        try db.read { db in
            var settings = RoomSettings()
            if let row = try Row.fetchOne(cached: db, sql: "SELECT * FROM room_settings WHERE room = ?", arguments: [Account.key(room)]) {
                settings.visibility = RoomSettings.Visibility(rawValue: row["visibility"]) ?? .all
                settings.creators = RoomSettings.Creators(rawValue: row["creators"]) ?? .everyone
                settings.echoCommands = row["echo_commands"]
                settings.market = row["market"]
                settings.open = row["open"]
            }
            return settings
        }
    }

    public func saveRoomSettings(_ settings: RoomSettings, room: String, event: Event) throws -> Event {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO room_settings (room, visibility, creators, echo_commands, market, open) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(room) DO UPDATE SET visibility = excluded.visibility, creators = excluded.creators,
                  echo_commands = excluded.echo_commands, market = excluded.market, open = excluded.open
                """, arguments: [Account.key(room), settings.visibility.rawValue, settings.creators.rawValue, settings.echoCommands,
                                 settings.market, settings.open])
            forget { $0.settings[Account.key(room)] = nil }
            return try Self.insert(event, db)
        }
    }

    public func job(_ id: Int64) throws -> Job? {
        let access = db
        let read = { try access.read { db in try Self.readJob(id, db) } }
        guard let cache, access.batch != nil else { return try read() }
        return try cache.job(id, read: read)
    }

    private static func readJob(_ id: Int64, _ db: Database) throws -> Job? {
        try Row.fetchOne(cached: db, sql: jobByID, arguments: [id]).map(job)
    }

    public func insertJob(_ job: Job, event: Event) throws -> (Job, Event) {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO jobs (room, title, description, status, creator, creator_key, assignee, assignee_key, due,
                                  created_at, updated_at, tasks, photos)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: StatementArguments(Self.jobArguments(job)))
            var saved = job
            saved.id = db.lastInsertedRowID
            var e = event
            e.job = saved.id
            return (saved, try Self.insert(e, db))
        }
    }

    public func updateJob(_ job: Job, events: [Event]) throws -> [Event] {
        try db.write { db in
            try db.run(sql: """
                UPDATE jobs SET room = ?, title = ?, description = ?, status = ?, creator = ?, creator_key = ?, assignee = ?,
                  assignee_key = ?, due = ?, created_at = ?, updated_at = ?, tasks = ?, photos = ? WHERE id = ?
                """, arguments: StatementArguments(Self.jobArguments(job)) + [job.id])
            forget { $0.jobs[job.id] = nil }
            guard db.changesCount == 1 else { throw StoreError.notFound("job \(job.id)") }
            return try events.map { try Self.insert($0, db) }
        }
    }

    public func jobs(_ filter: JobFilter) throws -> [Job] {
        let condition = StoredFilters.jobs(filter, like: "LIKE")
        return try db.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.jobColumns) FROM jobs WHERE \(condition.text) ORDER BY id DESC LIMIT ? OFFSET ?",
                             arguments: condition.arguments + [filter.limit, filter.offset]).map(Self.job)
        }
    }

    public func countJobs(_ filter: JobFilter) throws -> Int {
        let condition = StoredFilters.jobs(filter, like: "LIKE")
        return try db.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM jobs WHERE \(condition.text)", arguments: condition.arguments) ?? 0 }
    }

    public func insertComment(_ comment: Comment, event: Event) throws -> (Comment, Event) {
        try db.write { db in
            try db.run(sql: "INSERT INTO comments (job, author, text, at) VALUES (?, ?, ?, ?)",
                           arguments: [comment.job, comment.author, comment.text, Millis.from(comment.at)])
            var saved = comment
            saved.id = db.lastInsertedRowID
            return (saved, try Self.insert(event, db))
        }
    }

    public func comments(of job: Int64, limit: Int) throws -> [Comment] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM comments WHERE job = ? ORDER BY id DESC LIMIT ?", arguments: [job, limit]).map {
                Comment(id: $0["id"], job: $0["job"], author: $0["author"], text: $0["text"], at: Millis.date($0["at"]))
            }
        }
    }

    public func events(of job: Int64, limit: Int) throws -> [Event] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: Self.eventsOfJob, arguments: [job, limit]).map(Self.event)
        }
    }

    public func insertAsk(_ ask: Ask, event: Event) throws -> (Ask, Event) {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO asks (room, kind, job, by, reason, state, decided_by, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [ask.room, ask.kind.rawValue, ask.job, ask.by, ask.reason,
                                 ask.state.rawValue, ask.decidedBy, Millis.from(ask.at)])
            var saved = ask
            saved.id = db.lastInsertedRowID
            var e = event
            e.data["ask"] = String(saved.id)
            return (saved, try Self.insert(e, db))
        }
    }

    public func ask(_ id: Int64) throws -> Ask? {
        try db.read { db in try Row.fetchOne(cached: db, sql: "SELECT * FROM asks WHERE id = ?", arguments: [id]).map(Self.ask) }
    }

    public func updateAsk(_ ask: Ask, event: Event) throws -> Event {
        try db.write { db in
            try db.run(sql: "UPDATE asks SET state = ?, decided_by = ? WHERE id = ?",
                           arguments: [ask.state.rawValue, ask.decidedBy, ask.id])
            return try Self.insert(event, db)
        }
    }

    public func openAsks(in room: String) throws -> [Ask] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM asks WHERE room = ? AND state = 'open' ORDER BY id",
                             arguments: [Account.key(room)]).map(Self.ask)
        }
    }

    public func timeZone(of account: String) throws -> String? {
        let key = Account.key(account)
        if let known = cache?.with({ $0.timeZones[key] }) { return known }
        let zone = try db.read { db in
            try String.fetchOne(cached: db, sql: "SELECT time_zone FROM account_settings WHERE account = ?", arguments: [key])
        }
        cache?.with { $0.timeZones[key] = .some(zone) }
        return zone
    }

    public func setTimeZone(_ identifier: String?, of account: String) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO account_settings (account, time_zone) VALUES (?, ?)
                ON CONFLICT(account) DO UPDATE SET time_zone = excluded.time_zone
                """, arguments: [Account.key(account), identifier])
            forget { $0.timeZones[Account.key(account)] = nil }
        }
    }

    public func queueEvent(_ eventID: Int64, for account: String) throws {
        try db.write { db in
            try db.run(sql: "INSERT OR IGNORE INTO queued_events (account, event) VALUES (?, ?)",
                           arguments: [Account.key(account), eventID])
        }
    }

    public func takeQueuedEvents(for account: String) throws -> [Event] {
        try db.write { db in
            let rows = try Row.fetchAll(cached: db, sql: Self.queuedEventsOf, arguments: [Account.key(account)])
            try db.run(sql: "DELETE FROM queued_events WHERE account = ?", arguments: [Account.key(account)])
            return rows.map(Self.event)
        }
    }

    // MARK: Rows

    private static func jobArguments(_ job: Job) -> [(any DatabaseValueConvertible)?] {
        [job.room, job.title, job.description, job.status.rawValue, job.creator, Account.key(job.creator),
         job.assignee, job.assignee.map(Account.key), job.due.map(Millis.from), Millis.from(job.createdAt),
         Millis.from(job.updatedAt), StoredForm.list(job.tasks), StoredForm.list(job.photos)]
    }

    // Rows are read by position, in the order of these lists: a lookup by name lowercases the name
    // and searches the columns each time (6 % of a command's time on the writer).
    private static let jobColumns = "id, room, title, description, status, creator, assignee, due, created_at, updated_at, tasks, photos"
    private static let jobByID = "SELECT \(jobColumns) FROM jobs WHERE id = ?"

    private static func job(_ row: Row) -> Job {
        Job(id: row[0], room: row[1], title: row[2], description: row[3],
            status: Job.Status(rawValue: row[4]) ?? .created, creator: row[5], assignee: row[6],
            due: (row[7] as Int64?).map(Millis.date), createdAt: Millis.date(row[8]), updatedAt: Millis.date(row[9]),
            tasks: StoredForm.decodeList([Job.Task].self, row[10]), photos: StoredForm.decodeList([Job.Photo].self, row[11]))
    }

    private static func ask(_ row: Row) -> Ask {
        Ask(id: row["id"], room: row["room"], kind: Ask.Kind(rawValue: row["kind"]) ?? .work, job: row["job"],
                   by: row["by"], reason: row["reason"], state: Ask.State(rawValue: row["state"]) ?? .open,
                   decidedBy: row["decided_by"], at: Millis.date(row["at"]))
    }

    public func insertEvents(_ events: [Event]) throws -> [Event] {
        try db.write { db in try events.map { try Self.insert($0, db) } }
    }

    static func insert(_ event: Event, _ db: Database) throws -> Event {
        try db.run(sql: """
            INSERT INTO events (type, room, job, actor, data, at, concerns, audience, request) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [event.type, event.room, event.job, event.actor, StoredForm.json(event.data), Millis.from(event.at),
                             StoredForm.json(event.concerns), event.audience.map { StoredForm.json($0) }, StoredForm.requestNumber(of: event)])
        var saved = event
        saved.id = db.lastInsertedRowID
        return saved
    }

    static let eventColumns = "id, type, room, job, actor, data, at, concerns, audience"
    private static let queuedEventsOf = """
        SELECT \(eventColumns.split(separator: ", ").map { "events.\($0)" }.joined(separator: ", "))
        FROM queued_events JOIN events ON events.id = queued_events.event
        WHERE queued_events.account = ? ORDER BY events.id
        """
    private static let eventsOfJob = "SELECT \(eventColumns) FROM events WHERE job = ? ORDER BY id DESC LIMIT ?"

    static func event(_ row: Row) -> Event {
        Event(id: row[0], type: row[1], room: row[2], job: row[3], actor: row[4],
              data: StoredForm.decode([String: String].self, row[5]) ?? [:], at: Millis.date(row[6]),
              concerns: StoredForm.decodeList([String].self, row[7]),
              audience: (row[8] as String?).flatMap { StoredForm.decode([String].self, $0) })
    }
}
