import ChorusBot
import ChorusCore
import ChorusIRC
import ChorusWorkspace
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// The server: listeners, the registry of clients and rooms, fan-out, and the background work queues.
///
/// All IRC state lives on one event loop, as in ngIRCd and InspIRCd: no locks, and a broadcast is a
/// loop over sockets that share that loop. Blocking work leaves the loop: passwords are hashed and
/// checked by `Accounts` on a thread pool, reads that need no order run there too, and every change
/// to the stored state (a new account included) goes, in order, through the `Workspace`.
public final class IRCServer: @unchecked Sendable {
    /// Changed only on the loop, by `reload` (SIGHUP): what a reload cannot change stays as started.
    public internal(set) var config: ServerConfig
    let store: any ChorusStorage
    public let accounts: Accounts
    /// The one door to the team's state: bot commands, stored lines and memberships, reminders.
    public let workspace: Workspace
    /// How events are worded, for the Workspace's room lines and this server's direct lines alike.
    let wording: IRCEventWording
    /// Where new token secrets come from (a fixed sequence in tests).
    let newSecret: @Sendable () -> String
    let group: EventLoopGroup
    let loop: EventLoop
    let logger: Logger
    let now: @Sendable () -> Date
    var welcome: Welcome
    let allocator = ByteBufferAllocator()
    let version = "chorus-0.1"

    let threadPool = NIOThreadPool(numberOfThreads: 2)
    /// Failed logins counted, and password hashes taken from the addresses in turn (`LoginGate`).
    /// One hash at a time on a machine of two cores or fewer, so the event loop keeps one to itself.
    let loginGate = LoginGate(slots: max(1, min(2, ProcessInfo.processInfo.activeProcessorCount - 1)))

    var name: String { config.serverName }
    var ids = MessageIDs()
    /// Connection ids, unique in the process (not per server): `TLSBuffers` notes blocks by them,
    /// and a process may run several servers (the tests do).
    private static let connectionIDs = Atomic<Int>(0)

    static func nextConnectionID() -> Int {
        connectionIDs.add(1, ordering: .relaxed).newValue
    }

    /// Who is connected, by connection, nick and account.
    var registry: ClientRegistry
    /// Who watches which nick (MONITOR).
    var monitors = Monitors()
    var rooms: [String: LiveRoom] = [:]
    /// The web side's routes and the JSON API (`/api/v1/…`), on the loop.
    lazy var web = WebApplication(server: self)
    /// Rooms' webhooks, delivered beside the Workspace.
    private(set) var webhooks: WebhookDeliverer?
    /// Web Push to the devices of accounts with no connection open (soju.im/webpush).
    private(set) var push: PushDeliverer?
    /// Lines held for clients whose join's history replay is being read (`Client.replaysReading`):
    /// here rather than in `Client`, as few connections ever have any.
    var heldLive: [ObjectIdentifier: ByteBuffer] = [:]
    /// The msgids of room lines from other processes held so for a client: written after it came
    /// in, they may still be read with its replay, which then leaves them out.
    var heldFromElsewhere: [ObjectIdentifier: Set<String>] = [:]
    /// The token each connection logged in with, for the few that used one: revoking a token
    /// closes them (`!token revoke`). Here rather than in `Client`, as most connections have none.
    var tokenLogins: [ObjectIdentifier: Int64] = [:]
    /// Web connections that have not become WebSockets, by address (`admitWebConnection`).
    var webConnectionsPerIP: [String: Int] = [:]
    /// Keys of all accounts, so the nick reservation check needs no database read per connection.
    /// Refreshed periodically, so accounts made with `chorusd account add` are seen too.
    var accountKeys: Set<String> = []
    /// Accounts with a device subscribed to push (`Verbs/WebPush.swift`): a line for someone not
    /// connected is pushed only to these, so a room's line costs nothing more where nobody has one.
    /// Refreshed with `accountKeys` (another process's subscriptions are seen within 30 s).
    var pushAccounts: Set<String> = []
    /// Every account's read markers (`Verbs/ReadMarker.swift`): account key → folded target → time.
    var readMarkers: [String: [String: Date]] = [:]

    /// Clients with output gathered this loop turn, and whether their flush is scheduled (`IRCServer+Output`).
    var dirty: [Client] = []
    var flushScheduled = false
    /// Chat lines waiting to be stored in one batch.
    private(set) lazy var history = HistoryBuffer(loop: loop, workspace: workspace,
                                                  gathering: cluster == nil ? .wait(HistoryBuffer.delay) : .whileOneIsWritten) { [unowned self] lines, error in
        self.historyWritten(lines, error)
    }
    /// History that could not be written (a full disk): whether the log said so, when it last
    /// spoke of it, and the lines not kept since (`HistoryTrouble.swift`).
    var historyTrouble: (reported: Bool, lastLogged: Date?, unlogged: Int)?

