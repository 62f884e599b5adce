import Foundation
import NIOCore

// MARK: reconnect

/// A restart's storm: `clients` connections come at once, as bots and web clients come back to a
/// restarted server, each logging in with its account's token (`PASS account:token`, spread over
/// `accounts` accounts made with `chorusd account`), while `guessers` connections from other
/// addresses try wrong passwords and come back each time they are turned away. The figures: the
/// time from the first connection to the last welcome (`001`), each login's time from its connect,
/// and the connections that never got in. Needs --spawn (the accounts are made on its data).
final class ReconnectScenario: LineSink, @unchecked Sendable {
    let clients: Int
    let accounts: Int
    let guessers: Int
    private var tokens: [String] = []
    private var connectedAt: [UInt64]
    private var welcomedAt: [UInt64]
    private var welcomed = 0
    private var refused = 0
    private var guesses = 0
    private var running = true
    private var bench: Bench?
    private let prefix = "r" + String(UInt32.random(in: 0...UInt32.max), radix: 36)

    init(clients: Int, accounts: Int, guessers: Int) {
        self.clients = clients
        self.accounts = max(1, accounts)
        self.guessers = guessers
        connectedAt = Array(repeating: 0, count: clients)
        welcomedAt = Array(repeating: 0, count: clients)
    }

    /// Clients are ids 0..<clients; guessers come after.
    private func isClient(_ c: BenchConnection) -> Bool { c.id < clients }

    func received(_ line: ByteBufferView, on c: BenchConnection) {
        if isClient(c) {
            if line.hasVerb("001"), welcomedAt[c.id] == 0 {
                welcomedAt[c.id] = now()
                welcomed += 1
            }
        } else if line.hasVerb("464") || line.hasVerb("FAIL") {
            guesses += 1
        }
    }

    func closed(_ c: BenchConnection) {
        if isClient(c) {
            if welcomedAt[c.id] == 0 { refused += 1 }
        } else if running, let bench {
            connectGuesser(c.id, bench)  // turned away: comes back, as a guesser does
        }
    }

    private func connectClient(_ id: Int, _ bench: Bench) {
        let account = id % accounts
        connectedAt[id] = now()
        BenchConnection.connect(id: id, nick: "\(prefix)c\(id)", port: bench.port, transport: bench.transport, group: bench.group,
                                sink: self, from: "127.0.0.\(2 + id % 64)").whenComplete { result in
            switch result {
            case .success(let c):
                c.send("PASS \(self.prefix)a\(account):\(self.tokens[account])\r\nNICK \(c.nick)\r\nUSER c 0 * :client\r\n")
            case .failure:
                self.refused += 1
            }
        }
    }

    private func connectGuesser(_ id: Int, _ bench: Bench) {
        BenchConnection.connect(id: id, nick: "\(prefix)g\(id)", port: bench.port, transport: bench.transport, group: bench.group,
                                sink: self, from: "127.0.1.\(2 + id % 64)").whenSuccess { c in
            c.send("PASS \(self.prefix)a\(id % self.accounts):guess-\(id)-\(self.guesses)\r\nNICK \(c.nick)\r\nUSER g 0 * :guesser\r\n")
        }
    }

    func run(_ bench: Bench, with tools: Operator) throws -> Figures {
        self.bench = bench
        tokens = try (0..<accounts).map { try tools.makeToken("\(prefix)a\($0)") }
        bench.progress = { "welcomed \(self.welcomed) of \(self.clients), refused \(self.refused), guesses \(self.guesses)" }
        for id in clients..<(clients + guessers) { bench.on { self.connectGuesser(id, bench) } }
        if guessers > 0 { sleep(2) }  // the guessing under way before the storm
        let cpu0 = bench.server.cpuTime()
        let start = now()
        // All at once, as after a restart: the generator connects as fast as its loop goes.
        bench.on { for id in 0..<self.clients { self.connectClient(id, bench) } }
        try bench.wait("every client's welcome") { self.welcomed + self.refused >= self.clients }
        let end = bench.on { self.welcomedAt.max() ?? start }
        let cpu = bench.server.cpuTime() - cpu0
        let (times, guessed, refusedCount) = bench.on { () -> ([Double], Int, Int) in
            self.running = false
            let times = zip(self.connectedAt, self.welcomedAt).filter { $0.1 != 0 }.map { Double($0.1 - $0.0) / 1e9 }
            return (times.sorted(), self.guesses, self.refused)
        }
        var f = Figures()
        f.add("clients (token logins) at once", Double(clients), "", digits: 0)
        f.add("accounts", Double(accounts), "", digits: 0)
        f.add("guessing connections", Double(guessers), "", digits: 0)
        f.add("all in: first connect to last welcome", Double(end - start) / 1e9, "s")
        f.add("login, connect to 001: median", percentile(times, 0.5) * 1000, "ms")
        f.add("login, connect to 001: p99", percentile(times, 0.99) * 1000, "ms")
        f.add("login, connect to 001: max", (times.last ?? .nan) * 1000, "ms")
        f.add("clients that never got in", Double(refusedCount), "", digits: 0)
        f.add("guesses turned away (the whole run)", Double(guessed), "", digits: 0)
        f.addCPU("server CPU per login", cpu, per: Double(max(1, times.count)), scale: 1000, "ms")
        return f
    }

    /// The nearest-rank percentile of sorted values.
    private func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
    }
}
