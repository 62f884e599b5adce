import ChorusCore
import Foundation
import NIOCore

/// A room's chores and shared lists, as `!chores` and `!lists` show them to a member.
extension WebAPI {
    /// `GET /api/v1/chores?room=`: each chore, whose turn it is, when it is due and the rotation.
    func chores(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        let room = try roomParameter(request)
        let store = server.store, now = server.now, zone = server.config.timeZone
        return readBoard { names, _ -> APIChores in
            let chores = try ChoreBoard(store: store, timeZone: zone, now: now).chores(in: room, by: caller.account)
            return APIChores(room: names[room] ?? room, chores: chores.map(APIChore.init))
        }
    }

    /// `GET /api/v1/lists?room=`: each shared list with its items.
    func lists(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        let room = try roomParameter(request)
        let store = server.store, now = server.now, zone = server.config.timeZone
        return readBoard { names, _ -> APILists in
            let lists = try ChoreBoard(store: store, timeZone: zone, now: now).lists(in: room, by: caller.account)
            return APILists(room: names[room] ?? room, lists: lists.map {
                APIList(name: $0.name, items: $0.items.map { APIListItem(text: $0.text, done: $0.done, by: $0.by) })
            })
        }
    }

    /// `GET /api/v1/agenda?days=N&room=`: upcoming turns, soonest first, as `!agenda` gives them:
    /// the account's own across its rooms, or with `room` everyone's in that room (7 days unless
    /// asked, 1 to 62).
    func agenda(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        let days = Int(try request.integer("days", default: 7, in: 1...62))
        let room = request.query["room"].flatMap { $0.isEmpty ? nil : Account.key($0) }
        let store = server.store, now = server.now, zone = server.config.timeZone
        return readBoard { names, _ -> APIAgenda in
            let rooms: [String]
            if let room {
                guard try store.role(of: caller.account, in: room) != nil else { throw JobError.notInRoom(names[room] ?? room) }
                rooms = [room]
            } else {
                rooms = try store.memberships(ofAccount: caller.key).map(\.room)
            }
            let turns = try ChoreBoard(store: store, timeZone: zone, now: now).agenda(in: rooms, days: days, only: room == nil ? caller.account : nil)
            return APIAgenda(turns: turns.map { due, chore, person in
                APITurn(due: WebAPI.timestamp(due), chore: chore.name, room: names[chore.room] ?? chore.room, person: person)
            })
        }
    }

    private func roomParameter(_ request: WebRequest) throws -> String {
        guard let room = request.query["room"], !room.isEmpty else {
            throw APIError(.badRequest, "INVALID_PARAMS", "Name the room: ?room=%23flat (# is written %23).")
        }
        return Account.key(room)
    }
}

struct APIChore: Encodable {
    let name: String
    let every: String
    /// Whose turn it is, and the whole rotation in order.
    let turn: String
    let rotation: [String]
    let due: String

    init(_ chore: Chore) {
        name = chore.name
        every = chore.frequency.description
        turn = chore.whoseTurn
        rotation = chore.rotation
        due = WebAPI.timestamp(chore.due)
    }
}

struct APIChores: Encodable {
    let room: String
    let chores: [APIChore]
}

struct APIListItem: Encodable {
    let text: String
    let done: Bool
    let by: String
}

struct APIList: Encodable {
    let name: String
    let items: [APIListItem]
}

struct APILists: Encodable {
    let room: String
    let lists: [APIList]
}

struct APITurn: Encodable {
    let due: String
    let chore: String
    let room: String
    let person: String
}

struct APIAgenda: Encodable {
    let turns: [APITurn]
}
