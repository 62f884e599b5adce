import ChorusCore
import NIOConcurrencyHelpers

/// A room as the store held it when this node read it again after another node changed it, and
/// how far this node's own changes of its rooms had gone when the read began (`RoomMarks`).
/// A snapshot older than a change this node made since (a JOIN's membership, a TOPIC, a PART)
/// would take that change back: it is read again instead (`IRCServer.roomChangedElsewhere`).
struct RoomSnapshot: Sendable {
    let key: String
    /// Nil: the room is closed.
    let stored: StoredRoom?
    /// `RoomMarks.now` just before the read.
    let mark: UInt64
}

/// A count of this process's own changes to what it holds of its rooms' stored state, taken from
/// the event loop (a change) and from the cluster's feed (a snapshot's read).
enum RoomMarks {
    private static let clock = NIOLockedValueBox<UInt64>(0)

    /// A new mark, later than every mark and every `now` before it.
    static func next() -> UInt64 { clock.withLockedValue { $0 += 1; return $0 } }

    static var now: UInt64 { clock.withLockedValue { $0 } }
}
