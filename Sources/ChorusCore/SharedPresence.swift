import Foundation

/// A store several server processes share: the room and private lines the others committed, and
/// the comings and goings of their users, in the order they were committed, so that each process
/// delivers them to its own clients.
public protocol SharedLog: Sendable {
    /// Lines, presence and bus messages other processes committed after `position`, oldest
    /// first, at most `limit` of each kind (this process's own are passed over), the position to
    /// read after next, and whether more was left for the next read.
    func changes(after position: Int64, limit: Int) throws -> (changes: [SharedChange], next: Int64, more: Bool)
    /// Calls `news` soon after a process commits something: a hint that may come late, or not at
    /// all, so a reader polls as well.
    func whenCommitted(_ news: @escaping @Sendable (LogNews) -> Void)
    /// The rooms whose stored state (the room, its settings, its memberships) another process
    /// changed after `since` on the store's clock, each with when; and the store's clock now. A change is stamped before
    /// its transaction commits, so a reader reads again from a little before what it has seen.
    func roomsChanged(since: Int64?) throws -> (rooms: [(room: String, changed: Int64)], now: Int64)
    /// A room as stored now; nil when it is gone.
    func storedRoom(_ key: String) throws -> StoredRoom?
    /// Stores `room` unless a room of its name is stored already: nil when this call made it, else
    /// the room as stored. Two processes making one room at once: one makes it, the other is told.
    func makeRoom(_ room: Room) throws -> StoredRoom?
    /// The position of the last line committed: a reader that has read up to it has read every
    /// line committed before this call.
    func lastLinePosition() throws -> Int64
    /// Writes `messages` to the log for the other processes, in this order, after everything this
    /// process wrote before: on the writer, in its batch's transaction.
    func post(_ messages: [BusMessage]) throws
}

/// What a wake-up from the log says.
public enum LogNews: Sendable {
    /// Another process committed something: read the log (and, with `roomsChanged`, the rooms).
    case look(roomsChanged: Bool)
    /// One statement appended these lines, or these bus messages, to the log, right after position
    /// `after`, the last at position `last`. A reader that has read up to `after` has now read up
    /// to `last`; any other reader must read the log. Both leave out this process's own (`last`
    /// counts them).
    case appended(after: Int64, last: Int64, lines: [HistoryEntry], messages: [BusMessage])
}

/// What another process committed to the log: a line, a change in who is connected there, or a
/// message for the others.
public enum SharedChange: Sendable {
    case line(HistoryEntry)
    case presence(PresenceChange)
    case bus(BusMessage)
}

/// A room with its settings and memberships, as stored.
public struct StoredRoom: Sendable {
    public var room: Room
    public var settings: RoomSettings
    public var memberships: [Membership]

    public init(room: Room, settings: RoomSettings, memberships: [Membership]) {
        self.room = room
        self.settings = settings
        self.memberships = memberships
    }
}

/// A user connected to one process of several, as the others see them: enough to list them
/// (NAMES, WHO, WHOIS), to tell their rooms when they come and go, and to keep their nick theirs.
public struct PresenceRecord: Sendable, Equatable {
    /// The connection, unique across processes (the process's node id and its connection number).
    public var connection: String
    /// The process the user is connected to.
    public var node: String
    /// That process's server name, as its clients see it (WHO, WHOIS); empty in a record written by
    /// a build before it was kept.
    public var server: String
    public var nick: String
    /// The nick as nicks are compared (the server's casemapping): what must be unique.
    public var nickKey: String
    public var user: String
    public var host: String
    public var realname: String
    public var account: String?
    public var away: String?
    /// User modes others may see: `i` invisible, `o` operator, `B` bot.
    public var modes: String
    /// The rooms the connection sits in (room keys), each with its status letters (`o`, `v`).
    public var rooms: [String: String]
    public var since: Date
    /// Why the last room was left (a PART's reason), or why the user quit.
    public var note: String?

    public init(connection: String, node: String, server: String, nick: String, nickKey: String, user: String, host: String,
                realname: String, account: String?, away: String?, modes: String, rooms: [String: String], since: Date,
                note: String? = nil) {
        self.connection = connection
        self.node = node
        self.server = server
        self.nick = nick
        self.nickKey = nickKey
        self.user = user
        self.host = host
        self.realname = realname
        self.account = account
        self.away = away
        self.modes = modes
        self.rooms = rooms
        self.since = since
        self.note = note
    }

    /// Whether connections logged in as these accounts may share a nick: they are one person's
    /// when both are the same account. A guest's nick is its own.
    public static func samePerson(_ account: String?, _ other: String?) -> Bool {
        guard let account, let other else { return false }
        return Account.key(account) == Account.key(other)
    }

    /// The rooms as one text: `key status` pairs joined by commas (neither may hold a comma).
    public var storedRooms: String {
        rooms.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ",")
    }

    public static func rooms(stored: String) -> [String: String] {
        var rooms: [String: String] = [:]
        for pair in stored.split(separator: ",") {
            let parts = pair.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            rooms[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return rooms
    }
}

/// A connection of another process arrived or changed (its nick, rooms, away state), or is gone.
public enum PresenceChange: Sendable, Equatable {
    case here(PresenceRecord)
    case gone(connection: String, reason: String)
}

/// Who is connected to which process, kept in a store several processes share. Each process holds
/// a lease it renews (`heartbeat`); a process silent for longer than a lease is given up for dead,
/// and its users are gone for everyone (`withdrawSilentNodes`).
/// How often to renew, and how long a lease lasts, are the store's to say.
public protocol SharedPresence: Sendable {
    /// This process's id, as presence records and lines name it.
    var node: String { get }
    /// Publishes a connection of this process, or its new state. False, with nothing written, when
    /// another live connection holds its nick: nicks are unique across processes, but for the
    /// connections of one account, which may share one (`PresenceRecord.samePerson`).
    func publish(_ record: PresenceRecord) throws -> Bool
    /// The connection is gone, for `reason`.
    func withdraw(connection: String, reason: String) throws
    /// Every connection of this process but `keeping` is gone: after changes that may not have
    /// been written.
    func withdrawOthers(keeping: [String], reason: String) throws
    /// Takes this process's lease, and returns the connections of the other live processes and the
    /// position in the log they are as of.
    func join() throws -> (records: [PresenceRecord], position: Int64)
    /// Renews this process's lease. False when it had lapsed and the others had given this
    /// process up (its connections withdrawn): they must be published again.
    func heartbeat() throws -> Bool
    /// Withdraws the connections of processes whose lease lapsed, and forgets what every process
    /// has read long since (departed connections, bus messages); returns those processes.
    func withdrawSilentNodes() throws -> [String]
    /// This process stops: its lease and its connections go (each with `reason`).
    func leave(reason: String) throws
    /// How often `heartbeat` must be called.
    var heartbeatInterval: TimeInterval { get }
    /// How long a process may stay silent before the others give it up.
    var lease: TimeInterval { get }
}

/// What several processes on one database share beside the team's state: the log of lines and
/// presence, and who is connected where. Whoever opens a shared store (chorusd, a test) gives it to
/// the server at start; a store of one process (SQLite) has none, and nothing of it runs.
public struct ClusterLink: Sendable {
    public let log: any SharedLog
    public let presence: any SharedPresence

    public init(log: any SharedLog, presence: any SharedPresence) {
        self.log = log
        self.presence = presence
    }
}
