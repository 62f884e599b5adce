import ChorusCore
import Foundation

/// Chores, shared lists and who is away, for both databases.
public protocol SQLChoreStore: ChoreStore, SQLDatabase {}

extension SQLChoreStore {
    public func members(of room: String) throws -> [String] {
        try reading { c in
            try c.rows("""
                SELECT accounts.name FROM memberships JOIN accounts ON accounts.key = memberships.account
                WHERE memberships.room = \(Account.key(room)) ORDER BY memberships.seq
                """).map { try $0.string("name") }
        }
    }

    public func awayUntil(_ account: String, in room: String) throws -> Date? {
        try reading { c in
            try c.rows("SELECT away_until FROM memberships WHERE room = \(Account.key(room)) AND account = \(Account.key(account))")
                .first.flatMap { try $0.date("away_until") }
        }
    }

    public func setAway(_ account: String, in room: String, until: Date?, events: [Event]) throws -> [Event] {
        try writing { c in
            try c.run("""
                UPDATE memberships SET away_until = \(until.map(Millis.from))
                WHERE room = \(Account.key(room)) AND account = \(Account.key(account))
                """)
            return try EventRows.insert(events, c)
        }
    }

    // MARK: Chores

    /// The id first: a versioned read adds the row's version last.
    private static var choreColumns: String {
        """
        id, room, key, name, frequency, hour, minute, rotation, current, turn_since, due, created_by, created_at,
        last_reminder, room_told_overdue, swap_from, swap_to, passed_over
        """
    }

    public func chore(named name: String, in room: String) throws -> Chore? {
        try chores(where: "room = \(Account.key(room)) AND key = \(Account.key(name))").first
    }

    public func chores(in room: String) throws -> [Chore] {
        try chores(where: "room = \(Account.key(room)) ORDER BY due, key")
    }

    public func allChores() throws -> [Chore] {
        try chores(where: "true ORDER BY due")
    }

    private func chores(where condition: SQL) throws -> [Chore] {
        try reading { c in
            try c.rowsToChange("chores", "SELECT \(raw: Self.choreColumns)\(raw: c.dialect.rowVersion("chores")) FROM chores WHERE \(condition)")
                .map(Self.chore)
        }
    }

    public func insertChore(_ chore: Chore, events: [Event]) throws -> (Chore, [Event]) {
        try writing { c in
            var saved = chore
            saved.id = try c.insert("INSERT INTO chores (\(raw: Self.choreWritten)) VALUES (\(list: Self.values(of: chore)))")
            return (saved, try EventRows.insert(events, c))
        }
    }

    public func updateChore(_ chore: Chore, events: [Event]) throws -> [Event] {
        try writing { c in
            try c.change("chores", id: chore.id, set: .assignments(Self.choreWritten, Self.values(of: chore)), what: "chore \(chore.name)",
                         events: events)
        }
    }

    public func deleteChore(_ chore: Chore, event: Event) throws -> Event {
        try writing { c in
            try c.run("DELETE FROM chores WHERE id = \(chore.id)")
            return try EventRows.insert(event, c)
        }
    }

    /// What a chore's row holds, in the order of `values(of:)`.
    private static var choreWritten: String {
        """
        room, key, name, frequency, hour, minute, rotation, current, turn_since, due, created_by, created_at,
        last_reminder, room_told_overdue, swap_from, swap_to, passed_over
        """
    }

    private static func values(of c: Chore) -> [any SQLBindable] {
        [Account.key(c.room), c.key, c.name, StoredForm.encode(c.frequency), c.hour, c.minute, StoredForm.encode(c.rotation), c.current,
         Millis.from(c.turnSince), Millis.from(c.due), c.createdBy, Millis.from(c.createdAt),
         c.lastReminder.map(Millis.from), c.roomToldOverdue, c.swapFrom, c.swapTo, c.passedOver]
    }

    private static func chore(_ row: any SQLRow) throws -> Chore {
        var chore = Chore(id: try row.int64("id"), room: try row.string("room"), name: try row.string("name"),
                          frequency: StoredForm.decode(Frequency.self, try row.string("frequency")) ?? .days(1),
                          hour: try row.int("hour"), minute: try row.int("minute"),
                          rotation: StoredForm.decode([String].self, try row.string("rotation")) ?? [], current: try row.int("current"),
                          turnSince: try row.date("turn_since"), due: try row.date("due"), createdBy: try row.string("created_by"),
                          createdAt: try row.date("created_at"))
        chore.lastReminder = try row.date("last_reminder")
        chore.roomToldOverdue = try row.bool("room_told_overdue")
        chore.swapFrom = try row.string("swap_from")
        chore.swapTo = try row.string("swap_to")
        chore.passedOver = try row.string("passed_over")
        return chore
    }

    // MARK: Shared lists

    public func list(named name: String, in room: String) throws -> SharedList? {
        try lists(where: "room = \(Account.key(room)) AND key = \(Account.key(name))").first
    }

    public func lists(in room: String) throws -> [SharedList] {
        try lists(where: "room = \(Account.key(room)) ORDER BY key")
    }

    private func lists(where condition: SQL) throws -> [SharedList] {
        try reading { c in
            try c.rows("SELECT room, name, items FROM lists WHERE \(condition)").map { row in
                SharedList(room: try row.string("room"), name: try row.string("name"),
                           items: StoredForm.decode([SharedList.Item].self, try row.string("items")) ?? [])
            }
        }
    }

    public func saveList(_ list: SharedList, events: [Event]) throws -> [Event] {
        try writing { c in
            try c.run("""
                INSERT INTO lists (room, key, name, items)
                VALUES (\(Account.key(list.room)), \(Account.key(list.name)), \(list.name),
                  \(StoredForm.encode(list.items)))
                ON CONFLICT (room, key) DO UPDATE SET items = excluded.items
                """)
            return try EventRows.insert(events, c)
        }
    }
}
