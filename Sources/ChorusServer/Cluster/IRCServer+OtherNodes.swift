import ChorusCore
import ChorusIRC
import Foundation
import NIOCore

/// What the other nodes of a cluster did, as the clients here see it (`ClusterNode` reads it from
/// the log): their lines reach the clients here that they would have reached had they been said
/// here, their users' comings and goings are told to those who share a room with them (and those
/// who watch their nick), and their messages on the bus are carried out.
extension IRCServer {
    /// Whether a nick is held by a user of another node.
    func isHeldElsewhere(_ nick: String) -> Bool {
        remote.user(nick: nick) != nil
    }

    /// What other nodes committed, in their order.
    func deliverFromOtherNodes(_ changes: [SharedChange]) {
        for change in changes {
            switch change {
            case .line(let entry): deliverLine(entry)
            case .presence(.here(let record)): arrived(record)
            case .presence(.gone(let connection, let reason)): left(connection, reason: reason)
            case .bus(let message): deliver(message)
            }
        }
    }

    /// A room line goes to the room's members (a line for some members only, to them and the
    /// managers); a private line to the recipient's connections.
    private func deliverLine(_ entry: HistoryEntry) {
        if entry.conversation.hasPrefix("@") {
            let recipients = privateRecipients(of: entry.target)
            deliverPrivately(to: recipients, tagsOnly: false) { Outgoing(replaying: entry, to: $0, stampingText: false) }
            // The sender's own connections here (a person on several nodes) see it in their
            // conversation with the recipient, as a copy of their own line.
            let sender = sessionsHere(of: entry.source, account: entry.account).filter { session in !recipients.contains { $0 === session } }
            deliverPrivately(to: sender, tagsOnly: false) { _ in Outgoing(replaying: entry, to: entry.target, stampingText: false) }
        } else if let room = rooms[entry.conversation] {
            let outgoing = Outgoing(replaying: entry, to: room.name, stampingText: false)
            broadcast(outgoing, to: room.members, only: { member in
                if let audience = entry.audience, !room.hearsAsManager(member), !(member.account.map { audience.contains($0.key) } ?? false) {
                    return false
                }
                // Noted here, in the one pass over the members: its replay leaves the line out.
                if member.replaysReading > 0 { self.heldFromElsewhere[ObjectIdentifier(member), default: []].insert(entry.msgid) }
                return true
            })
        }
    }

    /// A user elsewhere arrived or changed: what changed is told as that process told its own
    /// clients, once for a person connected to several nodes, whose connections here follow what
    /// they did there (`PersonAcrossNodes`).
    private func arrived(_ new: PresenceRecord) {
        let old = remote.replace(new)
        let t = now(), person = new.nickKey, here = sessionsHere(of: new)
        // Who speaks for the person here: nobody when they have a connection here (it speaks for
        // itself), else the first of their connections elsewhere.
        let speaks = here.isEmpty && remote.holders(of: person).first?.connection == new.connection
        func line(_ source: String, _ verb: String, _ params: [String]) -> Outgoing {
            Outgoing(Message(source: source, verb, params), time: t, account: new.account)
        }
        if let old, old.nick != new.nick {
            let following = sessionsHere(of: old)
            if !following.isEmpty {
                followNick(of: following, to: new.nick)
            } else if !isKnown(as: new) {
                broadcast(line(old.prefix, "NICK", [new.nick]), to: localMembers(of: Set(old.rooms.keys).union(new.rooms.keys)))
            }
        }
        if old?.nickKey != new.nickKey {
            if let old { remoteOffline(nick: old.nick, key: old.nickKey) }
            if here.isEmpty && remote.holders(of: person).count == 1 { remoteOnline(new) }
        }
        for key in new.rooms.keys.sorted() where old?.rooms[key] == nil {
            guard let room = rooms[key] else { continue }
            let toldGone = room.departed.remove(person) != nil
            if toldGone || !(isInRoomHere(person, room) || isInRoomElsewhere(person, room, except: new.connection)) {
                let plain = line(new.prefix, "JOIN", [room.name])
                let extended = line(new.prefix, "JOIN", [room.name, new.account ?? "*", new.realname])
                broadcast(plain, to: room.members, only: { !$0.caps.contains(.extendedJoin) })
                broadcast(extended, to: room.members, only: { $0.caps.contains(.extendedJoin) })
                if let away = here.isEmpty ? Self.away(of: remote.holders(of: person)) : here[0].away {
                    broadcast(line(new.prefix, "AWAY", [away]), to: room.members, only: { $0.caps.contains(.awayNotify) })
                }
            }
            followIn(room, sessions: here)
        }
        awayMayHaveChanged(person, here: here, before: old, after: new)
        guard let old else { return }
        for key in old.rooms.keys.sorted() where new.rooms[key] == nil {
            guard let room = rooms[key] else { continue }
            if room.departed.contains(person) {
                if !remote.holders(of: person).contains(where: { $0.rooms[key] != nil }) { room.departed.remove(person) }
            } else if isInRoomHere(person, room) {
                followOut(room, sessions: here, note: new.note)
            } else if !isInRoomElsewhere(person, room) {
                broadcast(line(new.prefix, "PART", new.note.map { [room.name, $0] } ?? [room.name]), to: room.members)
            }
        }
        for (key, status) in new.rooms.sorted(by: { $0.key < $1.key }) {
            guard let before = old.rooms[key], before != status, let room = rooms[key], !isInRoomHere(person, room),
                  remote.holders(of: person).first(where: { $0.rooms[key] != nil })?.connection == new.connection else { continue }
            tellStatusChange(of: new.nick, in: room, from: before, to: status)
        }
        guard speaks else { return }
        let peers = localMembers(of: Set(new.rooms.keys))
        if old.account != new.account {
            broadcast(line(new.prefix, "ACCOUNT", [new.account ?? "*"]), to: peers, only: { $0.caps.contains(.accountNotify) })
        }
        if old.realname != new.realname {
            broadcast(line(new.prefix, "SETNAME", [new.realname]), to: peers, only: { $0.caps.contains(.setname) })
        }
    }

