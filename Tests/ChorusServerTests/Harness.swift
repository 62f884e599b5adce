import ChorusCore
import ChorusIRC
@testable import ChorusServer
import ChorusStore
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import XCTest

/// A real server on 127.0.0.1 with ephemeral ports, a real SQLite file in a temporary folder.
final class TestServer {
    let folder: URL
    var config: ServerConfig
    private(set) var server: IRCServer!

    let now: @Sendable () -> Date
    let newSecret: @Sendable () -> String

    // `newSecret` before `now`, so that `TestServer(now: …) { config }` leaves one closure to match.
    init(newSecret: @escaping @Sendable () -> String = { AccountToken.newSecret() }, now: @escaping @Sendable () -> Date = { Date() },
         configure: (inout ServerConfig) -> Void = { _ in }) throws {
        self.now = now
        self.newSecret = newSecret
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-test-\(UUID().uuidString)")
        config = ServerConfig()
        config.dataDirectory = folder.path
        config.tls = .init(host: "127.0.0.1", port: 0)
        config.plain = .init(host: "127.0.0.1", port: 0)
        config.serverName = "test.chorus"
        config.passwordCost = 4  // fast hashes in tests; the default is 14
        config.floodBurst = 0
        config.maxConnectionsPerIP = 0
        configure(&config)
        try start()
    }

    func start() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var logger = Logger(label: "chorus-test")
        logger.logLevel = .warning
        server = IRCServer(config: config, store: try SQLiteStore(path: config.databasePath), now: now, logger: logger,
                           newSecret: newSecret)
        try server.start()
    }

    /// Stops and starts again on the same data folder (new ports).
    func restart() throws {
        server.shutdown()
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

    /// `receiveBuffer` makes the client's socket buffer that small (SO_RCVBUF), so that a client
    /// that stops reading fills the server's side soon.
    func connect(tls: Bool = false, receiveBuffer: Int32? = nil, tlsConfiguration: TLSConfiguration? = nil) throws -> TestClient {
        try TestClient(port: tls ? tlsPort : plainPort, tls: tls, receiveBuffer: receiveBuffer, tlsConfiguration: tlsConfiguration)
    }

    deinit {
        server?.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// A line-oriented IRC client over a real socket. Lines are queued as they arrive; `expect` waits
/// (bounded) for the first line matching a predicate and fails with a transcript if none comes.
final class TestClient {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel: Channel
    private let inbox = Inbox()
    private(set) var nick = "*"

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

    deinit { channel.close(promise: nil) }

    func send(_ line: String) {
        channel.writeAndFlush(channel.allocator.buffer(string: line + "\r\n"), promise: nil)
    }

    func sendRaw(_ bytes: [UInt8]) {
        channel.writeAndFlush(channel.allocator.buffer(bytes: bytes), promise: nil)
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
