import Foundation
import NIOCore

/// Bots post `!comment` commands; latency runs from the command to its event reaching a member.
/// Every event is announced only after its transaction committed, so each delivery is a durable command.
final class CommandsScenario: LineSink, @unchecked Sendable {
    let bots: Int
    var connections: [BenchConnection] = []
    var joined = 0
    var loggedIn = 0
    var jobID: Int?
    var echoOff = false
    var sent = 0
    var received = 0
    var total = 0
    var window = 0
    var latencies = Latencies()
    /// Commands whose event came, by number, and other notices the bots got (a refusal): said
    /// when a run times out, to tell which commands went missing and on which bots.
    var arrived = Set<Int>()
    var otherNotices: [String] = []
    let prefix = "b" + String(UInt32.random(in: 0...UInt32.max), radix: 36)

    init(bots: Int) {
        self.bots = bots
    }

    func received(_ line: ByteBufferView, on c: BenchConnection) {
        if line.hasVerb("NOTICE") {
            guard let text = line.trailing else { return }
            let s = String(decoding: text, as: UTF8.self)
            guard c.id == 0 else {
                // Once the commands flow: a refusal, not the setup's room notices every bot hears.
                if total > 0 && otherNotices.count < 5 && !s.contains(" commented on job ") { otherNotices.append("bot \(c.id): \(s)") }
                return
            }
            if jobID == nil, let r = s.range(of: "created job ") {
                jobID = Int(s[r.upperBound...].prefix(while: \.isNumber))
            } else if s.contains("set echo off") {
                echoOff = true
            } else if s.contains(" commented on job ") {
                let parts = s.split(separator: " ")
                guard parts.count >= 2, let stamp = UInt64(parts[parts.count - 1]) else { return }
                if let seq = Int(parts[parts.count - 2]) { arrived.insert(seq) }
                received += 1
                latencies.add(nanos: now() &- stamp)
                if window > 0 && sent < total { sendNext() }
            }
        } else if line.hasVerb("900") {
            loggedIn += 1
        } else if line.hasVerb("001") {
            c.send("JOIN #cmd-\(prefix)\r\n")
        } else if line.hasVerb("366") {
            joined += 1
        }
    }
    func closed(_ c: BenchConnection) {}

    func sendNext() {
        let seq = sent
        sent += 1
        connections[seq % bots].send("PRIVMSG #cmd-\(prefix) :!comment \(jobID!) \(seq) \(now())\r\n")
    }

    func run(_ bench: Bench, commands: Int, rate: Double?, window: Int) throws -> Figures {
        // Read on the generator's loop, which changes what it reads.
        bench.progress = { [unowned bench] in
            bench.on {
                let missing = (0..<self.sent).filter { !self.arrived.contains($0) }
                return "sent \(self.sent), events \(self.received), job \(self.jobID.map(String.init) ?? "none")"
                    + (missing.isEmpty ? "" : "; missing \(missing.prefix(20)) (bots \(Set(missing.map { $0 % self.bots }).sorted()))")
                    + (self.otherNotices.isEmpty ? "" : "; other notices: \(self.otherNotices)")
            }
        }
        // Bots are accounts: REGISTER logs each in (scrypt makes this take a moment per bot). One
        // at a time: all from one address at once would meet the server's limit on logins waiting.
        for i in 0..<bots {
            let c = try BenchConnection.connect(id: i, nick: "\(prefix)x\(i)", port: bench.port(for: i), transport: bench.transport,
                                                group: bench.group, sink: self).wait()
            bench.on {
                self.connections.append(c)
                c.send("REGISTER \(c.nick) * bench-password-\(self.prefix)\r\n")
                c.register()
            }
            // The first bot makes the room and manages it.
            try bench.wait("bot \(i)'s login and join") { self.joined > i && self.loggedIn > i }
        }
        try bench.wait("logins and joins") { self.joined >= self.bots && self.loggedIn >= self.bots }
        bench.on {
            self.connections[0].send("PRIVMSG #cmd-\(self.prefix) :!room set echo off\r\n")
            self.connections[0].send("PRIVMSG #cmd-\(self.prefix) :!job add bench target\r\n")
        }
        try bench.wait("the job") { self.jobID != nil && self.echoOff }
        let cpu0 = bench.server.cpuTime()
        let start = now()
        bench.on { self.total = commands; self.window = rate == nil ? window : 0 }
        if let rate {
            bench.pace(perSecond: rate, more: { self.sent < self.total }, send: sendNext)
        } else {
            bench.on { for _ in 0..<min(window, commands) { self.sendNext() } }
        }
        try bench.wait("events (\(commands) commands)") { self.received >= commands }
        let seconds = Double(now() - start) / 1e9
        let cpu1 = bench.server.cpuTime()
        let lat = bench.on { self.latencies }
        var f = Figures()
        f.add("bots", Double(bots), "", digits: 0)
        f.add("commands", Double(commands), "", digits: 0)
        f.add(rate == nil ? "durable commands per second (saturated)" : "durable commands per second", Double(commands) / seconds, "/s", digits: 0)
        f.add("command → event latency p50", lat.percentile(0.5), "ms", digits: 3)
        f.add("command → event latency p99", lat.percentile(0.99), "ms", digits: 3)
        f.addCPU("server CPU per command", cpu1 - cpu0, per: Double(commands), scale: 1000, "ms")
        for c in connections { c.channel?.close(promise: nil) }
        return f
    }
}