    private var maintenance: RepeatedTask?
    private var accountRefresh: RepeatedTask?
    private var deletionWatch: RepeatedTask?
    var reminderTask: Scheduled<Void>?

    /// The listeners and the certificate their handshakes use.
    private(set) lazy var listeners = Listeners(server: self, logger: logger)
    /// The bound addresses, known after `start()` (useful with port 0 in tests).
    public var tlsAddress: SocketAddress? { listeners.tlsAddress }
    public var plainAddress: SocketAddress? { listeners.plainAddress }
    public var webAddress: SocketAddress? { listeners.webAddress }
    public var webPlainAddress: SocketAddress? { listeners.webPlainAddress }
    /// Every configured listener is bound, and the server is not shutting down (`/ready`).
    private(set) var listening = false
    /// What `/metrics` shows.
    let metrics = ServerMetrics()
    /// Where `!report`'s pictures are served and how their links are signed; nil without a web side.
    private(set) var reportLinks: ReportLinks?
    /// Where clients upload a picture (`draft/FILEHOST`, `POST` with a token), when there is a web side.
    var fileHost: String? { reportLinks.map { $0.base + WebRequests.photoPath } }
    /// This node's part in a cluster of processes on one database, made from the `ClusterLink`
    /// given at start; nil with a store of one process's own (SQLite).
    private(set) var cluster: ClusterNode?
    /// Who is connected to the other nodes, as their latest presence says (empty without a cluster).
    var remote: RemotePresence

