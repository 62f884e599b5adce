import ChorusCore
import Foundation

/// Accounts, rooms and who belongs to which, for both databases.
public protocol SQLRoomStore: Store, SQLDatabase {}

extension SQLRoomStore {
    // MARK: Accounts

    private static var accountColumns: String { "id, name, email, first_name, last_name, password_hash, created_at" }

    public func insertAccount(_ account: Account) throws -> Account {
        try writing { c in
            // Another process inserting the same name at once meets the UNIQUE key: the same refusal.
            guard let row = try c.rows("""
                INSERT INTO accounts (key, name, email, first_name, last_name, password_hash, created_at)
                VALUES (\(account.key), \(account.name), \(account.email), \(account.firstName), \(account.lastName),
                  \(account.passwordHash), \(Millis.from(account.createdAt)))
                ON CONFLICT (key) DO NOTHING RETURNING id
                """).first
            else { throw StoreError.duplicate(account.name) }
            var saved = account
            saved.id = try row.int64("id")
            return saved
        }
    }

    public func account(named name: String) throws -> Account? {
        try accounts(where: "key = \(Account.key(name))").first
    }

    public func allAccounts() throws -> [Account] {
        try accounts(where: "true ORDER BY key")
    }

    private func accounts(where condition: SQL) throws -> [Account] {
        try reading { c in
            try c.rows("SELECT \(raw: Self.accountColumns) FROM accounts WHERE deleted_at IS NULL AND \(condition)").map { row in
                Account(id: try row.int64("id"), name: try row.string("name"), email: try row.string("email"),
                        firstName: try row.string("first_name"), lastName: try row.string("last_name"),
                        passwordHash: try row.string("password_hash"), createdAt: try row.date("created_at"))
            }
        }
    }

    public func updateAccount(_ account: Account) throws {
        try writing { c in
            let changed = try c.run("""
                UPDATE accounts
                SET name = \(account.name), email = \(account.email), first_name = \(account.firstName),
                  last_name = \(account.lastName), password_hash = \(account.passwordHash)
                WHERE key = \(account.key)
                """)
            if changed == 0 { throw StoreError.notFound(account.name) }
        }
    }

    public func accountKeys() throws -> [String] {
        try reading { c in try c.rows("SELECT key FROM accounts WHERE deleted_at IS NULL").map { try $0.string("key") } }
    }

    // MARK: Rooms

    public func allRooms() throws -> [Room] {
        try rooms(where: "true")
    }

    /// The rooms `condition` picks, oldest first.
    public func rooms(where condition: SQL) throws -> [Room] {
        try reading { c in
            try c.rows("""
                SELECT name, topic, topic_set_by, topic_set_at, invite_only, topic_locked, no_external, secret, moderated,
                       channel_key, user_limit, bans, created_at
                FROM rooms WHERE \(condition) ORDER BY created_at, key
                """).map { row in
                var modes = RoomModes()
                modes.inviteOnly = try row.bool("invite_only")
                modes.topicLocked = try row.bool("topic_locked")
                modes.noExternal = try row.bool("no_external")
                modes.secret = try row.bool("secret")
                modes.moderated = try row.bool("moderated")
                modes.key = try row.string("channel_key")
                modes.limit = try row.int64("user_limit").map { Int($0) }
                return Room(name: try row.string("name"), topic: try row.string("topic"), topicSetBy: try row.string("topic_set_by"),
                            topicSetAt: try row.date("topic_set_at"), modes: modes,
                            bans: (try row.string("bans") as String).split(separator: "\n").map(String.init),
                            createdAt: try row.date("created_at"))
            }
        }
    }

    public func roomName(_ key: String) throws -> String? {
        let read = {
            try reading { c in try c.rows("SELECT name FROM rooms WHERE key = \(Account.key(key))").first.flatMap { try $0.string("name") } }
        }
        guard let cache else { return try read() }
        return try cache.roomName(Account.key(key), read: read)
    }

    /// Holds the room until the transaction ends, where other processes may decide about it
    /// meanwhile (PostgreSQL). One process writes a SQLite file, one transaction at a time.
    public func holdRoom(_ key: String) throws {
        // The store itself makes each call a transaction of its own: there is nothing to hold across.
        guard inTransaction else { return }
        let key = Account.key(key)
        try writing { c in
            guard !c.dialect.forUpdate.isEmpty else { return }
            _ = try c.rows("SELECT key FROM rooms WHERE key = \(key)\(raw: c.dialect.forUpdate)")
            // What this transaction read of the room's roles may be older than the lock.
            forget { $0.roles = $0.roles.filter { !$0.key.hasPrefix(key + " ") } }
        }
    }

    public func saveRoom(_ room: Room) throws {
        forget { $0.roomNames[room.key] = nil }
        try writing { c in try c.run(StoredStatements.saveRoom(room)) }
    }

    public func deleteRoom(named name: String) throws {
        let key = Account.key(name)
        try writing { c in
            // Memberships, jobs, asks and settings go with the room (ON DELETE CASCADE).
            try c.run("DELETE FROM rooms WHERE key = \(key)")
            try c.run("DELETE FROM history WHERE conversation = \(key)")
            try c.run("DELETE FROM events WHERE room = \(key)")
            forgetAll()
        }
    }

    // MARK: Memberships

    public func allMemberships() throws -> [Membership] {
        try memberships(where: "true")
    }

    public func memberships(ofRoom room: String) throws -> [Membership] {
        try memberships(where: "room = \(room)")
    }

    public func memberships(ofAccount account: String) throws -> [Membership] {
        try memberships(where: "account = \(Account.key(account))")
    }

    private func memberships(where condition: SQL) throws -> [Membership] {
        try reading { c in
            try c.rows("SELECT room, account, role, voiced, since FROM memberships WHERE \(condition) ORDER BY seq").map { row in
                Membership(room: try row.string("room"), account: try row.string("account"),
                           role: Role(rawValue: try row.string("role")) ?? .member, voiced: try row.bool("voiced"), since: try row.date("since"))
            }
        }
    }

    public func saveMembership(_ m: Membership) throws {
        try writing { c in
            try c.run("""
                INSERT INTO memberships (room, account, role, voiced, since)
                VALUES (\(m.room), \(m.account), \(m.role.rawValue), \(m.voiced), \(Millis.from(m.since)))
                ON CONFLICT (room, account) DO UPDATE SET role = excluded.role, voiced = excluded.voiced
                """)
            forget { $0.roles[StoreCache.Entries.roleKey(m.account, m.room)] = nil }
        }
    }

    public func deleteMembership(room: String, account: String) throws {
        try writing { c in
            try c.run("DELETE FROM memberships WHERE room = \(room) AND account = \(account)")
            forget { $0.roles[StoreCache.Entries.roleKey(account, room)] = nil }
        }
    }
}