    /// The person is away while each of their connections is (each node publishes its own
    /// connections' state taken together): with the text of the last given, nil when one is here.
    static func away(of records: [PresenceRecord]) -> String? {
        records.allSatisfy { $0.away != nil } ? records.last?.away : nil
    }

    /// A connection elsewhere of the person under `person` came, changed or went (`before` to
    /// `after`, nil for none): their sessions here work out again whether the person is away;
    /// for someone connected elsewhere only, the rooms here hear AWAY when the person's state
    /// changed, as one of their connections, the last to change, tells it.
    private func awayMayHaveChanged(_ person: String, here: [Client], before: PresenceRecord?, after: PresenceRecord?) {
        guard let changed = after ?? before, before?.away != after?.away || before == nil || after == nil else { return }
        if let first = here.first { return personAwayChanged(first) }
        let others = remote.holders(of: person).filter { $0.connection != changed.connection }
        guard !others.isEmpty || (before != nil && after != nil) else { return }  // a first JOIN or a QUIT says it
        let wasAway = Self.away(of: others + (before.map { [$0] } ?? [])), isAway = Self.away(of: others + (after.map { [$0] } ?? []))
        guard wasAway != isAway, let speaker = after ?? others.last else { return }
        let out = Outgoing(Message(source: speaker.prefix, "AWAY", isAway.map { [$0] } ?? []), time: now(), account: speaker.account)
        broadcast(out, to: localMembers(of: Set((others + [speaker]).flatMap(\.rooms.keys))), only: { $0.caps.contains(.awayNotify) })
    }

    /// Whether the rooms here already know the person by `record`'s nick, as spelled: another of
    /// their connections took it first.
    private func isKnown(as record: PresenceRecord) -> Bool {
        if let first = registry.nicks[record.nickKey], first.nick == record.nick, PresenceRecord.samePerson(first.accountName, record.account) {
            return true
        }
        return remote.holders(of: record.nickKey).contains { $0.connection != record.connection && $0.nick == record.nick }
    }

    /// A user elsewhere is gone: QUIT to those who shared a room with them, unless the person is
    /// still connected, here or on another node; then only the rooms they are no longer in hear a PART.
    private func left(_ connection: String, reason: String) {
        guard let old = remote.remove(connection) else { return }
        let person = old.nickKey, here = sessionsHere(of: old)
        let stays = !here.isEmpty || !remote.holders(of: person).isEmpty
        if stays { awayMayHaveChanged(person, here: here, before: old, after: nil) }
        var quitRooms = Set<String>()
        for key in old.rooms.keys.sorted() {
            guard let room = rooms[key] else { continue }
            if room.departed.contains(person) {
                if !remote.holders(of: person).contains(where: { $0.rooms[key] != nil }) { room.departed.remove(person) }
            } else if !stays {
                quitRooms.insert(key)
            } else if !isInRoomHere(person, room) && !isInRoomElsewhere(person, room) {
                broadcast(Outgoing(Message(source: old.prefix, "PART", [room.name, reason]), time: now(), account: old.account), to: room.members)
            }
        }
        guard !stays else { return }
        let quit = Outgoing(Message(source: old.prefix, "QUIT", [reason]), time: now(), account: old.account)
        broadcast(quit, to: localMembers(of: quitRooms))
        remoteOffline(nick: old.nick, key: old.nickKey)
    }

    /// The server's MODE line to the room's members here when someone's status in it changed
    /// (`+o nick`, `-v+o nick nick`); statuses as their letters (`o`, `v`, `ov`, empty).
    func tellStatusChange(of nick: String, in room: LiveRoom, from before: String, to after: String) {
        guard let change = Self.modeChange(from: before, to: after) else { return }
        let nicks = Array(repeating: nick, count: change.filter(\.isLetter).count)
        broadcast(Outgoing(Message(source: name, "MODE", [room.name, change] + nicks), time: now()), to: room.members)
    }

    /// `+o`, `-v+o` and the like between two status texts (`o`, `v`, `ov`, empty).
    static func modeChange(from before: String, to after: String) -> String? {
        var removed = "", added = ""
        for flag in "ov" {
            if before.contains(flag) && !after.contains(flag) { removed.append(flag) }
            if after.contains(flag) && !before.contains(flag) { added.append(flag) }
        }
        let change = (removed.isEmpty ? "" : "-" + removed) + (added.isEmpty ? "" : "+" + added)
        return change.isEmpty ? nil : change
    }

    /// The clients here in any of these rooms, each once.
    private func localMembers(of roomKeys: Set<String>) -> [Client] {
        var seen = Set<ObjectIdentifier>()
        var result: [Client] = []
        for key in roomKeys.sorted() {
            for member in rooms[key]?.members ?? [] where seen.insert(ObjectIdentifier(member)).inserted {
                result.append(member)
            }
        }
        return result
    }

    private func remoteOnline(_ record: PresenceRecord) {
        for watcher in monitors.watchers(of: record.nickKey) {
            send(Outgoing(Message(source: name, Numeric.monOnline.rawValue, [watcher.nick, record.prefix]), time: now()), to: watcher)
        }
    }

    private func remoteOffline(nick: String, key: String) {
        guard registry.nicks[key] == nil, remote.holders(of: key).isEmpty else { return }
        monitoredOffline(nick: nick, key: key)
    }
}
