import ChorusCore
import ChorusIRC
import ChorusWorkspace
import Foundation
import NIOCore

extension IRCServer {
    // JOIN <room>{,<room>} [<key>{,<key>}]  |  JOIN 0 (leave every room)
    func handleJoin(_ reply: Reply, _ m: Message) {
        let client = reply.client
        if m.params[0] == "0" {
            for room in client.rooms { leave(room, client, reason: "Left all rooms", reply: reply) }
            return
        }
        let names = m.params[0].split(separator: ",").map(String.init)
        let keys = m.params.count > 1 ? m.params[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init) : []
        for (i, roomName) in names.enumerated() {
            join(client, roomName, key: i < keys.count ? keys[i] : nil, reply: reply)
        }
    }

    /// `madeElsewhere`: another process made the room as this one tried to (`SharedLog.makeRoom`):
    /// whoever came in with it there came first, however soon this process hears of them.
    private func join(_ client: Client, _ roomName: String, key: String?, madeElsewhere: Bool = false, reply: Reply) {
        guard Names.isValidChannel(roomName) else {
            return reply.numeric(.noSuchChannel, roomName, "Illegal room name: use # and up to 49 characters without spaces or commas")
        }
        let roomKey = Names.fold(roomName)
        if client.rooms.contains(where: { $0.key == roomKey }) { return }
        guard client.rooms.count < config.maxChannelsPerClient else {
            return reply.numeric(.tooManyChannels, roomName, "You have joined too many rooms")
        }
        let accountKey = client.account?.key
        if let room = rooms[roomKey] {
            let remembered = accountKey.flatMap { room.memberships[$0] }
            let invited = room.invitedNicks.contains(client.nickKey)
            if remembered?.role != .manager && !invited && isBanned(client, from: room) {
                return reply.numeric(.bannedFromChan, room.name, "Cannot join room (+b): you are banned")
            }
            if room.room.modes.inviteOnly && remembered == nil && !invited {
                return reply.numeric(.inviteOnlyChan, room.name, "Cannot join room (+i): a manager must invite you")
            }
            // A team's room is its members': others come in when a manager adds or invites them.
            if !room.isOpen(byDefault: config.roomsOpen) && remembered == nil && !invited {
                return reply.numeric(.inviteOnlyChan, room.name,
                                     "Cannot join room: it is its members' (a manager adds you with !room add or INVITE)")
            }
            if let requiredKey = room.room.modes.key, remembered == nil, !invited, key != requiredKey {
                return reply.numeric(.badChannelKey, room.name, "Cannot join room (+k): wrong or missing key")
            }
            if let limit = room.room.modes.limit, remembered == nil, peopleCount(of: room) >= limit {
                return reply.numeric(.channelIsFull, room.name, "Cannot join room (+l): it is full")
            }
            room.invitedNicks.remove(client.nickKey)
            if let remembered { return enter(room, client, status: LiveRoom.Status(remembered), reply: reply) }
            // A room nobody runs goes to whoever comes in first, as an empty IRC channel would.
            let firstComer = !madeElsewhere && !room.members.contains(where: { room.isOp($0) })
                && !remote.members(of: roomKey).contains { $0.rooms[roomKey]?.contains("o") == true }
            arrive(client, in: room, firstComer: firstComer, reply: reply)
        } else if let shared = cluster?.log {
            // Another process may have made it since this one last heard, or make it at this moment:
            // the database says which one made it.
            let made = Room(name: roomName, createdAt: now())
            let workspace = self.workspace
            reply.wait(for: readAfterWrites { _ in
                defer { workspace.roomsChangedOutside() }  // made outside the Workspace's transactions
                return try shared.makeRoom(made)
            }) { result in
                switch result {
                case .success(nil):
                    let room = self.rooms[roomKey] ?? LiveRoom(room: made)
                    if self.rooms[roomKey] == nil {
                        room.hasHistory = false
                        self.rooms[roomKey] = room
                    }
                    self.arrive(client, in: room, firstComer: true, reply: reply)
                case .success(let stored?):
                    if self.rooms[roomKey] == nil { self.roomChangedElsewhere(roomKey, stored) }
                    self.join(client, roomName, key: key, madeElsewhere: true, reply: reply)
                case .failure(let error):
                    self.logger.error("could not make room \(roomName): \(error)")
                    reply.fail("TEMPORARILY_UNAVAILABLE", context: [roomName], "Could not make \(roomName); nothing changed, try again",
                               command: "JOIN")
                }
            }
        } else {
            let room = LiveRoom(room: Room(name: roomName, createdAt: now()))
            room.hasHistory = false
            rooms[roomKey] = room
            let stored = room.room
            persist("room \(roomName)") { try $0.saveRoom(stored) }
            arrive(client, in: room, firstComer: true, reply: reply)
        }
    }

