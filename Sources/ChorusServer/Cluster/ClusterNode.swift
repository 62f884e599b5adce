import ChorusCore
import ChorusIRC
import ChorusWorkspace
import Foundation
import NIOCore

/// This node's part in a cluster of processes on one PostgreSQL database: its lease, what the other
/// nodes are told of the connections here (presence, and messages on the bus), and the feed of what
/// they committed, which the server delivers to its clients (`IRCServer+OtherNodes`). The server
/// makes one when it is given a `ClusterLink`; with a store of one process's own (SQLite) there is
/// none, and nothing of it runs. It lives on the server's loop; its reads and writes go off it.
///
/// Each node publishes its users (nick, rooms, away state) and reads the others' in the order of
/// the shared log, with the lines around them (`ClusterFeed`): so what is seen here of a user
/// elsewhere (JOIN, PART, NICK, AWAY, QUIT) comes in the order it happened there. Nicks are claimed
/// in the store, where a claim waits for the log's lock: two nodes cannot both have one. A node
/// that stops renewing its lease is given up by the others, who QUIT its users.
final class ClusterNode {
    unowned let server: IRCServer
    let log: any SharedLog
    let presence: any SharedPresence
    /// What the other nodes commit, read from the log and handed to the server; from `start`.
    private(set) var feed: ClusterFeed?
    /// What the other nodes were last told of each connection here.
    private var published: [ObjectIdentifier: PresenceRecord] = [:]
    private var heartbeatTask: RepeatedTask?
    private var dueWatch: RepeatedTask?
    /// A change of presence could not be written: what the store holds of this node's users is
    /// written again once it answers.
    private var presenceUnsure = false

    /// How often a node reads when the next work comes due (work other nodes made, or left when
    /// they died), and how often in that many it works it out again from the boards themselves.
    static let dueWatchInterval = TimeAmount.seconds(10)
    static let dueReckoningEvery = 6

    init(server: IRCServer, link: ClusterLink) {
        self.server = server
        self.log = link.log
        self.presence = link.presence
        server.workspace.tell(CommandPoster(log: link.log))
    }

    private var loop: EventLoop { server.loop }

    // MARK: Starting and stopping

