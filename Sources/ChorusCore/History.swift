import Foundation

/// One stored chat line: a channel message, or a private message between two accounts.
public struct HistoryEntry: Equatable, Sendable {
    /// Where the line belongs: a room key (`#kitchen`) or a conversation key (see `HistoryEntry.conversation`).
    public var conversation: String
    public var msgid: String
    public var time: Date
    /// `PRIVMSG` or `NOTICE`.
    public var command: String
    /// The sender as `nick!user@host`.
    public var source: String
    public var account: String?
    /// The target as the sender wrote it: a channel name or the recipient's nick.
    public var target: String
    public var text: String
    /// Client-only tags (`+draft/reply=…`) as sent, serialized `key=value;…`, or empty.
    public var clientTags: String
    /// nil: every member may read the line. Otherwise the account keys that may, besides the room's
    /// managers (an event of a room whose visibility is `own`).
    public var audience: [String]?

    public init(conversation: String, msgid: String, time: Date, command: String, source: String,
                account: String?, target: String, text: String, clientTags: String = "", audience: [String]? = nil) {
        self.conversation = conversation
        self.msgid = msgid
        self.time = time
        self.command = command
        self.source = source
        self.account = account
        self.target = target
        self.text = text
        self.clientTags = clientTags
        self.audience = audience
    }

    /// The key of the private conversation between two accounts, the same from either side.
    public static func conversation(between a: String, and b: String) -> String {
        let (x, y) = (Account.key(a), Account.key(b))
        return x <= y ? "@\(x) \(y)" : "@\(y) \(x)"
    }
}

/// Who reads a room's history: lines meant for some members only are left out for the others.
public enum HistoryReader: Equatable, Sendable {
    /// A manager of the room, or a private conversation: every line.
    case everything
    /// A member's account key, or nil for a guest without an account.
    case member(String?)
}

/// A page of history, in the shapes IRCv3 `draft/chathistory` asks for.
public enum HistoryQuery: Equatable, Sendable {
    public enum Bound: Equatable, Sendable {
        case time(Date)
        case msgid(String)
    }
    case latest(after: Bound?, limit: Int)
    case before(Bound, limit: Int)
    case after(Bound, limit: Int)
    case around(Bound, limit: Int)
    case between(Bound, Bound, limit: Int)
}
