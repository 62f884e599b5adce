import ChorusCore
import ChorusIRC
import ChorusWorkspace
import Foundation

extension IRCServer {
    // MODE <nick> [<+|-modes>]  |  MODE <room> [<+|-modes> [<args>…]]
    func handleMode(_ reply: Reply, _ m: Message) {
        if Names.isChannel(m.params[0]) { roomMode(reply, m) } else { userMode(reply, m) }
    }

    private func userMode(_ reply: Reply, _ m: Message) {
        let client = reply.client
        guard Names.fold(m.params[0]) == client.nickKey else {
            if registry.client(nick: m.params[0]) == nil { return reply.numeric(.noSuchNick, m.params[0], "No such nick") }
            return reply.numeric(.usersDontMatch, "You can't change or view modes of other users")
        }
        guard m.params.count > 1 else { return reply.numeric(.umodeIs, userModeString(client)) }
        var adding = true, applied = "", sign: Character? = nil, unknown = false
        for ch in m.params[1] {
            switch ch {
            case "+": adding = true
            case "-": adding = false
            case "i", "B", "o", "w":
                if ch == "o" && adding { continue }  // +o only through OPER
                var changed = false
                switch ch {
                case "i": changed = client.invisible != adding; registry.setInvisible(client, adding)
                case "B": changed = client.isBot != adding; client.isBot = adding
                case "o": changed = client.isOper; registry.setOper(client, false)
                default: changed = false
                }
                if changed {
                    let s: Character = adding ? "+" : "-"
                    if sign != s { applied.append(s); sign = s }
                    applied.append(ch)
                }
            default: unknown = true
            }
        }
        if unknown { reply.numeric(.uModeUnknownFlag, "Unknown MODE flag") }
        if !applied.isEmpty {
            reply.send(Message(source: client.prefix, "MODE", [client.nick, applied]))
            cluster?.presenceChanged(client)
        }
    }

    func userModeString(_ client: Client) -> String {
        "+" + (client.isBot ? "B" : "") + (client.invisible ? "i" : "") + (client.isOper ? "o" : "")
    }

    private func roomMode(_ reply: Reply, _ m: Message) {
        let client = reply.client
        guard let room = room(named: m.params[0], reply: reply) else { return }
        guard m.params.count > 1 else {
            reply.numeric(.channelModeIs, params: [room.name] + room.modeString(showParameters: room.contains(client)))
            reply.numeric(.creationTime, room.name, String(Int(room.room.createdAt.timeIntervalSince1970)))
            return
        }
        let arguments = Array(m.params.dropFirst(2))
        changeStoredRoom(room, "the room's modes", reply: reply) { [self] updated in
            var args = arguments
            func nextArg() -> String? { args.isEmpty ? nil : args.removeFirst() }

            let isOp = room.isOp(client)
            var adding = true
            var applied: [(Character, Character, String?)] = []  // sign, mode, arg
            var memberRoles: [RoleChange] = []
            var changedRoom = false
            var changes = 0
            for ch in m.params[1] {
                switch ch {
                case "+": adding = true; continue
                case "-": adding = false; continue
                default: break
                }
                switch ch {
                case "b":
                    guard let mask = nextArg() else {
                        // The ban list is open to anyone who can see the room.
                        for ban in updated.bans { reply.numeric(.banList, room.name, ban) }
                        reply.numeric(.endOfBanList, room.name, "End of room ban list")
                        continue
                    }
                    guard isOp else { reply.numeric(.chanOPrivsNeeded, room.name, "Only the room's managers may change bans"); return nil }
                    let normalized = Self.normalizeBan(mask)
                    if adding, !updated.bans.contains(normalized), updated.bans.count < 100 {
                        updated.bans.append(normalized)
                    } else if !adding, let i = updated.bans.firstIndex(of: normalized) {
                        updated.bans.remove(at: i)
                    } else { continue }
                    applied.append((adding ? "+" : "-", "b", normalized)); changedRoom = true
                case "o", "v":
                    guard let nick = nextArg() else { continue }
                    guard isOp else { reply.numeric(.chanOPrivsNeeded, room.name, "Only the room's managers may change roles"); return nil }
                    guard let person = person(nick: nick) else {
                        reply.numeric(.noSuchNick, nick, "No such nick")
                        continue
                    }
                    guard person.isIn(room) else {
                        reply.numeric(.userNotInChannel, nick, room.name, "They aren't in that room")
                        continue
                    }
                    let flag: LiveRoom.Status = ch == "o" ? .op : .voice
                    if let account = person.account, room.memberships[Account.key(account)] != nil {
                        // A member's role is stored first (`storeRoles`), wherever they are
                        // connected: flags gathered per member.
                        if !memberRoles.contains(where: { $0.target.nickKey == person.nickKey }) {
                            memberRoles.append(RoleChange(target: person, account: account))
                        }
                        let i = memberRoles.firstIndex { $0.target.nickKey == person.nickKey }!
                        guard memberRoles[i].wanted(in: room).contains(flag) != adding else { continue }
                        memberRoles[i].flags.append((adding ? "+" : "-", ch))
                        continue
                    }
                    guard case .here(let target) = person else {
                        reply.numeric(.userNotInChannel, nick, room.name,
                                      "\(nick) is a guest connected to another server of this network: only a member's role can be set from here")
                        continue
                    }
                    // A guest's status is presence only: given at once.
                    var status = room.status(of: target) ?? []
                    guard status.contains(flag) != adding else { continue }
                    if adding { status.insert(flag) } else { status.remove(flag) }
                    room.setStatus(target, status)
                    cluster?.presenceChanged(target)
                    applied.append((adding ? "+" : "-", ch, target.nick))
                case "k":
                    guard isOp else { reply.numeric(.chanOPrivsNeeded, room.name, "Only the room's managers may change modes"); return nil }
                    if adding {
                        guard let key = nextArg() else { continue }
                        // A key must be one word that JOIN can give back: no space, comma or leading colon.
                        guard !key.isEmpty, !key.contains(" "), !key.contains(","), !key.hasPrefix(":") else {
                            reply.numeric(.invalidKey, room.name, "Key is not well-formed")
                            continue
                        }
                        updated.modes.key = String(key.prefix(32))
                        applied.append(("+", "k", updated.modes.key))
                    } else {
                        _ = nextArg()
                        guard updated.modes.key != nil else { continue }
                        updated.modes.key = nil
                        applied.append(("-", "k", "*"))
                    }
                    changedRoom = true
                case "l":
                    guard isOp else { reply.numeric(.chanOPrivsNeeded, room.name, "Only the room's managers may change modes"); return nil }
                    if adding {
                        guard let text = nextArg() else { continue }
                        guard let limit = Int(text), limit > 0 else {
                            reply.numeric(.invalidModeParam, room.name, "l", text, "The limit is a number of people, 1 or more")
                            continue
                        }
                        updated.modes.limit = limit
                        applied.append(("+", "l", String(limit)))
                    } else {
                        guard updated.modes.limit != nil else { continue }
                        updated.modes.limit = nil
                        applied.append(("-", "l", nil))
                    }
                    changedRoom = true
                case "i", "m", "n", "s", "t":
                    guard isOp else { reply.numeric(.chanOPrivsNeeded, room.name, "Only the room's managers may change modes"); return nil }
                    let path: WritableKeyPath<RoomModes, Bool> = switch ch {
                    case "i": \.inviteOnly
                    case "m": \.moderated
                    case "n": \.noExternal
                    case "s": \.secret
                    default: \.topicLocked
                    }
                    guard updated.modes[keyPath: path] != adding else { continue }
                    updated.modes[keyPath: path] = adding
                    applied.append((adding ? "+" : "-", ch, nil)); changedRoom = true
                default:
                    reply.numeric(.unknownMode, String(ch), "is not a room mode I know")
                }
                changes += 1
                if changes >= 4 + 8 { break }  // a generous bound on one line's work
            }

            // A guest's status is live at once; a member's role and the room's own modes and
            // bans are told once stored.
            let roles = applied.filter { $0.1 == "o" || $0.1 == "v" }
            let settings = applied.filter { $0.1 != "o" && $0.1 != "v" }
            self.tellModes(roles, in: room, by: client, reply: reply)
            self.storeRoles(memberRoles, in: room, by: client, reply: reply)
            guard changedRoom else { return nil }
            return { self.tellModes(settings, in: room, by: client, reply: reply) }
        }
    }

