import Foundation
import NIOCore

/// A real user's login while many connections guess passwords. The user makes an account
/// (REGISTER), then logs in with SASL PLAIN, from 127.0.0.1, some times while `guessers`
/// connections try wrong passwords for 500 other accounts as fast as the server answers
/// (reconnecting when it closes them): from 127.0.0.2 to 127.0.0.65, or, with `rotating`
/// addresses, each connection from the next of that many in 127.1.0.0/16 and up (250 to a /24),
/// as guessers spread over a botnet's addresses do. The figure is the time from connecting to 903,
/// with and without the guessers.
final class LoginsScenario: LineSink, @unchecked Sendable {
    let guessers: Int
    /// Addresses the guessers rotate over (a new one for each connection), or nil for 64 fixed ones.
    let rotating: Int?
    var connections = 0
    let prefix = "l" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
    var owner: String { "\(prefix)owner" }
    var registered = false
    var guesses = 0
    var refusedAtOnce = 0
    var running = true
    var loginStart: UInt64 = 0
    var loginDone: UInt64 = 0
    var bench: Bench?

    init(guessers: Int, rotating: Int? = nil) {
        self.guessers = guessers
        self.rotating = rotating
    }

    /// Where guesser `id`'s next connection comes from.
    private func address(for id: Int) -> String {
        guard let rotating else { return "127.0.0.\(2 + id % 64)" }
        connections += 1
        let k = connections % rotating
        return "127.\(1 + k / 62_500).\(k / 250 % 250).\(2 + k % 250)"
    }

    func received(_ line: ByteBufferView, on c: BenchConnection) {
        if c.id == 0 {
            if line.hasVerb("REGISTER") { registered = true }
            if line.hasVerb("AUTHENTICATE") { c.send("AUTHENTICATE \(payload(owner, "owner-password-\(prefix)"))\r\n") }
            if line.hasVerb("903") { loginDone = now(); c.send("QUIT\r\n") }
            return
        }
        if line.hasVerb("CAP"), String(decoding: line, as: UTF8.self).contains("ACK") {
            c.send("AUTHENTICATE PLAIN\r\n")
        } else if line.hasVerb("AUTHENTICATE") {
            guesses += 1
            // Other people's accounts: guesses at the user's own would (by design) throttle it for
            // a minute, which is the lockout trade-off of per-account limits, not what is measured.
            let account = "\(prefix)v\(c.id % 500)"
            c.send("AUTHENTICATE \(payload(account, "guess\(guesses)"))\r\n")
        } else if line.hasVerb("904") {
            if String(decoding: line, as: UTF8.self).contains("Too many") { refusedAtOnce += 1 }
            if running { c.send("AUTHENTICATE PLAIN\r\n") }
        }
    }

    func closed(_ c: BenchConnection) {
        guard c.id > 0, running, let bench else { return }
        connectGuesser(c.id, bench)  // the server closed it (too many attempts): come back
    }

    private func payload(_ account: String, _ password: String) -> String {
        Data("\0\(account)\0\(password)".utf8).base64EncodedString()
    }

    private func connectGuesser(_ id: Int, _ bench: Bench) {
        BenchConnection.connect(id: id, nick: "\(prefix)g\(id)", port: bench.port, transport: bench.transport, group: bench.group, sink: self,
                                from: address(for: id)).whenSuccess { c in
            c.send("CAP LS 302\r\nNICK \(c.nick)\r\nUSER g 0 * :guesser\r\nCAP REQ :sasl\r\n")
        }
    }

    /// Seconds from connecting to 903 for the real user, `count` times, one after the other.
    private func measureLogins(_ bench: Bench, count: Int) throws -> [Double] {
        var times: [Double] = []
        for _ in 0..<count {
            let c = try BenchConnection.connect(id: 0, nick: "\(prefix)me", port: bench.port, transport: bench.transport, group: bench.group,
                                                sink: self).wait()
            bench.on {
                self.loginDone = 0
                self.loginStart = now()
                c.send("CAP LS 302\r\nCAP REQ :sasl\r\nNICK \(c.nick)\r\nUSER me 0 * :me\r\nAUTHENTICATE PLAIN\r\n")
            }
            try bench.wait("the real user's login") { self.loginDone != 0 }
            times.append(bench.on { Double(self.loginDone - self.loginStart) / 1e9 })
        }
        return times
    }

    func run(_ bench: Bench, logins: Int) throws -> Figures {
        self.bench = bench
        bench.progress = { "guesses \(self.guesses), refused at once \(self.refusedAtOnce)" }
        let me = try BenchConnection.connect(id: 0, nick: owner, port: bench.port, transport: bench.transport, group: bench.group, sink: self).wait()
        bench.on { me.send("REGISTER \(self.owner) * owner-password-\(self.prefix)\r\n"); me.register() }
        try bench.wait("the account") { self.registered }
        me.send("QUIT\r\n")
        let quiet = try measureLogins(bench, count: logins)
        for id in 1...guessers {
            bench.on { self.connectGuesser(id, bench) }
            if id % 100 == 0 { usleep(20_000) }  // a ramp, not a SYN flood
        }
        sleep(3)  // let the guessing settle in
        let cpu0 = bench.server.cpuTime()
        let guesses0 = bench.on { self.guesses }
        let start = Date()
        let loud = try measureLogins(bench, count: logins)
        let elapsed = Date().timeIntervalSince(start)
        let cpu = bench.server.cpuTime() - cpu0
        let guessed = bench.on { self.guesses } - guesses0
        bench.on { self.running = false }
        var f = Figures()
        f.add("guessing connections", Double(guessers), "", digits: 0)
        f.add("real login, quiet: median", median(quiet) * 1000, "ms")
        f.add("real login, quiet: p99", percentile(quiet, 0.99) * 1000, "ms")
        f.add("real login, under guessing: median", median(loud) * 1000, "ms")
        f.add("real login, under guessing: p99", percentile(loud, 0.99) * 1000, "ms")
        f.add("real login, under guessing: max", (loud.max() ?? .nan) * 1000, "ms")
        f.add("p99 under guessing / p99 quiet", percentile(loud, 0.99) / percentile(quiet, 0.99), "×", digits: 2)
        f.add("guesses answered per second", Double(guessed) / elapsed, "/s", digits: 0)
        f.add("guesses refused at once (throttled), in all", Double(bench.on { self.refusedAtOnce }), "", digits: 0)
        f.add("server CPU while guessing", cpu.total / elapsed * 100, "% of a core", digits: 0)
        return f
    }

    private func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

    /// The nearest-rank percentile: with 100 logins, p99 is the 99th fastest.
    private func percentile(_ xs: [Double], _ p: Double) -> Double {
        xs.sorted()[max(0, Int((p * Double(xs.count)).rounded(.up)) - 1)]
    }
}
