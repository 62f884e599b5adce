import ChorusCore
import ChorusStore
import Foundation
import PostgresNIO
import ChorusSQL

extension PostgresStore: ChoreStore {
    public func members(of room: String) throws -> [String] {
        try db.read { link in
            try link.query("""
                SELECT accounts.name FROM memberships JOIN accounts ON accounts.key = memberships.account
                WHERE memberships.room = ? ORDER BY memberships.seq
                """, [Account.key(room)]).map { try $0.string(0) }
        }
    }

    public func awayUntil(_ account: String, in room: String) throws -> Date? {
        try db.read { link in
            try link.query("SELECT away_until FROM memberships WHERE room = ? AND account = ?",
                           [Account.key(room), Account.key(account)]).first.flatMap { try $0.date(0) }
        }
    }

    public func setAway(_ account: String, in room: String, until: Date?, events: [Event]) throws -> [Event] {
        try db.write { link in
            try link.execute("UPDATE memberships SET away_until = ? WHERE room = ? AND account = ?",
                             [until.map(Millis.from), Account.key(room), Account.key(account)])
            return try events.map { try Self.insert($0, link) }
        }
    }

    private static let choreColumns = """
        id, room, key, name, frequency, hour, minute, rotation, current, turn_since, due, created_by, created_at,
        last_reminder, room_told_overdue, swap_from, swap_to, passed_over, xmin::text
        """

    public func chore(named name: String, in room: String) throws -> Chore? {
        try db.read { link in
            try link.queryVersioned("chores", "SELECT \(Self.choreColumns) FROM chores WHERE room = ? AND key = ?",
                           [Account.key(room), Account.key(name)]).first.map(Self.chore)
        }
    }

    public func chores(in room: String) throws -> [Chore] {
        try db.read { link in
            try link.queryVersioned("chores", "SELECT \(Self.choreColumns) FROM chores WHERE room = ? ORDER BY due, key", [Account.key(room)]).map(Self.chore)
        }
    }

    public func allChores() throws -> [Chore] {
        try db.read { link in try link.queryVersioned("chores", "SELECT \(Self.choreColumns) FROM chores ORDER BY due").map(Self.chore) }
    }

    public func insertChore(_ chore: Chore, events: [Event]) throws -> (Chore, [Event]) {
        try db.write { link in
            let rows = try link.query("""
                INSERT INTO chores (room, key, name, frequency, hour, minute, rotation, current, turn_since, due, created_by, created_at,
                                    last_reminder, room_told_overdue, swap_from, swap_to, passed_over)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """, Self.choreValues(chore))
            var saved = chore
            saved.id = try rows[0].int64(0)
            return (saved, try events.map { try Self.insert($0, link) })
        }
    }

    public func updateChore(_ chore: Chore, events: [Event]) throws -> [Event] {
        try db.write { link in
            try Self.update("chores", id: chore.id, set: """
                room = ?, key = ?, name = ?, frequency = ?, hour = ?, minute = ?, rotation = ?, current = ?, turn_since = ?,
                due = ?, created_by = ?, created_at = ?, last_reminder = ?, room_told_overdue = ?, swap_from = ?, swap_to = ?,
                passed_over = ?
                """, Self.choreValues(chore), events: events, what: "chore \(chore.name)", link)
        }
    }

    public func deleteChore(_ chore: Chore, event: Event) throws -> Event {
        try db.write { link in
            try link.execute("DELETE FROM chores WHERE id = ?", [chore.id])
            return try Self.insert(event, link)
        }
    }

    public func list(named name: String, in room: String) throws -> SharedList? {
        try db.read { link in
            try link.query("SELECT room, name, items FROM lists WHERE room = ? AND key = ?", [Account.key(room), Account.key(name)])
                .first.map(Self.list)
        }
    }

    public func lists(in room: String) throws -> [SharedList] {
        try db.read { link in
            try link.query("SELECT room, name, items FROM lists WHERE room = ? ORDER BY key", [Account.key(room)]).map(Self.list)
        }
    }

    public func saveList(_ list: SharedList, events: [Event]) throws -> [Event] {
        try db.write { link in
            try link.execute("""
                INSERT INTO lists (room, key, name, items) VALUES (?, ?, ?, ?)
                ON CONFLICT (room, key) DO UPDATE SET items = excluded.items
                """, [Account.key(list.room), Account.key(list.name), list.name, StoredForm.encode(list.items)])
            return try events.map { try Self.insert($0, link) }
        }
    }

    private static func choreValues(_ c: Chore) -> [any PostgresBindable] {
        [Account.key(c.room), c.key, c.name, StoredForm.encode(c.frequency), c.hour, c.minute, StoredForm.encode(c.rotation), c.current,
         Millis.from(c.turnSince), Millis.from(c.due), c.createdBy, Millis.from(c.createdAt),
         c.lastReminder.map(Millis.from), c.roomToldOverdue, c.swapFrom, c.swapTo, c.passedOver]
    }

    private static func chore(_ row: PostgresRandomAccessRow) throws -> Chore {
        var chore = Chore(id: try row.int64(0), room: try row.string(1), name: try row.string(3),
                          frequency: StoredForm.decode(Frequency.self, try row.string(4)) ?? .days(1),
                          hour: try row.int(5), minute: try row.int(6),
                          rotation: StoredForm.decode([String].self, try row.string(7)) ?? [], current: try row.int(8),
                          turnSince: try row.date(9), due: try row.date(10), createdBy: try row.string(11), createdAt: try row.date(12))
        chore.lastReminder = try row.date(13)
        chore.roomToldOverdue = try row.bool(14)
        chore.swapFrom = try row.string(15)
        chore.swapTo = try row.string(16)
        chore.passedOver = try row.string(17)
        return chore
    }

    private static func list(_ row: PostgresRandomAccessRow) throws -> SharedList {
        SharedList(room: try row.string(0), name: try row.string(1),
                   items: StoredForm.decode([SharedList.Item].self, try row.string(2)) ?? [])
    }
}
