import ChorusIRC
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// The HTTPS listener's connections: TLS, then HTTP/1.1 (NIO's codec) with one upgrade, to IRC over
/// WebSocket at `/socket`. A connection that upgrades becomes a `Client` like any other, behind
/// `WebSocketLines`; the others are served by `WebRequests`.
extension IRCServer {
    /// Limits on what an HTTP client may send before it is answered (431 past them).
    static let httpLimits: NIOHTTPDecoderLimitConfiguration = {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 8 * 1024
        limits.maxHeaderListSize = 16 * 1024
        limits.maxHeaderFieldCount = 64
        return limits
    }()

    /// `isTLS` false: plain HTTP, for a reverse proxy that ends TLS in front (`web-plain`).
    func webBootstrap(isTLS: Bool) -> ServerBootstrap {
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
            try options.setOption(ChannelOptions.recvAllocator, value: IRCServer.tlsReadSizes)
            try options.setOption(ChannelOptions.allocator, value: TLSBuffers.allocator)
            try TLSBuffers.noting(owner: id) {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
            }
        } else {
            try options.setOption(ChannelOptions.recvAllocator, value: IRCServer.readSizes)
        }
        try channel.pipeline.syncOperations.addHandler(WriteCoalescer(limit: config.sendQueueBytes))
        let requests = WebRequests(server: self, proxied: proxied)
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
                    let client = Client(server: self, id: id, channel: channel, isTLS: true)
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
            withDecoderLimitConfiguration: IRCServer.httpLimits)
        try channel.pipeline.syncOperations.addHandler(requests)
    }

    /// Counts a web connection for `address` (at its first request), unless the address has
    /// `max-connections-per-ip` already, IRC and web together.
    func admitWebConnection(_ address: String) -> Bool {
        let limit = config.maxConnectionsPerIP
        let open = webConnectionsPerIP[address, default: 0]
        if limit > 0, open + registry.connections(fromIP: address) >= limit { return false }
        webConnectionsPerIP[address] = open + 1
        return true
    }

    func releaseWebConnection(_ address: String) {
        let open = webConnectionsPerIP[address, default: 1] - 1
        webConnectionsPerIP[address] = open > 0 ? open : nil
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

/// What the WebSocket upgrade decides from the request's headers.
enum WebSocketUpgrade {
    /// The first subprotocol the client names that the server speaks, in the client's order of
    /// preference (IRCv3 `websocket`); `.unnamed` when it names none of them.
    static func mode(offered headers: HTTPHeaders) -> WebSocketLines.Mode {
        let offered = headers[canonicalForm: "Sec-WebSocket-Protocol"].map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for name in offered {
            switch name {
            case "text.ircv3.net": return .text
            case "binary.ircv3.net": return .binary
            default: continue
            }
        }
        return .unnamed
    }

    /// A browser names the page that opens a socket (`Origin`): a page of this server, or of an origin
    /// the operator listed, may; a page elsewhere may not use a visitor's browser to reach the
    /// server. Programs that are not browsers send no `Origin` and may.
    static func originAllowed(_ headers: HTTPHeaders, allowed: [String]) -> Bool {
        guard let origin = headers.first(name: "Origin")?.lowercased() else { return true }
        if allowed.contains("*") { return true }
        // A page of the same host over HTTPS: the web client itself. Safe against DNS rebinding
        // (a hostile name pointed at this server): the browser would have had to accept this
        // server's certificate for that name, and a plain-HTTP page's origin is `http://`.
        if let host = headers.first(name: "Host")?.lowercased(), origin == "https://\(host)" { return true }
        return allowed.contains { $0.lowercased().trimmingSuffix("/") == origin }
    }
}

extension WebSocketUpgrade {
    /// Why a request to `/socket` was not upgraded, in the status RFC 6455 gives for it.
    static func refusal(of request: HTTPRequestHead, allowed origins: [String]) -> WebResponse {
        let upgrade = request.headers[canonicalForm: "Upgrade"].contains { $0.lowercased() == "websocket" }
        guard upgrade else {
            var response = WebResponse.text(.upgradeRequired, "This address speaks IRC over WebSocket (wss://…/socket).")
            response.headers.add(name: "Upgrade", value: "websocket")
            return response
        }
        guard originAllowed(request.headers, allowed: origins) else {
            return .text(.forbidden, "Pages from \(request.headers.first(name: "Origin") ?? "?") may not connect here.", closes: true)
        }
        guard request.headers.first(name: "Sec-WebSocket-Version") == "13" else {
            var response = WebResponse.text(.upgradeRequired, "Only WebSocket version 13 is spoken here.", closes: true)
            response.headers.add(name: "Sec-WebSocket-Version", value: "13")
            return response
        }
        return .text(.badRequest, "A WebSocket handshake needs a GET with Connection: Upgrade and a Sec-WebSocket-Key.", closes: true)
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

