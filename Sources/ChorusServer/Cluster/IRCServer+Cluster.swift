import ChorusCore
import ChorusIRC
import Foundation
import NIOCore

/// Several processes on one database, as one server. Each publishes its users (nick, rooms, away
/// state) to the store and reads the others' in the order of the shared log, with the lines
/// around them (`ClusterFeed`): so what is seen here of a user elsewhere (JOIN, PART, NICK, AWAY,
/// QUIT) comes in the order it happened there. Nicks are claimed in the store, where a claim
/// waits for the log's lock: two processes cannot both have one. A process that stops renewing its
/// lease is given up by the others, who QUIT its users.
extension IRCServer {
    // MARK: Starting and stopping

    /// How often a node reads when the next work comes due (work other nodes made, or left when
    /// they died), and how often in that many it works it out again from the boards themselves.
    static let dueWatchInterval = TimeAmount.seconds(10)
    static let dueReckoningEvery = 6

    /// Takes this process's lease, learns who is connected elsewhere, and starts reading the log.
    func startCluster(_ log: any SharedLog) throws {
        var position: Int64 = 0
        if let presence = sharedPresence {
            let (records, at) = try presence.join()
            position = at
            try loop.submit { for record in records { self.remote.replace(record) } }.wait()
            let interval = TimeAmount.milliseconds(Int64(presence.heartbeatInterval * 1000))
            heartbeatTask = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
                self?.renewLease(presence)
            }
            // What comes due may have been made on another node (or one that died since): each
            // node reads the store's due table now and then, and whichever first takes a due
            // board does its work (`Store.takeDueBoards`). A node that died between committing a
            // change and writing down when it comes due is made up for by the others' reckoning.
            var ticks = 0
            dueWatch = loop.scheduleRepeatedTask(initialDelay: Self.dueWatchInterval, delay: Self.dueWatchInterval) { [weak self] _ in
                ticks += 1
                if ticks % Self.dueReckoningEvery == 0 { self?.workspace.reckonDue() } else { self?.workspace.announceNextDue() }
            }
        }
        let feed = ClusterFeed(log: log, from: position, logger: logger) { [weak self] changes in
            guard let self else { return }
            self.loop.execute { self.deliverFromOtherProcesses(changes) }
        }
        feed.start()
        clusterFeed = feed
    }

    /// Hands the lease back: the others QUIT this process's users now rather than when it lapses.
    func stopCluster(reason: String) {
        clusterFeed?.stop()
        heartbeatTask?.cancel()
        dueWatch?.cancel()
        guard let presence = sharedPresence else { return }
        workspace.write("leaving the cluster") { try Self.shared($0, presence).leave(reason: reason) }
    }

    /// Renews the lease, and gives up the processes whose lease lapsed. When this process's own
    /// lease had lapsed (a long pause, the database away), or a change of its users could not be
    /// written, what the others know of its users is written again from what is here.
    private func renewLease(_ presence: any SharedPresence) {
        background { () -> Bool in
            let renewed = try presence.heartbeat()
            let lost = try presence.withdrawSilentNodes()
            if !lost.isEmpty { self.logger.warning("gave up silent processes", metadata: ["nodes": "\(lost)"]) }
            return renewed
        }.whenComplete { result in
            switch result {
            case .success(let renewed):
                if !renewed { self.logger.warning("this process's lease had lapsed: publishing its users again") }
                if !renewed || self.presenceUnsure { self.publishAgain(presence) }
            case .failure(let error):
                self.logger.warning("cannot renew this process's lease", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Publishes every user here again, and withdraws what the store holds of this process besides
    /// them (connections whose going could not be written). A nick another process took meanwhile
    /// is that process's: the user here is disconnected.
    private func publishAgain(_ presence: any SharedPresence) {
        presenceUnsure = false
        var keeping: [String] = []
        for client in registry.nicks.values where !client.closing {
            published[ObjectIdentifier(client)] = nil
            if let record = presenceRecord(of: client) { keeping.append(record.connection) }
            claimPresence(of: client).whenComplete { result in
                switch result {
                case .success(true): break
                case .success(false): self.disconnect(client, reason: "Nick collision: \(client.nick) was taken meanwhile")
                case .failure: self.presenceUnsure = true
                }
            }
        }
        let here = keeping
        persist("presence of this process") { try Self.shared($0, presence).withdrawOthers(keeping: here, reason: "Server lost") }
    }

    // MARK: This process's users, for the others

    /// What the other processes are to know of `client`.
    func presenceRecord(of client: Client, nick: String? = nil, note: String? = nil) -> PresenceRecord? {
        guard let presence = sharedPresence else { return nil }
        var modes = ""
        if client.invisible { modes += "i" }
        if client.isOper { modes += "o" }
        if client.isBot { modes += "B" }
        var rooms: [String: String] = [:]
        for room in client.rooms { rooms[room.key] = (room.status(of: client) ?? []).letters }
        let nick = nick ?? client.nick
        return PresenceRecord(connection: "\(presence.node)#\(client.id)", node: presence.node, nick: nick, nickKey: Names.fold(nick),
                              user: client.user, host: client.host, realname: client.realname, account: client.accountName,
                              away: client.away, modes: modes, rooms: rooms, since: client.connectedAt, note: note)
    }

    /// Claims `client`'s nick (or `nick`, which it is about to take) across the processes and
    /// publishes its state; true when the nick is its own. Without a shared store, true at once.
    func claimPresence(of client: Client, nick: String? = nil) -> EventLoopFuture<Bool> {
        guard let presence = sharedPresence, let record = presenceRecord(of: client, nick: nick) else {
            return loop.makeSucceededFuture(true)
        }
        if let holder = remote.user(nick: record.nick), holder.connection != record.connection {
            return loop.makeSucceededFuture(false)
        }
        // Noted before the answer, so a connection that closes meanwhile is withdrawn after its claim.
        let previous = published[ObjectIdentifier(client)]
        published[ObjectIdentifier(client)] = record
        return readAfterWrites { try Self.shared($0, presence).publish(record) }.map { claimed in
            if !claimed { self.published[ObjectIdentifier(client)] = previous }
            return claimed
        }.flatMapErrorThrowing { error in
            self.published[ObjectIdentifier(client)] = previous
            throw error
        }
    }

    /// Publishes a registered client's new state (rooms, status, away, account), if it changed.
    /// Lines it said before the change are handed to the store first, so they keep their order.
    func presenceChanged(_ client: Client, note: String? = nil) {
        guard let presence = sharedPresence, client.registered, !client.closing,
              let old = published[ObjectIdentifier(client)], var record = presenceRecord(of: client, note: note) else { return }
        // Only a claim changes the nick.
        record.nick = old.nick
        record.nickKey = old.nickKey
        guard record != old else { return }
        published[ObjectIdentifier(client)] = record
        flushHistory()
        let changed = record
        writePresence(of: client) { _ = try Self.shared($0, presence).publish(changed) }
    }

    /// The connection is gone: for the other processes too.
    func withdrawPresence(of client: Client, reason: String) {
        guard let presence = sharedPresence, let record = published.removeValue(forKey: ObjectIdentifier(client)) else { return }
        flushHistory()
        writePresence(of: client) { try Self.shared($0, presence).withdraw(connection: record.connection, reason: reason) }
    }

    /// A change of a user's presence, in order with the lines. One that cannot be written (the
    /// database away) leaves the store unsure: the next renewed lease writes everything again.
    private func writePresence(of client: Client, _ work: @escaping @Sendable (any ChorusStorage) throws -> Void) {
        let loop = self.loop
        workspace.write("presence of \(client.nick)", work, done: { result in
            guard case .failure = result else { return }
            loop.execute { self.presenceUnsure = true }
        })
    }

    /// The writer's handle (a batch's transaction) as the shared store's presence or log: a write
    /// through the store itself would wait for the log's lock that the batch may hold.
    static func shared<Part>(_ handle: any ChorusStorage, _ store: Part) -> Part {
        handle as? Part ?? store
    }

    /// Whether a nick is held by a user of another process.
    func isHeldElsewhere(_ nick: String) -> Bool {
        remote.user(nick: nick) != nil
    }

    // MARK: The others' users, here

    /// What other processes committed, in their order: lines reach the clients here that they
    /// would have reached had they been said here, and users' comings and goings are told to
    /// those who share a room with them (and those who watch their nick).
    func deliverFromOtherProcesses(_ changes: [SharedChange]) {
        for change in changes {
            switch change {
            case .line(let entry): deliverLine(entry)
            case .presence(.here(let record)): arrived(record)
            case .presence(.gone(let connection, let reason)): left(connection, reason: reason)
            case .bus(let message): deliver(message)
            case .room(let key, let stored): roomChangedElsewhere(key, stored)
            }
        }
    }

    /// A room line goes to the room's members (a line for some members only, to them and the
    /// managers); a private line to the recipient's connections.
    private func deliverLine(_ entry: HistoryEntry) {
        if entry.conversation.hasPrefix("@") {
            deliverPrivately(to: privateRecipients(of: entry.target), tagsOnly: false) {
                Outgoing(replaying: entry, to: $0, stampingText: false)
            }
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

    /// A user elsewhere arrived or changed: what changed is told as that process told its own clients.
    private func arrived(_ new: PresenceRecord) {
        let old = remote.replace(new)
        let t = now()
        func line(_ source: String, _ verb: String, _ params: [String]) -> Outgoing {
            Outgoing(Message(source: source, verb, params), time: t, account: new.account)
        }
        if let old, old.nick != new.nick {
            broadcast(line(old.prefix, "NICK", [new.nick]), to: localMembers(of: Set(old.rooms.keys).union(new.rooms.keys)))
        }
        if old?.nickKey != new.nickKey {
            if let old { remoteOffline(nick: old.nick, key: old.nickKey) }
            remoteOnline(new)
        }
        for key in new.rooms.keys.sorted() where old?.rooms[key] == nil {
            guard let room = rooms[key] else { continue }
            let plain = line(new.prefix, "JOIN", [room.name])
            let extended = line(new.prefix, "JOIN", [room.name, new.account ?? "*", new.realname])
            broadcast(plain, to: room.members, only: { !$0.caps.contains(.extendedJoin) })
            broadcast(extended, to: room.members, only: { $0.caps.contains(.extendedJoin) })
            if let away = new.away {
                broadcast(line(new.prefix, "AWAY", [away]), to: room.members, only: { $0.caps.contains(.awayNotify) })
            }
        }
        guard let old else { return }
        for key in old.rooms.keys.sorted() where new.rooms[key] == nil {
            guard let room = rooms[key] else { continue }
            broadcast(line(new.prefix, "PART", new.note.map { [room.name, $0] } ?? [room.name]), to: room.members)
        }
        for (key, status) in new.rooms.sorted(by: { $0.key < $1.key }) {
            guard let before = old.rooms[key], before != status, let room = rooms[key] else { continue }
            tellStatusChange(of: new.nick, in: room, from: before, to: status)
        }
        let peers = localMembers(of: Set(new.rooms.keys))
        if old.away != new.away {
            broadcast(line(new.prefix, "AWAY", new.away.map { [$0] } ?? []), to: peers, only: { $0.caps.contains(.awayNotify) })
        }
        if old.account != new.account {
            broadcast(line(new.prefix, "ACCOUNT", [new.account ?? "*"]), to: peers, only: { $0.caps.contains(.accountNotify) })
        }
        if old.realname != new.realname {
            broadcast(line(new.prefix, "SETNAME", [new.realname]), to: peers, only: { $0.caps.contains(.setname) })
        }
    }

    /// A user elsewhere is gone: QUIT to those who shared a room with them.
    private func left(_ connection: String, reason: String) {
        guard let old = remote.remove(connection) else { return }
        let quit = Outgoing(Message(source: old.prefix, "QUIT", [reason]), time: now(), account: old.account)
        broadcast(quit, to: localMembers(of: Set(old.rooms.keys)))
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
        guard registry.nicks[key] == nil else { return }
        monitoredOffline(nick: nick, key: key)
    }
}
