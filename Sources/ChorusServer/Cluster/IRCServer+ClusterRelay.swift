import ChorusCore
import ChorusIRC
import Foundation

/// What one process hands another through the store's log without keeping it for anyone's history
/// (`HistoryEntry.relayedOnly`): lines that are no history (a TAGMSG, a line to a room's managers
/// only, a guest's private line), and what a manager here does to a guest connected there (KICK,
/// INVITE). A relayed line's target is a nick, or a room with perhaps `@` or `+` in front; a KICK
/// or an INVITE names the guest, and its text is the room (for a KICK, then a space and the reason).
extension IRCServer {
    /// A line for another process to deliver as it is.
    func recordRelayedLine(_ out: Outgoing, text: String, from client: Client, target: String) {
        guard let msgid = out.msgid else { return }
        record(HistoryEntry(conversation: HistoryEntry.relayedOnly, msgid: msgid, time: out.time, command: out.message.command,
                            source: client.prefix, account: client.accountName, target: target, text: text,
                            clientTags: Message.serializedTags(out.clientTags)))
    }

    /// A room line that is not kept (TAGMSG, `@#room`) reaches the room's members elsewhere too.
    func relayToRoomElsewhere(_ out: Outgoing, text: String, from client: Client, target: String, room: LiveRoom) {
        guard remote.memberCount(of: room.key) > 0 else { return }
        recordRelayedLine(out, text: text, from: client, target: target)
    }

    /// KICK of a guest connected to another process: that process takes them out. The members
    /// here see the KICK now; the guest's next presence then no longer shows the room.
    func kickGuestElsewhere(_ guest: PresenceRecord, from room: LiveRoom, reason: String?, by client: Client, reply: Reply) {
        let t = now()
        let reason = reason ?? client.nick
        record(HistoryEntry(conversation: HistoryEntry.relayedOnly, msgid: ids.next(at: t), time: t, command: "KICK",
                            source: client.prefix, account: client.accountName, target: guest.nick, text: "\(room.name) \(reason)"))
        broadcast(Outgoing(Message(source: client.prefix, "KICK", [room.name, guest.nick, reason]), time: t, account: client.accountName),
                  to: room.members, reply: reply)
        var left = guest
        left.rooms[room.key] = nil
        remote.replace(left)
    }

    /// INVITE of a guest connected to another process: that process lets them into the room and
    /// tells them, as it would for an INVITE of its own.
    func inviteGuestElsewhere(_ guest: PresenceRecord, to room: LiveRoom, by client: Client, reply: Reply) {
        let t = now()
        record(HistoryEntry(conversation: HistoryEntry.relayedOnly, msgid: ids.next(at: t), time: t, command: "INVITE",
                            source: client.prefix, account: client.accountName, target: guest.nick, text: room.name))
        reply.numeric(.inviting, guest.nick, room.name)
        let invite = Outgoing(Message(source: client.prefix, "INVITE", [guest.nick, room.name]), time: t, account: client.accountName)
        broadcast(invite, to: room.members, except: client, only: { $0.caps.contains(.inviteNotify) && room.isOp($0) })
        if let away = guest.away { reply.numeric(.away, guest.nick, away) }
    }

    /// A relayed line or order read from the log, for the clients here it concerns.
    func deliverRelayed(_ entry: HistoryEntry) {
        switch entry.command {
        case "KICK":
            let parts = entry.text.split(separator: " ", maxSplits: 1).map(String.init)
            guard let guest = registry.client(nick: entry.target), let roomName = parts.first,
                  let room = rooms[Names.fold(roomName)], room.contains(guest) else { return }
            leave(room, guest, reason: parts.count > 1 ? parts[1] : nil, kickedBy: Kicker(source: entry.source, account: entry.account), reply: nil)
        case "INVITE":
            guard let guest = registry.client(nick: entry.target), let room = rooms[Names.fold(entry.text)], !room.contains(guest) else { return }
            room.invitedNicks.insert(guest.nickKey)
            let invite = Outgoing(Message(source: entry.source, "INVITE", [guest.nick, room.name]), time: entry.time, account: entry.account)
            send(invite, to: guest)
            broadcast(invite, to: room.members, only: { $0.caps.contains(.inviteNotify) && room.isOp($0) })
        default:
            let tagsOnly = entry.command == "TAGMSG"
            var roomName = entry.target
            var statusFilter: LiveRoom.Status?
            if let first = roomName.first, first == "@" || first == "+", roomName.count > 1 {
                roomName.removeFirst()
                statusFilter = first == "@" ? .op : [.op, .voice]
            }
            if Names.isChannel(roomName) {
                guard let room = rooms[Names.fold(roomName)] else { return }
                broadcast(Outgoing(replaying: entry, to: entry.target, stampingText: false), to: room.members, only: { member in
                    if tagsOnly && !member.caps.contains(.messageTags) { return false }
                    guard let statusFilter else { return true }
                    return !(room.status(of: member) ?? []).isDisjoint(with: statusFilter)
                })
            } else {
                deliverPrivately(entry, tagsOnly: tagsOnly)
            }
        }
    }

    /// A private line, to every connection here of the account it was sent to, under whatever
    /// nick each has (as `messageAccount` does on the sender's process); else to the nick itself.
    /// A bot's line that stands in for a room line is left out when one of them heard that line.
    func deliverPrivately(_ entry: HistoryEntry, tagsOnly: Bool = false) {
        var recipients = registry.connections(ofAccount: Account.key(entry.target))
        if let standIn = entry.standsInFor, let room = rooms[standIn.room],
           recipients.contains(where: { room.contains($0) && (standIn.membersHear || room.hearsAsManager($0)) }) { return }
        if recipients.isEmpty, let client = registry.nicks[Names.fold(entry.target)] { recipients = [client] }
        for client in recipients where !client.closing && (!tagsOnly || client.caps.contains(.messageTags)) {
            send(Outgoing(replaying: entry, to: client.nick, stampingText: false), to: client)
        }
    }
}
