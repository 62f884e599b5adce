import ChorusCore
import ChorusIRC
@testable import ChorusServer
import ChorusStore
import ChorusTestSupport
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import XCTest

/// A real server on 127.0.0.1 with ephemeral ports, a real SQLite file in a temporary folder.
final class TestServer {
    let folder: URL
    var config: ServerConfig
    private(set) var server: IRCServer!
    /// The server's store: closed when the server stops (PostgreSQL's connections are few).
    private var store: (any ChorusStorage)?

    let now: @Sendable () -> Date
    let newSecret: @Sendable () -> String
    /// Whose store this server opens: its own folder's, or the one it shares with other servers.
    private let storeFolder: String?

    // `newSecret` before `now`, so that `TestServer(now: …) { config }` leaves one closure to match.
    /// `sharing`: a name other TestServers give too, to run as processes on one database.
    init(newSecret: @escaping @Sendable () -> String = { AccountToken.newSecret() }, now: @escaping @Sendable () -> Date = { Date() },
         sharing: String? = nil, configure: (inout ServerConfig) -> Void = { _ in }) throws {
        self.now = now
        self.newSecret = newSecret
        storeFolder = sharing
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-test-\(UUID().uuidString)")
        config = ServerConfig()
        config.dataDirectory = folder.path
        config.tls = .init(host: "127.0.0.1", port: 0)
        config.plain = .init(host: "127.0.0.1", port: 0)
        config.web = nil  // the web tests turn it on
        config.serverName = "test.chorus"
        config.passwordCost = 4  // fast hashes in tests; the default is 14
        config.floodBurst = 0
        config.maxConnectionsPerIP = 0
        config.registrationsPerHour = 0  // tests make many accounts from 127.0.0.1; RegistrationLimitTests sets it
        // Most tests have people meet in a room one of them made: open, unless a test says otherwise
        // (RoomAccessTests checks the product's default, members only).
        config.roomsOpen = true
        configure(&config)
        try start()
    }

    func start() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var logger = Logger(label: "chorus-test")
        logger.logLevel = .warning
        let store = try TestStore.at(folder: storeFolder ?? config.dataDirectory)
        self.store = store
        server = IRCServer(config: config, store: store, cluster: TestStore.cluster(of: store), now: now, logger: logger,
                           newSecret: newSecret)
        try server.start()
    }

    /// Stops and starts again on the same data folder (new ports).
    func restart() throws {
        server.shutdown()
        store?.close()
        try start()
    }

    /// Makes an account as an operator would (outside IRC) and lets the server know at once.
    @discardableResult
    func addAccount(_ name: String, _ password: String) throws -> Account {
        let account = try server.accounts.register(name: name, password: password)
        try server.reloadAccountKeys()
        return account
    }

    /// A connection logged in with PASS to an account made as `addAccount(account, "<account>-password")`,
    /// as `nick` (the account's name unless given), up to the end of the MOTD.
    func connect(as account: String, nick: String? = nil, caps: [String] = []) throws -> TestClient {
        let client = try connect()
        try client.register(nick ?? account, caps: caps, pass: "\(account):\(account)-password")
        return client
    }

    var plainPort: Int { server.plainAddress!.port! }
    var tlsPort: Int { server.tlsAddress!.port! }
    var webPort: Int { server.webAddress!.port! }
    var webPlainPort: Int { server.webPlainAddress!.port! }

    /// `receiveBuffer` makes the client's socket buffer that small (SO_RCVBUF), so that a client
    /// that stops reading fills the server's side soon.
    func connect(tls: Bool = false, receiveBuffer: Int32? = nil, tlsConfiguration: TLSConfiguration? = nil) throws -> TestClient {
        try TestClient(port: tls ? tlsPort : plainPort, tls: tls, receiveBuffer: receiveBuffer, tlsConfiguration: tlsConfiguration)
    }

    deinit {
        server?.shutdown()
        store?.close()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// The `chorusd` the build made, for tests that run it as an operator would.
func chorusdBinary() throws -> URL {
    // The test bundle and chorusd are built into the same folder.
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chorusd")
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        throw XCTSkip("chorusd is not built beside the tests (swift build --build-tests builds it)")
    }
    return binary
}

