#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore

/// Connections the server could not take: an `accept` that failed (out of descriptors or memory)
/// or a connection whose set-up failed. The client of such a connection sees only a reset or
/// nothing, so the operator is told why, at most once a second.
///
/// Out of descriptors, SwiftNIO neither takes the waiting connection nor stops watching the
/// listening socket, which stays readable: its loop retried `accept` ~430,000 times a second, at
/// full CPU, for as long as the limit held, and the waiting clients hung. As libuv does, one
/// descriptor is kept in reserve; on EMFILE or ENFILE it is given up to accept the waiting
/// connections, each told the server is full (plaintext listeners; a TLS client expects a
/// handshake, not a line) and closed at once, and then taken back.
/// Used on the server's loop only (both listeners run on it).
final class AcceptFailures {
    private let logger: Logger
    private var reserve: CInt
    private var lastLogged: NIODeadline?
    private var unlogged = 0
    /// Counted for the log and the tests.
    private(set) var failed = 0
    private(set) var turnedAway = 0

    /// Waiting connections turned away per failure; more wait for the next readiness.
    static let turnAwayBatch = 256
    static let fullLine = Array("ERROR :Closing link: the server is full, try again later\r\n".utf8)

    init(logger: Logger) {
        self.logger = logger
        self.reserve = AcceptFailures.openReserve()
    }

    deinit {
        if reserve >= 0 { close(reserve) }
    }

    /// `isTLS`: the listener's clients expect a TLS handshake, so they get no plaintext line, only the close.
    func caught(_ error: Error, on listener: Channel, isTLS: Bool) {
        failed += 1
        var turned = 0
        if let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE,
           let descriptor = SocketWrite.descriptor(of: listener) {
            turned = turnAway(from: descriptor, saying: !isTLS)
        }
        log(error, listener: listener, turned: turned)
    }

    /// Accepts and closes what waits on the listening socket, with the reserve descriptor free.
    private func turnAway(from listener: CInt, saying: Bool) -> Int {
        if reserve >= 0 {
            close(reserve)
            reserve = -1
        }
        defer { reserve = AcceptFailures.openReserve() }
        var turned = 0
        while turned < AcceptFailures.turnAwayBatch {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { break }  // EAGAIN: none left; EMFILE: the reserve went elsewhere
            if saying {
                #if canImport(Darwin)
                var one: Int32 = 1
                setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
                #endif
                // A fresh socket's buffer takes a line; if not, the client still sees the close.
                _ = AcceptFailures.fullLine.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | SocketWrite.noSignal) }
            }
            close(connection)
            turned += 1
        }
        turnedAway += turned
        return turned
    }

    private func log(_ error: Error, listener: Channel, turned: Int) {
        let now = NIODeadline.now()
        if let last = lastLogged, now - last < .seconds(1) {
            unlogged += 1
            return
        }
        logger.error("could not take a connection", metadata: [
            "listener": "\(listener.localAddress.map { "\($0)" } ?? "?")",
            "error": "\(error)",
            "turned-away": "\(turned)",
            "more-failures-since-last-report": "\(unlogged)",
        ])
        lastLogged = now
        unlogged = 0
    }

    private static func openReserve() -> CInt {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}

/// The last handler of a listening channel: what reaches it is a connection NIO could not accept
/// or set up (`AcceptFailures`).
final class ListenerHandler: ChannelInboundHandler {
    typealias InboundIn = Channel

    private let failures: AcceptFailures
    private let isTLS: Bool

    init(failures: AcceptFailures, isTLS: Bool) {
        self.failures = failures
        self.isTLS = isTLS
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        failures.caught(error, on: context.channel, isTLS: isTLS)
    }
}
