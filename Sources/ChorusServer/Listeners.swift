import ChorusIRC
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// The server's doors: the IRC listeners (TLS, plaintext) and the web ones (HTTPS, and plain HTTP
/// for a proxy that ends TLS in front), the certificate their handshakes use (read again on SIGHUP
/// and when its files change), and each accepted connection's pipeline up to its `Client`: TLS,
/// then IRC lines; or TLS, then HTTP/1.1 (NIO's codec) with one upgrade, to IRC over WebSocket at
/// `/socket`, where a connection becomes a `Client` like any other behind `WebSocketLines` and the
/// others are served by `WebRequests`. Every listener runs on the server's loop.
final class Listeners {
    unowned let server: IRCServer
    /// Connections the listeners could not take (out of descriptors, say): logged, turned away.
    let acceptFailures: AcceptFailures
    private var channels: [Channel] = []
    /// The certificate new TLS connections are given; replaced by a reload or when its files change.
    private(set) var sslContext: NIOSSLContext?
    /// When the certificate and key files were last read.
    private var certificateStamp: CertificateStamp?
    private var certificateWatch: RepeatedTask?

    /// The bound addresses, known after `open()` (useful with port 0 in tests).
    private(set) var tlsAddress: SocketAddress?
    private(set) var plainAddress: SocketAddress?
    private(set) var webAddress: SocketAddress?
    private(set) var webPlainAddress: SocketAddress?

    init(server: IRCServer, logger: Logger) {
        self.server = server
        self.acceptFailures = AcceptFailures(logger: logger)
    }

    private var config: ServerConfig { server.config }
    private var logger: Logger { server.logger }

    /// Makes the certificate if none is configured and none was made before, and binds every
    /// configured listener.
    func open() throws {
        if config.tls != nil || config.web != nil {
            if config.certificatePath == nil && config.keyPath == nil,
               try Certificates.ensureSelfSigned(certPath: config.resolvedCertificatePath,
                                                 keyPath: config.resolvedKeyPath, serverName: config.serverName) {
                logger.info("made a self-signed certificate", metadata: ["path": "\(config.resolvedCertificatePath)"])
            }
            certificateStamp = CertificateStamp(config)
            sslContext = try Certificates.serverContext(certPath: config.resolvedCertificatePath, keyPath: config.resolvedKeyPath)
        }
        if let tls = config.tls, sslContext != nil {
            tlsAddress = try listen(ircBootstrap(isTLS: true), at: tls, isTLS: true, "listening (TLS)")
        }
        if let web = config.web, sslContext != nil {
            webAddress = try listen(webBootstrap(isTLS: true), at: web, isTLS: true, "listening (HTTPS, WebSocket)")
        }
        if let web = config.webPlain {
            webPlainAddress = try listen(webBootstrap(isTLS: false), at: web, isTLS: false, "listening (HTTP, WebSocket, for a TLS proxy)")
        }
        if let plain = config.plain {
            plainAddress = try listen(ircBootstrap(isTLS: false), at: plain, isTLS: false, "listening (plaintext)")
        }
        // A renewed certificate (Let's Encrypt) is picked up without a restart.
        certificateWatch = server.loop.scheduleRepeatedTask(initialDelay: .seconds(60), delay: .seconds(60)) { [weak self] _ in
            self?.reloadCertificateIfChanged()
        }
    }

    /// Stops taking connections; those open stay until the server closes them.
    func close() {
        certificateWatch?.cancel()
        for channel in channels { channel.close(promise: nil) }
    }

