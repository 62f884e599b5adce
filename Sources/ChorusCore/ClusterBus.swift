import Foundation

/// What one node tells the others that is neither team state nor anyone's history: a line only
/// relayed, and an order about the presence in a room of someone connected there. Each message is
/// written to the shared log in its one order with the lines and presence around it (a reaction
/// never arrives before the line it reacts to) and read by every other node (`SharedLog.changes`).
/// A store of one process (SQLite) has no bus, and nothing posts to it.
public enum BusMessage: Equatable, Sendable {
    case line(RelayedLine)
    /// Takes someone connected to the node that reads it out of a room (a guest: a member's KICK
    /// ends the stored membership instead).
    case kick(PresenceOrder)
    /// Lets someone connected to the node that reads it into a room, and tells them.
    case invite(PresenceOrder)
    /// A member is being kicked from a room (their membership ends in the store, and every node
    /// reads the room again): the node that reads it says the KICK as the kicker gave it, with
    /// their reason, when it takes the member's connections out. It does nothing by itself: a KICK
    /// the room's rules refuse ends nothing.
    case removal(PresenceOrder)
    /// An operator's KILL of someone connected to the node that reads it: it ends every session
    /// under the nick there, as a KILL given on that node would.
    case kill(KillOrder)
    /// A room is being closed (it goes from the store in the same transaction, and every node
    /// reads the room again): the node that reads it names who closed it when it takes the
    /// members out. It does nothing by itself.
    case closure(RoomClosure)
}

/// A line the receiving node delivers as it is and no one's history keeps: a TAGMSG, a line to a
/// room's managers or voiced (`@#room`), a guest's private line, the bot's direct line to an
/// account connected elsewhere only.
public struct RelayedLine: Codable, Equatable, Sendable {
    public var msgid: String
    public var time: Date
    /// `PRIVMSG`, `NOTICE` or `TAGMSG`.
    public var command: String
    public var source: String
    public var account: String?
    /// A room's name, perhaps with `@` or `+` before it (its managers, or voiced too), a nick, or
    /// an account's name (its connections, whatever their nicks).
    public var target: String
    public var text: String
    /// The sender's client tags, serialized (`+draft/react=…`).
    public var clientTags: String
    /// The bot's direct line stands in for this room line, for someone who may have heard it.
    public var standsInFor: StandIn?

    public init(msgid: String, time: Date, command: String, source: String, account: String?, target: String,
                text: String, clientTags: String = "", standsInFor: StandIn? = nil) {
        self.msgid = msgid
        self.time = time
        self.command = command
        self.source = source
        self.account = account
        self.target = target
        self.text = text
        self.clientTags = clientTags
        self.standsInFor = standsInFor
    }

    /// The room line a direct line stands in for: the node that holds the recipient's connections
    /// leaves it out when one of them heard that line in `room` (any member did when
    /// `membersHear`, else only the room's managers). That node knows who is in its rooms now; the
    /// one that sent it may not yet.
    public struct StandIn: Codable, Equatable, Sendable {
        /// The room's key.
        public var room: String
        public var membersHear: Bool

        public init(room: String, membersHear: Bool) {
            self.room = room
            self.membersHear = membersHear
        }
    }
}

/// What someone on one node does to the presence in a room of someone connected to another that
/// changes no stored membership: a guest's KICK, an INVITE that makes no one a member. A member's
/// KICK or a manager's INVITE of an account changes the store instead, and every node reads the
/// room again (a member's KICK is announced beside it, as a `removal`, for its words).
public struct PresenceOrder: Codable, Equatable, Sendable {
    /// Whom it is about, by nick.
    public var nick: String
    /// The room's name.
    public var room: String
    /// A KICK's reason.
    public var reason: String?
    /// Who gave the order: their prefix and account.
    public var source: String
    public var account: String?
    public var time: Date

    public init(nick: String, room: String, reason: String? = nil, source: String, account: String?, time: Date) {
        self.nick = nick
        self.room = room
        self.reason = reason
        self.source = source
        self.account = account
        self.time = time
    }
}

/// An operator's KILL of someone connected to another node.
public struct KillOrder: Codable, Equatable, Sendable {
    /// Whom it ends, by nick.
    public var nick: String
    /// What the person and their rooms read (`Killed (oper (why))`).
    public var reason: String
    /// The operator's prefix.
    public var source: String
    public var time: Date

    public init(nick: String, reason: String, source: String, time: Date) {
        self.nick = nick
        self.reason = reason
        self.source = source
        self.time = time
    }
}

/// Who closed a room (`!room close`), for the other nodes' members of it.
public struct RoomClosure: Codable, Equatable, Sendable {
    /// The room's key.
    public var room: String
    /// The nick of the manager who closed it.
    public var by: String
    public var time: Date

    public init(room: String, by: String, time: Date) {
        self.room = room
        self.by = by
        self.time = time
    }
}

extension BusMessage {
    /// The message's kind, as the log's `kind` column names it.
    public var kind: String {
        switch self {
        case .line: return "line"
        case .kick: return "kick"
        case .invite: return "invite"
        case .removal: return "removal"
        case .kill: return "kill"
        case .closure: return "closure"
        }
    }

    /// One of each for every message (a typing notice is one): configured once, never changed.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()

    /// The message's body as JSON, times in milliseconds.
    public func body() throws -> Data {
        let encoder = Self.encoder
        switch self {
        case .line(let line): return try encoder.encode(line)
        case .kick(let order), .invite(let order), .removal(let order): return try encoder.encode(order)
        case .kill(let order): return try encoder.encode(order)
        case .closure(let closure): return try encoder.encode(closure)
        }
    }

    /// A message from its kind and body; nil for a kind this build does not know (a newer node's).
    public init?(kind: String, body: Data) throws {
        let decoder = Self.decoder
        switch kind {
        case "line": self = .line(try decoder.decode(RelayedLine.self, from: body))
        case "kick": self = .kick(try decoder.decode(PresenceOrder.self, from: body))
        case "invite": self = .invite(try decoder.decode(PresenceOrder.self, from: body))
        case "removal": self = .removal(try decoder.decode(PresenceOrder.self, from: body))
        case "kill": self = .kill(try decoder.decode(KillOrder.self, from: body))
        case "closure": self = .closure(try decoder.decode(RoomClosure.self, from: body))
        default: return nil
        }
    }
}
