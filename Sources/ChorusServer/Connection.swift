import NIOCore

/// Splits the byte stream into lines at LF (a CR before it is dropped). A line longer than the limit
/// is reported once as `.tooLong` and skipped, so the framer never holds more than one line's limit.
struct LineFramer: ByteToMessageDecoder {
    typealias InboundOut = Client.Inbound
    let maxLineLength: Int
    private var discarding = false

    init(maxLineLength: Int) {
        self.maxLineLength = maxLineLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maxLineLength {
                if !discarding {
                    discarding = true
                    context.fireChannelRead(wrapInboundOut(.tooLong))
                }
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            }
            return .needMoreData
        }
        var length = newline - view.startIndex
        if discarding || length > maxLineLength {
            buffer.moveReaderIndex(forwardBy: length + 1)
            if !discarding { context.fireChannelRead(wrapInboundOut(.tooLong)) }
            discarding = false
            return .continue
        }
        if length > 0 && view[newline - 1] == UInt8(ascii: "\r") { length -= 1 }
        // Invalid UTF-8 becomes U+FFFD rather than an error: one bad byte should not cost a line.
        let text = String(decoding: view[view.startIndex..<(view.startIndex + length)], as: UTF8.self)
        buffer.moveReaderIndex(forwardBy: newline - view.startIndex + 1)
        context.fireChannelRead(wrapInboundOut(.line(text)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Connects one channel to the server: lines in, lifecycle events, back-pressure.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = Client.Inbound

    private let server: IRCServer
    private let isTLS: Bool
    private var client: Client?

    init(server: IRCServer, isTLS: Bool) {
        self.server = server
        self.isTLS = isTLS
    }

    func channelActive(context: ChannelHandlerContext) {
        client = server.accept(context.channel, isTLS: isTLS)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let client else { return }
        server.receive(client, unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let client {
            server.connectionClosed(client, reason: client.quitReason ?? "Connection closed")
        }
        client = nil
        context.fireChannelInactive()
    }

    /// The send queue passed its limit: the client is not reading.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !context.channel.isWritable, let client {
            server.disconnect(client, reason: "SendQ exceeded")
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A failed TLS handshake or a reset: nothing to tell the client, the connection is over.
        server.logger.debug("connection error", metadata: ["peer": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")",
                                                           "error": "\(error)"])
        context.close(promise: nil)
    }
}