    /// Binds a listener; returns the address it got (a port of 0 picks one).
    private func listen(_ bootstrap: ServerBootstrap, at listener: ServerConfig.Listener, isTLS: Bool, _ what: Logger.Message) throws -> SocketAddress? {
        let channel: Channel
        do {
            channel = try bootstrap.bind(host: listener.host, port: listener.port).wait()
        } catch {
            throw ListenError(listener: listener, what: "\(what)".replacingOccurrences(of: "listening ", with: ""), error: error)
        }
        try channel.pipeline.addHandler(ListenerHandler(failures: acceptFailures, isTLS: isTLS)).wait()
        channels.append(channel)
        logger.info(what, metadata: ["address": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
        return channel.localAddress
    }

    /// A listener that could not be opened, named with its address and why, as an operator needs it.
    struct ListenError: Error, CustomStringConvertible {
        let description: String

        init(listener: ServerConfig.Listener, what: String, error: any Error) {
            let why: String
            switch (error as? IOError)?.errnoCode {
            case EADDRINUSE?: why = "the address is in use (another server, or another chorusd, listens there)"
            case EACCES?: why = "permission denied (a port under 1024 needs privileges)"
            case EADDRNOTAVAIL?: why = "no network interface of this machine has that address"
            default: why = "\(error)"
            }
            description = "Cannot listen on \(listener.host):\(listener.port) \(what): \(why)"
        }
    }

    // MARK: The certificate

    /// After a reload of the configuration (`old` was the one before): the certificate is read
    /// again when its paths or its files changed.
    func configurationReloaded(from old: ServerConfig) {
        if old.certificatePath != config.certificatePath || old.keyPath != config.keyPath || CertificateStamp(config) != certificateStamp {
            reloadCertificate(because: "the configuration was reloaded")
        }
    }

    /// The minute's check: the certificate or key file changed since it was read.
    func reloadCertificateIfChanged() {
        guard sslContext != nil, CertificateStamp(config) != certificateStamp else { return }
        reloadCertificate(because: "its files changed")
    }

    /// Reads the certificate and key again. Connections already open keep theirs; a file that
    /// cannot be used leaves the one in use, and says why (once per change of the files).
    @discardableResult
    func reloadCertificate(because reason: String) -> Bool {
        guard sslContext != nil else { return false }
        let stamp = CertificateStamp(config)
        certificateStamp = stamp
        do {
            sslContext = try Certificates.serverContext(certPath: config.resolvedCertificatePath, keyPath: config.resolvedKeyPath)
            logger.info("certificate reloaded", metadata: ["reason": "\(reason)", "path": "\(config.resolvedCertificatePath)"])
            return true
        } catch {
            logger.error("certificate not reloaded: the one in use stays", metadata: ["reason": "\(reason)", "error": "\(error)"])
            return false
        }
    }

    // MARK: Each connection's pipeline

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

    /// A listener's bootstrap; `setUp` builds each accepted connection's pipeline.
    private func serverBootstrap(_ setUp: @escaping @Sendable (Channel) throws -> Void) -> ServerBootstrap {
        ServerBootstrap(group: server.group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            // Accepted sockets inherit TCP_NODELAY from the listening one (Linux and the BSDs), so
            // no connection waits for Nagle's timer and none pays a syscall of its own for it.
            // (ServerBootstrap sets it by default too; said here because the tests rely on it.)
            .serverChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                do {
                    try setUp(channel)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
    }

    private func ircBootstrap(isTLS: Bool) -> ServerBootstrap {
        serverBootstrap { [unowned self] channel in
            // Read per connection: a reload's new certificate is for the handshakes after it.
            let tls = isTLS ? sslContext : nil
            // Set here rather than with `childChannelOption`, which applies each option
            // through a chain of futures: 31k instructions per connection, 6 % of a
            // registration's (callgrind), against a few hundred for these calls.
            guard let options = channel.syncOptions else { throw ChannelError.operationUnsupported }
            try options.setOption(ChannelOptions.writeBufferWaterMark,
                                  value: .init(low: config.sendQueueBytes / 2, high: config.sendQueueBytes))
            if tls == nil {
                try options.setOption(ChannelOptions.recvAllocator, value: Listeners.readSizes)
            } else {
                try options.setOption(ChannelOptions.recvAllocator, value: Listeners.tlsReadSizes)
            }
            let id = IRCServer.nextConnectionID()
            let client = Client(server: server, id: id, channel: channel, isTLS: tls != nil)
            try readProxyHeader(on: channel) { client.ip = $0 }
            if let tls {
                // The TLS buffers of idle connections go back to the kernel (`TLSBuffers`).
                try options.setOption(ChannelOptions.allocator, value: TLSBuffers.allocator)
                try TLSBuffers.noting(owner: id) {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                }
            }
            try channel.pipeline.syncOperations.addHandler(client)
        }
    }

    /// A connection from a balancer named by `proxy-from` reads its PROXY header before anything
    /// else (TLS included); `found` gets the client's address, before the connection is active.
    /// Returns whether a header is expected (the peer is a configured proxy).
    @discardableResult
    private func readProxyHeader(on channel: Channel, found: @escaping (String) -> Void) throws -> Bool {
        guard !config.proxyFrom.isEmpty, let peer = channel.remoteAddress, config.proxyFrom.contains(IRCServer.text(of: peer)) else { return false }
        try channel.pipeline.syncOperations.addHandler(ProxyHeaderHandler { header in
            if case .client(let address) = header { found(address) }
        })
        return true
    }

    /// Limits on what an HTTP client may send before it is answered (431 past them).
    static let httpLimits: NIOHTTPDecoderLimitConfiguration = {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 8 * 1024
        limits.maxHeaderListSize = 16 * 1024
        limits.maxHeaderFieldCount = 64
        return limits
    }()

    /// `isTLS` false: plain HTTP, for a reverse proxy that ends TLS in front (`web-plain`).
    private func webBootstrap(isTLS: Bool) -> ServerBootstrap {
        serverBootstrap { [unowned self] channel in try setUpWebConnection(channel, tls: isTLS ? sslContext : nil) }
    }

    private func setUpWebConnection(_ channel: Channel, tls: NIOSSLContext?) throws {
        guard let options = channel.syncOptions else { throw ChannelError.operationUnsupported }
        try options.setOption(ChannelOptions.writeBufferWaterMark, value: .init(low: config.sendQueueBytes / 2, high: config.sendQueueBytes))
        let id = IRCServer.nextConnectionID()
        let proxied = ProxiedAddress()
        proxied.expected = try readProxyHeader(on: channel) { proxied.address = $0 }
        if !proxied.expected, let peer = channel.remoteAddress, config.webProxyFrom.contains(IRCServer.text(of: peer)) {
            proxied.forwarding = config.webProxyFrom
        }
        if let tls {
            try options.setOption(ChannelOptions.recvAllocator, value: Listeners.tlsReadSizes)
            try options.setOption(ChannelOptions.allocator, value: TLSBuffers.allocator)
            try TLSBuffers.noting(owner: id) {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
            }
        } else {
            try options.setOption(ChannelOptions.recvAllocator, value: Listeners.readSizes)
        }
        try channel.pipeline.syncOperations.addHandler(WriteCoalescer(limit: config.sendQueueBytes))
        let requests = WebRequests(server: server, proxied: proxied)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: Limits.maxInputLine,
            automaticErrorHandling: true,
            shouldUpgrade: { [unowned self] channel, head in
                channel.eventLoop.makeSucceededFuture(self.webSocketAccepts(head))
            },
            upgradePipelineHandler: { [unowned self] channel, head in
                channel.eventLoop.makeCompletedFuture {
                    let mode = WebSocketUpgrade.mode(offered: head.headers)
                    let pipeline = channel.pipeline.syncOperations
                    pipeline.removeHandler(requests).whenFailure { _ in }
                    try pipeline.addHandler(WebSocketLines(mode: mode, maxMessage: Limits.maxInputLine))
                    let client = Client(server: self.server, id: id, channel: channel, isTLS: true)
                    if let address = proxied.peer(of: channel, head: head), proxied.address != nil || proxied.forwarding != nil {
                        client.ip = IRCServer.text(of: address)
                    }
                    try pipeline.addHandler(client)
                }
            })
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }),
            withErrorHandling: false,
            withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: Listeners.httpLimits)
        try channel.pipeline.syncOperations.addHandler(requests)
    }

    /// The headers of the upgrade's 101 when a request to `/socket` may become IRC over WebSocket;
    /// nil leaves the request to `WebRequests`, which says why not.
    func webSocketAccepts(_ head: HTTPRequestHead) -> HTTPHeaders? {
        // At the root too: clients and test suites that are given only the host connect there.
        guard ["/socket", "/"].contains(WebRequests.path(of: head.uri)),
              WebSocketUpgrade.originAllowed(head.headers, allowed: config.webOrigins) else { return nil }
        var headers = HTTPHeaders()
        if let subprotocol = WebSocketUpgrade.mode(offered: head.headers).subprotocol {
            headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol)
        }
        return headers
    }
}
