import ChorusCore
import Foundation

/// How an event is kept in `events`, the same in both databases.
public enum EventRows {
    /// The columns `event(_:)` reads, qualified so that they can be joined.
    public static let columns = "events.id, events.type, events.room, events.job, events.actor, events.data, events.at, events.concerns, events.audience, events.reach"

    /// `INSERT` of an event, before its `VALUES` (`values(of:)`, in this order).
    public static let insert = "INSERT INTO events (type, room, job, actor, data, at, concerns, audience, request, reach)"

    public static func values(of event: Event) -> [any SQLBindable] {
        [event.type, event.room, event.job, event.actor, StoredForm.json(event.data), Millis.from(event.at),
         StoredForm.json(event.concerns), event.audience.map { StoredForm.json($0) }, StoredForm.requestNumber(of: event),
         event.reach.rawValue]
    }

    /// Writes `event`, giving it its id.
    public static func insert(_ event: Event, _ c: any SQLConnection) throws -> Event {
        var saved = event
        saved.id = try c.insert("\(raw: insert) VALUES (\(list: values(of: event)))")
        return saved
    }

    public static func insert(_ events: [Event], _ c: any SQLConnection) throws -> [Event] {
        try events.map { try insert($0, c) }
    }

    public static func event(_ row: any SQLRow) throws -> Event {
        Event(id: try row.int64("id"), type: try row.string("type"), room: try row.string("room"), job: try row.int64("job"),
              actor: try row.string("actor"), data: StoredForm.fields(try row.string("data")),
              at: try row.date("at"), concerns: StoredForm.strings(try row.string("concerns")),
              audience: (try row.string("audience") as String?).map(StoredForm.strings),
              reach: Event.Reach(rawValue: try row.string("reach")) ?? .room)
    }
}