/// A line-oriented IRC client over a real socket. Lines are queued as they arrive; `expect` waits
/// (bounded) for the first line matching a predicate and fails with a transcript if none comes.
final class TestClient {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel: Channel
    private let inbox = Inbox()
    private(set) var nick = "*"
    /// Set for a client over WebSocket: each line it sends is a message of this kind.
    private(set) var webSocketOpcode: WebSocketOpcode?
    /// The subprotocol the server chose (WebSocket clients).
    private(set) var subprotocol: String?

    /// `tlsConfiguration` replaces the default client configuration (no certificate check).
    init(port: Int, tls: Bool, receiveBuffer: Int32? = nil, tlsConfiguration: TLSConfiguration? = nil) throws {
        let inbox = self.inbox
        let sslContext = tls ? try NIOSSLContext(configuration: tlsConfiguration ?? {
            var c = TLSConfiguration.makeClientConfiguration()
            c.certificateVerification = .none
            return c
        }()) : nil
        var bootstrap = ClientBootstrap(group: Self.group)
        if let receiveBuffer {
            bootstrap = bootstrap.channelOption(ChannelOptions.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer))
        }
        channel = try bootstrap
            .channelInitializer { channel in
                do {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    }
                    try channel.pipeline.syncOperations.addHandler(Collector(inbox: inbox))
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .connect(host: "127.0.0.1", port: port).wait()
    }

