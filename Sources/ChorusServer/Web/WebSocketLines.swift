import NIOCore
import NIOWebSocket

/// IRC over WebSocket (IRCv3 `websocket`): one IRC line per message, without CR LF.
///
/// Sits between NIO's frame codec and the `Client`, which reads and writes lines as on a TCP
/// connection: a message becomes a line ending in LF for the client's `LineFramer`, and each line the
/// client writes becomes a frame. Whatever breaks the protocol closes the connection with the code
/// RFC 6455 gives for it, and nothing of it reaches the client.
final class WebSocketLines: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    /// How the connection's messages are sent, as its subprotocol says.
    enum Mode: Equatable {
        /// `text.ircv3.net`: text messages both ways.
        case text
        /// `binary.ircv3.net`: binary messages both ways.
        case binary
        /// No subprotocol named (older clients): text messages out, either kind in.
        case unnamed

        var subprotocol: String? {
            switch self {
            case .text: "text.ircv3.net"
            case .binary: "binary.ircv3.net"
            case .unnamed: nil
            }
        }
    }

    private let mode: Mode
    private let maxMessage: Int
    /// The fragments of a message still arriving, and its kind.
    private var message: ByteBuffer?
    private var messageOpcode = WebSocketOpcode.text
    /// Set once a close frame went out: nothing more is sent, nothing more is read.
    private var closed = false
    /// Output since the last keep-alive check: an idle connection gets a ping frame instead.
    private var wroteSinceCheck = false
    private var keepAlive: RepeatedTask?

    /// Proxies commonly drop a connection quiet for 60 seconds.
    static let keepAliveInterval = TimeAmount.seconds(30)

    init(mode: Mode, maxMessage: Int) {
        self.mode = mode
        self.maxMessage = maxMessage
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        keepAlive = context.eventLoop.scheduleRepeatedTask(initialDelay: Self.keepAliveInterval, delay: Self.keepAliveInterval) { _ in
            let (handler, context) = loopBound.value
            handler.pingIfQuiet(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        keepAlive?.cancel()
        keepAlive = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        keepAlive?.cancel()
        keepAlive = nil
        context.fireChannelInactive()
    }

    // MARK: In

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closed else { return }
        let frame = unwrapInboundIn(data)
        // RFC 6455 5.1: a server closes the connection on a frame a client did not mask.
        guard frame.maskKey != nil else { return fail(.protocolError, "client frames must be masked", context: context) }
        switch frame.opcode {
        case .ping:
            send(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData), context: context, flush: true)
        case .pong:
            break
        case .connectionClose:
            // The closing handshake: answer with the code they gave, then close.
            var data = frame.unmaskedData
            fail(data.readWebSocketErrorCode() ?? .normalClosure, context: context)
        case .text, .binary:
            guard message == nil else { return fail(.protocolError, "a new message began before the last one ended", context: context) }
            messageOpcode = frame.opcode
            append(frame, context: context)
        case .continuation:
            guard message != nil else { return fail(.protocolError, "a continuation frame without a message", context: context) }
            append(frame, context: context)
        default:
            fail(.protocolError, "unknown opcode", context: context)
        }
    }

    private func append(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        var data = frame.unmaskedData
        if message == nil {
            message = data
        } else {
            message!.writeBuffer(&data)
        }
        guard message!.readableBytes <= maxMessage else {
            message = nil
            return fail(.messageTooLarge, "an IRC line is at most \(maxMessage) bytes", context: context)
        }
        guard frame.fin, var line = message else { return }
        message = nil
        // Older clients end their messages with CR LF, as on TCP: one such ending is forgiven.
        if line.readableBytesView.last == UInt8(ascii: "\n") { line.moveWriterIndex(to: line.writerIndex - 1) }
        if line.readableBytesView.last == UInt8(ascii: "\r") { line.moveWriterIndex(to: line.writerIndex - 1) }
        if line.readableBytesView.contains(where: { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) {
            return fail(.policyViolation, "one IRC line per message, without CR or LF", context: context)
        }
        if messageOpcode == .text && String(validating: line.readableBytesView, as: UTF8.self) == nil {
            return fail(.dataInconsistentWithMessage, "a text message must be UTF-8", context: context)
        }
        guard line.readableBytes > 0 else { return }
        line.writeInteger(UInt8(ascii: "\n"))
        context.fireChannelRead(wrapInboundOut(line))
    }

    // MARK: Out

    /// The client writes whole lines, each ending in CR LF, one or many to a buffer (often a
    /// broadcast's bytes, shared by every member).
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !closed else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        var bytes = unwrapOutboundIn(data)
        let opcode: WebSocketOpcode = mode == .binary ? .binary : .text
        wroteSinceCheck = true
        guard bytes.readableBytes > 0 else {
            promise?.succeed(())
            return
        }
        while bytes.readableBytes > 0 {
            let newline = bytes.readableBytesView.firstIndex(of: UInt8(ascii: "\n"))
            var length = (newline ?? bytes.writerIndex) - bytes.readerIndex
            let end = newline == nil ? length : length + 1
            if length > 0 && bytes.getInteger(at: bytes.readerIndex + length - 1, as: UInt8.self) == UInt8(ascii: "\r") { length -= 1 }
            let frame = WebSocketFrame(fin: true, opcode: opcode, data: bytes.getSlice(at: bytes.readerIndex, length: length)!)
            bytes.moveReaderIndex(forwardBy: end)
            // The write's promise goes with its last frame.
            context.write(wrapOutboundOut(frame), promise: bytes.readableBytes == 0 ? promise : nil)
        }
    }

    /// The server closes the connection (after its `ERROR` line): a close frame goes first.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all && !closed && context.channel.isActive {
            closed = true
            var data = context.channel.allocator.buffer(capacity: 2)
            data.write(webSocketErrorCode: .normalClosure)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: nil)
        }
        context.close(mode: mode, promise: promise)
    }

    private func pingIfQuiet(context: ChannelHandlerContext) {
        defer { wroteSinceCheck = false }
        guard !wroteSinceCheck, !closed, context.channel.isActive else { return }
        send(WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(capacity: 0)), context: context, flush: true)
    }

    private func send(_ frame: WebSocketFrame, context: ChannelHandlerContext, flush: Bool) {
        context.write(wrapOutboundOut(frame), promise: nil)
        if flush { context.flush() }
    }

    /// Closes with `code` and a reason the other side may show; the rest of what it sent is dropped.
    private func fail(_ code: WebSocketErrorCode, _ reason: String = "", context: ChannelHandlerContext) {
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        closed = true
        message = nil
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
            .whenComplete { _ in context.close(promise: nil) }
    }
}
