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
    /// The channel's core, where NIO lends out the socket, for a plaintext client (TLS bytes must
    /// pass the TLS handler). Looked up once per connection, and as the plain protocol: NIO's
    /// `withUnsafeTransportIfAvailable(of:)` casts to `any NIOTransportAccessibleChannelCore<Handle>`
    /// on every call, and that constrained cast alone was ~14k instructions (callgrind).
    typealias Socket = any NIOTransportAccessibleChannelCore

    static func socket(of channel: Channel) -> Socket? {
        channel._channelCore as? Socket  // NIO's own route to the core, public but underscored
    }

    /// Sends what the socket takes now, without waiting; returns how many bytes it took (0 when it
    /// took none: full, closed, or any error, which the channel's own write will meet and report).
    /// On the channel's event loop only; NIO's scoped access guarantees the descriptor is still the
    /// channel's own (it throws once the channel has closed it).
    static func sendNow(_ bytes: ByteBuffer, to socket: Socket) -> Int {
        sendNow(bytes, through: socket)  // opens the existential: `withUnsafeTransport` is generic
    }

    private static func sendNow<Core: NIOTransportAccessibleChannelCore>(_ bytes: ByteBuffer, through core: Core) -> Int {
        let sent = try? core.withUnsafeTransport { transport -> Int in
            guard let handle = transport as? NIOBSDSocket.Handle else { return 0 }  // a pipe, say
            return bytes.withUnsafeReadableBytes { raw in send(handle, raw.baseAddress, raw.count, noSignal) }
        }
        return max(0, sent ?? 0)
    }

    #if canImport(Darwin)
    private static let noSignal: Int32 = 0  // Darwin: NIO sets F_SETNOSIGPIPE on its sockets
    #else
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #endif
}