    /// A client of IRC over WebSocket (TLS), as a browser would be: it asks for `subprotocols` and
    /// names `origin`. Lines arrive one per message; a close frame arrives as the line
    /// `WSCLOSE <code> :<reason>`, so tests can wait for it as for any line.
    /// `proxyHeader`: sent before anything else, as a balancer sends its PROXY header.
    init(webSocketPort port: Int, subprotocols: [String] = ["text.ircv3.net"], origin: String? = nil, tls useTLS: Bool = true,
         proxyHeader: String? = nil, headers extra: [(String, String)] = []) throws {
        let inbox = self.inbox
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let sslContext = try NIOSSLContext(configuration: tls)
        let chosen = NIOLockedValueBox<String?>(nil)
        let upgraded = Self.group.next().makePromise(of: Void.self)
        channel = try ClientBootstrap(group: Self.group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let proxyHeader {
                        try channel.pipeline.syncOperations.addHandler(Preamble(bytes: Array(proxyHeader.utf8)))
                    }
                    if useTLS {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    }
                    let refusal = NIOLoopBound(UpgradeRefusal(promise: upgraded), eventLoop: channel.eventLoop)
                    let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 20, automaticErrorHandling: false) { channel, response in
                        chosen.withLockedValue { $0 = response.headers.first(name: "Sec-WebSocket-Protocol") }
                        return channel.eventLoop.makeCompletedFuture {
                            channel.pipeline.syncOperations.removeHandler(refusal.value, promise: nil)
                            try channel.pipeline.syncOperations.addHandler(FrameCollector(inbox: inbox))
                            upgraded.succeed(())
                        }
                    }
                    // Bytes after the 101 (a refusal's ERROR line, say) are frames, not to be dropped.
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes, withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                    try channel.pipeline.syncOperations.addHandler(refusal.value)
                }
            }
            .connect(host: "127.0.0.1", port: port).wait()
        var headers = HTTPHeaders([("Host", "127.0.0.1:\(port)"), ("Content-Length", "0")])
        if !subprotocols.isEmpty { headers.add(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", ")) }
        if let origin { headers.add(name: "Origin", value: origin) }
        headers.add(contentsOf: extra)
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/socket", headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        try upgraded.futureResult.wait()
        subprotocol = chosen.withLockedValue { $0 }
        webSocketOpcode = subprotocol == "binary.ircv3.net" ? .binary : .text
    }

    deinit { channel.close(promise: nil) }

    func send(_ line: String) {
        if let webSocketOpcode {
            return sendFrame(WebSocketFrame(fin: true, opcode: webSocketOpcode, data: channel.allocator.buffer(string: line)))
        }
        channel.writeAndFlush(channel.allocator.buffer(string: line + "\r\n"), promise: nil)
    }

    func sendRaw(_ bytes: [UInt8]) {
        if let webSocketOpcode {
            return sendFrame(WebSocketFrame(fin: true, opcode: webSocketOpcode, data: channel.allocator.buffer(bytes: bytes)))
        }
        channel.writeAndFlush(channel.allocator.buffer(bytes: bytes), promise: nil)
    }

    /// A WebSocket frame as given; masked with a random key (by NIO's encoder) unless `masked` is false.
    func sendFrame(_ frame: WebSocketFrame, masked: Bool = true) {
        var frame = frame
        if masked && frame.maskKey == nil { frame.maskKey = .random() }
        channel.writeAndFlush(frame, promise: nil)
    }

    /// Waits for a line matching `predicate`, dropping the lines before it.
    @discardableResult
    func expect(_ what: String = "line", timeout: TimeInterval = 5, file: StaticString = #filePath, line: UInt = #line,
                _ predicate: (Message) -> Bool) throws -> Message {
        var seen: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while let text = inbox.next(until: deadline) {
            seen.append(text)
            if let m = try? Message.parse(text), predicate(m) { return m }
        }
        XCTFail("no \(what) within \(timeout)s; saw:\n" + seen.joined(separator: "\n"), file: file, line: line)
        throw TestError.timeout(what)
    }

    @discardableResult
    func expect(command: String, _ params: String..., timeout: TimeInterval = 5, file: StaticString = #filePath, line: UInt = #line) throws -> Message {
        try expect("\(command) \(params.joined(separator: " "))", timeout: timeout, file: file, line: line) { m in
            m.command == command && zip(params, m.params.dropFirst(m.command.allSatisfy(\.isNumber) ? 1 : 0)).allSatisfy { $0 == $1 }
                && m.params.count >= params.count
        }
    }

    /// Waits for a line matching `predicate` and takes only it; earlier lines stay for later checks.
    @discardableResult
    func take(_ what: String, timeout: TimeInterval = 5, file: StaticString = #filePath, line: UInt = #line,
              _ predicate: @escaping (Message) -> Bool) throws -> Message {
        let deadline = Date().addingTimeInterval(timeout)
        if let text = inbox.take(until: deadline, where: { (try? Message.parse($0)).map(predicate) ?? false }),
           let m = try? Message.parse(text) {
            return m
        }
        XCTFail("no \(what) within \(timeout)s; waiting:\n" + inbox.snapshot().joined(separator: "\n"), file: file, line: line)
        throw TestError.timeout(what)
    }

    /// All lines up to and including the first that matches `end`.
    func collect(until end: (Message) -> Bool, timeout: TimeInterval = 5, file: StaticString = #filePath, line: UInt = #line) throws -> [Message] {
        var lines: [Message] = []
        _ = try expect("end of collection", timeout: timeout, file: file, line: line) { m in
            lines.append(m)
            return end(m)
        }
        return lines
    }

    /// Lines that arrive within `seconds`; for checking that nothing (or something) came.
    /// The lines as they came, unparsed (without CR LF).
    func drainRaw(for seconds: TimeInterval) -> [String] {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while let text = inbox.next(until: deadline) { lines.append(text) }
        return lines
    }

    func drain(for seconds: TimeInterval) -> [Message] {
        var lines: [Message] = []
        let deadline = Date().addingTimeInterval(seconds)
        while let text = inbox.next(until: deadline) {
            if let m = try? Message.parse(text) { lines.append(m) }
        }
        return lines
    }

    /// NICK/USER (with optional caps and SASL PLAIN) up to the end of the MOTD.
    /// Asks (ISON) until this client's server knows `nick` is connected, here or on another node
    /// of its cluster; at most five seconds.
    func waitUntilOnline(_ nick: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for _ in 0..<50 {
            send("ISON \(nick)")
            if try expect(command: "303", file: file, line: line).params.last == nick { return }
            usleep(100_000)
        }
        XCTFail("\(nick) never came online", file: file, line: line)
    }

    @discardableResult
    func register(_ nick: String, caps: [String] = [], sasl: (String, String)? = nil, pass: String? = nil) throws -> [Message] {
        self.nick = nick
        var caps = caps
        if sasl != nil { caps.append("sasl") }
        if !caps.isEmpty { send("CAP LS 302") }
        if let pass { send("PASS \(pass)") }
        send("NICK \(nick)")
        send("USER \(nick) 0 * :\(nick) Tester")
        if !caps.isEmpty {
            send("CAP REQ :\(caps.joined(separator: " "))")
            try expect(command: "CAP", "*", "ACK")
        }
        if let (account, password) = sasl {
            send("AUTHENTICATE PLAIN")
            try expect(command: "AUTHENTICATE", "+")
            let payload = Data("\0\(account)\0\(password)".utf8).base64EncodedString()
            send("AUTHENTICATE \(payload)")
            try expect(command: "903")
        }
        if !caps.isEmpty { send("CAP END") }
        return try collect(until: { $0.command == "376" || $0.command == "422" })
    }

    func join(_ room: String) throws {
        send("JOIN \(room)")
        try expect(command: "366", room)
    }

    func close() { channel.close(promise: nil) }

    var isClosed: Bool { !channel.isActive }
}

