import ChorusCore
import ChorusIRC
import Foundation

/// Someone on the network, connected here or to another node, as the verbs that ask about people
/// see them (WHO, WHOIS, USERHOST, ISON, MONITOR, a command's `@nick`): each is written once for
/// both. A node knows its own connections whole and the others' by their presence records
/// (`RemotePresence`), so what only the node a person is connected to can tell (their address,
/// whether they came by TLS, how long they have been idle) is known here only.
enum Person {
    case here(Client)
    case elsewhere(PresenceRecord)

    var nick: String {
        switch self { case .here(let c): c.nick; case .elsewhere(let r): r.nick }
    }
    var nickKey: String {
        switch self { case .here(let c): c.nickKey; case .elsewhere(let r): r.nickKey }
    }
    var user: String {
        switch self { case .here(let c): c.user; case .elsewhere(let r): r.user }
    }
    var host: String {
        switch self { case .here(let c): c.host; case .elsewhere(let r): r.host }
    }
    var realname: String {
        switch self { case .here(let c): c.realname; case .elsewhere(let r): r.realname }
    }
    var account: String? {
        switch self { case .here(let c): c.accountName; case .elsewhere(let r): r.account }
    }
    var away: String? {
        switch self { case .here(let c): c.away; case .elsewhere(let r): r.away }
    }
    var isOper: Bool {
        switch self { case .here(let c): c.isOper; case .elsewhere(let r): r.isOper }
    }
    var isBot: Bool {
        switch self { case .here(let c): c.isBot; case .elsewhere(let r): r.isBot }
    }
    var isInvisible: Bool {
        switch self { case .here(let c): c.invisible; case .elsewhere(let r): r.isInvisible }
    }
    /// The server they are connected to, by the name its clients know it by ("*" when a node on an
    /// older build did not say).
    var server: String {
        switch self {
        case .here(let c): c.server.name
        case .elsewhere(let r): r.server.isEmpty ? "*" : r.server
        }
    }
    /// `nick!user@host`, as their lines carry it.
    var prefix: String {
        switch self { case .here(let c): c.prefix; case .elsewhere(let r): r.prefix }
    }
    var signon: Date {
        switch self { case .here(let c): c.connectedAt; case .elsewhere(let r): r.since }
    }
    /// The keys of the rooms they are in: in the order they joined here, by name elsewhere.
    var roomKeys: [String] {
        switch self { case .here(let c): c.rooms.map(\.key); case .elsewhere(let r): r.rooms.keys.sorted() }
    }

    func isIn(_ room: LiveRoom) -> Bool {
        switch self { case .here(let c): room.contains(c); case .elsewhere(let r): r.rooms[room.key] != nil }
    }

    /// Their status in `room` (empty when none, or not in it).
    func status(in room: LiveRoom) -> LiveRoom.Status {
        switch self {
        case .here(let c): room.status(of: c) ?? []
        case .elsewhere(let r): LiveRoom.Status(letters: r.rooms[room.key] ?? "")
        }
    }

    /// Their status in `room` as its prefix (`@`, `+`, `@+` with multi-prefix), empty for none.
    func prefix(in room: LiveRoom, multiPrefix: Bool) -> String {
        switch self {
        case .here(let c): room.prefix(of: c, multiPrefix: multiPrefix)
        case .elsewhere(let r): r.prefix(in: room.key, multiPrefix: multiPrefix)
        }
    }

    /// `H` (here) or `G` (gone away), `*` for an operator and `B` for a bot, as WHO's flags begin.
    var presenceFlags: String {
        (away == nil ? "H" : "G") + (isOper ? "*" : "") + (isBot ? "B" : "")
    }

    /// Their address, for operators and themselves: known for connections here only.
    var ip: String? {
        if case .here(let c) = self { return c.ip }
        return nil
    }
    var isTLS: Bool {
        if case .here(let c) = self { return c.isTLS }
        return false
    }

    /// Seconds since they last spoke: known for connections here only (0 elsewhere).
    func idle(at now: Date) -> Int {
        if case .here(let c) = self { return Int(now.timeIntervalSince(c.lastSpokeAt)) }
        return 0
    }

    func isConnection(_ client: Client) -> Bool {
        if case .here(let c) = self { return c === client }
        return false
    }
}

extension IRCServer {
    /// Who has `nick` on the network: a connection here, else a user of another node.
    func person(nick: String) -> Person? {
        if let client = registry.client(nick: nick) { return .here(client) }
        return remote.user(nick: nick).map(Person.elsewhere)
    }

    /// The room's people on every node, each once: those here, then those elsewhere only (NAMES,
    /// WHO, LIST's count, `+l`).
    func people(in room: LiveRoom) -> [Person] {
        room.people.map(Person.here) + peopleElsewhere(in: room).map(Person.elsewhere)
    }

    /// Everyone registered on the network, each nick once: the people here, then those elsewhere
    /// only (a person on several nodes is one).
    var everyone: [Person] {
        let here = registry.nicks.values.filter(\.registered)
        var seen = Set(here.map(\.nickKey))
        return here.map(Person.here) + remote.users.values.sorted { $0.since < $1.since }
            .filter { seen.insert($0.nickKey).inserted }.map(Person.elsewhere)
    }
}
