import ChorusCore
import ChorusIRC
import Foundation

/// The bus between nodes (`BusMessage`): what this node tells the others that no one's history
/// keeps (lines only relayed, orders about a guest connected elsewhere; `ClusterNode.post`), and
/// what it does with what they tell it. Without other nodes (SQLite) nothing is posted.
extension IRCServer {
    /// A line for the other nodes to deliver as it is.
    func relay(_ out: Outgoing, text: String, from client: Client, target: String) {
        guard let msgid = out.msgid else { return }
        cluster?.post(.line(RelayedLine(msgid: msgid, time: out.time, command: out.message.command, source: client.prefix,
                                        account: client.accountName, target: target, text: text,
                                        clientTags: Message.serializedTags(out.clientTags))))
    }

    /// A room line that is not kept (TAGMSG, `@#room`) reaches the room's members elsewhere too.
    func relayToRoomElsewhere(_ out: Outgoing, text: String, from client: Client, target: String, room: LiveRoom) {
        guard remote.memberCount(of: room.key) > 0 else { return }
        relay(out, text: text, from: client, target: target)
    }

    /// KICK of a guest connected to another node: that node takes them out. The members here see
    /// the KICK now; the guest's next presence then no longer shows the room.
    func kickGuestElsewhere(_ guest: PresenceRecord, from room: LiveRoom, reason: String?, by client: Client, reply: Reply) {
        let t = now()
        let reason = reason ?? client.nick
        cluster?.post(.kick(PresenceOrder(nick: guest.nick, room: room.name, reason: reason, source: client.prefix, account: client.accountName, time: t)))
        broadcast(Outgoing(Message(source: client.prefix, "KICK", [room.name, guest.nick, reason]), time: t, account: client.accountName),
                  to: room.members, reply: reply)
        var left = guest
        left.rooms[room.key] = nil
        remote.replace(left)
    }

    /// INVITE of someone connected to another node that makes no one a member (a guest, or anyone
    /// invited by someone who is not a manager): that node lets them into the room and tells them,
    /// as it would for an INVITE of its own.
    func inviteElsewhere(_ user: PresenceRecord, to room: LiveRoom, by client: Client, reply: Reply) {
        let t = now()
        cluster?.post(.invite(PresenceOrder(nick: user.nick, room: room.name, source: client.prefix, account: client.accountName, time: t)))
        reply.numeric(.inviting, user.nick, room.name)
        let invite = Outgoing(Message(source: client.prefix, "INVITE", [user.nick, room.name]), time: t, account: client.accountName)
        broadcast(invite, to: room.members, except: client, only: { $0.caps.contains(.inviteNotify) && room.isOp($0) })
        if let away = user.away { reply.numeric(.away, user.nick, away) }
    }

    /// How long a member's KICK given elsewhere waits for the membership's end to arrive; one the
    /// room's rules refused is forgotten after it.
    static let kickWordsKept: TimeInterval = 30

    /// KICK of members connected to another node (`kickMember`): their node is told the KICK's
    /// words before the membership ends, so that it says them when it takes them out; the members
    /// here hear it now, and not again as a PART when their node follows.
    func kickMembersElsewhere(_ account: String, from room: LiveRoom, reason: String?, by client: Client) -> [PresenceRecord] {
        let elsewhere = remote.users(ofAccount: Account.key(account)).filter { $0.rooms[room.key] != nil }
        var nicks = Set<String>()
        for user in elsewhere where nicks.insert(user.nickKey).inserted {
            cluster?.post(.removal(PresenceOrder(nick: user.nick, room: room.name, reason: reason ?? client.nick, source: client.prefix,
                                                 account: client.accountName, time: now())))
        }
        return elsewhere
    }

    /// A message another node posted, for the clients here it concerns.
    func deliver(_ message: BusMessage) {
        switch message {
        case .kick(let order):
            guard let client = registry.client(nick: order.nick), let room = rooms[Names.fold(order.room)], room.contains(client) else { return }
            leave(room, client, reason: order.reason, kickedBy: Kicker(source: order.source, account: order.account), reply: nil)
        case .invite(let order):
            guard let client = registry.client(nick: order.nick), let room = rooms[Names.fold(order.room)], !room.contains(client) else { return }
            room.invitedNicks.insert(client.nickKey)
            let invite = Outgoing(Message(source: order.source, "INVITE", [client.nick, room.name]), time: order.time, account: order.account)
            send(invite, to: client)
            broadcast(invite, to: room.members, only: { $0.caps.contains(.inviteNotify) && room.isOp($0) })
        case .removal(let order):
            guard let room = rooms[Names.fold(order.room)] else { return }
            room.kicksElsewhere = room.kicksElsewhere.filter { now().timeIntervalSince($0.value.time) < Self.kickWordsKept }
            room.kicksElsewhere[Names.fold(order.nick)] = order
        case .closure(let closure):
            rooms[closure.room]?.closedElsewhereBy = closure.by
        case .kill(let order):
            guard let client = registry.client(nick: order.nick) else { return }
            logger.notice("KILL \(client.prefix) by \(order.source) on another node")
            kill(client, reason: order.reason, reply: nil)
        case .line(let line):
            deliver(line)
        }
    }

    /// A relayed line: to a room's members here (its managers, or voiced too, for `@#room` and
    /// `+#room`), or privately.
    private func deliver(_ line: RelayedLine) {
        let tagsOnly = line.command == "TAGMSG"
        var roomName = line.target
        var statusFilter: LiveRoom.Status?
        if let first = roomName.first, first == "@" || first == "+", roomName.count > 1 {
            roomName.removeFirst()
            statusFilter = first == "@" ? .op : [.op, .voice]
        }
        guard Names.isChannel(roomName) else {
            let recipients = privateRecipients(of: line.target)
            if let standIn = line.standsInFor, let room = rooms[standIn.room],
               recipients.contains(where: { room.contains($0) && (standIn.membersHear || room.hearsAsManager($0)) }) { return }
            return deliverPrivately(to: recipients, tagsOnly: tagsOnly) { Outgoing(relayed: line, to: $0) }
        }
        guard let room = rooms[Names.fold(roomName)] else { return }
        broadcast(Outgoing(relayed: line, to: line.target), to: room.members, only: { member in
            if tagsOnly && !member.caps.contains(.messageTags) { return false }
            guard let statusFilter else { return true }
            return !(room.status(of: member) ?? []).isDisjoint(with: statusFilter)
        })
    }

    /// Who here a private line to `target` reaches: every connection of the account of that name,
    /// under whatever nick each has (as `messageAccount` does on the sender's node); else the
    /// connection with that nick.
    func privateRecipients(of target: String) -> [Client] {
        let connections = registry.connections(ofAccount: Account.key(target))
        if connections.isEmpty, let client = registry.nicks[Names.fold(target)] { return [client] }
        return connections
    }

    /// A private line, each recipient's copy addressed to its own nick.
    func deliverPrivately(to recipients: [Client], tagsOnly: Bool, _ line: (_ nick: String) -> Outgoing) {
        for client in recipients where !client.closing && (!tagsOnly || client.caps.contains(.messageTags)) {
            send(line(client.nick), to: client)
        }
    }
}
