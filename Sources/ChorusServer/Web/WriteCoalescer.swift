import NIOCore

/// Gathers the bytes written between two flushes into one buffer, so TLS seals them as one record,
/// and while a write is still on its way to the socket, gathers everything after it too.
///
/// swift-nio-ssl seals every buffer it is given as a record of its own. `WebSocketLines` writes a
/// flush's lines as one buffer, but control frames (a pong, a close) come through NIO's encoder as
/// two. And a reader that lags behind gets one small record per loop turn queued behind its full
/// socket, each holding a page of TLS buffer for a few hundred bytes: 2.2 MiB per stalled client
/// against a 256 KiB send queue. With one write in flight at a time, what waits is one buffer here,
/// dense, and it is counted against the same limit (`SendQueueFull`).
///
/// Sits between the TLS handler and the HTTP and WebSocket encoders. Holds nothing between flushes
/// when the socket keeps up.
final class WriteCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Told to the handlers after this one (the `Client`) when what waits here passes the limit.
    struct SendQueueFull {}

    private var pending: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []
    /// A write handed on whose bytes the socket has not taken yet.
    private var inFlight = false
    private var told = false
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapOutboundIn(data)
        if pending == nil {
            pending = bytes  // the first buffer as it is: one write alone costs no copy
        } else {
            pending!.writeImmutableBuffer(bytes)
        }
        if let promise { promises.append(promise) }
        if !told, pending!.readableBytes > limit {
            told = true
            context.fireUserInboundEventTriggered(SendQueueFull())
        }
    }

    func flush(context: ChannelHandlerContext) {
        guard !inFlight else { return }  // goes with the next write, once this one is taken
        writeOut(context: context)
    }

    private func writeOut(context: ChannelHandlerContext) {
        guard let bytes = pending else { return context.flush() }
        pending = nil
        let waiting = promises
        promises.removeAll()
        inFlight = true
        let written = context.eventLoop.makePromise(of: Void.self)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        written.futureResult.whenComplete { result in
            for p in waiting { p.completeWith(result) }
            let (coalescer, context) = loopBound.value
            coalescer.inFlight = false
            guard case .success = result else { return }
            coalescer.writeOut(context: context)
        }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: written)
    }

    /// Whatever waits goes before the close.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if let bytes = pending {
            pending = nil
            let waiting = promises
            promises.removeAll()
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenComplete { result in for p in waiting { p.completeWith(result) } }
            context.writeAndFlush(wrapOutboundOut(bytes), promise: written)
        }
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        for p in promises { p.fail(ChannelError.ioOnClosedChannel) }
        promises.removeAll()
        pending = nil
    }
}
