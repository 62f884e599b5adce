import ChorusCore
import ChorusSQL
import Foundation

// MARK: JSON shapes (API.md)

struct APIRoom: Encodable {
    let name: String
    let role: String
    let topic: String
}

struct APIMe: Encodable {
    let account: String
    let rooms: [APIRoom]
    /// The account's own: its names, email and start, and its tokens (never their secrets).
    let profile: APIProfile
    let tokens: [APIToken]
}

struct APIProfile: Encodable {
    let firstName: String?
    let lastName: String?
    let email: String?
    let since: String
}

struct APIToken: Encodable {
    let id: Int64
    let label: String
    let createdAt: String
    let lastUsedAt: String?
}

struct APICommand: Decodable {
    let text: String
    let room: String?
}

struct APIEvent: Encodable {
    let id: Int64
    let type: String
    let room: String?
    let job: Int64?
    let actor: String
    let at: String
    let data: [String: String]
    let concerns: [String]
    /// The sentence people read for it.
    let text: String
}

/// What `POST /api/v1/commands` answers: the command's replies and the events it made.
struct APICommandOutcome {
    let replies: [String]
    let events: [Event]
    /// Each event's room as its name, and its sentence (`WebAPI.described`).
    let described: (Event) -> (room: String?, text: String)
}

/// A page of the event feed.
struct APIFeed {
    let events: [Event]
    /// The position to ask after next time (`after=`).
    let next: Int64
    /// Whether more events are there already.
    let more: Bool
    let described: (Event) -> (room: String?, text: String)
}

struct APIFailure: Encodable {
    let code: String
    let message: String
    let replies: [String]?
}

// The event shapes are written by hand, in the order JSONEncoder's sorted keys give (`APIEvent`'s
// shape): the encoder was a quarter of the server's time serving a feed. They are written from the
// events themselves: copying each into an `APIEvent` first was a tenth of it.

extension APIEvent {
    static func write(_ event: Event, room: String?, text: String, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"actor":"#.utf8)
        StoredForm.writeJSON(event.actor, to: &out)
        out.append(contentsOf: #","at":"#.utf8)
        StoredForm.writeJSON(Timestamp.format(event.at), to: &out)
        out.append(contentsOf: #","concerns":["#.utf8)
        for (i, name) in event.concerns.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            StoredForm.writeJSON(name, to: &out)
        }
        out.append(contentsOf: #"],"data":{"#.utf8)
        for (i, field) in event.data.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            StoredForm.writeJSON(field.key, to: &out)
            out.append(UInt8(ascii: ":"))
            StoredForm.writeJSON(field.value, to: &out)
        }
        out.append(contentsOf: #"},"id":\#(event.id),"job":\#(event.job.map(String.init) ?? "null"),"room":"#.utf8)
        if let room { StoredForm.writeJSON(room, to: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(contentsOf: #","text":"#.utf8)
        StoredForm.writeJSON(text, to: &out)
        out.append(contentsOf: #","type":"#.utf8)
        StoredForm.writeJSON(event.type, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ events: [Event], described: (Event) -> (room: String?, text: String), to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, event) in events.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            let (room, text) = described(event)
            write(event, room: room, text: text, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}

extension APIFeed {
    var json: [UInt8] {
        var out = Array(#"{"events":"#.utf8)
        out.reserveCapacity(events.count * 256 + 64)
        APIEvent.write(events, described: described, to: &out)
        out.append(contentsOf: #","more":\#(more),"next":\#(next)}"#.utf8)
        return out
    }
}

extension APICommandOutcome {
    var json: [UInt8] {
        var out = Array(#"{"events":"#.utf8)
        APIEvent.write(events, described: described, to: &out)
        out.append(contentsOf: #","replies":["#.utf8)
        for (i, reply) in replies.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            StoredForm.writeJSON(reply, to: &out)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }
}
