import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// What a benchmark client does with the lines it reads. Called on the client's event loop.
protocol LineSink: AnyObject {
    func received(_ line: ByteBufferView, on connection: BenchConnection)
    func closed(_ connection: BenchConnection)
}

/// One generator connection: writes are batched by the caller (write + flush), reads are split into
/// lines without parsing them as messages (the generator must not be the bottleneck).
final class BenchConnection: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    let id: Int
    weak var sink: LineSink?
    private(set) var channel: Channel?
    private var pending = ByteBuffer()
    var nick: String

    init(id: Int, nick: String, sink: LineSink) {
        self.id = id
        self.nick = nick
        self.sink = sink
    }

    /// `from`: a loopback address to connect from (127.0.0.2 …), so one machine can play many clients.
    /// Over WebSocket, the connection is ready once the upgrade is done.
    static func connect(id: Int, nick: String, port: Int, transport: Transport, group: EventLoopGroup, sink: LineSink,
                        from: String? = nil) -> EventLoopFuture<BenchConnection> {
        let handler = BenchConnection(id: id, nick: nick, sink: sink)
        let loop = group.next()
        let upgraded = loop.makePromise(of: Void.self)
        var bootstrap = ClientBootstrap(group: loop)
        if let from, let address = try? SocketAddress(ipAddress: from, port: 0) { bootstrap = bootstrap.bind(to: address) }
        return bootstrap
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 64 * 1024))
            .channelInitializer { channel in
                do {
                    if let tls = transport.tlsContext {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: nil))
                    }
                    if case .webSocket = transport {
                        try addWebSocketUpgrade(to: channel, port: port, handler: handler, upgraded: upgraded)
                    } else {
                        try channel.pipeline.syncOperations.addHandler(handler)
                        upgraded.succeed(())
                    }
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .flatMap { channel in
                handler.channel = channel
                if case .webSocket = transport { requestUpgrade(on: channel, port: port) }
                channel.closeFuture.whenComplete { _ in upgraded.fail(ChannelError.ioOnClosedChannel) }
                return upgraded.futureResult.map { handler }
            }
    }

    func send(_ text: String) {
        guard let channel else { return }
        channel.writeAndFlush(channel.allocator.buffer(string: text), promise: nil)
    }

    func register() {
        send("NICK \(nick)\r\nUSER \(nick) 0 * :bench\r\n")
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if pending.readableBytes > 0 {
            pending.writeBuffer(&buffer)
            buffer = pending
            pending = ByteBuffer()
        }
        while let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - buffer.readerIndex
            var end = buffer.readerIndex + length
            if end > buffer.readerIndex && buffer.readableBytesView[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = buffer.readableBytesView[buffer.readerIndex..<end]
            // Answer PINGs here so no scenario has to.
            if line.starts(with: "PING ".utf8) {
                var pong = context.channel.allocator.buffer(string: "PONG ")
                pong.writeBytes(line.dropFirst(5))
                pong.writeString("\n")
                context.writeAndFlush(NIOAny(pong), promise: nil)
            } else {
                sink?.received(line, on: self)
            }
            buffer.moveReaderIndex(forwardBy: length + 1)
        }
        if buffer.readableBytes > 0 {
            pending = buffer
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        sink?.closed(self)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

extension ByteBufferView {
    /// Whether a server line's verb (or numeric) is `verb`, without parsing the rest of the line.
    func hasVerb(_ verb: String) -> Bool {
        var i = startIndex
        if i < endIndex && self[i] == UInt8(ascii: "@") {
            guard let space = self[i...].firstIndex(of: 32) else { return false }
            i = space + 1
        }
        if i < endIndex && self[i] == UInt8(ascii: ":") {
            guard let space = self[i...].firstIndex(of: 32) else { return false }
            i = space + 1
        }
        let v = Array(verb.utf8)
        guard i + v.count <= endIndex else { return false }
        for (k, b) in v.enumerated() where self[i + k] != b { return false }
        return i + v.count == endIndex || self[i + v.count] == 32
    }

    /// The text after the last " :" (the trailing parameter).
    var trailing: ByteBufferView.SubSequence? {
        var i = startIndex
        while i < endIndex - 1 {
            if self[i] == 32 && self[i + 1] == UInt8(ascii: ":") && i > startIndex { return self[(i + 2)...] }
            i += 1
        }
        return nil
    }
}

/// The server under test, read from /proc: memory and CPU time.
/// The server's processes (several with `--nodes`): their memory and CPU, summed.
struct ServerProcess {
    let pids: [Int32]

    func rssKiB() -> Double { pids.map(Self.rssKiB).reduce(0, +) }

    func cpuTime() -> CPUTime {
        pids.map(Self.cpuTime).reduce(CPUTime(user: 0, system: 0)) { CPUTime(user: $0.user + $1.user, system: $0.system + $1.system) }
    }

    /// Resident memory in KiB.
    private static func rssKiB(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return .nan }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Double(line.split(separator: " ")[1]) ?? .nan
        }
        return .nan
    }

    /// User and system CPU seconds so far (10 ms ticks: measure enough work to rise above them).
    private static func cpuTime(_ pid: Int32) -> CPUTime {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return CPUTime(user: .nan, system: .nan) }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15 (1-based in proc(5)).
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return CPUTime(user: .nan, system: .nan) }
        let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
        return CPUTime(user: u / tick, system: s / tick)
    }
}

/// CPU seconds in user space (the server's own code and libraries) and in the kernel (sockets),
/// apart: a change to the server's code moves the first, and the machine's noise moves both.
struct CPUTime {
    var user: Double
    var system: Double
    var total: Double { user + system }

    static func - (a: CPUTime, b: CPUTime) -> CPUTime { CPUTime(user: a.user - b.user, system: a.system - b.system) }

    /// This process's own: what the benchmark's clients take from the machine it shares with the server.
    static func ofThisProcess() -> CPUTime {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return CPUTime(user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
    }
}

/// Latency samples in microseconds; percentiles by sorting (scenarios keep at most a few million).
struct Latencies {
    private var samples: [UInt32] = []
    mutating func add(nanos: UInt64) { samples.append(UInt32(min(nanos / 1000, UInt64(UInt32.max)))) }
    mutating func merge(_ other: Latencies) { samples += other.samples }
    var count: Int { samples.count }

    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
    }
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
