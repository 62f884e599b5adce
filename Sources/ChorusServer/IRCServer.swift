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
/// loop over sockets that share that loop. Blocking work leaves the loop: accounts are made and
/// checked by `Accounts` on a thread pool (beside their password hashes), and every other change to
/// the stored state goes, in order, through the `Workspace`.
public final class IRCServer: @unchecked Sendable {
    public let config: ServerConfig
    let store: any ChorusStorage
    public let accounts: Accounts
    /// The one door to the team's state: bot commands, stored lines and memberships, reminders.
    public let workspace: Workspace
    /// Where new token secrets come from (a fixed sequence in tests).
    let newSecret: @Sendable () -> String
    let group: EventLoopGroup
    let loop: EventLoop
    let logger: Logger
    let now: @Sendable () -> Date
    let welcome: Welcome
    let allocator = ByteBufferAllocator()
    let version = "chorus-0.1"
    /// Connections the listeners could not take (out of descriptors, say): logged, turned away.
    let acceptFailures: AcceptFailures

    private let threadPool = NIOThreadPool(numberOfThreads: 2)

    var name: String { config.serverName }
    var ids = MessageIDs()
    /// Connection ids, unique in the process (not per server): `TLSBuffers` notes blocks by them,
    /// and a process may run several servers (the tests do).
    private static let connectionIDs = Atomic<Int>(0)

    var clients: [ObjectIdentifier: Client] = [:]
    var nicks: [String: Client] = [:]
    /// Logged-in connections by account key: where an account's direct events go.
    var sessions: [String: [Client]] = [:]
    var rooms: [String: LiveRoom] = [:]
    var whowas: [WhowasEntry] = []
    var connectionsPerIP: [String: Int] = [:]
    /// Lines held for clients whose join's history replay is being read (`Client.replaysReading`):
    /// here rather than in `Client`, as few connections ever have any.
    var heldLive: [ObjectIdentifier: ByteBuffer] = [:]
    /// The token each connection logged in with, for the few that used one: revoking a token
    /// closes them (`!token revoke`). Here rather than in `Client`, as most connections have none.
    var tokenLogins: [ObjectIdentifier: Int64] = [:]
    /// Keys of all accounts, so the nick reservation check needs no database read per connection.
    /// Refreshed periodically, so accounts made with `chorusd account add` are seen too.
    var accountKeys: Set<String> = []
    var unregisteredCount = 0
    /// What LUSERS reports, kept as counts so a registration never scans every client.
    private(set) var invisibleCount = 0
    private(set) var operCount = 0

    private var dirty: [Client] = []
    private var flushScheduled = false
    private var pendingHistory: [HistoryEntry] = []
    private var historyFlushScheduled = false

    private var listeners: [Channel] = []
    private var maintenance: RepeatedTask?
    private var accountRefresh: RepeatedTask?
    var reminderTask: Scheduled<Void>?
    private var sslContext: NIOSSLContext?

    /// The bound addresses, known after `start()` (useful with port 0 in tests).
    public private(set) var tlsAddress: SocketAddress?
    public private(set) var plainAddress: SocketAddress?

    struct WhowasEntry {
        var nick: String
        var user: String
        var host: String
        var realname: String
        var account: String?
        var time: Date
    }

