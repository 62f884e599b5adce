import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket

/// How a generator connection reaches the server.
enum Transport {
    case plain
    case tls(NIOSSLContext)
    /// IRC over WebSocket (`text.ircv3.net`) at `/socket`: over TLS what a browser does; without
    /// (nil) what a TLS-ending proxy in front of `web-plain` does.
    case webSocket(NIOSSLContext?)

    var tlsContext: NIOSSLContext? {
        switch self {
        case .plain: nil
        case .tls(let context): context
        case .webSocket(let context): context
        }
    }
}

/// A WebSocket client's lines as the rest of the generator reads and writes them: each text
/// message in becomes a line ending in LF; each line written out (they end in CR LF) becomes a
/// masked text frame, as a browser sends.
final class WebSocketLineFraming: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            var line = frame.unmaskedData
            line.writeInteger(UInt8(ascii: "\n"))
            context.fireChannelRead(wrapInboundOut(line))
        case .ping:
            var pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            pong.maskKey = .random()
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var bytes = unwrapOutboundIn(data)
        while let newline = bytes.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            var length = newline - bytes.readerIndex
            if length > 0 && bytes.readableBytesView[newline - 1] == UInt8(ascii: "\r") { length -= 1 }
            var frame = WebSocketFrame(fin: true, opcode: .text, data: bytes.getSlice(at: bytes.readerIndex, length: length)!)
            frame.maskKey = .random()
            context.write(wrapOutboundOut(frame), promise: nil)
            bytes.moveReaderIndex(to: newline + 1)
        }
        promise?.succeed(())
    }
}

extension BenchConnection {
    /// Adds the HTTP upgrade to `/socket` to a new channel; `upgraded` completes once `handler`
    /// reads frames as lines.
    static func addWebSocketUpgrade(to channel: Channel, port: Int, handler: BenchConnection,
                                    upgraded: EventLoopPromise<Void>) throws {
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 20) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(WebSocketLineFraming())
                try channel.pipeline.syncOperations.addHandler(handler)
                upgraded.succeed(())
            }
        }
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
    }

    static func requestUpgrade(on channel: Channel, port: Int) {
        let headers = HTTPHeaders([("Host", "127.0.0.1:\(port)"), ("Sec-WebSocket-Protocol", "text.ircv3.net"), ("Content-Length", "0")])
        channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/socket", headers: headers)),
                      promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }
}