enum TestError: Error {
    case timeout(String)
    /// A system call the test itself makes (socket, connect) failed.
    case failed(String)
}

private final class Inbox: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []
    private var closed = false

    func push(_ line: String) {
        condition.lock(); lines.append(line); condition.signal(); condition.unlock()
    }

    func close() {
        condition.lock(); closed = true; condition.broadcast(); condition.unlock()
    }

    func take(until deadline: Date, where matches: (String) -> Bool) -> String? {
        condition.lock(); defer { condition.unlock() }
        var scanned = 0
        while true {
            while scanned < lines.count {
                if matches(lines[scanned]) { return lines.remove(at: scanned) }
                scanned += 1
            }
            if closed || !condition.wait(until: deadline) {
                return nil
            }
        }
    }

    func snapshot() -> [String] {
        condition.lock(); defer { condition.unlock() }
        return lines
    }

    func next(until deadline: Date) -> String? {
        condition.lock(); defer { condition.unlock() }
        while lines.isEmpty {
            if closed || !condition.wait(until: deadline) { return lines.isEmpty ? nil : lines.removeFirst() }
        }
        return lines.removeFirst()
    }
}

/// A WebSocket client's messages, each a line; a close frame as `WSCLOSE <code> :<reason>`.
private final class FrameCollector: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    let inbox: Inbox
    init(inbox: Inbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        var bytes = frame.unmaskedData
        switch frame.opcode {
        case .text, .binary:
            inbox.push(bytes.readString(length: bytes.readableBytes) ?? "")
        case .connectionClose:
            let code = bytes.readInteger(as: UInt16.self).map(String.init) ?? "none"
            inbox.push("WSCLOSE \(code) :\(bytes.readString(length: bytes.readableBytes) ?? "")")
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) { inbox.close() }
    func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
}

/// Writes its bytes first on a new connection, beneath everything else on it (a PROXY header).
private final class Preamble: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let bytes: [UInt8]
    init(bytes: [UInt8]) { self.bytes = bytes }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        context.fireChannelActive()
    }
}

/// Fails a WebSocket client's set-up when the server answers its upgrade with anything but 101.
private final class UpgradeRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    let promise: EventLoopPromise<Void>
    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) { promise.fail(TestError.failed("upgrade refused: \(head.status)")) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) { promise.fail(TestError.failed("closed before the upgrade")) }
}

private final class Collector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let inbox: Inbox
    var framer = LineFramer(maxLineLength: 65536)
    init(inbox: Inbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        framer.feed(unwrapInboundIn(data), allocator: context.channel.allocator) { line in
            if case .line(let text) = line { inbox.push(text) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) { inbox.close() }
    func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
}
