import ChorusCore
import ChorusIRC
import Foundation

/// One person over several nodes: a connection logged in to an account takes the nick the
/// account's connection holds on another node, as a second device does on one node
/// (`SharedNick.swift`). Each node publishes its own connections; every node shows the person once.
///
/// - What the person does on one node, their connections on the others follow when its record
///   arrives: a JOIN (into a room where the account is a member), a PART or KICK, a NICK.
/// - Others hear one JOIN when the person's first connection comes into a room, one PART when the
///   last leaves it, one NICK, and a QUIT only when the person's last connection anywhere goes.
///   A PART told here at once while the person's connections elsewhere still show them in the room
///   (they follow a moment later) is noted in `LiveRoom.departed`, so it is not told twice.
/// - NAMES, WHO, LIST, `+l` and `everyone` count the person once.
extension IRCServer {
    /// The person under `nickKey` is in the room through a connection here.
    func isInRoomHere(_ nickKey: String, _ room: LiveRoom) -> Bool {
        guard let first = registry.nicks[nickKey] else { return false }
        return registry.sharing(first).contains { room.contains($0) }
    }

    /// The person under `nickKey` is in the room through a connection on another node (but
    /// `connection`), and the room was not already told they left.
    func isInRoomElsewhere(_ nickKey: String, _ room: LiveRoom, except connection: String? = nil) -> Bool {
        !room.departed.contains(nickKey) && remote.holders(of: nickKey).contains { $0.connection != connection && $0.rooms[room.key] != nil }
    }

    /// `client` is one of a person's connections, some of whom are on other nodes.
    func hasSessionsElsewhere(_ client: Client) -> Bool {
        remote.holders(of: client.nickKey).contains { PresenceRecord.samePerson($0.account, client.accountName) }
    }

    /// The person's connections here, when `record` is one of theirs on another node.
    func sessionsHere(of record: PresenceRecord) -> [Client] {
        sessionsHere(nickKey: record.nickKey, account: record.account)
    }

    /// The connections here of whoever sent a line from another node (`nick!user@host`), when
    /// that is a person connected here too.
    func sessionsHere(of source: String, account: String?) -> [Client] {
        sessionsHere(nickKey: Names.fold(String(source.prefix { $0 != "!" })), account: account)
    }

    private func sessionsHere(nickKey: String, account: String?) -> [Client] {
        guard let first = registry.nicks[nickKey], PresenceRecord.samePerson(first.accountName, account) else { return [] }
        return registry.sharing(first)
    }

    /// The room's people connected elsewhere only, each once, in the order they connected.
    func peopleElsewhere(in room: LiveRoom) -> [PresenceRecord] {
        guard remote.memberCount(of: room.key) > 0 else { return [] }
        var seen = Set<String>()
        return remote.members(of: room.key).filter { record in
            !room.departed.contains(record.nickKey) && !isInRoomHere(record.nickKey, room) && seen.insert(record.nickKey).inserted
        }
    }

    /// How many people the room has, on every node.
    func peopleCount(of room: LiveRoom) -> Int {
        room.people.count + peopleElsewhere(in: room).count
    }

    // MARK: Following the person's connection on another node

    /// The person's connection elsewhere changed nick: their connections here take it too, once
    /// it is claimed, and the rooms here hear it from them (`changeNick`).
    func followNick(of sessions: [Client], to nick: String) {
        guard let cluster, let first = sessions.first, first.nick != nick else { return }
        cluster.claimPresence(of: first, nick: nick).whenComplete { result in
            guard !first.closing, first.nick != nick else { return }
            if case .success(true) = result { return self.changeNick(of: first, to: nick, reply: nil) }
            self.logger.warning("could not follow a nick change from another node", metadata: ["nick": "\(first.nick)", "to": "\(nick)"])
        }
    }

    /// The person came into a room on another node: their connections here come in too, where the
    /// account is a member (else the room's change brings them, or nobody should).
    func followIn(_ room: LiveRoom, sessions: [Client]) {
        guard let first = sessions.first, let account = first.account?.key, let membership = room.memberships[account] else { return }
        for session in sessions where !room.contains(session) && !session.closing {
            let reply = Reply(client: session, server: self, command: "JOIN", label: nil)
            enter(room, session, status: LiveRoom.Status(membership), reply: reply)
            reply.finish()
        }
    }

    /// The person left a room on another node (`note`, the reason): their connections here leave
    /// it too. The room hears the PART unless the person is still in it through yet another node,
    /// which then tells it when it follows.
    func followOut(_ room: LiveRoom, sessions: [Client], note: String?) {
        let leaving = sessions.filter { room.contains($0) }
        guard let first = leaving.first else { return }
        let part = Outgoing(Message(source: first.prefix, "PART", note.map { [room.name, $0] } ?? [room.name]), time: now(),
                            account: first.accountName)
        broadcast(part, to: isInRoomElsewhere(first.nickKey, room) ? leaving : room.members)
        for session in leaving { takeOut(session, from: room, note: note) }
    }

    /// The person left the room here while their connections elsewhere are still in it: the room
    /// heard it now, and does not hear it again when those follow.
    func noteDeparted(_ nickKey: String, from room: LiveRoom) {
        if isInRoomElsewhere(nickKey, room) { room.departed.insert(nickKey) }
    }
}
