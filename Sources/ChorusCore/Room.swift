import Foundation

/// A member's standing in a room. IRC channel operators are the room's managers.
public enum Role: String, Sendable, Codable, Comparable {
    case member
    case manager

    public static func < (a: Role, b: Role) -> Bool { a == .member && b == .manager }
}

/// The channel modes a room keeps across restarts.
public struct RoomModes: Equatable, Sendable {
    public var inviteOnly = false      // +i
    public var topicLocked = true      // +t: only managers change the topic
    public var noExternal = true       // +n: only members may speak
    public var secret = false          // +s: hidden from LIST and WHOIS
    public var moderated = false       // +m: only voiced members and managers may speak
    public var key: String?            // +k
    public var limit: Int?             // +l

    public init() {}
}

/// A room (an IRC channel) as it is stored.
public struct Room: Equatable, Sendable {
    public var name: String
    public var topic: String
    public var topicSetBy: String
    public var topicSetAt: Date?
    public var modes: RoomModes
    public var bans: [String]
    public var createdAt: Date

    public init(name: String, topic: String = "", topicSetBy: String = "", topicSetAt: Date? = nil,
                modes: RoomModes = RoomModes(), bans: [String] = [], createdAt: Date) {
        self.name = name
        self.topic = topic
        self.topicSetBy = topicSetBy
        self.topicSetAt = topicSetAt
        self.modes = modes
        self.bans = bans
        self.createdAt = createdAt
    }

    public var key: String { Account.key(name) }
}

/// An account's remembered place in a room: who is put back in the room when they log in, and as what.
public struct Membership: Equatable, Sendable {
    public var room: String      // room key
    public var account: String   // account key
    public var role: Role
    public var voiced: Bool
    public var since: Date

    public init(room: String, account: String, role: Role, voiced: Bool = false, since: Date) {
        self.room = room
        self.account = account
        self.role = role
        self.voiced = voiced
        self.since = since
    }
}
