import ChorusCore
import ChorusIRC
import Foundation

/// Rooms another process changed (made, closed, a new topic or modes, roles and memberships, the
/// room's settings): read again from the store and told to the members here as that process told
/// its own, so every process holds the same room.
extension IRCServer {
    /// A snapshot read before this node changed the room itself would take that change back (a
    /// JOIN's membership, a TOPIC, a PART): the room is read again.
    func roomChangedElsewhere(_ snapshot: RoomSnapshot) {
        if let room = rooms[snapshot.key], room.changedHere > snapshot.mark {
            cluster?.feed?.readAgain(snapshot.key)
            return
        }
        roomChangedElsewhere(snapshot.key, snapshot.stored)
    }

    func roomChangedElsewhere(_ key: String, _ stored: StoredRoom?) {
        guard let stored else {
            if let room = rooms[key] { closeRoom(key, by: room.closedElsewhereBy ?? "a manager") }
            return
        }
        guard let room = rooms[key] else {
            // A room made elsewhere: its first members' connections here come in (the person who
            // made it, on another device).
            let room = LiveRoom(room: stored.room)
            room.apply(stored.settings)
            rooms[key] = room
            settleMemberships(of: room, to: stored.memberships)
            return
        }
        let t = now()
        let old = room.room, new = stored.room
        room.room = new
        room.apply(stored.settings)
        if new.topic != old.topic || new.topicSetBy != old.topicSetBy {
            let source = new.topicSetBy.isEmpty ? name : new.topicSetBy
            broadcast(Outgoing(Message(source: source, "TOPIC", [room.name, new.topic]), time: t), to: room.members)
        }
        if let change = Self.modeChange(from: old, to: new) {
            broadcast(Outgoing(Message(source: name, "MODE", [room.name] + change), time: t), to: room.members)
        }
        settleMemberships(of: room, to: stored.memberships)
    }

    /// The room's memberships as stored: the members here get the status their role now gives;
    /// an account made a member elsewhere (INVITE, `!room add`) comes into the room with its
    /// connections here, and one taken out (KICK, `!room remove`) leaves it.
    private func settleMemberships(of room: LiveRoom, to stored: [Membership]) {
        let before = room.memberships
        room.memberships = Dictionary(stored.map { ($0.account, $0) }, uniquingKeysWith: { _, last in last })
        for (key, membership) in room.memberships where before[key] == nil {
            for client in registry.connections(ofAccount: key) where !room.contains(client) && !client.closing {
                let reply = Reply(client: client, server: self, command: "JOIN", label: nil)
                enter(room, client, status: LiveRoom.Status(membership), reply: reply)
                reply.finish()
            }
        }
        for key in before.keys where room.memberships[key] == nil {
            var told = Set<String>()  // one KICK a nick: its other sessions heard that one
            for client in registry.connections(ofAccount: key) where room.contains(client) {
                // Said as the kicker on another node gave it (`BusMessage.removal`), else by the server.
                let kick = room.kicksElsewhere.removeValue(forKey: client.nickKey)
                let reason = kick?.reason ?? "Removed from \(room.name)"
                if told.insert(client.nickKey).inserted {
                    broadcast(Outgoing(Message(source: kick?.source ?? name, "KICK", [room.name, client.nick, reason]), time: now(),
                                       account: kick?.account), to: room.members)
                }
                takeOut(client, from: room, note: reason)
                noteDeparted(client.nickKey, from: room)
            }
        }
        for client in room.members {
            guard let account = client.account?.key, let membership = room.memberships[account] else { continue }
            let before = room.status(of: client) ?? [], after = LiveRoom.Status(membership)
            guard after != before else { continue }
            room.setStatus(client, after)
            cluster?.presenceChanged(client)
            tellStatusChange(of: client.nick, in: room, from: before.letters, to: after.letters)
        }
    }

    /// The MODE line's parameters from one set of room modes to another (`-m+ik secret`), or nil.
    static func modeChange(from old: Room, to new: Room) -> [String]? {
        var removed = "", added = "", removedParams: [String] = [], addedParams: [String] = []
        func flag(_ letter: Character, _ before: Bool, _ after: Bool) {
            if before && !after { removed.append(letter) }
            if after && !before { added.append(letter) }
        }
        let (a, b) = (old.modes, new.modes)
        flag("i", a.inviteOnly, b.inviteOnly)
        flag("m", a.moderated, b.moderated)
        flag("n", a.noExternal, b.noExternal)
        flag("s", a.secret, b.secret)
        flag("t", a.topicLocked, b.topicLocked)
        if a.key != b.key {
            if let key = b.key { added.append("k"); addedParams.append(key) } else { removed.append("k"); removedParams.append("*") }
        }
        if a.limit != b.limit {
            if let limit = b.limit { added.append("l"); addedParams.append(String(limit)) } else { removed.append("l") }
        }
        for mask in Set(old.bans).subtracting(new.bans).sorted() { removed.append("b"); removedParams.append(mask) }
        for mask in Set(new.bans).subtracting(old.bans).sorted() { added.append("b"); addedParams.append(mask) }
        let params = removedParams + addedParams
        let change = (removed.isEmpty ? "" : "-" + removed) + (added.isEmpty ? "" : "+" + added)
        return change.isEmpty ? nil : [change] + params
    }
}