    /// `client` comes into `room`, where its account (if any) is not yet a member. A guest enters at
    /// once, as an operator if it came first; an account first becomes a member by the room's rules
    /// (`RoomBoard.arrive`, which decides who manages it) and enters once that is stored, with the
    /// status its role gives. If it cannot be stored, the client is told and stays out.
    private func arrive(_ client: Client, in room: LiveRoom, firstComer: Bool, reply: Reply) {
        guard let account = client.account else {
            let managed = room.memberships.values.contains { $0.role == .manager }
            return enter(room, client, status: firstComer && !managed ? .op : [], reply: reply)
        }
        // Several rooms of one JOIN wait together, and every next line of the client waits for
        // them, bot commands too: a script's command right behind the JOIN is meant for the room.
        reply.wait(for: perform(MembershipChange.arrive(account.name, in: room.key, firstComer: firstComer), for: reply)) { result in
            let outcome = (try? result.get()) ?? .notCommitted
            guard !client.closing, self.rooms[room.key] === room, !room.contains(client) else { return }
            guard !outcome.refused, let membership = room.memberships[account.key] else {
                return reply.fail("TEMPORARILY_UNAVAILABLE", context: [room.name],
                                  "Could not store your membership of \(room.name); nothing changed, try again", command: "JOIN")
            }
            self.enter(room, client, status: LiveRoom.Status(membership), reply: reply)
        }
    }

    /// The account left the room (`actor` made it leave, by KICK, or it left): present no more, and
    /// the room's rules take it out of the work it held there (`MembershipChange.leave`), telling the room.
    func forget(_ account: String, in room: LiveRoom, by actor: String) {
        guard room.memberships.removeValue(forKey: Account.key(account)) != nil else { return }
        // Told, then stored: a snapshot read before the end is stored still has the membership.
        room.noteChangedHere()
        let key = room.key
        workspace.run(MembershipChange.leave(account, room: key, by: actor)) { [weak self] _ in
            self?.loop.execute { self?.rooms[key]?.noteChangedHere() }
        }
    }

    /// An account was made a member of a room (`!room add`, INVITE): remembered, and each of its
    /// connections is put in the room now, as its next login would.
    func admit(_ accountKey: String, to roomKey: String) {
        guard let room = rooms[roomKey] else { return }
        room.memberships[accountKey] = Membership(room: roomKey, account: accountKey, role: .member, since: now())
        room.noteChangedHere()
        for client in registry.connections(ofAccount: accountKey) where !room.contains(client) && !client.closing {
            let reply = Reply(client: client, server: self, command: "JOIN", label: nil)
            enter(room, client, status: [], reply: reply)
            reply.finish()
        }
    }

