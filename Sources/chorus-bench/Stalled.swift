import Foundation
import NIOCore

/// Clients that stop reading while their room talks: what the server holds for them before it
/// cuts them off at the send-queue limit. N such clients join a room with one talker, which sends
/// 400-byte lines as fast as the server takes them; the server's RSS is sampled every 5 ms from
/// the moment they stop reading until the last of them is cut (the talker hears their QUITs). The
/// peak over the start, per stalled client, is what one costs at worst in the server's memory; the
/// kernel's socket buffers, which hold more, are not in it (`ss -tm` shows them).
final class StalledScenario: LineSink, @unchecked Sendable {
    let stalled: Int
    var connections: [BenchConnection] = []
    var joined = 0
    var cut = 0
    var sent = 0
    var talking = false
    var talker: BenchConnection?
    static let line = String(repeating: "x", count: 400)

    init(stalled: Int) {
        self.stalled = stalled
    }

    func received(_ line: ByteBufferView, on c: BenchConnection) {
        if line.hasVerb("001") {
            c.send("JOIN #stalled\r\n")
        } else if line.hasVerb("366") {
            joined += 1
        } else if c === talker, talking, line.hasVerb("PONG") {
            // The talker paces itself by the server's answers: a burst, a PING, the next burst.
            talk()
        } else if c === talker, line.hasVerb("QUIT") {
            // A stalled client never reads its close (it waits behind the data it did not read):
            // the room's QUIT says the server has let it go.
            cut += 1
        }
    }

    func closed(_ c: BenchConnection) {}

    private func talk() {
        guard let talker, talking else { return }
        var burst = ""
        for _ in 0..<20 {
            sent += 1
            burst += "PRIVMSG #stalled :\(sent) \(Self.line)\r\n"
        }
        talker.send(burst + "PING :more\r\n")
    }

    func run(_ bench: Bench, sendQueueBytes: Int) throws -> Figures {
        let talker = try BenchConnection.connect(id: 0, nick: "talker", port: bench.port, transport: bench.transport,
                                                 group: bench.group, sink: self).wait()
        bench.on { self.talker = talker; talker.register() }
        for i in 1...stalled {
            let c = try BenchConnection.connect(id: i, nick: "stall\(i)", port: bench.port, transport: bench.transport,
                                                group: bench.group, sink: self).wait()
            bench.on { self.connections.append(c); c.register() }
        }
        try bench.wait("joins") { self.joined >= self.stalled + 1 }
        // They stop reading: their receive buffers stay small and full.
        for c in connections {
            try c.channel?.setOption(ChannelOptions.socketOption(.so_rcvbuf), value: 4096).wait()
            try c.channel?.setOption(ChannelOptions.autoRead, value: false).wait()
        }
        usleep(500_000)
        let baseline = bench.server.rssKiB()
        var peak = baseline
        let start = now()
        bench.progress = { "sent \(self.sent), cut \(self.cut) of \(self.stalled)" }
        bench.on { self.talking = true; self.talk() }
        while try !bench.loop.submit({ self.cut >= self.stalled }).wait() {
            if Date() > bench.deadline { throw BenchError("timed out: \(bench.progress())") }
            peak = max(peak, bench.server.rssKiB())
            usleep(5_000)
        }
        let seconds = Double(now() - start) / 1e9
        bench.on { self.talking = false }
        let lines = bench.on { self.sent }
        var f = Figures()
        f.add("stalled clients", Double(stalled), "", digits: 0)
        f.add("send-queue limit", Double(sendQueueBytes) / 1024, "KiB", digits: 0)
        f.add("lines sent until all were cut", Double(lines), "", digits: 0)
        f.add("time until all were cut", seconds, "s", digits: 2)
        f.add("server RSS before", baseline / 1024, "MiB", digits: 1)
        f.add("server RSS peak", peak / 1024, "MiB", digits: 1)
        f.add("peak over before, per stalled client", (peak - baseline) / Double(stalled), "KiB", digits: 0)
        talker.channel?.close(promise: nil)
        return f
    }
}
