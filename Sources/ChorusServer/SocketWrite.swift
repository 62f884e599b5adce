#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// Output to a plaintext client straight onto its socket when nothing of it waits in the channel.
///
/// At a light load every delivery is its own write, and NIO's channel write (pipeline, pending-writes
/// bookkeeping, flush, four `isOpen` checks) was 3k of the 6.9k instructions a delivery cost
/// (callgrind, light fan-out). Whatever the socket does not take at once (it is full, or failed)
/// goes to the channel as before, and so does everything after it until the channel has written it
/// all: bytes never overtake each other, and the channel still sees a client that stops reading
/// (its send queue fills, `channelWritabilityChanged`) or a broken connection (its write fails).
enum SocketWrite {
    /// The descriptor of a plaintext client's socket (TLS bytes must pass the TLS handler), read once
    /// when the connection starts, through NIO's scoped access to it.
    ///
    /// Kept past that scope, on purpose: borrowing it per send cost ~300 instructions and three cache
    /// misses a delivery (the channel, its socket object, a dynamic cast; callgrind and perf, light
    /// fan-out). It stays valid while the client is not `closing`: NIO closes a descriptor on the
    /// server's loop and fires `channelInactive` (which sets `closing`) in the same call, and output
    /// is sent only from that loop (`IRCServer.flushPending`), so no send can fall between the two.
    static func descriptor(of channel: Channel) -> CInt? {
        // NIO's own route to the core, public but underscored; `withUnsafeTransportIfAvailable`
        // would cast to the constrained existential, ~14k instructions.
        guard let core = channel._channelCore as? any NIOTransportAccessibleChannelCore else { return nil }
        return descriptor(of: core)
    }

    private static func descriptor<Core: NIOTransportAccessibleChannelCore>(of core: Core) -> CInt? {
        try? core.withUnsafeTransport { $0 as? NIOBSDSocket.Handle }  // nil for a pipe, say
    }

    /// Sends what the socket takes now, without waiting; returns how many bytes it took (0 when it
    /// took none: full, closed, or any error, which the channel's own write will meet and report).
    static func sendNow(_ bytes: ByteBuffer, to descriptor: CInt) -> Int {
        let sent = bytes.withUnsafeReadableBytes { send(descriptor, $0.baseAddress, $0.count, noSignal) }
        return max(0, sent)
    }

    /// `send`'s flag against SIGPIPE. Darwin has none: a socket sets SO_NOSIGPIPE (NIO sets
    /// F_SETNOSIGPIPE on its sockets).
    #if canImport(Darwin)
    static let noSignal: Int32 = 0
    #else
    static let noSignal = Int32(MSG_NOSIGNAL)
    #endif
}