    /// MODE ±o/±v of one member, in one line: the flags, in the order given.
    private struct RoleChange {
        let target: Person
        /// The member's account name.
        let account: String
        var flags: [(sign: Character, letter: Character)] = []

        /// The status the flags give, from `status`.
        func applied(to status: LiveRoom.Status) -> LiveRoom.Status {
            var status = status
            for (sign, letter) in flags {
                let flag: LiveRoom.Status = letter == "o" ? .op : .voice
                if sign == "+" { status.insert(flag) } else { status.remove(flag) }
            }
            return status
        }

        func wanted(in room: LiveRoom) -> LiveRoom.Status { applied(to: target.status(in: room)) }
    }

    /// Members' roles, stored by the room's rules (a manager stays one across reconnects, and the
    /// room hears who became one); each member's status changes, and the room hears its MODE, once
    /// their role is stored. A refusal or a failed write is the setter's to hear. A member connected
    /// to another node is given the status there, when that node reads the stored role, and the
    /// room here hears it from there.
    private func storeRoles(_ changes: [RoleChange], in room: LiveRoom, by client: Client, reply: Reply) {
        for change in changes where !change.flags.isEmpty {
            let stored = Self.storedRole(change.wanted(in: room), of: change.account, in: room, by: client)
            changeMembership(stored, in: room, reply: reply) {
                guard case .here(let target) = change.target, room.contains(target) else { return }
                room.setStatus(target, change.applied(to: room.status(of: target) ?? []))
                self.cluster?.presenceChanged(target)
                self.tellModes(change.flags.map { ($0.sign, $0.letter, target.nick) }, in: room, by: client, reply: reply)
            }
        }
    }

    private func tellModes(_ applied: [(Character, Character, String?)], in room: LiveRoom, by client: Client, reply: Reply) {
        guard !applied.isEmpty else { return }
        var flags = "", params: [String] = [], sign: Character? = nil
        for (s, mode, arg) in applied {
            if s != sign { flags.append(s); sign = s }
            flags.append(mode)
            if let arg { params.append(arg) }
        }
        let out = Outgoing(Message(source: client.prefix, "MODE", [room.name, flags] + params), time: now(), account: client.accountName)
        broadcast(out, to: room.members, reply: reply)
    }

    /// `nick` → `nick!*@*`, `user@host` → `*!user@host`; extbans (`$a:account`) stay as written.
    static func normalizeBan(_ mask: String) -> String {
        if mask.hasPrefix("$") { return mask }
        if mask.contains("!") { return mask.contains("@") ? mask : mask + "@*" }
        if mask.contains("@") { return "*!" + mask }
        return mask + "!*@*"
    }

    /// The role a status in the room stands for (`@` a manager, `+` voiced), as the room's rules store it.
    private static func storedRole(_ status: LiveRoom.Status, of account: String, in room: LiveRoom, by client: Client) -> MembershipChange {
        .role(status.contains(.op) ? .manager : .member, voiced: status.contains(.voice), of: account, in: room.key, by: client.account?.name)
    }
}
