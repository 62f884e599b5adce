import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Common plumbing: the generator's event loop, the server's process, bounded waits.
final class Bench: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    var loop: EventLoop { group.next() }
    /// Each node's port; the connections are spread over them by their number.
    let ports: [Int]
    var port: Int { ports[0] }
    let transport: Transport
    let server: ServerProcess
    let deadline: Date
    /// What the running scenario has done so far, for the message when a wait times out.
    var progress: () -> String = { "" }

    init(ports: [Int], tls: Bool, webSocket: Bool, pids: [Int32], timeout: Double) throws {
        self.ports = ports
        self.server = ServerProcess(pids: pids)
        self.deadline = Date().addingTimeInterval(timeout)
        var context: NIOSSLContext?
        if tls {
            var c = TLSConfiguration.makeClientConfiguration()
            c.certificateVerification = .none
            context = try NIOSSLContext(configuration: c)
        }
        self.transport = webSocket ? .webSocket(context) : context.map(Transport.tls) ?? .plain
    }

    /// Polls `done` on the generator's loop until it holds or the scenario's time is up.
    func wait(_ what: String, until done: @escaping () -> Bool) throws {
        while try !loop.submit(done).wait() {
            if Date() > deadline { throw BenchError("timed out waiting for \(what); \(progress())") }
            usleep(2000)
        }
    }

    func on<T>(_ body: @escaping () -> T) -> T { try! loop.submit(body).wait() }

    /// The port connection `id` uses: node `id % nodes`.
    func port(for id: Int) -> Int { ports[id % ports.count] }
    var nodes: Int { ports.count }

    /// Calls `send` `perSecond` times a second, on a 1 ms tick of the generator's loop, while `more()`.
    func pace(perSecond: Double, more: @escaping () -> Bool, send: @escaping () -> Void) {
        // What is due follows the clock, not the count of ticks: a 1 ms timer fires late, and a
        // fixed share per tick reached only 15-18k of 20k deliveries/s asked.
        let start = NIODeadline.now()
        var sent = 0
        _ = loop.scheduleRepeatedTask(initialDelay: .milliseconds(1), delay: .milliseconds(1)) { task in
            let due = Int(Double((NIODeadline.now() - start).nanoseconds) * perSecond / 1e9)
            while sent < due && more() { send(); sent += 1 }
            if !more() { task.cancel() }
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

struct Figures {
    var rows: [(String, String)] = []
    mutating func add(_ name: String, _ value: Double, _ unit: String, digits: Int = 2) {
        rows.append((name, String(format: "%.\(digits)f %@", value, unit)))
    }
    /// `name` with the CPU time per unit of work, and a line after it with the user and system parts.
    mutating func addCPU(_ name: String, _ cpu: CPUTime, per count: Double, scale: Double, _ unit: String, digits: Int = 3) {
        add(name, cpu.total / count * scale, unit, digits: digits)
        rows.append(("  user / system", String(format: "%.\(digits)f / %.\(digits)f %@", cpu.user / count * scale, cpu.system / count * scale, unit)))
    }

    func print(title: String) {
        Swift.print("== \(title)")
        let width = rows.map(\.0.count).max() ?? 0
        for (n, v) in rows { Swift.print(n.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + v) }
    }
}

// MARK: idle

/// N registered connections in rooms of 20; the server's memory and CPU per connection.
final class IdleScenario: LineSink, @unchecked Sendable {
    var joined = 0
    var connections: [BenchConnection] = []

    func received(_ line: ByteBufferView, on c: BenchConnection) {
        if line.hasVerb("001") { c.send("JOIN #idle\(c.id / 20)\r\n") } else if line.hasVerb("366") { joined += 1 }
    }
    func closed(_ c: BenchConnection) {}

    func run(_ bench: Bench, clients: Int, settle: Double) throws -> Figures {
        let rss0 = bench.server.rssKiB(), cpu0 = bench.server.cpuTime()
        let start = Date()
        var started = 0
        while started < clients {
            // Keep at most 100 handshakes in flight, as a crowd of real clients would.
            let batch = min(100, clients - started)
            let futures = (0..<batch).map { i in
                BenchConnection.connect(id: started + i, nick: "idle\(started + i)", port: bench.port, transport: bench.transport, group: bench.group, sink: self)
            }
            for f in futures {
                let c = try f.wait()
                bench.on { self.connections.append(c); c.register() }
            }
            started += batch
            try bench.wait("joins") { self.joined >= started - 20 }
        }
        try bench.wait("all joins") { self.joined >= clients }
        let elapsed = Date().timeIntervalSince(start)
        usleep(1_000_000)  // let the server settle (its database writer too) before reading
        let cpu1 = bench.server.cpuTime()
        // Memory once the connections have been idle a while: a server may give back what an idle
        // connection does not need (Chorus: TLS buffers, after 5–10 s). CPU is read before the rest
        // of the wait, which would only add the server's periodic work.
        usleep(useconds_t(max(0, settle - 1) * 1_000_000))
        let rss1 = bench.server.rssKiB()
        var f = Figures()
        f.add("connections", Double(clients), "", digits: 0)
        f.add("connect+register+join rate", Double(clients) / elapsed, "conn/s", digits: 0)
        f.add("server RSS per connection", (rss1 - rss0) / Double(clients), "KiB")
        f.addCPU("server CPU per connect+register+join", cpu1 - cpu0, per: Double(clients), scale: 1000, "ms")
        f.add("server RSS total", rss1 / 1024, "MiB", digits: 1)
        for c in connections { c.channel?.close(promise: nil) }
        return f
    }
}

// MARK: fanout

/// One room of M members; senders post stamped lines; every member counts what it gets.
final class FanoutScenario: LineSink, @unchecked Sendable {
    let members: Int
    let senders: Int
    var connections: [BenchConnection] = []
    var joined = 0
    var deliveries = 0
    var latencies = Latencies()
    /// Deliveries to a member on another node than the sender's (with several nodes).
    var crossNode = Latencies()
    var nodes = 1
    var sent = 0
    var completed = 0
    var remaining: [Int] = []   // per message slot: receipts still expected
    let window: Int
    var total = 0

    init(members: Int, senders: Int, window: Int) {
        self.members = members
        self.senders = senders
        self.window = window
        remaining = Array(repeating: 0, count: max(window * 4, 4096))
    }

    func received(_ line: ByteBufferView, on c: BenchConnection) {
        if line.hasVerb("PRIVMSG") {
            guard let text = line.trailing else { return }
            var seq = 0, stamp: UInt64 = 0, second = false
            for b in text {
                if b == 32 { second = true; continue }
                guard b >= 48 && b <= 57 else { break }
                if second { stamp = stamp * 10 + UInt64(b - 48) } else { seq = seq * 10 + Int(b - 48) }
            }
            deliveries += 1
            let took = now() &- stamp
            latencies.add(nanos: took)
            // Connection n is on node n % nodes; message seq was sent by connection seq % senders.
            if nodes > 1 && (seq % senders) % nodes != c.id % nodes { crossNode.add(nanos: took) }
            let slot = seq % remaining.count
            remaining[slot] -= 1
            if remaining[slot] == 0 {
                completed += 1
                if window > 0 && sent < total { sendNext() }
            }
        } else if line.hasVerb("001") {
            c.send("JOIN #fanout\r\n")
        } else if line.hasVerb("366") {
            joined += 1
        }
    }
    func closed(_ c: BenchConnection) {}

    func sendNext() {
        let seq = sent
        sent += 1
        remaining[seq % remaining.count] = members - 1
        connections[seq % senders].send("PRIVMSG #fanout :\(seq) \(now())\r\n")
    }

    func run(_ bench: Bench, messages: Int, rate: Double?) throws -> Figures {
        nodes = bench.nodes
        for i in 0..<members {
            let c = try BenchConnection.connect(id: i, nick: "fan\(i)", port: bench.port(for: i), transport: bench.transport, group: bench.group, sink: self).wait()
            bench.on { self.connections.append(c); c.register() }
            if i % 100 == 99 { try bench.wait("joins") { self.joined >= i - 50 } }
        }
        try bench.wait("joins") { self.joined >= self.members }
        usleep(300_000)
        let cpu0 = bench.server.cpuTime()
        let start = now()
        bench.on { self.total = messages }
        bench.progress = { "sent \(self.sent), completed \(self.completed), deliveries \(self.deliveries)" }
        if let rate {
            // Light load: messages at a fixed rate.
            bench.pace(perSecond: rate, more: { self.sent < self.total }, send: sendNext)
        } else {
            bench.on { for _ in 0..<min(self.window, messages) { self.sendNext() } }
        }
        try bench.wait("deliveries") { self.completed >= messages }
        let seconds = Double(now() - start) / 1e9
        let cpu1 = bench.server.cpuTime()
        let (count, lat, cross) = bench.on { (self.deliveries, self.latencies, self.crossNode) }
        var f = Figures()
        f.add("members", Double(members), "", digits: 0)
        f.add("messages", Double(messages), "", digits: 0)
        f.add("deliveries", Double(count), "", digits: 0)
        f.add("deliveries per second", Double(count) / seconds, "/s", digits: 0)
        f.add("latency p50", lat.percentile(0.5), "ms", digits: 3)
        f.add("latency p99", lat.percentile(0.99), "ms", digits: 3)
        if nodes > 1 {
            f.add("nodes", Double(nodes), "", digits: 0)
            f.add("cross-node latency p50", cross.percentile(0.5), "ms", digits: 3)
            f.add("cross-node latency p99", cross.percentile(0.99), "ms", digits: 3)
        }
        f.addCPU("server CPU per 1M deliveries", cpu1 - cpu0, per: Double(count), scale: 1e6, "CPU-s")
        for c in connections { c.channel?.close(promise: nil) }
        return f
    }
}

// MARK: churn

/// Connect, register, join, quit, over and over, with a few cycles in flight.
final class ChurnScenario: LineSink, @unchecked Sendable {
    var started = 0
    var finished = 0
    var total = 0
    weak var bench: Bench?

    func received(_ line: ByteBufferView, on c: BenchConnection) {
        if line.hasVerb("001") { c.send("JOIN #churn\(c.id % 50)\r\n") } else if line.hasVerb("366") { c.send("QUIT :bye\r\n") }
    }

    func closed(_ c: BenchConnection) {
        finished += 1
        startOne()
    }

    func startOne() {
        guard let bench, started < total else { return }
        let id = started
        started += 1
        BenchConnection.connect(id: id, nick: "churn\(id)", port: bench.port, transport: bench.transport, group: bench.group, sink: self)
            .whenComplete { result in
                switch result {
                case .success(let c): c.register()
                case .failure: self.finished += 1; self.startOne()
                }
            }
    }

    func run(_ bench: Bench, cycles: Int, concurrency: Int) throws -> Figures {
        self.bench = bench
        let cpu0 = bench.server.cpuTime()
        let start = now()
        bench.on {
            self.total = cycles
            for _ in 0..<min(concurrency, cycles) { self.startOne() }
        }
        try bench.wait("cycles") { self.finished >= cycles }
        let seconds = Double(now() - start) / 1e9
        let cpu1 = bench.server.cpuTime()
        var f = Figures()
        f.add("cycles", Double(cycles), "", digits: 0)
        f.add("cycles per second", Double(cycles) / seconds, "/s", digits: 0)
        f.addCPU("server CPU per cycle", cpu1 - cpu0, per: Double(cycles), scale: 1000, "ms")
        return f
    }
}