    /// Puts `client` in `room`, tells the members, and sends the newcomer the topic, names and recent lines.
    /// Another session of the same person (`ClientRegistry.twins`, or on another node:
    /// `PersonAcrossNodes`) comes in quietly: the room already has them, so only this connection
    /// hears the JOIN; and where one session goes, the others follow.
    func enter(_ room: LiveRoom, _ client: Client, status: LiveRoom.Status, reply: Reply, replay: Replay = .latest) {
        let sessions = registry.sharing(client)
        let presentHere = sessions.contains { $0 !== client && room.contains($0) }
        let present = presentHere || (client.account != nil && isInRoomElsewhere(client.nickKey, room))
        room.departed.remove(client.nickKey)
        room.add(client, status: presentHere ? room.status(of: registry.first(sharing: client)) ?? status : status, sharing: presentHere)
        client.rooms.append(room)
        cluster?.presenceChanged(client)
        let t = now(), source = client.prefix
        let plain = Outgoing(Message(source: source, "JOIN", [room.name]), time: t, account: client.accountName)
        let extended = Outgoing(Message(source: source, "JOIN", [room.name, client.accountName ?? "*", client.realname]),
                                time: t, account: client.accountName)
        let hearers = present ? [client] : room.members
        broadcast(plain, to: hearers, reply: reply, only: { !$0.caps.contains(.extendedJoin) })
        broadcast(extended, to: hearers, reply: reply, only: { $0.caps.contains(.extendedJoin) })
        defer {
            for session in sessions where !room.contains(session) && !session.closing {
                let followed = Reply(client: session, server: self, command: "JOIN", label: nil)
                enter(room, session, status: status, reply: followed, replay: replay)
                followed.finish()
            }
        }
        if let away = client.away, !present {
            let out = Outgoing(Message(source: source, "AWAY", [away]), time: t, account: client.accountName)
            broadcast(out, to: room.members, except: client, only: { $0.caps.contains(.awayNotify) })
        }
        if !room.room.topic.isEmpty {
            reply.numeric(.topic, room.name, room.room.topic)
            reply.numeric(.topicWhoTime, room.name, room.room.topicSetBy, String(Int(room.room.topicSetAt?.timeIntervalSince1970 ?? 0)))
        }
        if client.caps.contains(.readMarker) {
            reply.send(markreadLine(room.name, at: readMarkers[readMarkerOwner(of: client)]?[room.key]))  // before the end of NAMES
        }
        sendNames(room, to: reply)
        replayHistory(room, to: client, replay)
    }

    /// After login: back into every room the account is remembered in, replayed what the account
    /// missed while none of its connections was there.
    func rejoinRooms(_ client: Client, reply: Reply) {
        guard let accountKey = client.account?.key else { return }
        let replay: Replay = registry.connections(ofAccount: accountKey).contains { $0 !== client } ? .none : .unseen
        for room in rooms.values.sorted(by: { $0.room.createdAt < $1.room.createdAt }) {
            guard let m = room.memberships[accountKey], !room.contains(client) else { continue }
            enter(room, client, status: LiveRoom.Status(m), reply: reply, replay: replay)
        }
    }

    /// After a login mid-session: the rooms the client sat in as a guest become its account's (it
    /// manages one it runs that no account manages, as if it had joined logged in), rooms where the
    /// account has a role give it that role, and it goes back into the account's other rooms.
    /// Without this, someone who registered in a room was told they were not a member of it.
    func settleRooms(of client: Client, reply: Reply) {
        guard let account = client.account else { return }
        let accountKey = account.key
        for room in client.rooms {
            let status = room.status(of: client) ?? []
            guard let membership = room.memberships[accountKey] else {
                // Stored by the room's rules; the role they give reaches the mirror when committed.
                workspace.run(MembershipChange.arrive(account.name, in: room.key, firstComer: status.contains(.op),
                                                      voiced: status.contains(.voice)))
                continue
            }
            var granted: LiveRoom.Status = []
            if membership.role == .manager && !status.contains(.op) { granted.insert(.op) }
            if membership.voiced && !status.contains(.voice) { granted.insert(.voice) }
            guard !granted.isEmpty else { continue }
            room.setStatus(client, status.union(granted))
            cluster?.presenceChanged(client)
            let flags = "+" + (granted.contains(.op) ? "o" : "") + (granted.contains(.voice) ? "v" : "")
            let nicks = Array(repeating: client.nick, count: flags.count - 1)
            broadcast(Outgoing(Message(source: name, "MODE", [room.name, flags] + nicks), time: now()), to: room.members, reply: reply)
        }
        rejoinRooms(client, reply: reply)
    }

    /// A room's lines for a client that cannot ask for them (no `draft/chathistory`): its last
    /// lines, or those the account has not seen, at most `history-replay` of them.
    /// RPL_NAMREPLY lines, as many as the names need, then RPL_ENDOFNAMES: the room's people on
    /// every node.
    func sendNames(_ room: LiveRoom, to reply: Reply) {
        let client = reply.client
        let symbol = room.room.modes.secret ? "@" : "="
        let multi = client.caps.contains(.multiPrefix), full = client.caps.contains(.userhostInNames)
        let outsider = !room.contains(client)
        var names = ParamText(capacity: 400)
        func add(_ prefix: String, _ name: String) {
            if !names.isEmpty {
                if names.count + 1 + prefix.utf8.count + name.utf8.count > 400 {
                    reply.numeric(.namReply, symbol, room.name, text: names)
                    names = ParamText(capacity: 400)
                } else {
                    names.append(UInt8(ascii: " "))
                }
            }
            names.append(prefix)
            names.append(name)
        }
        for person in people(in: room) where !(person.isInvisible && outsider) {
            add(person.prefix(in: room, multiPrefix: multi), full ? person.prefix : person.nick)
        }
        if !names.isEmpty { reply.numeric(.namReply, symbol, room.name, text: names) }
        reply.numeric(.endOfNames, room.name, text: "End of /NAMES list")
    }

