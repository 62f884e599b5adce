import NIOCore

/// Gathers the bytes written between two flushes into one buffer, so TLS seals them as one record.
///
/// NIO's WebSocket encoder writes each frame as two buffers, its header and the line (a shared
/// broadcast buffer has no room in front for the header), and swift-nio-ssl seals every buffer it
/// is given as a record of its own: a WebSocket client that got ten lines in a loop turn cost
/// twenty records and twenty `write`s where a TCP client costs one. Sits between the TLS handler
/// and the HTTP and WebSocket encoders. Holds nothing between flushes.
final class WriteCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var pending: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapOutboundIn(data)
        if pending == nil {
            pending = bytes  // the first buffer as it is: one write alone costs no copy
        } else {
            pending!.writeImmutableBuffer(bytes)
        }
        if let promise { promises.append(promise) }
    }

    func flush(context: ChannelHandlerContext) {
        if let bytes = pending {
            pending = nil
            let waiting = promises
            promises.removeAll()
            if waiting.isEmpty {
                context.write(wrapOutboundOut(bytes), promise: nil)
            } else {
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.whenComplete { result in for p in waiting { p.completeWith(result) } }
                context.write(wrapOutboundOut(bytes), promise: written)
            }
        }
        context.flush()
    }

    /// Whatever was written and not flushed goes before the close.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if pending != nil { flush(context: context) }
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        for p in promises { p.fail(ChannelError.ioOnClosedChannel) }
        promises.removeAll()
        pending = nil
    }
}
