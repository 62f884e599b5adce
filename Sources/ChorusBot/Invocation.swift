import ChorusCore
import ChorusWorkspace
import Foundation

/// Who typed a command, where, and what the chat layer knows that the bot needs.
public struct Invocation: Sendable {
    public struct RoomRef: Sendable, Equatable {
        public var key: String
        public var name: String
        public init(key: String, name: String) {
            self.key = key
            self.name = name
        }
    }

    public var account: String
    public var nick: String
    /// The room the command was typed in, or nil in a private message to the bot.
    public var room: RoomRef?
    /// Rooms the asker belongs to (keys → names): for `!mine`, naming rooms in private, and display.
    public var rooms: [String: String]
    /// Accounts of the nicks online now (folded nick → account name), for `@bob` and `<nick>` arguments.
    public var onlineAccounts: [String: String]
    public var timeZone: TimeZone
    /// The server's own zone, whatever the asker chose with `!tz`.
    public internal(set) var serverTimeZone: TimeZone?
    /// The server's `rooms` setting: whether a room is open to anyone until its managers choose.
    public var roomsOpenByDefault = false
    /// The server's `webhooks-to-private` setting: whether a hook may name a private address or plain http.
    public var hooksReachPrivate = false
    public var now: Date

    public init(account: String, nick: String, room: RoomRef?, rooms: [String: String], onlineAccounts: [String: String],
                timeZone: TimeZone, now: Date) {
        self.account = account
        self.nick = nick
        self.room = room
        self.rooms = rooms
        self.onlineAccounts = onlineAccounts
        self.timeZone = timeZone
        self.now = now
    }

    var inPrivate: Bool { room == nil }
}

/// A command used wrongly: the message says what was expected.
public struct UsageError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The words of a command line after its verb, read left to right.
struct Args {
    private(set) var words: [Substring]

    init(_ text: Substring) {
        words = text.split(separator: " ", omittingEmptySubsequences: true)
    }

    var isEmpty: Bool { words.isEmpty }
    var peek: String? { words.first.map(String.init) }

    mutating func next() -> String? {
        words.isEmpty ? nil : String(words.removeFirst())
    }

    mutating func word(_ what: String, usage: String) throws -> String {
        guard let w = next() else { throw UsageError("Missing \(what). Usage: \(usage)") }
        return w
    }

    mutating func id(usage: String) throws -> Int64 {
        guard let w = next() else { throw UsageError("Missing job id. Usage: \(usage)") }
        let digits = w.hasPrefix("#") || w.lowercased().hasPrefix("j") ? String(w.dropFirst()) : w
        guard let id = Int64(digits), id > 0 else { throw UsageError("\"\(w)\" is not a job id (a number). Usage: \(usage)") }
        return id
    }

    /// Everything left, as typed (single spaces).
    mutating func rest() -> String {
        defer { words.removeAll() }
        return words.joined(separator: " ")
    }
}