    public init(config: ServerConfig, store: any ChorusStorage,
                now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "chorus"),
                newSecret: @escaping @Sendable () -> String = { AccountToken.newSecret() }) {
        self.config = config
        self.store = store
        self.accounts = Accounts(store: store, hasher: PasswordHasher(logRounds: config.passwordCost), now: now)
        self.workspace = Workspace(
            store: store,
            settings: .init(timeZone: config.timeZone, reminderInterval: config.reminderInterval,
                            serviceNick: config.serviceNick, serviceSource: "\(config.serviceNick)!bot@\(config.serverName)"),
            wording: IRCEventWording(timeZone: config.timeZone, now: now), now: now, logger: logger)
        self.newSecret = newSecret
        // One loop: see the type's comment.
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.loop = self.group.next()
        self.now = now
        self.logger = logger
        self.welcome = Welcome(config: config, createdAt: now())
        self.acceptFailures = AcceptFailures(logger: logger)
        workspace.add(IRCEventSink(server: self))
        workspace.whenNextDueChanges { [weak self] next in
            guard let self else { return }
            self.loop.execute { self.setReminderTimer(for: next) }
        }
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
        try loop.submit {
            self.accountKeys = Set(keys)
            for (room, s) in zip(storedRooms, settings) {
                let live = LiveRoom(room: room)
                live.apply(s)
                self.rooms[room.key] = live
            }
            for m in memberships { self.rooms[m.room]?.memberships[m.account] = m }
        }.wait()

        if let tls = config.tls {
            if config.certificatePath == nil && config.keyPath == nil,
               try Certificates.ensureSelfSigned(certPath: config.resolvedCertificatePath,
                                                 keyPath: config.resolvedKeyPath, serverName: config.serverName) {
                logger.info("made a self-signed certificate", metadata: ["path": "\(config.resolvedCertificatePath)"])
            }
            let context = try Certificates.serverContext(certPath: config.resolvedCertificatePath, keyPath: config.resolvedKeyPath)
            sslContext = context
            let channel = try bootstrap(tls: context).bind(host: tls.host, port: tls.port).wait()
            try channel.pipeline.addHandler(ListenerHandler(failures: acceptFailures, isTLS: true)).wait()
            listeners.append(channel)
            tlsAddress = channel.localAddress
            logger.info("listening (TLS)", metadata: ["address": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
        }
        if let plain = config.plain {
            let channel = try bootstrap(tls: nil).bind(host: plain.host, port: plain.port).wait()
            try channel.pipeline.addHandler(ListenerHandler(failures: acceptFailures, isTLS: false)).wait()
            listeners.append(channel)
            plainAddress = channel.localAddress
            logger.info("listening (plaintext)", metadata: ["address": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
        }
        let tick = TimeAmount.milliseconds(Int64(min(5.0, config.pingTimeout / 4, config.registrationTimeout / 4) * 1000))
        maintenance = loop.scheduleRepeatedTask(initialDelay: tick, delay: tick) { [weak self] _ in
            self?.checkLiveness()
        }
        // Reminders whose time passed while the server was down fire once, now.
        workspace.announceNextDue()
        accountRefresh = loop.scheduleRepeatedTask(initialDelay: .seconds(30), delay: .seconds(30)) { [weak self] _ in
            guard let self else { return }
            self.background { try self.store.accountKeys() }.whenSuccess { self.accountKeys = Set($0) }
        }
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
            self.maintenance?.cancel()
            self.accountRefresh?.cancel()
            self.reminderTask?.cancel()
            for channel in self.listeners { channel.close(promise: nil) }
            for client in self.clients.values {
                self.disconnect(client, reason: reason)
            }
            self.flushHistory()
        }.wait()
        workspace.waitUntilWritten()
        try? threadPool.syncShutdownGracefully()
        try? group.syncShutdownGracefully()
    }

    /// How much a connection reads at a time. NIO keeps a connection's read buffer for its life,
    /// at the largest size its reads ever grew to: with NIO's usual ceiling of 64 KiB, one 64 KiB
    /// burst left an idle connection at 79 KiB of RSS instead of 3.7 (and a TLS handshake alone
    /// grew the buffer to 1 KiB). Idle clients dominate a chat server, and flood control takes a
    /// client's lines a few a second, so reads stay small: 512 bytes is an IRC line without tags,
    /// and NIO reads up to four times per wake-up.
    static let readSizes = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 512)
    /// A TLS connection's reads are ciphertext, which swift-nio-ssl copies into a buffer of its own,
    /// so a smaller read costs only a syscall, never a line split in two. Any cap above 128 is
    /// reached by the handshake's ClientHello, which grows the buffer for the connection's life:
    /// 128 bytes hold a short line with TLS's 22 bytes of framing in one read, and a longer line
    /// takes one more read per 128 bytes (at 512, 384 bytes more per idle TLS connection).
    static let tlsReadSizes = FixedSizeRecvByteBufferAllocator(capacity: 128)

    private func bootstrap(tls: NIOSSLContext?) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            // Accepted sockets inherit TCP_NODELAY from the listening one (Linux and the BSDs), so
            // no connection waits for Nagle's timer and none pays a syscall of its own for it.
            // (ServerBootstrap sets it by default too; said here because the tests rely on it.)
            .serverChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [unowned self] channel in
                do {
                    // Set here rather than with `childChannelOption`, which applies each option
                    // through a chain of futures: 31k instructions per connection, 6 % of a
                    // registration's (callgrind), against a few hundred for these calls.
                    guard let options = channel.syncOptions else { throw ChannelError.operationUnsupported }
                    try options.setOption(ChannelOptions.writeBufferWaterMark,
                                          value: .init(low: config.sendQueueBytes / 2, high: config.sendQueueBytes))
                    if tls == nil {
                        try options.setOption(ChannelOptions.recvAllocator, value: IRCServer.readSizes)
                    } else {
                        try options.setOption(ChannelOptions.recvAllocator, value: IRCServer.tlsReadSizes)
                    }
                    let id = IRCServer.connectionIDs.add(1, ordering: .relaxed).newValue
                    if let tls {
                        // The TLS buffers of idle connections go back to the kernel (`TLSBuffers`).
                        try options.setOption(ChannelOptions.allocator, value: TLSBuffers.allocator)
                        try TLSBuffers.noting(owner: id) {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                        }
                    }
                    try channel.pipeline.syncOperations.addHandler(Client(server: self, id: id, channel: channel, isTLS: tls != nil))
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
    }

    // MARK: Connections

    /// A new connection is active: counts it, or turns it away when its address has too many.
    func accept(_ client: Client) -> Bool {
        let ip = client.ip
        if config.maxConnectionsPerIP > 0, connectionsPerIP[ip, default: 0] >= config.maxConnectionsPerIP {
            let line = "ERROR :Closing link: too many connections from \(ip)\r\n"
            let channel = client.channel
            channel.writeAndFlush(allocator.buffer(string: line)).whenComplete { _ in channel.close(promise: nil) }
            return false
        }
        clients[ObjectIdentifier(client)] = client
        connectionsPerIP[ip, default: 0] += 1
        unregisteredCount += 1
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

    /// User modes that LUSERS counts change only here.
    func setInvisible(_ client: Client, _ on: Bool) {
        guard client.invisible != on else { return }
        client.invisible = on
        invisibleCount += on ? 1 : -1
    }

    func setOper(_ client: Client, _ on: Bool) {
        guard client.isOper != on else { return }
        client.isOper = on
        operCount += on ? 1 : -1
    }

    /// The connection is gone: forget the client and tell the rooms it was in.
    func connectionClosed(_ client: Client, reason: String) {
        guard clients.removeValue(forKey: ObjectIdentifier(client)) != nil else { return }
        client.closing = true
        tokenLogins.removeValue(forKey: ObjectIdentifier(client))
        // Lines held for a replay still being read are dropped now, not when the read comes back.
        releaseHeldLines(of: client)
        if let n = connectionsPerIP[client.ip] { connectionsPerIP[client.ip] = n > 1 ? n - 1 : nil }
        if !client.registered { unregisteredCount -= 1; return }
        setInvisible(client, false)
        setOper(client, false)
        nicks.removeValue(forKey: client.nickKey)
        if let key = client.account?.key {
            sessions[key]?.removeAll { $0 === client }
            if sessions[key]?.isEmpty == true { sessions[key] = nil }
        }
        rememberWhowas(client)
        let quit = Outgoing(Message(source: client.prefix, "QUIT", ["Quit: \(reason)"]), time: now(), account: client.accountName)
        broadcast(quit, to: peers(of: client), except: client)
        for room in client.rooms { room.remove(client) }
        client.rooms.removeAll()
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

    func rememberWhowas(_ client: Client) {
        whowas.append(WhowasEntry(nick: client.nick, user: client.user, host: client.host, realname: client.realname,
                                  account: client.accountName, time: now()))
        if whowas.count > 500 { whowas.removeFirst(whowas.count - 500) }
    }

    /// Stops the periodic checks (tests that run them by hand).
    func cancelMaintenance() {
        maintenance?.cancel()
        maintenance = nil
    }

    private func checkLiveness() {
        let t = now()
        for client in clients.values where !client.closing {
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
        let released = releaseIdleTLSBuffers()
        if released > 0 { logger.debug("gave back idle TLS buffers", metadata: ["bytes": "\(released)"]) }
    }

    /// Gives back the pages of the TLS buffers of connections that were quiet since the last sweep
    /// and have no output waiting in their channel (`TLSBuffers`); returns how many bytes. Runs on
    /// the loop, so no connection is in the middle of a read or write.
    @discardableResult
    func releaseIdleTLSBuffers() -> Int {
        var idle = Set<Int>()
        for client in clients.values where client.isTLS && !client.closing {
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

    // MARK: Input

    func receive(_ client: Client, _ inbound: Client.Inbound) {
        guard !client.closing else { return }
        client.activity &+= 1
        client.lastReadAt = now()
        client.awaitingPong = false
        if !client.inbox.isEmpty || !mayProcess(inbound, from: client) || !takeFloodToken(client) {
            client.inbox.append(inbound)
            if config.floodBurst > 0, client.inbox.count > config.floodQueue {
                disconnect(client, reason: "Excess Flood")
            } else {
                scheduleDrain(client)
            }
            return
        }
        process(client, inbound)
    }

    /// A suspended command finished: run the lines that waited.
    func resumeInput(_ client: Client) {
        drain(client)
    }

    private func drain(_ client: Client) {
        while !client.closing, let next = client.inbox.first, mayProcess(next, from: client) {
            guard takeFloodToken(client) else { return scheduleDrain(client) }
            client.inbox.removeFirst()
            process(client, next)
        }
    }

    /// Whether a line can run now: not while a suspended line waits, and while bot commands are in
    /// flight, only another bot command (up to `commandPipeline` of them).
    private func mayProcess(_ inbound: Client.Inbound, from client: Client) -> Bool {
        guard !client.suspended else { return false }
        guard client.commandsInFlight > 0 else { return true }
        guard client.commandsInFlight < config.commandPipeline, case .line(let text) = inbound,
              let message = try? Message.parse(text), message.command == "PRIVMSG", message.params.count == 2 else { return false }
        let target = message.params[0]
        if Names.isChannel(target) { return Bot.isCommand(message.params[1]) }
        return Names.fold(target) == Names.fold(config.serviceNick)
    }

    private func scheduleDrain(_ client: Client) {
        guard !client.suspended, client.commandsInFlight == 0, !client.drainScheduled else { return }
        client.drainScheduled = true
        let wait = config.floodBurst > 0 ? max(0.01, (1 - client.floodTokens) / config.floodRate) : 0
        loop.scheduleTask(in: .milliseconds(Int64(wait * 1000))) { [weak self, weak client] in
            guard let self, let client else { return }
            client.drainScheduled = false
            self.drain(client)
        }
    }

    /// Token bucket: `floodBurst` lines at once, then `floodRate` a second. 0 turns it off.
    private func takeFloodToken(_ client: Client) -> Bool {
        guard config.floodBurst > 0 else { return true }
        let t = NIODeadline.now()
        let elapsed = Double((t - client.floodUpdatedAt).nanoseconds) / 1e9
        client.floodTokens = min(Double(config.floodBurst), client.floodTokens + elapsed * config.floodRate)
        client.floodUpdatedAt = t
        guard client.floodTokens >= 1 else { return false }
        client.floodTokens -= 1
        return true
    }

    private func process(_ client: Client, _ inbound: Client.Inbound) {
        switch inbound {
        case .tooLong:
            answerUnparsed(client) { $0.numeric(.inputTooLong, "Input line was too long") }
        case .line(let text):
            do {
                dispatch(client, try Message.parse(text))
            } catch {
                switch error {
                case .empty:
                    return
                case .lineTooLong, .tagsTooLong:
                    answerUnparsed(client) { $0.numeric(.inputTooLong, "Input line was too long") }
                case .forbiddenCharacter:
                    answerUnparsed(client) { $0.fail("INVALID_LINE", "Lines may not contain NUL or a bare CR") }
                case .invalidCommand(let verb):
                    answerUnparsed(client) { $0.numeric(.unknownCommand, verb, "Unknown command") }
                case .missingCommand:
                    answerUnparsed(client) { $0.numeric(.unknownCommand, "*", "A line needs a command") }
                }
            }
        }
    }

    private func dispatch(_ client: Client, _ message: Message) {
        // Refusals go through the reply too: a labeled line gets its label back whatever happens.
        let reply = Reply(client: client, server: self, command: message.command, label: message.tag("label"))
        guard let verb = Verbs.table[message.command] else {
            if client.registered {
                reply.numeric(.unknownCommand, message.command, "Unknown command")
            } else {
                reply.numeric(.notRegistered, "You have not registered")
            }
            return reply.finish()
        }
        if !client.registered && !verb.beforeRegistration {
            reply.numeric(.notRegistered, "You have not registered")
        } else if message.params.count < verb.minParams {
            reply.numeric(.needMoreParams, message.command, "Not enough parameters")
        } else {
            verb.handler(self)(reply, message)
        }
        if !reply.isWaiting { reply.finish() }
    }

    // MARK: Output

    func write(_ line: String, to client: Client) {
        write(allocator.buffer(string: line), to: client)
    }

    /// Queues bytes for a client; they reach the socket at the end of this loop turn. Lines of the
    /// same turn are gathered into one buffer, so a client gets one channel write and one flush per
    /// turn: a channel write per line (NIO's pipeline and pending-writes bookkeeping) was a third of
    /// the server's CPU in saturated fan-out. The first line of a turn is kept as it is (often the
    /// bytes shared by every member); a second one copies it and appends.
    func write(_ buffer: ByteBuffer, to client: Client) {
        guard !client.closing else { return }
        guard client.replaysReading == 0 else {
            let key = ObjectIdentifier(client)
            if heldLive[key] == nil { heldLive[key] = buffer } else { heldLive[key]!.writeImmutableBuffer(buffer) }
            return
        }
        queue(buffer, for: client)
    }

    /// Writes the answer to the client's own line (a reply, a join's replay): never held back.
    func writeAnswer(_ buffer: ByteBuffer, to client: Client) {
        guard !client.closing else { return }
        queue(buffer, for: client)
    }

    /// Holds the client's live lines until `replayRead` (a join's history is being read).
    func replayReading(for client: Client) {
        client.replaysReading += 1
    }

    /// A replay is written (or there was none to write): the held lines follow once all are.
    func replayRead(for client: Client) {
        guard client.replaysReading > 0 else { return }  // released already: the client left
        client.replaysReading -= 1
        if client.replaysReading == 0 { releaseHeldLines(of: client) }
    }

    /// Lets the lines held during replays go at once (the client is leaving).
    func releaseHeldLines(of client: Client) {
        client.replaysReading = 0
        guard let held = heldLive.removeValue(forKey: ObjectIdentifier(client)) else { return }
        if !client.closing { queue(held, for: client) }
    }

    private func queue(_ buffer: ByteBuffer, for client: Client) {
        if client.outbound == nil {
            client.outbound = buffer
        } else {
            client.outbound!.writeImmutableBuffer(buffer)
        }
        if !client.hasPendingWrites {
            client.hasPendingWrites = true
            dirty.append(client)
            if !flushScheduled {
                flushScheduled = true
                // Runs after this turn's reads: every client gets one flush however many lines it got.
                loop.execute { self.flushPending() }
            }
        }
    }

    func flushPending() {
        flushScheduled = false
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for client in batch {
            client.hasPendingWrites = false
            guard var bytes = client.outbound else { continue }
            client.outbound = nil
            guard let socket = client.socket else {
                client.activity &+= 1
                // A buffer swift-nio-ssl makes here (its last one still queued) is this connection's.
                TLSBuffers.noting(owner: client.id) { client.output.writeAndFlush(NIOAny(bytes), promise: nil) }
                continue
            }
            if client.writesInChannel == 0 && !client.closing {
                // Debug builds (the tests) check on every send that NIO still has this descriptor open.
                assert(SocketWrite.descriptor(of: client.channel) == socket, "a send on a descriptor NIO has closed")
                bytes.moveReaderIndex(forwardBy: SocketWrite.sendNow(bytes, to: socket))
                if bytes.readableBytes == 0 { continue }
            }
            // The rest waits in the channel, and what follows waits behind it.
            client.writesInChannel += 1
            let written = loop.makePromise(of: Void.self)
            written.futureResult.whenComplete { _ in client.writesInChannel -= 1 }
            client.output.writeAndFlush(NIOAny(bytes), promise: written)
        }
    }

    /// The answer to a line that could not be parsed (so it has no command and no label): through a
    /// reply all the same, so it keeps the client's answer order and carries the tags its
    /// capabilities ask for (server-time), and a FAIL is a NOTICE for clients without standard-replies.
    private func answerUnparsed(_ client: Client, _ answer: (Reply) -> Void) {
        let reply = Reply(client: client, server: self, command: "*", label: nil)
        answer(reply)
        reply.finish()
    }

    /// Sends a server-originated line to one client, outside any reply.
    func send(_ outgoing: Outgoing, to client: Client) {
        write(outgoing.buffer(for: client.caps, allocator: allocator), to: client)
    }

    /// Sends `outgoing` to each recipient once, skipping `except`. The requester's own copy goes into its reply.
    func broadcast<S: Sequence>(_ outgoing: Outgoing, to recipients: S, except: Client? = nil, reply: Reply? = nil,
                                only filter: ((Client) -> Bool)? = nil) where S.Element == Client {
        var bytes = FanoutBytes(allocator: allocator)
        for client in recipients where client !== except && !client.closing {
            if let filter, !filter(client) { continue }
            if let reply, client === reply.client {
                reply.add(outgoing)
            } else {
                write(bytes.bytes(of: outgoing, for: client.caps), to: client)
            }
        }
    }

    /// Everyone who shares a room with `client`, each once.
    func peers(of client: Client) -> [Client] {
        if client.rooms.count == 1, let room = client.rooms.first { return room.members }
        var seen = Set<ObjectIdentifier>()
        var result: [Client] = []
        for room in client.rooms {
            for member in room.members where seen.insert(ObjectIdentifier(member)).inserted {
                result.append(member)
            }
        }
        return result
    }

    func peersAndSelf(of client: Client) -> [Client] {
        client.rooms.isEmpty ? [client] : peers(of: client)
    }

    // MARK: Background work

    /// Blocking work (hashing, reads) on the thread pool; the result comes back on the loop.
    func background<T>(_ work: @escaping () throws -> T) -> EventLoopFuture<T> {
        threadPool.runIfActive(eventLoop: loop, work)
    }

    /// A write of the server's own (a membership, a room's modes), through the Workspace: in order
    /// after every change queued before it; errors are logged.
    func persist(_ what: String, _ work: @escaping @Sendable (any ChorusStorage) throws -> Void) {
        workspace.write(what, work)
    }

    /// Work that must see every change queued before it (history lines waiting here included) and
    /// come before every change queued after it; the result comes back on the loop.
    func readAfterWrites<T>(_ work: @escaping @Sendable (any ChorusStorage) throws -> T) -> EventLoopFuture<T> {
        flushHistory()
        let promise = loop.makePromise(of: T.self)
        workspace.afterWrites(work) { promise.completeWith($0) }
        return promise.futureResult
    }

    /// Queues a history line; lines of the next `historyBatchDelay` are written in one transaction.
    func record(_ entry: HistoryEntry) {
        if !entry.conversation.hasPrefix("@") { rooms[entry.conversation]?.hasHistory = true }
        pendingHistory.append(entry)
        if !historyFlushScheduled {
            historyFlushScheduled = true
            loop.scheduleTask(in: Self.historyBatchDelay) { self.flushHistory() }
        }
    }

    /// How long a history line may wait for others to share its transaction. A transaction per
    /// line rewrote the same table and index pages into the log for every message of a quiet
    /// room. Reads of history and bot commands send the waiting lines first, so nothing reads
    /// around them; a crash loses at most this much more history than it would anyway.
    static let historyBatchDelay = TimeAmount.milliseconds(20)

    func flushHistory() {
        historyFlushScheduled = false
        guard !pendingHistory.isEmpty else { return }
        let batch = pendingHistory
        pendingHistory.removeAll(keepingCapacity: true)
        persist("history") { try $0.appendHistory(batch) }
    }
}
