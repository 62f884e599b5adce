import ChorusCore
import ChorusStore
import Foundation
import PostgresNIO
import ChorusSQL

// Accounts, their tokens and what they have seen; rooms and memberships.
extension PostgresStore {
    // MARK: Accounts

    private static let accountColumns = "id, name, email, first_name, last_name, password_hash, created_at"

    public func insertAccount(_ account: Account) throws -> Account {
        try db.write { link in
            // A second node inserting the same name at once meets the UNIQUE key: the same refusal.
            let rows = try link.query("""
                INSERT INTO accounts (key, name, email, first_name, last_name, password_hash, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING id
                """, [account.key, account.name, account.email, account.firstName, account.lastName,
                      account.passwordHash, Millis.from(account.createdAt)])
            guard let row = rows.first else { throw StoreError.duplicate(account.name) }
            var saved = account
            saved.id = try row.int64(0)
            return saved
        }
    }

    public func account(named name: String) throws -> Account? {
        try db.read { link in
            try link.query("SELECT \(Self.accountColumns) FROM accounts WHERE key = ?", [Account.key(name)]).first.map(Self.account)
        }
    }

    public func updateAccount(_ account: Account) throws {
        try db.write { link in
            let changed = try link.execute("""
                UPDATE accounts SET name = ?, email = ?, first_name = ?, last_name = ?, password_hash = ? WHERE key = ?
                """, [account.name, account.email, account.firstName, account.lastName, account.passwordHash, account.key])
            if changed == 0 { throw StoreError.notFound(account.name) }
        }
    }

    public func deleteAccount(named name: String) throws -> Bool {
        let key = Account.key(name)
        return try db.write { link in
            let deleted = try link.execute("DELETE FROM accounts WHERE key = ?", [key]) > 0
            for table in ["held_lines WHERE account", "account_tokens WHERE account", "contractors WHERE account_key",
                          "account_presence WHERE account_key", "read_markers WHERE account_key"] {
                try link.execute("DELETE FROM \(table) = ?", [key])
            }
            forgetAll()
            return deleted
        }
    }

    public func allAccounts() throws -> [Account] {
        try db.read { link in try link.query("SELECT \(Self.accountColumns) FROM accounts ORDER BY key").map(Self.account) }
    }

    public func accountKeys() throws -> [String] {
        try db.read { link in try link.query("SELECT key FROM accounts").map { try $0.string(0) } }
    }

    private static func account(_ row: PostgresRandomAccessRow) throws -> Account {
        Account(id: try row.int64(0), name: try row.string(1), email: try row.string(2), firstName: try row.string(3),
                lastName: try row.string(4), passwordHash: try row.string(5), createdAt: try row.date(6))
    }

    // MARK: Rooms

    public func allRooms() throws -> [Room] {
        try rooms("")
    }

    /// The rooms `condition` (a WHERE clause, or nothing) picks, oldest first.
    func rooms(_ condition: String, _ values: [any PostgresBindable] = []) throws -> [Room] {
        try db.read { link in
            try link.query("""
                SELECT name, topic, topic_set_by, topic_set_at, invite_only, topic_locked, no_external, secret, moderated,
                       channel_key, user_limit, bans, created_at
                FROM rooms \(condition) ORDER BY created_at, key
                """, values).map { row in
                var modes = RoomModes()
                modes.inviteOnly = try row.bool(4)
                modes.topicLocked = try row.bool(5)
                modes.noExternal = try row.bool(6)
                modes.secret = try row.bool(7)
                modes.moderated = try row.bool(8)
                modes.key = try row.string(9)
                modes.limit = try row.int(10)
                let bans: String = try row.string(11)
                return Room(name: try row.string(0), topic: try row.string(1), topicSetBy: try row.string(2), topicSetAt: try row.date(3),
                            modes: modes, bans: bans.split(separator: "\n").map(String.init), createdAt: try row.date(12))
            }
        }
    }

    public func roomName(_ key: String) throws -> String? {
        let key = Account.key(key)
        if let known = cache?.with({ $0.roomNames[key] }) { return known }
        let name: String? = try db.read { link in try link.query("SELECT name FROM rooms WHERE key = ?", [key]).first?.string(0) }
        cache?.with { $0.roomNames[key] = .some(name) }
        return name
    }

    public func holdRoom(_ key: String) throws {
        // The store itself makes each call a transaction of its own: there is nothing to hold across.
        guard let link = connection else { return }
        let key = Account.key(key)
        _ = try link.query("SELECT key FROM rooms WHERE key = ? FOR UPDATE", [key])
        // What this transaction read of the room's roles may be older than the lock.
        forget { $0.roles = $0.roles.filter { !$0.key.hasPrefix(key + " ") } }
    }

    public func saveRoom(_ room: Room) throws {
        forget { $0.roomNames[room.key] = nil }
        try db.write { link in try link.execute(StoredStatements.saveRoom, Self.roomValues(room)) }
    }

    /// `StoredStatements.insertRoom`'s values.
    static func roomValues(_ room: Room) -> [any PostgresBindable] {
        [room.key, room.name, room.topic, room.topicSetBy, room.topicSetAt.map(Millis.from), room.modes.inviteOnly,
         room.modes.topicLocked, room.modes.noExternal, room.modes.secret, room.modes.moderated, room.modes.key,
         room.modes.limit, room.bans.joined(separator: "\n"), Millis.from(room.createdAt)]
    }

    public func deleteRoom(named name: String) throws {
        let key = Account.key(name)
        try db.write { link in
            // Memberships, jobs, asks and settings go with the room (ON DELETE CASCADE).
            try link.execute("DELETE FROM rooms WHERE key = ?", [key])
            try link.execute("DELETE FROM history WHERE conversation = ?", [key])
            try link.execute("DELETE FROM events WHERE room = ?", [key])
            forgetAll()
        }
    }

    // MARK: Memberships

    private static let membershipColumns = "room, account, role, voiced, since"

    public func allMemberships() throws -> [Membership] {
        try db.read { link in try link.query("SELECT \(Self.membershipColumns) FROM memberships ORDER BY seq").map(Self.membership) }
    }

    func memberships(ofRoom room: String) throws -> [Membership] {
        try db.read { link in
            try link.query("SELECT \(Self.membershipColumns) FROM memberships WHERE room = ? ORDER BY seq", [room]).map(Self.membership)
        }
    }

    public func memberships(ofAccount account: String) throws -> [Membership] {
        try db.read { link in
            try link.query("SELECT \(Self.membershipColumns) FROM memberships WHERE account = ? ORDER BY seq",
                           [Account.key(account)]).map(Self.membership)
        }
    }

    public func saveMembership(_ m: Membership) throws {
        try db.write { link in
            try link.execute("""
                INSERT INTO memberships (room, account, role, voiced, since) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (room, account) DO UPDATE SET role = excluded.role, voiced = excluded.voiced
                """, [m.room, m.account, m.role.rawValue, m.voiced, Millis.from(m.since)])
            forget { $0.roles[StoreCache.Entries.roleKey(m.account, m.room)] = nil }
        }
    }

    public func deleteMembership(room: String, account: String) throws {
        try db.write { link in
            try link.execute("DELETE FROM memberships WHERE room = ? AND account = ?", [room, account])
            forget { $0.roles[StoreCache.Entries.roleKey(account, room)] = nil }
        }
    }

    private static func membership(_ row: PostgresRandomAccessRow) throws -> Membership {
        Membership(room: try row.string(0), account: try row.string(1), role: Role(rawValue: try row.string(2)) ?? .member,
                   voiced: try row.bool(3), since: try row.date(4))
    }
}
