import ChorusCore
import Foundation

/// How one committed event reaches people: decided once, here, from Core's audience rule, and
/// carried out by each sink (the IRC connections of this process; later the browser's, and other
/// processes') without deciding anything again.
public struct Delivery: Sendable {
    public let event: Event
    /// Who in the event's room may read it.
    public let audience: Audience
    /// The room's line, stored in the event's own transaction (nil for an event without a room,
    /// or one told only to the people it concerns, such as a reminder).
    public let roomLine: HistoryEntry?
    /// The room line's tags, made with it (nil without a room line).
    public let tags: [(String, String)]?
    /// Account keys told directly, each unless they heard the room's line.
    public let direct: [String]
    /// Those of `direct` who were not connected when the change committed: the event was queued
    /// for them in its transaction, and waits for them there.
    public let queued: Set<String>
    /// The asker's time zone, for the copy the asker gets (times in the lines they read).
    public let actorTimeZone: TimeZone?

    /// Whether a member of the event's room (by account key) hears its room line.
    public func reaches(account key: String?, isManager: Bool) -> Bool {
        roomLine != nil && audience.includes(account: key, isManager: isManager)
    }
}

/// One command of a committed batch, as the sinks receive it.
public struct Committed: @unchecked Sendable {
    /// How each of its events reaches people.
    public let deliveries: [Delivery]
    /// Its answer and what it asks of every transport (`effects`: a room closed, its settings
    /// changed), carried out after the deliveries.
    public let outcome: Outcome
    /// What the command's caller passed to `Workspace.run` (the IRC side: how to reach the line that
    /// asked), nil for changes nobody asked for (reminders). A sink ignores origins not its own.
    public let origin: AnyObject?
}

/// Where committed changes go: once per batch, on the Workspace's writer, in commit order, after
/// the commit and before each asker's `done`. A sink hands the work to its own threads and
/// returns (the IRC side: one hop to its event loop per batch, however many commands it held).
public protocol EventSink: AnyObject, Sendable {
    func publish(_ batch: [Committed])
}

/// The words of an event's lines, given by the transport that knows how to write them.
public protocol EventWording: Sendable {
    /// The line in the event's room, called `roomName`.
    func roomLine(_ event: Event, roomName: String) -> RoomLineWords
    /// The line told directly to someone it concerns, for an event without a room line.
    func directLine(_ event: Event, roomName: String?) -> RoomLineWords
}

/// The other processes of a cluster, as the Workspace tells them of a command's direct lines for
/// people connected to them, in the command's own transaction (`tx`): a crash after the commit
/// cannot lose them, and a command run again drops them with the rest.
public protocol OtherProcesses: Sendable {
    func post(_ messages: [BusMessage], in tx: any ChorusStorage) throws
}

public struct RoomLineWords: Sendable {
    /// The sentence people read.
    public var text: String
    /// The tags bots read, as pairs and serialized as the history row keeps them (IRCv3 message tags).
    public var tags: [(String, String)]
    public var serializedTags: String

    public init(text: String, tags: [(String, String)], serializedTags: String) {
        self.text = text
        self.tags = tags
        self.serializedTags = serializedTags
    }
}
