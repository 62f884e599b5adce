import ChorusCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// What stands between guessing connections and the password hashes: failed logins are counted per
/// account from each network (3 a minute, as Ergo counts per account) and per address, and a
/// throttled attempt is answered without hashing, a second later (`refusalDelay`). The guessers' networks are held back,
/// not the account: its owner logs in from another network however many guess at it (a network
/// is an IPv4 /24 or an IPv6 /64, so one guesser's neighbouring addresses count as one). The hashes
/// that do run are taken from the addresses in turn, those without recent failures first, so
/// guessers cannot fill the pool while a real user waits. Tokens skip the queue: they are a
/// SHA-256, not a scrypt. It lives on the server's loop.
final class LoginGate {
    struct Limits {
        var failuresPerAccount = 3
        var failuresPerAddress = 10
        var window: TimeInterval = 60
        /// Checks waiting per address: more are refused without a hash, as throttled.
        var waitingPerAddress = 4
    }

    let limits: Limits
    /// How long a throttled login waits for its refusal (`checkPassword`).
    static let refusalDelay = TimeAmount.seconds(1)
    /// How many checks run at once (the pool's threads).
    let slots: Int
    private var failures: [String: [Date]] = [:]
    private var running = 0
    /// Waiting checks per address, and the addresses in the order they are served.
    private var waiting: [String: [() -> Void]] = [:]
    private var turn: [String] = []
    /// The network of each address in `turn` (`network(of:)`), worked out once.
    private var networks: [String: String] = [:]

    init(slots: Int, limits: Limits = Limits()) {
        self.slots = slots
        self.limits = limits
    }

    /// Seconds until `account` may be tried from `address` again, or nil when it may be now.
    func retryAfter(account: String, address: String, now: Date) -> Int? {
        let keys = [(Self.accountKey(account, address), limits.failuresPerAccount), ("address " + address, limits.failuresPerAddress)]
        var wait: TimeInterval = 0
        for (key, limit) in keys {
            let recent = (failures[key] ?? []).filter { now.timeIntervalSince($0) < limits.window }
            failures[key] = recent.isEmpty ? nil : recent
            if recent.count >= limit { wait = max(wait, limits.window - now.timeIntervalSince(recent[recent.count - limit])) }
        }
        return wait > 0 ? Int(wait.rounded(.up)) : nil
    }

    func failed(account: String, address: String, at now: Date) {
        failures[Self.accountKey(account, address), default: []].append(now)
        failures["address " + address, default: []].append(now)
        failures["network " + Self.network(of: address), default: []].append(now)
    }

    /// The account's failures are counted per network they came from.
    private static func accountKey(_ account: String, _ address: String) -> String {
        "account " + Account.key(account) + " from " + network(of: address)
    }

    /// An IPv4 address's /24 (`192.0.2`), an IPv6 address's /64 (its first 8 bytes in hex); anything
    /// else as it is.
    static func network(of address: String) -> String {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { $0.prefix(3).map(String.init).joined(separator: ".") }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, address, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Hex.lowercase($0.prefix(8)) } + "::/64"
        }
        return address
    }

    /// Drops failures older than the window, and accounts made more than an hour ago (the server's
    /// maintenance tick calls this), so guesses at a million account names do not stay in memory.
    func forgetOld(now: Date) {
        failures = failures.compactMapValues { times in
            let recent = times.filter { now.timeIntervalSince($0) < limits.window }
            return recent.isEmpty ? nil : recent
        }
        registrations = registrations.compactMapValues { times in
            let recent = times.filter { now.timeIntervalSince($0) < 3600 }
            return recent.isEmpty ? nil : recent
        }
    }

    // MARK: REGISTER

    /// Accounts made in the last hour, per address and per network.
    private var registrations: [String: [Date]] = [:]

    /// Seconds until `address` may make another account, when it has made `perHour` in the last
    /// hour or its network four times as many; nil when it may now (or `perHour` is 0: no limit).
    func registrationRetryAfter(address: String, perHour: Int, now: Date) -> Int? {
        guard perHour > 0 else { return nil }
        var wait: TimeInterval = 0
        for (key, limit) in [("address " + address, perHour), ("network " + Self.network(of: address), perHour * 4)] {
            let recent = (registrations[key] ?? []).filter { now.timeIntervalSince($0) < 3600 }
            registrations[key] = recent.isEmpty ? nil : recent
            if recent.count >= limit { wait = max(wait, 3600 - now.timeIntervalSince(recent[recent.count - limit])) }
        }
        return wait > 0 ? Int(wait.rounded(.up)) : nil
    }

    func registered(address: String, at now: Date) {
        registrations["address " + address, default: []].append(now)
        registrations["network " + Self.network(of: address), default: []].append(now)
    }

    func succeeded(account: String, address: String) {
        failures[Self.accountKey(account, address)] = nil
    }

    /// Runs `check` when a slot is free, the addresses taking turns; nil when `address` already
    /// has as many checks waiting as it may.
    func enqueue<T>(from address: String, on loop: EventLoop, _ check: @escaping () -> EventLoopFuture<T>) -> EventLoopFuture<T>? {
        guard (waiting[address]?.count ?? 0) < limits.waitingPerAddress else { return nil }
        let promise = loop.makePromise(of: T.self)
        let job = { [self] in
            check().whenComplete { result in
                self.running -= 1
                promise.completeWith(result)
                self.startNext()
            }
        }
        if waiting[address] == nil {
            turn.append(address)
            networks[address] = Self.network(of: address)
        }
        waiting[address, default: []].append(job)
        startNext()
        return promise.futureResult
    }

    private func startNext() {
        while running < slots, !turn.isEmpty {
            // An address with no failed login in the window goes first, and one whose whole network
            // has none before it: a guesser's queue, however fair, would otherwise put a real user
            // behind one check of every guessing address, and guessers that take a new address
            // for each try (from a /24 of their own) would each count as clean.
            let clean = turn.firstIndex { failures["address " + $0] == nil && failures["network " + networks[$0]!] == nil }
                ?? turn.firstIndex { failures["address " + $0] == nil } ?? 0
            let address = turn.remove(at: clean)
            var jobs = waiting[address]!
            let job = jobs.removeFirst()
            if jobs.isEmpty {
                waiting[address] = nil
                networks[address] = nil
            } else {
                waiting[address] = jobs
                turn.append(address)
            }
            running += 1
            job()
        }
    }
}