    /// Who KICKs someone: a client here, or one connected to another process, known by its line.
    struct Kicker {
        let prefix: String
        let nick: String
        let account: String?

        init(_ client: Client) {
            (prefix, nick, account) = (client.prefix, client.nick, client.accountName)
        }

        init(source: String, account: String?) {
            prefix = source
            nick = String(source.prefix { $0 != "!" })
            self.account = account
        }
    }

    /// Takes `client` out of `room` (PART, or KICK when `kicker` is given) and forgets the
    /// membership: leaving is deliberate.
    func leave(_ room: LiveRoom, _ client: Client, reason: String?, kickedBy kicker: Kicker? = nil, reply: Reply?) {
        let message: Message
        if let kicker {
            message = Message(source: kicker.prefix, "KICK", [room.name, client.nick, reason ?? kicker.nick])
        } else {
            message = Message(source: client.prefix, "PART", reason.map { [room.name, $0] } ?? [room.name])
        }
        broadcast(Outgoing(message, time: now(), account: kicker.map(\.account) ?? client.accountName), to: room.members, reply: reply)
        // The person leaves: each of their sessions heard it, and each goes.
        for session in registry.sharing(client) where room.contains(session) {
            takeOut(session, from: room, note: reason ?? kicker.map { "Kicked by \($0.nick)" })
        }
        noteDeparted(client.nickKey, from: room)
        if let account = client.account?.name { forget(account, in: room, by: kicker.map { $0.account ?? $0.nick } ?? account) }
    }

    /// `client` is in `room` no more, here and for the other nodes (`note`: why, as their PART says).
    func takeOut(_ client: Client, from room: LiveRoom, note: String?) {
        room.remove(client)
        client.rooms.removeAll { $0 === room }
        cluster?.presenceChanged(client, note: note)
    }

    func room(named name: String, reply: Reply) -> LiveRoom? {
        guard let room = rooms[Names.fold(name)] else {
            reply.numeric(.noSuchChannel, name, "No such room")
            return nil
        }
        return room
    }

    // PART <room>{,<room>} [:<reason>]
    func handlePart(_ reply: Reply, _ m: Message) {
        for roomName in m.params[0].split(separator: ",").map(String.init) {
            guard let room = room(named: roomName, reply: reply) else { continue }
            guard room.contains(reply.client) else {
                reply.numeric(.notOnChannel, room.name, "You're not in that room")
                continue
            }
            leave(room, reply.client, reason: m.params.count > 1 ? m.params[1] : nil, reply: reply)
        }
    }

    // TOPIC <room> [:<topic>]
    func handleTopic(_ reply: Reply, _ m: Message) {
        let client = reply.client
        guard let room = room(named: m.params[0], reply: reply) else { return }
        guard m.params.count > 1 else {
            if room.room.modes.secret && !room.contains(client) {
                return reply.numeric(.notOnChannel, room.name, "You're not in that room")
            }
            if room.room.topic.isEmpty { return reply.numeric(.noTopic, room.name, "No topic is set") }
            reply.numeric(.topic, room.name, room.room.topic)
            reply.numeric(.topicWhoTime, room.name, room.room.topicSetBy, String(Int(room.room.topicSetAt?.timeIntervalSince1970 ?? 0)))
            return
        }
        let topic = String(m.params[1].prefix(Limits.topicLength))
        changeStoredRoom(room, "the topic", reply: reply) { [self] updated in
            guard room.contains(client) else {
                reply.numeric(.notOnChannel, room.name, "You're not in that room")
                return nil
            }
            guard !updated.modes.topicLocked || room.isOp(client) else {
                reply.numeric(.chanOPrivsNeeded, room.name, "Only the room's managers may change the topic (+t)")
                return nil
            }
            updated.topic = topic
            updated.topicSetBy = client.prefix
            updated.topicSetAt = self.now()
            return {
                self.broadcast(Outgoing(Message(source: client.prefix, "TOPIC", [room.name, topic]), time: self.now(), account: client.accountName),
                               to: room.members, reply: reply)
            }
        }
    }

