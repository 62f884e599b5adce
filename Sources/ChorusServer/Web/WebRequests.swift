import ChorusCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOTLS
import NIOWebSocket

/// A response of the web side: status, headers, body.
struct WebResponse {
    var status: HTTPResponseStatus
    var headers = HTTPHeaders()
    var body: ByteBuffer?
    /// The connection closes after this response (a refusal of what the client sent).
    var closes = false

    static func text(_ status: HTTPResponseStatus, _ text: String, closes: Bool = false) -> WebResponse {
        var response = WebResponse(status: status, body: ByteBuffer(string: text + "\n"), closes: closes)
        response.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        return response
    }

    /// This response, and then the connection closes.
    func closing() -> WebResponse {
        var response = self
        response.closes = true
        return response
    }
}

/// The web side's plain HTTP requests (those that do not become a WebSocket): the web client's
/// files, health, the JSON API, and the refusals of what no route takes. One request at a time
/// per connection (NIO's pipelining helper holds the next).
///
/// What a connection may make the server hold is bounded as an IRC client's send queue is: the
/// next request is not answered, nor more of the connection read, until the socket has taken the
/// last response. A client that pipelines requests and never reads gets one response queued (and
/// what the kernel takes), and is closed when it stays so past `idleTimeout`. A connection that
/// never becomes a WebSocket counts towards its address's connections, as an IRC one does.
final class WebRequests: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A request's target past this length is refused (414); no route has a longer one.
    static let maxTarget = 2048
    /// Only the API reads a body (a command); one longer than this is refused (413) rather than drained.
    static let maxBody = 16 * 1024
    /// A photo's upload: the picture, and a form's headers around it.
    static let photoPath = "/api/v1/photos"
    static let maxPhotoBody = Photo.maxBytes + 16 * 1024

    /// A photo's upload without the shape of a token, or saying it is larger than may be sent, is
    /// answered at once: its megabytes are never read.
    static func refusedBeforeItsBody(_ request: HTTPRequestHead) -> APIError? {
        guard maxBody(for: request) > maxBody else { return nil }
        let authorization = request.headers.first(name: "Authorization")?.lowercased() ?? ""
        guard authorization.hasPrefix("bearer " + AccountToken.prefix) else {
            return .unauthorized("Send a token: Authorization: Bearer chorus-… (!token new makes one).")
        }
        if let length = request.headers.first(name: "Content-Length").flatMap(Int.init), length > maxBody(for: request) {
            return APIError(.payloadTooLarge, "INVALID_PARAMS", "A photo is at most \(Photo.maxBytes / 1024 / 1024) MiB.")
        }
        return nil
    }

    /// The largest body the request's address reads.
    static func maxBody(for request: HTTPRequestHead) -> Int {
        request.method == .POST && path(of: request.uri) == photoPath ? maxPhotoBody : maxBody
    }
    /// A connection that sends no whole request for this long is closed.
    static let idleTimeout = TimeAmount.seconds(30)

    private let server: IRCServer
    private let proxied: ProxiedAddress
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var bodyBytes = 0
    private var idle: Scheduled<Void>?
    /// The last response is not yet all in the socket: reads wait, and so does a request that came.
    private var sending = false
    private var readWaiting = false
    private var requestWaiting: (head: HTTPRequestHead, body: ByteBuffer?)?
    /// The address this connection counts for (`IRCServer.admitWebConnection`), once its first request came.
    private var countedFor: String?

    init(server: IRCServer, proxied: ProxiedAddress) {
        self.server = server
        self.proxied = proxied
    }

    func handlerAdded(context: ChannelHandlerContext) {
        armIdleTimer(context: context)
        // Counted at once by the connection's own address; one from a proxy that sends a PROXY
        // header is counted at its first request, by the address the header gave.
        if !proxied.expected, proxied.forwarding == nil, let peer = context.channel.remoteAddress {
            let address = IRCServer.text(of: peer)
            guard server.admitWebConnection(address) else { return context.close(promise: nil) }
            countedFor = address
        }
    }

    /// On close, or on the upgrade to a WebSocket (whose `Client` is counted from then on).
    func handlerRemoved(context: ChannelHandlerContext) {
        idle?.cancel()
        if let address = countedFor { server.releaseWebConnection(address) }
        countedFor = nil
    }

    func read(context: ChannelHandlerContext) {
        if sending { readWaiting = true } else { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { server.metrics.webHandshakes.increment() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
            body = nil
            bodyBytes = 0
            server.metrics.webRequests.increment()
            if countedFor == nil, proxied.expected, let address = proxied.address {
                guard server.admitWebConnection(address) else {
                    head = nil
                    return respond(.text(.serviceUnavailable, "Too many connections from \(address).", closes: true),
                                   keepAlive: false, context: context)
                }
                countedFor = address
            }
            if request.uri.utf8.count > Self.maxTarget {
                head = nil
                respond(.text(.uriTooLong, "That address is too long.", closes: true), keepAlive: false, context: context)
            } else if let refusal = Self.refusedBeforeItsBody(request) {
                // A large body is read only for someone who may send it.
                head = nil
                respond(server.web.api.errorResponse(refusal).closing(), keepAlive: false, context: context)
            }
        case .body(let part):
            guard head != nil else { return }
            var part = part
            bodyBytes += part.readableBytes
            if let request = head, bodyBytes > Self.maxBody(for: request) {
                head = nil
                body = nil
                respond(.text(.payloadTooLarge, "A body here is at most \(Self.maxBody(for: request) / 1024) KiB.", closes: true),
                        keepAlive: false, context: context)
            } else if body == nil {
                body = part
            } else {
                body!.writeBuffer(&part)
            }
        case .end:
            guard let request = head else { return }
            head = nil
            let received = body
            body = nil
            if sending { requestWaiting = (request, received) } else { answer(request, body: received, context: context) }
        }
    }

    /// NIO's HTTP decoder could not read the request: say so (431 for headers past the limits, 400
    /// for the rest) and close, as the decoder stops reading after an error. A WebSocket handshake
    /// NIO's upgrader could not take is only reported here: the request follows, and is refused
    /// (`WebSocketUpgrade.refusal`).
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if error is NIOWebSocketUpgradeError { return }
        guard let error = error as? HTTPParserError else {
            context.close(promise: nil)
            return
        }
        let response: WebResponse = error == .headerOverflow
            ? .text(.requestHeaderFieldsTooLarge, "The request's headers are too large.", closes: true)
            : .text(.badRequest, "That is not an HTTP/1.1 request this server can read.", closes: true)
        respond(response, keepAlive: false, context: context)
    }

    private func answer(_ request: HTTPRequestHead, body: ByteBuffer?, context: ChannelHandlerContext) {
        let keepAlive = request.isKeepAlive
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        server.web.respond(to: request, body: body, from: proxied.peer(of: context.channel, head: request)).whenComplete { result in
            let (handler, context) = loopBound.value
            let response = (try? result.get()) ?? .text(.internalServerError, "Something went wrong; it is logged.")
            handler.respond(response, keepAlive: keepAlive, head: request.method == .HEAD, context: context)
        }
    }

    /// Answers on the next loop turn: a request NIO's upgrade handler declines reaches this handler
    /// while that handler is leaving the pipeline, and a write made then finds no way out.
    private func respond(_ response: WebResponse, keepAlive: Bool, head: Bool = false, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = loopBound.value
            handler.write(response, keepAlive: keepAlive, head: head, context: context)
        }
    }

    private func write(_ response: WebResponse, keepAlive: Bool, head: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let keepAlive = keepAlive && !response.closes
        var headers = response.headers
        headers.replaceOrAdd(name: "Content-Length", value: "\(response.body?.readableBytes ?? 0)")
        headers.replaceOrAdd(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        for (name, value) in WebRequests.securityHeaders where !headers.contains(name: name) {
            headers.add(name: name, value: value)
        }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: response.status, headers: headers))), promise: nil)
        if let body = response.body, !head {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        let sent = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if keepAlive {
            armIdleTimer(context: context)
            sending = true
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            sent.whenSuccess {
                let (handler, context) = loopBound.value
                handler.sent(context: context)
            }
        } else {
            sent.whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// The socket took the last response: what waited goes on.
    private func sent(context: ChannelHandlerContext) {
        sending = false
        if let (request, body) = requestWaiting {
            requestWaiting = nil
            answer(request, body: body, context: context)
        }
        if readWaiting && !sending {
            readWaiting = false
            context.read()
        }
    }

    private func armIdleTimer(context: ChannelHandlerContext) {
        idle?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        idle = context.eventLoop.scheduleTask(in: Self.idleTimeout) { loopBound.value.close(promise: nil) }
    }

    /// What every response says about itself: no sniffing, no framing by other sites, no referrer
    /// (report links carry their signature in the address).
    static let securityHeaders: [(String, String)] = [
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Strict-Transport-Security", "max-age=31536000"),
    ]

    /// The path of a request target, without its query.
    static func path(of target: String) -> Substring {
        target[..<(target.firstIndex(of: "?") ?? target.endIndex)]
    }
}
