import ChorusCore
import ChorusIRC
import ChorusWorkspace

/// The users connected to the other processes on a shared store, as their latest records say:
/// by connection, nick, account and room. It lives on the server's loop, beside `ClientRegistry`,
/// and changes only through `replace` and `remove`, so the indexes cannot drift from the records.
struct RemotePresence {
    /// The accounts with a session, as the Workspace reads them (shared with `ClientRegistry`).
    let connected: ConnectedAccounts

    init(connected: ConnectedAccounts) {
        self.connected = connected
    }
    private(set) var users: [String: PresenceRecord] = [:]
    /// Connections by folded nick: several when one person is connected to several nodes (a nick
    /// is shared by the connections of one account only).
    private var nicks: [String: [String]] = [:]
    /// Connections by account key.
    private var accounts: [String: Set<String>] = [:]
    /// Connections by room key.
    private var rooms: [String: Set<String>] = [:]

    private(set) var invisibleCount = 0
    private(set) var operCount = 0

    var count: Int { users.count }

    /// The first to connect of those that hold `nick`.
    func user(nick: String) -> PresenceRecord? { holders(of: Names.fold(nick)).first }

    /// Every connection elsewhere under the nick (folded), in the order they connected: one
    /// person's, on one node or several.
    func holders(of nickKey: String) -> [PresenceRecord] {
        guard let connections = nicks[nickKey] else { return [] }
        if connections.count == 1 { return users[connections[0]].map { [$0] } ?? [] }
        return connections.compactMap { users[$0] }.sorted { ($0.since, $0.connection) < ($1.since, $1.connection) }
    }

    func users(ofAccount key: String) -> [PresenceRecord] {
        (accounts[key] ?? []).compactMap { users[$0] }.sorted { $0.since < $1.since }
    }

    /// The room's members elsewhere, in the order they connected.
    func members(of roomKey: String) -> [PresenceRecord] {
        (rooms[roomKey] ?? []).compactMap { users[$0] }.sorted { $0.since < $1.since }
    }

    func memberCount(of roomKey: String) -> Int { rooms[roomKey]?.count ?? 0 }

    /// Keeps `record` as its connection's state; returns the state it replaces.
    @discardableResult
    mutating func replace(_ record: PresenceRecord) -> PresenceRecord? {
        let old = remove(record.connection)
        users[record.connection] = record
        nicks[record.nickKey, default: []].append(record.connection)
        if let account = record.account {
            accounts[Account.key(account), default: []].insert(record.connection)
            connected.connect(Account.key(account), elsewhere: true)
        }
        for room in record.rooms.keys { rooms[room, default: []].insert(record.connection) }
        if record.modes.contains("i") { invisibleCount += 1 }
        if record.modes.contains("o") { operCount += 1 }
        return old
    }

    /// Forgets the connection; returns its last state.
    @discardableResult
    mutating func remove(_ connection: String) -> PresenceRecord? {
        guard let old = users.removeValue(forKey: connection) else { return nil }
        nicks[old.nickKey]?.removeAll { $0 == connection }
        if nicks[old.nickKey]?.isEmpty == true { nicks[old.nickKey] = nil }
        if let account = old.account {
            let key = Account.key(account)
            accounts[key]?.remove(connection)
            if accounts[key]?.isEmpty == true { accounts[key] = nil }
            connected.disconnect(key, elsewhere: true)
        }
        for room in old.rooms.keys {
            rooms[room]?.remove(connection)
            if rooms[room]?.isEmpty == true { rooms[room] = nil }
        }
        if old.modes.contains("i") { invisibleCount -= 1 }
        if old.modes.contains("o") { operCount -= 1 }
        return old
    }
}

extension PresenceRecord {
    /// `nick!user@host`, as lines from this user carry it.
    var prefix: String { "\(nick)!\(user)@\(host)" }
    var isInvisible: Bool { modes.contains("i") }
    var isOper: Bool { modes.contains("o") }
    var isBot: Bool { modes.contains("B") }

    /// `@`, `+`, `@+` (multi-prefix) or empty, in a room, as `LiveRoom.prefix(of:multiPrefix:)` writes it.
    func prefix(in roomKey: String, multiPrefix: Bool) -> String {
        rooms[roomKey].map { LiveRoom.Status(letters: $0).prefix(multiPrefix: multiPrefix) } ?? ""
    }
}
