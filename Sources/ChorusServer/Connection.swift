import ChorusIRC
import Foundation
import NIOCore
import NIOTLS

/// Splits the byte stream into lines at LF (a CR before it is dropped). A line longer than the limit
/// is reported once as `.tooLong` and skipped, so the framer never holds more than one line's limit.
///
/// A plain value the connection handler owns, rather than a `ByteToMessageHandler` of its own in
/// the pipeline: one handler and context less per connection (idle memory is per connection).
struct LineFramer {
    /// The start of a line whose end has not arrived yet: a small copy, never the read buffer.
    private var partial: ByteBuffer?
    private var discarding = false
    /// 32 bits, next to the flag: the framer is part of every connection's memory.
    private let limit: UInt32

    var maxLineLength: Int { Int(limit) }

    init(maxLineLength: Int) {
        limit = UInt32(clamping: maxLineLength)
    }

    /// Feeds bytes as they are read; `emit` gets each complete line (or `.tooLong`), in order.
    mutating func feed(_ bytes: ByteBuffer, allocator: ByteBufferAllocator, _ emit: (Client.Inbound) -> Void) {
        var buffer = bytes
        if var kept = partial {
            kept.writeImmutableBuffer(bytes)
            buffer = kept
            partial = nil
        }
        while let line = next(&buffer) { emit(line) }
        if buffer.readableBytes > 0 {
            var copy = allocator.buffer(capacity: buffer.readableBytes)
            copy.writeBuffer(&buffer)
            partial = copy
        }
    }

    private mutating func next(_ buffer: inout ByteBuffer) -> Client.Inbound? {
        while true {
            let view = buffer.readableBytesView
            guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
                if buffer.readableBytes > maxLineLength {
                    buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                    if !discarding {
                        discarding = true
                        return .tooLong
                    }
                }
                return nil
            }
            var length = newline - view.startIndex
            if discarding || length > maxLineLength {
                buffer.moveReaderIndex(forwardBy: length + 1)
                let report = !discarding
                discarding = false
                if report { return .tooLong }
                continue
            }
            if length > 0 && view[newline - 1] == UInt8(ascii: "\r") { length -= 1 }
            let bytes = view[view.startIndex..<(view.startIndex + length)]
            let text = String(decoding: bytes, as: UTF8.self)
            buffer.moveReaderIndex(forwardBy: newline - view.startIndex + 1)
            // Decoding repairs invalid UTF-8 with U+FFFD, which changes the length or leaves an
            // EF byte; only then is the line checked again, exactly (a client may send U+FFFD).
            if text.utf8.count != length || (Self.containsEF(text) && String(validating: bytes, as: UTF8.self) == nil) {
                return .notUTF8(text)
            }
            return .line(text)
        }
    }

    /// Whether a line holds the byte U+FFFD starts with: `memchr` over the string's own bytes, where
    /// `utf8.contains` stepped through them one index at a time (~9 instructions a byte, callgrind).
    private static func containsEF(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let start = bytes.baseAddress else { return false }
            return memchr(start, 0xEF, bytes.count) != nil
        }
    }
}

/// The connection's channel events: lines in, lifecycle, back-pressure. `Client` is the last
/// handler of its channel's pipeline itself, rather than a handler object holding it: an object
/// and a pointer chase less per connection.
extension Client: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    func handlerAdded(context: ChannelHandlerContext) {
        output = context
        // A WebSocket connection is active before its client is added, at the end of the upgrade.
        if context.channel.isActive { begin() }
    }

    func channelActive(context: ChannelHandlerContext) {
        begin()
        context.fireChannelActive()
    }

    private func begin() {
        // A connection the server turns away (too many from its address) reads nothing more.
        if !server.accept(self) { closing = true }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let bytes = unwrapInboundIn(data)
        // A TLS handshake (a record of type 22, version 3.x) on the plaintext port: say so and close,
        // rather than answer its bytes as lines and wait for the registration timeout.
        if !isTLS, !registered, bytes.readableBytes >= 2, bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) == 0x16,
           bytes.getInteger(at: bytes.readerIndex + 1, as: UInt8.self) == 0x03 {
            let tls = server.tlsAddress?.port.map { "port \($0)" } ?? "the TLS port"
            return server.disconnect(self, reason: "This port is plaintext: connect with TLS to \(tls)")
        }
        framer.feed(bytes, allocator: context.channel.allocator) { server.receive(self, $0) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        server.connectionClosed(self, reason: quitReason ?? "Connection closed")
        closing = true
        context.fireChannelInactive()
    }

    /// The send queue passed its limit: the client is not reading.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !context.channel.isWritable {
            server.metrics.sendQueueDrops.increment()
            server.disconnect(self, reason: "SendQ exceeded")
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { server.metrics.ircHandshakes.increment() }
        // What waits for a WebSocket client in front of its socket passed the same limit.
        if event is WriteCoalescer.SendQueueFull {
            server.metrics.sendQueueDrops.increment()
            server.disconnect(self, reason: "SendQ exceeded")
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A failed TLS handshake or a reset: nothing to tell the client, the connection is over.
        server.logger.debug("connection error", metadata: ["peer": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")",
                                                           "error": "\(error)"])
        context.close(promise: nil)
    }
}
