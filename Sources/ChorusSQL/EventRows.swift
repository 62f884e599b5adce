import ChorusCore
import Foundation

/// How an event is kept in `events`, the same in both databases.
public enum EventRows {
    /// The columns `event(_:)` reads, qualified so that they can be joined.
    public static let columns = "events.id, events.type, events.room, events.job, events.actor, events.data, events.at, events.concerns, events.audience"

    public static func event(_ row: any SQLRow) throws -> Event {
        Event(id: try row.int64("id"), type: try row.string("type"), room: try row.string("room"), job: try row.int64("job"),
              actor: try row.string("actor"), data: StoredForm.decode([String: String].self, try row.string("data") as String) ?? [:],
              at: try row.date("at"), concerns: StoredForm.decodeList([String].self, try row.string("concerns") as String),
              audience: (try row.string("audience") as String?).flatMap { StoredForm.decode([String].self, $0) })
    }
}