    // NAMES [<room>]
    func handleNames(_ reply: Reply, _ m: Message) {
        guard let roomName = m.params.first?.split(separator: ",").first.map(String.init) else {
            return reply.numeric(.endOfNames, "*", "End of /NAMES list")
        }
        guard let room = rooms[Names.fold(roomName)], !room.room.modes.secret || room.contains(reply.client) else {
            return reply.numeric(.endOfNames, roomName, "End of /NAMES list")
        }
        sendNames(room, to: reply)
    }

    // LIST [<room>{,<room>}] [<N | >N]
    func handleList(_ reply: Reply, _ m: Message) {
        let client = reply.client
        var wanted: Set<String>?
        var minUsers = -1, maxUsers = Int.max
        for param in m.params {
            if param.hasPrefix(">"), let n = Int(param.dropFirst()) { minUsers = n }
            else if param.hasPrefix("<"), let n = Int(param.dropFirst()) { maxUsers = n }
            else { wanted = Set(param.split(separator: ",").map { Names.fold(String($0)) }) }
        }
        reply.numeric(.listStart, "Room", "Users  Name")
        for room in rooms.values.sorted(by: { $0.key < $1.key }) {
            if let wanted, !wanted.contains(room.key) { continue }
            if room.room.modes.secret && !room.contains(client) { continue }
            let count = peopleCount(of: room)
            guard count > minUsers && count < maxUsers else { continue }
            let modes = room.modeString(showParameters: false).joined(separator: " ")
            reply.numeric(.list, room.name, String(count), "[\(modes)] \(room.room.topic)")
        }
        reply.numeric(.listEnd, "End of /LIST")
    }

    // KICK <room>{,<room>} <nick>{,<nick>} [:<reason>]   (RFC 2812: one room and several nicks, or
    // as many rooms as nicks, in pairs; at most TARGMAX's 4 kicks)
    func handleKick(_ reply: Reply, _ m: Message) {
        let client = reply.client
        let roomNames = m.params[0].split(separator: ",").map(String.init)
        let targets = m.params[1].split(separator: ",").map(String.init)
        guard roomNames.count == 1 || roomNames.count == targets.count else {
            return reply.numeric(.needMoreParams, "KICK", "Give one room, or as many rooms as nicks")
        }
        let reason = m.params.count > 2 ? String(m.params[2].prefix(Limits.kickLength)) : nil
        for (i, nick) in targets.prefix(4).enumerated() {
            guard let room = room(named: roomNames.count == 1 ? roomNames[0] : roomNames[i], reply: reply) else { continue }
            guard room.contains(client) else { reply.numeric(.notOnChannel, room.name, "You're not in that room"); continue }
            guard room.isOp(client) else { reply.numeric(.chanOPrivsNeeded, room.name, "Only the room's managers may kick"); continue }
            guard let target = person(nick: nick), target.isIn(room) else {
                reply.numeric(.userNotInChannel, nick, room.name, "They aren't in that room")
                continue
            }
            if let account = target.account, room.memberships[Account.key(account)] != nil {
                kickMember(account, from: room, reason: reason, by: client, reply: reply)
                continue
            }
            // A guest's presence is all there is of it in the room: told, then gone; on another
            // node, by an order to that node.
            switch target {
            case .here(let guest): leave(room, guest, reason: reason, kickedBy: Kicker(client), reply: reply)
            case .elsewhere(let guest): kickGuestElsewhere(guest, from: room, reason: reason, by: client, reply: reply)
            }
        }
    }

