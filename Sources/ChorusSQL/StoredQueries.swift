import ChorusCore

/// Statements both stores run as they stand.
public enum StoredStatements {
    /// A room's row, without saying what happens when one of its name is there already.
    public static func insertRoom(_ room: Room) -> SQL {
        """
        INSERT INTO rooms (key, name, topic, topic_set_by, topic_set_at, invite_only, topic_locked,
                           no_external, secret, moderated, channel_key, user_limit, bans, created_at)
        VALUES (\(room.key), \(room.name), \(room.topic), \(room.topicSetBy), \(room.topicSetAt.map(Millis.from)),
                \(room.modes.inviteOnly), \(room.modes.topicLocked), \(room.modes.noExternal), \(room.modes.secret),
                \(room.modes.moderated), \(room.modes.key), \(room.modes.limit), \(room.bans.joined(separator: "\n")),
                \(Millis.from(room.createdAt)))
        """
    }

    /// A room's row, made or brought up to date.
    public static func saveRoom(_ room: Room) -> SQL {
        insertRoom(room) + """

            ON CONFLICT (key) DO UPDATE SET
              name = excluded.name, topic = excluded.topic, topic_set_by = excluded.topic_set_by,
              topic_set_at = excluded.topic_set_at, invite_only = excluded.invite_only,
              topic_locked = excluded.topic_locked, no_external = excluded.no_external,
              secret = excluded.secret, moderated = excluded.moderated, channel_key = excluded.channel_key,
              user_limit = excluded.user_limit, bans = excluded.bans
            """
    }
}

/// Which jobs and service requests a filter matches, as SQL both stores run: the rule is written
/// once, and only the words the two dialects spell differently are given (`like`).
public enum StoredFilters {
    /// `like` is the store's case-blind match: SQLite's `LIKE`, PostgreSQL's `ILIKE`.
    public static func jobs(_ f: JobFilter, like: String) -> SQL {
        var parts: [SQL] = []
        var scope: [SQL] = []
        if !f.rooms.isEmpty { scope.append("room IN (\(list: f.rooms.map(Account.key)))") }
        if let owner = f.personalOf { scope.append("(room IS NULL AND creator_key = \(Account.key(owner)))") }
        parts.append(scope.isEmpty ? "false" : "(\(scope.joined(separator: " OR ")))")
        if let statuses = f.statuses, !statuses.isEmpty { parts.append("status IN (\(list: statuses.map(\.rawValue).sorted()))") }
        if let a = f.assignee { parts.append("assignee_key = \(Account.key(a))") }
        if let who = f.onlyInvolving {
            let key = Account.key(who)
            parts.append("(assignee_key = \(key) OR creator_key = \(key))")
        }
        if let d = f.dueFrom { parts.append("due >= \(Millis.from(d))") }
        if let d = f.dueTo { parts.append("due < \(Millis.from(d))") }
        if let d = f.createdFrom { parts.append("created_at >= \(Millis.from(d))") }
        if let d = f.createdTo { parts.append("created_at < \(Millis.from(d))") }
        if let text = f.text, !text.isEmpty {
            let pattern = "%" + text.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
            parts.append("(title \(raw: like) \(pattern) ESCAPE '\\' OR description \(raw: like) \(pattern) ESCAPE '\\')")
        }
        return parts.joined(separator: " AND ")
    }

    public static func requests(_ f: RequestFilter) -> SQL {
        var parts: [SQL] = []
        switch f.scope {
        case .open(let categories, let except):
            parts.append("status = 'open'")
            parts.append("customer_key != \(Account.key(except))")
            if !categories.isEmpty { parts.append("category IN (\(list: categories))") }
        case .involving(let account):
            let key = Account.key(account)
            parts.append("(customer_key = \(key) OR contractor_key = \(key) OR id IN (SELECT request FROM offers WHERE contractor_key = \(key)))")
        }
        if let category = f.category { parts.append("category = \(category)") }
        return parts.joined(separator: " AND ")
    }
}

/// How a history query reads, the same in every store: each bound becomes a place (time, id), and
/// the query one or two reads of lines before or after such places.
public enum HistoryPlan {
    public typealias Place = (time: Int64, id: Int64)

    /// `place(msgid)` finds the line a msgid names in the conversation; `fetch(condition,
    /// descending, limit)` reads lines matching `condition` (a `(time, id)` comparison, or nothing
    /// for the latest) and returns them oldest first.
    public static func run<Entry>(_ query: HistoryQuery, place: (String) throws -> Place?,
                                  fetch: (SQL, Bool, Int) throws -> [Entry]) throws -> [Entry] {
        // A time bound sits between ids, so it takes id 0 or the largest.
        func position(_ bound: HistoryQuery.Bound, after: Bool) throws -> Place? {
            switch bound {
            case .time(let date): return (Millis.from(date), after ? Int64.max : 0)
            case .msgid(let id): return try place(id)
            }
        }
        switch query {
        case .latest(nil, let limit):
            return try fetch("", true, limit)
        case .latest(let bound?, let limit):
            guard let p = try position(bound, after: true) else { return [] }
            return try fetch("AND (time, id) > (\(p.time), \(p.id))", true, limit)
        case .before(let bound, let limit):
            guard let p = try position(bound, after: false) else { return [] }
            return try fetch("AND (time, id) < (\(p.time), \(p.id))", true, limit)
        case .after(let bound, let limit):
            guard let p = try position(bound, after: true) else { return [] }
            return try fetch("AND (time, id) > (\(p.time), \(p.id))", false, limit)
        case .around(let bound, let limit):
            guard let p = try position(bound, after: false) else { return [] }
            let before = try fetch("AND (time, id) < (\(p.time), \(p.id))", true, limit / 2)
            return before + (try fetch("AND (time, id) >= (\(p.time), \(p.id))", false, limit - before.count))
        case .between(let a, let b, let limit):
            guard let start = try position(a, after: true), let end = try position(b, after: false) else { return [] }
            if start <= end {
                return try fetch("AND (time, id) > (\(start.time), \(start.id)) AND (time, id) < (\(end.time), \(end.id))", false, limit)
            }
            // Counting from the later bound: the newest `limit` lines of the range.
            guard let hi = try position(a, after: false), let lo = try position(b, after: true) else { return [] }
            return try fetch("AND (time, id) < (\(hi.time), \(hi.id)) AND (time, id) > (\(lo.time), \(lo.id))", true, limit)
        }
    }
}
