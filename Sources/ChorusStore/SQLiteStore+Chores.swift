import ChorusCore
import Foundation
import GRDB
import ChorusSQL

extension SQLiteStore: ChoreStore {
    public func members(of room: String) throws -> [String] {
        try db.read { db in
            try String.fetchAll(cached: db, sql: """
                SELECT accounts.name FROM memberships JOIN accounts ON accounts.key = memberships.account
                WHERE memberships.room = ? ORDER BY memberships.seq
                """, arguments: [Account.key(room)])
        }
    }

    public func awayUntil(_ account: String, in room: String) throws -> Date? {
        try db.read { db in
            try Int64.fetchOne(cached: db, sql: "SELECT away_until FROM memberships WHERE room = ? AND account = ?",
                               arguments: [Account.key(room), Account.key(account)]).map(Millis.date)
        }
    }

    public func setAway(_ account: String, in room: String, until: Date?, events: [Event]) throws -> [Event] {
        try db.write { db in
            try db.run(sql: "UPDATE memberships SET away_until = ? WHERE room = ? AND account = ?",
                           arguments: [until.map(Millis.from), Account.key(room), Account.key(account)])
            return try events.map { try Self.insert($0, db) }
        }
    }

    public func chore(named name: String, in room: String) throws -> Chore? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM chores WHERE room = ? AND key = ?",
                             arguments: [Account.key(room), Account.key(name)]).map(Self.chore)
        }
    }

    public func chores(in room: String) throws -> [Chore] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM chores WHERE room = ? ORDER BY due, key", arguments: [Account.key(room)]).map(Self.chore)
        }
    }

    public func allChores() throws -> [Chore] {
        try db.read { db in try Row.fetchAll(cached: db, sql: "SELECT * FROM chores ORDER BY due").map(Self.chore) }
    }

    public func insertChore(_ chore: Chore, events: [Event]) throws -> (Chore, [Event]) {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO chores (room, key, name, frequency, hour, minute, rotation, current, turn_since, due, created_by, created_at,
                                    last_reminder, room_told_overdue, swap_from, swap_to, passed_over)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: StatementArguments(Self.choreArguments(chore)))
            var saved = chore
            saved.id = db.lastInsertedRowID
            return (saved, try events.map { try Self.insert($0, db) })
        }
    }

    public func updateChore(_ chore: Chore, events: [Event]) throws -> [Event] {
        try db.write { db in
            try db.run(sql: """
                UPDATE chores SET room = ?, key = ?, name = ?, frequency = ?, hour = ?, minute = ?, rotation = ?, current = ?,
                  turn_since = ?, due = ?, created_by = ?, created_at = ?, last_reminder = ?, room_told_overdue = ?, swap_from = ?, swap_to = ?,
                  passed_over = ? WHERE id = ?
                """, arguments: StatementArguments(Self.choreArguments(chore)) + [chore.id])
            guard db.changesCount == 1 else { throw StoreError.notFound("chore \(chore.name)") }
            return try events.map { try Self.insert($0, db) }
        }
    }

    public func deleteChore(_ chore: Chore, event: Event) throws -> Event {
        try db.write { db in
            try db.run(sql: "DELETE FROM chores WHERE id = ?", arguments: [chore.id])
            return try Self.insert(event, db)
        }
    }

    public func list(named name: String, in room: String) throws -> SharedList? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM lists WHERE room = ? AND key = ?",
                             arguments: [Account.key(room), Account.key(name)]).map(Self.list)
        }
    }

    public func lists(in room: String) throws -> [SharedList] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM lists WHERE room = ? ORDER BY key", arguments: [Account.key(room)]).map(Self.list)
        }
    }

    public func saveList(_ list: SharedList, events: [Event]) throws -> [Event] {
        try db.write { db in
            let items = StoredForm.encode(list.items)
            try db.run(sql: """
                INSERT INTO lists (room, key, name, items) VALUES (?, ?, ?, ?)
                ON CONFLICT(room, key) DO UPDATE SET items = excluded.items
                """, arguments: [Account.key(list.room), Account.key(list.name), list.name, items])
            return try events.map { try Self.insert($0, db) }
        }
    }

    private static func choreArguments(_ c: Chore) -> [(any DatabaseValueConvertible)?] {
        return [Account.key(c.room), c.key, c.name, StoredForm.encode(c.frequency), c.hour, c.minute, StoredForm.encode(c.rotation), c.current,
                Millis.from(c.turnSince), Millis.from(c.due), c.createdBy, Millis.from(c.createdAt),
                c.lastReminder.map(Millis.from), c.roomToldOverdue, c.swapFrom, c.swapTo, c.passedOver]
    }

    private static func chore(_ row: Row) -> Chore {
        let frequency = StoredForm.decode(Frequency.self, row["frequency"]) ?? .days(1)
        let rotation = StoredForm.decode([String].self, row["rotation"]) ?? []
        var chore = Chore(id: row["id"], room: row["room"], name: row["name"], frequency: frequency, hour: row["hour"], minute: row["minute"],
                          rotation: rotation, current: row["current"], turnSince: Millis.date(row["turn_since"]), due: Millis.date(row["due"]),
                          createdBy: row["created_by"], createdAt: Millis.date(row["created_at"]))
        chore.lastReminder = (row["last_reminder"] as Int64?).map(Millis.date)
        chore.roomToldOverdue = row["room_told_overdue"]
        chore.swapFrom = row["swap_from"]
        chore.swapTo = row["swap_to"]
        chore.passedOver = row["passed_over"]
        return chore
    }

    private static func list(_ row: Row) -> SharedList {
        let items = StoredForm.decode([SharedList.Item].self, row["items"]) ?? []
        return SharedList(room: row["room"], name: row["name"], items: items)
    }
}