    /// Takes this node's lease, learns who is connected elsewhere, and starts reading the log.
    func start() throws {
        let (records, position) = try presence.join()
        try loop.submit { for record in records { self.server.remote.replace(record) } }.wait()
        let interval = TimeAmount.milliseconds(Int64(presence.heartbeatInterval * 1000))
        heartbeatTask = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
            self?.renewLease()
        }
        // What comes due may have been made on another node (or one that died since): each node
        // reads the store's due table now and then, and whichever first takes a due board does
        // its work (`Store.takeDueBoards`). A node that died between committing a change and
        // writing down when it comes due is made up for by the others' reckoning.
        var ticks = 0
        dueWatch = loop.scheduleRepeatedTask(initialDelay: Self.dueWatchInterval, delay: Self.dueWatchInterval) { [weak self] _ in
            ticks += 1
            guard let workspace = self?.server.workspace else { return }
            if ticks % Self.dueReckoningEvery == 0 { workspace.reckonDue() } else { workspace.announceNextDue() }
        }
        let feed = ClusterFeed(log: log, from: position, logger: server.logger, deliver: { [weak self] changes in
            guard let server = self?.server else { return }
            server.loop.execute { server.deliverFromOtherNodes(changes) }
        }, deliverRooms: { [weak self] snapshots in
            guard let server = self?.server else { return }
            server.loop.execute { for snapshot in snapshots { server.roomChangedElsewhere(snapshot) } }
        }, roomsChangedOutside: { [workspace = server.workspace] in workspace.roomsChangedOutside() })
        feed.start()
        self.feed = feed
    }

    /// Hands the lease back: the others QUIT this node's users now rather than when it lapses.
    func stop(reason: String) {
        feed?.stop()
        heartbeatTask?.cancel()
        dueWatch?.cancel()
        let presence = self.presence
        server.workspace.write("leaving the cluster") { try Self.shared($0, presence).leave(reason: reason) }
    }

    /// Renews the lease, and gives up the nodes whose lease lapsed. When this node's own lease had
    /// lapsed (a long pause, the database away), or a change of its users could not be written,
    /// what the others know of its users is written again from what is here.
    private func renewLease() {
        let presence = self.presence, logger = server.logger
        server.background { () -> Bool in
            let renewed = try presence.heartbeat()
            let lost = try presence.withdrawSilentNodes()
            if !lost.isEmpty { logger.warning("gave up silent processes", metadata: ["nodes": "\(lost)"]) }
            return renewed
        }.whenComplete { result in
            switch result {
            case .success(let renewed):
                if !renewed { logger.warning("this process's lease had lapsed: publishing its users again") }
                if !renewed || self.presenceUnsure { self.publishAgain() }
            case .failure(let error):
                logger.warning("cannot renew this process's lease", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Publishes every user here again, and withdraws what the store holds of this node besides
    /// them (connections whose going could not be written). A nick another node took meanwhile is
    /// that node's: the user here is disconnected.
    private func publishAgain() {
        presenceUnsure = false
        var keeping: [String] = []
        for client in server.registry.nicks.values where !client.closing {
            published[ObjectIdentifier(client)] = nil
            keeping.append(record(of: client).connection)
            claimPresence(of: client).whenComplete { result in
                switch result {
                case .success(true): break
                case .success(false): self.server.disconnect(client, reason: "Nick collision: \(client.nick) was taken meanwhile")
                case .failure: self.presenceUnsure = true
                }
            }
        }
        let here = keeping, presence = self.presence
        server.persist("presence of this process") { try Self.shared($0, presence).withdrawOthers(keeping: here, reason: "Server lost") }
    }

    // MARK: This node's users, for the others

    /// What the other nodes are to know of `client`.
    private func record(of client: Client, nick: String? = nil, note: String? = nil) -> PresenceRecord {
        var modes = ""
        if client.invisible { modes += "i" }
        if client.isOper { modes += "o" }
        if client.isBot { modes += "B" }
        var rooms: [String: String] = [:]
        for room in client.rooms { rooms[room.key] = (room.status(of: client) ?? []).letters }
        let nick = nick ?? client.nick
        // A record handed over from a session that closed (`handOverPresence`) stays that record.
        let published = self.published[ObjectIdentifier(client)]
        return PresenceRecord(connection: published?.connection ?? "\(presence.node)#\(client.id)", node: presence.node,
                              server: server.name, nick: nick, nickKey: Names.fold(nick), user: client.user, host: client.host, realname: client.realname, account: client.accountName,
                              away: server.awayHere(of: client), modes: modes, rooms: rooms, since: published?.since ?? client.connectedAt,
                              note: note)
    }

    /// Whether `client`'s nick is its own across the nodes: claimed, or carried on from another
    /// session of the same person (`handOverPresence`).
    func holdsNick(_ client: Client) -> Bool {
        published[ObjectIdentifier(client)]?.nickKey == client.nickKey
    }

    /// Claims `client`'s nick (or `nick`, which it is about to take) across the nodes and publishes
    /// its state; true when the nick is its own, or its person's (the same account's connections
    /// on other nodes: `PersonAcrossNodes`).
    func claimPresence(of client: Client, nick: String? = nil) -> EventLoopFuture<Bool> {
        let record = record(of: client, nick: nick)
        let taken = server.remote.holders(of: record.nickKey).contains {
            $0.connection != record.connection && !PresenceRecord.samePerson($0.account, record.account)
        }
        if taken { return loop.makeSucceededFuture(false) }
        // Noted before the answer, so a connection that closes meanwhile is withdrawn after its claim.
        let previous = published[ObjectIdentifier(client)]
        published[ObjectIdentifier(client)] = record
        let presence = self.presence
        return server.readAfterWrites { try Self.shared($0, presence).publish(record) }.map { claimed in
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
        guard client.registered, !client.closing, let old = published[ObjectIdentifier(client)] else { return }
        var record = record(of: client, note: note)
        // Only a claim changes the nick.
        record.nick = old.nick
        record.nickKey = old.nickKey
        guard record != old else { return }
        published[ObjectIdentifier(client)] = record
        server.flushHistory()
        let changed = record, presence = self.presence
        writePresence(of: client) { _ = try Self.shared($0, presence).publish(changed) }
    }

    /// Publishes the away state of `client`'s sessions here (`awayHere`) if it is not what the
    /// others were last told. Only then: a record published again for nothing would lose the
    /// reason of the PART before it (`PresenceRecord.note`) before the others read it.
    func publishAwayIfChanged(_ client: Client) {
        guard let old = published[ObjectIdentifier(client)], old.away != server.awayHere(of: client) else { return }
        presenceChanged(client)
    }

    /// The connection is gone: for the other nodes too.
    func withdrawPresence(of client: Client, reason: String) {
        guard let record = published.removeValue(forKey: ObjectIdentifier(client)) else { return }
        server.flushHistory()
        let presence = self.presence
        writePresence(of: client) { try Self.shared($0, presence).withdraw(connection: record.connection, reason: reason) }
    }

    /// A connection closed while `next`, a session of the same person, carries its nick on: the
    /// nick's record passes to `next`.
    func handOverPresence(of client: Client, to next: Client) {
        guard let record = published.removeValue(forKey: ObjectIdentifier(client)) else { return }
        published[ObjectIdentifier(next)] = record
    }

    /// A change of a user's presence, in order with the lines. One that cannot be written (the
    /// database away) leaves the store unsure: the next renewed lease writes everything again.
    private func writePresence(of client: Client, _ work: @escaping @Sendable (any ChorusStorage) throws -> Void) {
        let loop = self.loop
        server.workspace.write("presence of \(client.nick)", work, done: { result in
            guard case .failure = result else { return }
            loop.execute { self.presenceUnsure = true }
        })
    }

    /// Tells the other nodes, after the lines said here before it: those waiting for their batch
    /// are handed to the writer first, and the writer keeps the order.
    func post(_ message: BusMessage) {
        server.flushHistory()
        let log = self.log
        server.workspace.write("bus: \(message.kind)") { try Self.shared($0, log).post([message]) }
    }

    /// The writer's handle (a batch's transaction) as the shared store's presence or log: a write
    /// through the store itself would wait for the log's lock that the batch may hold.
    fileprivate static func shared<Part>(_ handle: any ChorusStorage, _ store: Part) -> Part {
        handle as? Part ?? store
    }
}

/// The bus as the Workspace posts on it in a command's transaction: the bot's direct lines for
/// people connected to other nodes.
private struct CommandPoster: OtherProcesses {
    let log: any SharedLog

    func post(_ messages: [BusMessage], in tx: any ChorusStorage) throws {
        try ClusterNode.shared(tx, log).post(messages)
    }
}