    /// KICK of a member: the membership ends by the room's rules (their turns pass on, their jobs
    /// there go back), and once that is stored every connection of theirs here leaves the room
    /// (those on other nodes leave it when their node reads the room again).
    private func kickMember(_ account: String, from room: LiveRoom, reason: String?, by client: Client, reply: Reply) {
        let kicker = Kicker(client), key = Account.key(account)
        let elsewhere = kickMembersElsewhere(account, from: room, reason: reason, by: client)
        changeMembership(.leave(account, room: room.key, by: client.account?.name ?? client.nick), in: room, reply: reply) {
            room.memberships[key] = nil  // ended: `leave` has nothing more to store
            room.noteChangedHere()
            for connection in self.registry.connections(ofAccount: key) where room.contains(connection) {
                self.leave(room, connection, reason: reason, kickedBy: kicker, reply: reply)
            }
            // Connected elsewhere only: the room here hears the KICK now, not their node's PART later.
            for user in elsewhere where self.isInRoomElsewhere(user.nickKey, room) && !self.isInRoomHere(user.nickKey, room) {
                let kick = Message(source: client.prefix, "KICK", [room.name, user.nick, reason ?? client.nick])
                self.broadcast(Outgoing(kick, time: self.now(), account: client.accountName), to: room.members, reply: reply)
                room.departed.insert(user.nickKey)
            }
        }
    }

    /// INVITE of an account that is not connected, through the room's rules (`MembershipChange.add`).
    /// The account's name is checked in the store, not only in `accountKeys`: an account made with
    /// `chorusd account add` a moment ago is not there until the next refresh.
    private func invite(account: String, to room: LiveRoom, by manager: String, reply: Reply) {
        let roomName = room.name, roomKey = room.key, store = self.store
        let added = background { try store.account(named: account) }.flatMap { found -> EventLoopFuture<Outcome?> in
            guard let found else { return self.loop.makeSucceededFuture(nil) }
            self.accountKeys.insert(found.key)
            return self.perform(MembershipChange.add(found.name, to: roomKey, by: manager), for: reply).map { $0 }
        }
        reply.wait(for: added) { result in
            switch result {
            case .success(nil):
                reply.numeric(.noSuchNick, account, "No such nick")
            case .success(let outcome?) where !outcome.refused:
                reply.numeric(.inviting, account, roomName)
            case .success(let outcome?):
                reply.fail("CANNOT_INVITE", context: [account, roomName], outcome.replies.joined(separator: " "))
            case .failure:
                reply.fail("CANNOT_INVITE", context: [account, roomName], Outcome.notCommitted.replies.joined())
            }
        }
    }

    // INVITE <nick> <room>
    func handleInvite(_ reply: Reply, _ m: Message) {
        let client = reply.client, nick = m.params[0]
        guard let person = person(nick: nick) else {
            // An account nobody is connected as: a manager makes it a member, and it finds the
            // room at its next login.
            if let room = rooms[Names.fold(m.params[1])], room.isOp(client), let manager = client.account?.name, Names.isValidNick(nick) {
                return invite(account: nick, to: room, by: manager, reply: reply)
            }
            return reply.numeric(.noSuchNick, nick, "No such nick")
        }
        guard let room = room(named: m.params[1], reply: reply) else { return }
        guard room.contains(client) else { return reply.numeric(.notOnChannel, room.name, "You're not in that room") }
        guard !room.room.modes.inviteOnly || room.isOp(client) else {
            return reply.numeric(.chanOPrivsNeeded, room.name, "Only the room's managers may invite to an invite-only room")
        }
        guard !person.isIn(room) else { return reply.numeric(.userOnChannel, person.nick, room.name, "is already in the room") }
        let manager = client.account.flatMap { room.memberships[$0.key]?.role == .manager ? $0.name : nil }
        let target: Client
        switch person {
        case .here(let connection): target = connection
        case .elsewhere(let user):
            // Connected to another node: a manager makes a logged-in person a member, and their
            // node brings them in; any other invitation is an order to their node.
            if let manager, let account = user.account { return invite(account: account, to: room, by: manager, reply: reply) }
            return inviteElsewhere(user, to: room, by: client, reply: reply)
        }
        room.invitedNicks.insert(target.nickKey)
        // A manager's invitation adds a logged-in person to the room for good.
        if let manager, let invited = target.account, room.memberships[invited.key] == nil {
            workspace.run(MembershipChange.invite(invited.name, to: room.key, by: manager))
        }
        reply.numeric(.inviting, target.nick, room.name)
        let invite = Outgoing(Message(source: client.prefix, "INVITE", [target.nick, room.name]), time: now(), account: client.accountName)
        send(invite, to: target)
        broadcast(invite, to: room.members, except: client, only: { $0.caps.contains(.inviteNotify) && room.isOp($0) })
        if let away = target.away { reply.numeric(.away, target.nick, away) }
    }
}
