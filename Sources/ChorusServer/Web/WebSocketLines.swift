import NIOCore
import NIOWebSocket

/// IRC over WebSocket (IRCv3 `websocket`): one IRC line per message, without CR LF.
///
/// Sits between NIO's frame codec and the `Client`, which reads and writes lines as on a TCP
/// connection: a message becomes a line ending in LF for the client's `LineFramer`, and each line the
/// client writes becomes a frame. Whatever breaks the protocol closes the connection with the code
/// RFC 6455 gives for it, and nothing of it reaches the client.
///
/// NIO's codec reads every frame and writes the control frames (ping, pong, close). The lines' own
/// frames are written here, all of a write into one buffer, which goes past NIO's encoder: that
/// encoder takes one `WebSocketFrame` a line and hands on two buffers for each (its header, then the
/// line: a broadcast's shared bytes have no room in front), and those per-line trips through the
/// pipeline made a saturated WebSocket delivery cost twice a TLS one (BENCHMARKS.md, "IRC over
/// WebSocket"). A server's data frame is the simplest of frames: unmasked, whole, its length in
/// one, three or nine bytes.
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
    /// NIO's frame encoder's context: what is written on it goes to the handler after the encoder
    /// (toward the socket), as the encoder's own output does.
    private var framesOut: ChannelHandlerContext?

    /// Proxies commonly drop a connection quiet for 60 seconds.
    static let keepAliveInterval = TimeAmount.seconds(30)

    init(mode: Mode, maxMessage: Int) {
        self.mode = mode
        self.maxMessage = maxMessage
    }

    func handlerAdded(context: ChannelHandlerContext) {
        framesOut = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        keepAlive = context.eventLoop.scheduleRepeatedTask(initialDelay: Self.keepAliveInterval, delay: Self.keepAliveInterval) { _ in
            let (handler, context) = loopBound.value
            handler.pingIfQuiet(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        keepAlive?.cancel()
        keepAlive = nil
        framesOut = nil
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
        // 5.2: the reserved bits stay clear unless an extension says otherwise, and none was agreed.
        guard !frame.rsv1 && !frame.rsv2 && !frame.rsv3 else {
            return fail(.protocolError, "reserved bits set, and no extension was agreed", context: context)
        }
        switch frame.opcode {
        case .ping:
            send(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData), context: context, flush: true)
        case .pong:
            break
        case .connectionClose:
            // The closing handshake: answer with the code they gave, then close; a code a client
            // may not send (7.4: 999, 1005, 1006, 1015 …) or a one-byte body is a protocol error.
            var data = frame.unmaskedData
            guard data.readableBytes != 1 else { return fail(.protocolError, context: context) }
            guard let code = data.readWebSocketErrorCode() else { return fail(.normalClosure, context: context) }
            fail(Self.mayBeSent(code) ? code : .protocolError, context: context)
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

    /// Whether an endpoint may send `code` in a close frame (RFC 6455 7.4, and IANA's registry).
    static func mayBeSent(_ code: WebSocketErrorCode) -> Bool {
        let n = UInt16(webSocketErrorCode: code)
        return (1000...1003).contains(n) || (1007...1014).contains(n) || (3000...4999).contains(n)
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
    /// broadcast's bytes, shared by every member): they go on as one buffer of frames.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !closed, let framesOut else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        let lines = unwrapOutboundIn(data)
        wroteSinceCheck = true
        guard lines.readableBytes > 0 else {
            promise?.succeed(())
            return
        }
        // A frame's header is at most four bytes for a line under 64 KiB, and each line's CR LF goes.
        var frames = context.channel.allocator.buffer(capacity: lines.readableBytes + lines.readableBytes / 32 + 8)
        Self.appendFrames(of: lines, opcode: mode == .binary ? .binary : .text, to: &frames)
        framesOut.write(NIOAny(frames), promise: promise)
    }

    /// Appends one frame for each line of `lines` (ending in LF or CR LF, the last perhaps in
    /// neither), without its line ending.
    static func appendFrames(of lines: ByteBuffer, opcode: WebSocketOpcode, to frames: inout ByteBuffer) {
        let firstByte = 0x80 | UInt8(webSocketOpcode: opcode)  // FIN: each line is a whole message
        lines.withUnsafeReadableBytes { bytes in
            var start = 0
            while start < bytes.count {
                let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
                var end = newline ?? bytes.count
                if end > start && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                appendFrameHeader(firstByte, length: end - start, to: &frames)
                frames.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = newline.map { $0 + 1 } ?? bytes.count
            }
        }
    }

    /// RFC 6455 5.2, for a server: no mask; a length under 126 in the second byte, else 126 and
    /// 16 bits, else 127 and 64 bits.
    private static func appendFrameHeader(_ firstByte: UInt8, length: Int, to frames: inout ByteBuffer) {
        switch length {
        case ..<126: frames.writeMultipleIntegers(firstByte, UInt8(length))
        case ...0xFFFF: frames.writeMultipleIntegers(firstByte, UInt8(126), UInt16(length))
        default: frames.writeMultipleIntegers(firstByte, UInt8(127), UInt64(length))
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