    /// `cluster`: the shared log and presence when other processes share the database (nil: this
    /// process is the server).
    public init(config: ServerConfig, store: any ChorusStorage, cluster: ClusterLink? = nil,
                now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "chorus"),
                newSecret: @escaping @Sendable () -> String = { AccountToken.newSecret() }) {
        self.config = config
        self.store = store
        self.accounts = Accounts(store: store, hasher: PasswordHasher(logRounds: config.passwordCost), now: now,
                                 minimumPasswordLength: config.passwordMinLength)
        self.wording = IRCEventWording(timeZone: config.timeZone, now: now)
        let connected = ConnectedAccounts()
        self.registry = ClientRegistry(connected: connected)
        self.remote = RemotePresence(connected: connected)
        self.workspace = Workspace(
            store: store,
            settings: .init(timeZone: config.timeZone, reminderInterval: config.reminderInterval,
                            serviceNick: config.serviceNick, serviceSource: "\(config.serviceNick)!bot@\(config.serverName)"),
            wording: wording, connected: connected, sharedWithOthers: cluster != nil, now: now, logger: logger)
        self.newSecret = newSecret
        // One loop: see the type's comment.
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.loop = self.group.next()
        self.now = now
        self.logger = logger
        self.welcome = Welcome(config: config, createdAt: now())
        workspace.add(IRCEventSink(server: self))
        workspace.whenBatchCommits { [metrics] size in metrics.writerBatch.record(size) }
        workspace.whenNextDueChanges { [weak self] next in
            guard let self else { return }
            self.loop.execute { self.setReminderTimer(for: next) }
        }
        self.cluster = cluster.map { ClusterNode(server: self, link: $0) }
    }

    // MARK: Lifecycle

    /// Loads rooms, makes the certificate if needed, and binds the listeners.
    public func start() throws {
        threadPool.start()
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let storedRooms = try store.allRooms()
        let memberships = try store.allMemberships()
        let settings = try storedRooms.map { try store.roomSettings($0.key) }
        let keys = try store.accountKeys()
        let markers = try store.allReadMarkers()
        let withPush = try store.accountsWithPushSubscriptions()
        try loop.submit {
            self.accountKeys = Set(keys)
            self.pushAccounts = Set(withPush)
            for marker in markers { self.readMarkers[marker.account, default: [:]][marker.target] = marker.at }
            for (room, s) in zip(storedRooms, settings) {
                let live = LiveRoom(room: room)
                live.apply(s)
                self.rooms[room.key] = live
            }
            for m in memberships { self.rooms[m.room]?.memberships[m.account] = m }
        }.wait()

        try listeners.open()
        // Report links need an address people reach: the one configured, or the HTTPS listener's.
        if let base = config.webURL ?? webAddress.map({ "https://\(config.serverName):\($0.port ?? 8443)" }) {
            reportLinks = ReportLinks(base: base, signer: LinkSigner(key: try linkKey()))
        }
        let push = try PushDeliverer(store: store, contact: config.pushContact ?? "https://\(config.serverName)",
                                     allowPrivate: config.pushToPrivate, logger: logger)
        try loop.submit {
            self.push = push
            // Clients upload pictures to the web side (`draft/FILEHOST`), once its address is known.
            self.welcome = Welcome(config: self.config, createdAt: self.welcome.createdAt, fileHost: self.fileHost, vapid: push.vapidKey)
            self.listening = true
        }.wait()
        let tick = TimeAmount.milliseconds(Int64(min(5.0, config.pingTimeout / 4, config.registrationTimeout / 4) * 1000))
        maintenance = loop.scheduleRepeatedTask(initialDelay: tick, delay: tick) { [weak self] _ in
            self?.checkLiveness()
        }
        // Other processes on the same database: their lines and users reach the clients here.
        try cluster?.start()
        // Reminders whose time passed while the server was down fire once, now.
        workspace.reckonDue()
        accountRefresh = loop.scheduleRepeatedTask(initialDelay: .seconds(30), delay: .seconds(30)) { [weak self] _ in
            guard let self else { return }
            self.background { (try self.store.accountKeys(), try self.store.accountsWithPushSubscriptions()) }.whenSuccess {
                self.accountKeys = Set($0.0)
                self.pushAccounts = Set($0.1)
            }
        }
        deletionWatch = watchForDeletedAccounts()
        let webhooks = WebhookDeliverer(store: store, wording: wording, allowPrivate: config.webhooksToPrivate, retryBase: config.webhookRetry,
                                        shared: cluster != nil, logger: logger)
        webhooks.start()
        try loop.submit { self.webhooks = webhooks }.wait()
    }

    /// Reads the account names again (the server also does this every 30 seconds), for accounts
    /// made outside the server, e.g. with `chorusd account add` while it runs.
    public func reloadAccountKeys() throws {
        let keys = try store.accountKeys()
        try loop.submit { self.accountKeys = Set(keys) }.wait()
    }

    /// Tells everyone, closes every connection, writes what is pending, and stops.
    public func shutdown(reason: String = "Server shutting down") {
        try? loop.submit {
            self.listening = false
            self.maintenance?.cancel()
            self.accountRefresh?.cancel()
            self.deletionWatch?.cancel()
            self.reminderTask?.cancel()
            self.webhooks?.stop()
            self.listeners.close()
            for client in self.registry.clients.values {
                self.disconnect(client, reason: reason)
            }
            self.flushHistory()
            self.cluster?.stop(reason: reason)
        }.wait()
        workspace.waitUntilWritten()
        try? threadPool.syncShutdownGracefully()
        try? group.syncShutdownGracefully()
    }

    // MARK: Connections

    /// A new connection is active: counts it, or turns it away when its address has too many.
    func accept(_ client: Client) -> Bool {
        guard registry.accept(client, limit: config.maxConnectionsPerIP) else {
            let line = "ERROR :Closing link: too many connections from \(client.ip)\r\n"
            let channel = client.channel
            channel.writeAndFlush(allocator.buffer(string: line)).whenComplete { _ in channel.close(promise: nil) }
            return false
        }
        return true
    }

    /// A client's address as text. IPv4 is written here: NIO's `ipAddress` (inet_ntop into a
    /// String) cost 2.9k instructions a connection (callgrind), 1.6 % of one.
    static func text(of address: SocketAddress) -> String {
        guard case .v4(let v4) = address else { return address.ipAddress ?? "unknown" }
        let host = UInt32(bigEndian: v4.address.sin_addr.s_addr)  // s_addr is in network order
        return String(unsafeUninitializedCapacity: 15) { out in
            var count = 0
            for shift in [24, 16, 8, 0] as [UInt32] {
                let octet = UInt8(truncatingIfNeeded: host >> shift)
                if shift < 24 { out[count] = UInt8(ascii: "."); count += 1 }
                if octet >= 100 { out[count] = UInt8(ascii: "0") + octet / 100; count += 1 }
                if octet >= 10 { out[count] = UInt8(ascii: "0") + octet / 10 % 10; count += 1 }
                out[count] = UInt8(ascii: "0") + octet % 10; count += 1
            }
            return count
        }
    }

    /// The connection is gone: forget the client and tell the rooms it was in. Where another
    /// connection carries its nick on (`SharedNick.swift`), nobody else is told anything; where
    /// the person is still connected to another node, only rooms they are no longer in hear it.
    func connectionClosed(_ client: Client, reason: String) {
        let sharedNick = client.registered && registry.sharesNick(client)
        let elsewhere = client.registered && !sharedNick && hasSessionsElsewhere(client)
        guard registry.remove(client, at: now()) else { return }
        if sharedNick {
            cluster?.handOverPresence(of: client, to: registry.first(sharing: client))
        } else {
            cluster?.withdrawPresence(of: client, reason: reason)
        }
        monitors.clear(for: client)
        client.closing = true
        tokenLogins.removeValue(forKey: ObjectIdentifier(client))
        if client.account == nil { readMarkers.removeValue(forKey: readMarkerOwner(of: client)) }
        // Lines held for a replay still being read are dropped now, not when the read comes back.
        releaseHeldLines(of: client)
        guard client.registered else { return }
        if elsewhere {
            for room in client.rooms where !isInRoomElsewhere(client.nickKey, room) {
                let part = Outgoing(Message(source: client.prefix, "PART", [room.name, reason]), time: now(), account: client.accountName)
                broadcast(part, to: room.members, except: client)
            }
        } else if !sharedNick {
            monitoredOffline(nick: client.nick, key: client.nickKey)
            // The account's last connection: a running timer notes when, to ask at the next login,
            // and the next login replays what was said from now on.
            if let account = client.account, registry.connections(ofAccount: account.key).isEmpty {
                let t = now()
                workspace.run(TimeDeparture(account.name, at: t))
                persist("when \(account.name) was last seen") { try $0.setLastSeen(of: account.key, at: t) }
            }
            let quit = Outgoing(Message(source: client.prefix, "QUIT", [reason]), time: now(), account: client.accountName)
            broadcast(quit, to: peers(of: client), except: client)
        }
        for room in client.rooms { room.remove(client) }
        client.rooms.removeAll()
        if sharedNick { sessionsLeft(after: client) }
    }

    /// Sends `ERROR` and closes; the rest happens in `connectionClosed`.
    func disconnect(_ client: Client, reason: String) {
        guard !client.closing else { return }
        releaseHeldLines(of: client)
        write("ERROR :Closing link: (\(client.user.isEmpty ? "*" : client.user)@\(client.host)) [\(reason)]\r\n", to: client)
        flushPending()
        connectionClosed(client, reason: client.quitReason ?? reason)
        client.channel.close(promise: nil)
    }

    /// Stops the periodic checks (tests that run them by hand).
    func cancelMaintenance() {
        maintenance?.cancel()
        maintenance = nil
    }

    private func checkLiveness() {
        let t = now()
        for client in registry.clients.values where !client.closing {
            let quiet = t.timeIntervalSince(client.lastReadAt)
            if !client.registered {
                if t.timeIntervalSince(client.connectedAt) > config.registrationTimeout {
                    disconnect(client, reason: "Registration timed out")
                }
            } else if client.awaitingPong {
                if quiet > config.pingInterval + config.pingTimeout {
                    disconnect(client, reason: "Ping timeout: \(Int(quiet)) seconds")
                }
            } else if quiet > config.pingInterval {
                client.awaitingPong = true
                write("PING :\(name)\r\n", to: client)
            }
        }
        loginGate.forgetOld(now: t)
        let released = releaseIdleTLSBuffers()
        if released > 0 { logger.debug("gave back idle TLS buffers", metadata: ["bytes": "\(released)"]) }
    }

    /// Gives back the pages of the TLS buffers of connections that were quiet since the last sweep
    /// and have no output waiting in their channel (`TLSBuffers`); returns how many bytes. Runs on
    /// the loop, so no connection is in the middle of a read or write.
    @discardableResult
    func releaseIdleTLSBuffers() -> Int {
        var idle = Set<Int>()
        for client in registry.clients.values where client.isTLS && !client.closing {
            defer { client.activityAtSweep = client.activity }
            guard client.activity == client.activityAtSweep else {
                client.tlsBuffersReleased = false
                continue
            }
            guard !client.tlsBuffersReleased,
                  (try? client.channel.syncOptions?.getOption(.bufferedWritableBytes)) == 0 else { continue }
            idle.insert(client.id)
            client.tlsBuffersReleased = true
        }
        return TLSBuffers.release(owners: idle)
    }
}
