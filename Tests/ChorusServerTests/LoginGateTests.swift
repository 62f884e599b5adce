@testable import ChorusServer
import ChorusCore
import ChorusIRC
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import XCTest

/// Guessing passwords cannot stall logins: failures are throttled per account and per address
/// (answered at once, saying when to retry, without hashing), and the hash pool serves the
/// addresses in turn.
final class LoginGateTests: XCTestCase {
    func testTheHashPoolServesTheAddressesInTurn() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let gate = LoginGate(slots: 1)
        let order = Mutex<[String]>([])
        var pending: [EventLoopPromise<Void>] = []
        try loop.submit {
            // A guesser queues three checks before a real user's one: the user's runs second.
            for name in ["guess1", "guess2", "guess3"] {
                _ = gate.enqueue(from: "10.0.0.66", on: loop) {
                    order.withLock { $0.append(name) }
                    let p = loop.makePromise(of: Void.self)
                    pending.append(p)
                    return p.futureResult
                }
            }
            _ = gate.enqueue(from: "10.0.0.7", on: loop) {
                order.withLock { $0.append("user") }
                let p = loop.makePromise(of: Void.self)
                pending.append(p)
                return p.futureResult
            }
            // Two more of the guesser's may wait (four in all); the next is refused at once.
            XCTAssertNotNil(gate.enqueue(from: "10.0.0.66", on: loop) { loop.makeSucceededVoidFuture() })
            XCTAssertNotNil(gate.enqueue(from: "10.0.0.66", on: loop) { loop.makeSucceededVoidFuture() })
            XCTAssertNil(gate.enqueue(from: "10.0.0.66", on: loop) { loop.makeSucceededVoidFuture() }, "at most four waiting per address")
        }.wait()
        for _ in 0..<4 {
            try loop.submit { pending.removeFirst().succeed() }.wait()
        }
        // One check of each address in turn: the user waits for one of the guesser's, not for all.
        XCTAssertEqual(Array(order.withLock { $0 }.prefix(4)), ["guess1", "guess2", "user", "guess3"])
    }

    /// Ten failures from one address, on as many accounts, hold that address back for the rest of
    /// the minute; an address that failed goes behind clean ones in the queue.
    /// Guesses at an account hold back the networks they came from, not the account: its owner
    /// logs in from elsewhere, however many guess (issue: three guesses from anywhere locked it).
    func testGuessesHoldBackTheGuessersNetworkNotTheAccount() {
        let gate = LoginGate(slots: 1)
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for _ in 0..<3 { gate.failed(account: "alice", address: "198.51.100.66", at: t) }
        XCTAssertEqual(gate.retryAfter(account: "alice", address: "198.51.100.66", now: t.addingTimeInterval(1)), 59)
        XCTAssertNotNil(gate.retryAfter(account: "alice", address: "198.51.100.7", now: t.addingTimeInterval(1)), "the same /24")
        XCTAssertNil(gate.retryAfter(account: "alice", address: "203.0.113.9", now: t.addingTimeInterval(1)), "the owner, from elsewhere")
        XCTAssertNil(gate.retryAfter(account: "bob", address: "198.51.100.66", now: t.addingTimeInterval(1)), "another account")
        for _ in 0..<3 { gate.failed(account: "alice", address: "2001:db8:1:2::66", at: t) }
        XCTAssertNotNil(gate.retryAfter(account: "alice", address: "2001:db8:1:2:ffff::1", now: t), "the same /64")
        XCTAssertNil(gate.retryAfter(account: "alice", address: "2001:db8:1:3::1", now: t))
        XCTAssertEqual(LoginGate.network(of: "192.0.2.200"), "192.0.2")
        XCTAssertEqual(LoginGate.network(of: "::1"), "0000000000000000::/64")
    }

    func testANetworkThatGuessesIsHeldBackAndServedLast() throws {
        let gate = LoginGate(slots: 1)
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for i in 0..<10 { gate.failed(account: "victim\(i)", address: "10.0.0.66", at: t) }
        XCTAssertEqual(gate.retryAfter(account: "someone", address: "10.0.0.66", now: t.addingTimeInterval(15)), 45)
        XCTAssertNil(gate.retryAfter(account: "someone", address: "10.0.0.7", now: t.addingTimeInterval(15)))
        XCTAssertNil(gate.retryAfter(account: "someone", address: "10.0.0.66", now: t.addingTimeInterval(61)), "a minute on")

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let order = Mutex<[String]>([])
        var pending: [EventLoopPromise<Void>] = []
        gate.failed(account: "victim", address: "10.0.0.66", at: Date())
        try loop.submit {
            // The next guess comes from a new address of the guesser's /24: held back behind a
            // network with no failures; an address of the guesser's own is held back behind both.
            for (name, address) in [("first", "10.0.0.9"), ("guesser", "10.0.0.66"), ("guess", "10.0.0.67"), ("user", "10.0.1.7")] {
                _ = gate.enqueue(from: address, on: loop) {
                    order.withLock { $0.append(name) }
                    let p = loop.makePromise(of: Void.self)
                    pending.append(p)
                    return p.futureResult
                }
            }
        }.wait()
        for _ in 0..<4 { try loop.submit { pending.removeFirst().succeed() }.wait() }
        XCTAssertEqual(order.withLock { $0 }, ["first", "user", "guess", "guesser"])
    }

    func testFailedLoginsAreThrottledPerAccountAndAnsweredWithoutAHashASecondLater() throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let server = try TestServer(now: { clock.withLock { $0 } })
        try server.addAccount("alice", "alice-password")
        func saslClient(_ nick: String) throws -> TestClient {
            let c = try server.connect()
            c.send("CAP LS 302")
            c.send("NICK \(nick)")
            c.send("USER g 0 * :g")
            c.send("CAP REQ :sasl standard-replies")
            try c.expect(command: "CAP", "*", "ACK")
            return c
        }
        let guesser = try saslClient("guesser")
        func attempt(_ c: TestClient, _ password: String) {
            c.send("AUTHENTICATE PLAIN")
            c.send("AUTHENTICATE " + Data("\0alice\0\(password)".utf8).base64EncodedString())
        }
        for guess in ["123456", "password", "qwerty"] {
            attempt(guesser, guess)
            try guesser.expect(command: "904")
        }
        // The fourth, even with the right password, is refused without a hash, saying when to
        // retry, a second later: a guesser that tries again at once cannot keep the loop busy.
        let asked = Date()
        attempt(guesser, "alice-password")
        let limited = try guesser.expect(command: "FAIL", "AUTHENTICATE", "RATE_LIMITED", "alice")
        XCTAssertGreaterThan(Date().timeIntervalSince(asked), 0.9)
        XCTAssertTrue(limited.params.last?.contains("try again in 60 s") == true, limited.params.last ?? "")
        try guesser.expect(command: "904")

        // A bot's token is a SHA-256, not a guessable password: it logs in, throttled or not. A
        // password that only looks like a token is a password, and throttled like one.
        let secret = AccountToken.prefix + AccountToken.digest(of: "the bot's secret")
        _ = try server.server.accounts.store.issueToken(for: "alice", label: "bot", secret: secret, at: Date())
        let bot = try saslClient("alicebot")
        attempt(bot, secret)
        try bot.expect(command: "903")
        let fake = try saslClient("faker")
        attempt(fake, AccountToken.prefix + AccountToken.digest(of: "a guess"))
        try fake.expect(command: "FAIL", "AUTHENTICATE", "RATE_LIMITED", "alice")

        // The limit holds for the account from this network (every connection here is 127.0.0.1),
        // until the minute has passed; from another network it does not (the test above).
        let owner = try saslClient("owner")
        attempt(owner, "alice-password")
        try owner.expect(command: "FAIL", "AUTHENTICATE", "RATE_LIMITED", "alice")
        clock.withLock { $0 = $0.addingTimeInterval(61) }
        let later = try server.connect()
        let burst = try later.register("alice", sasl: ("alice", "alice-password"))
        XCTAssertTrue(burst.contains { $0.command == "001" })
    }
}

/// REGISTER has a budget of its own: an address makes a few accounts an hour, its network a few
/// times as many (one address once made 661 in 35 s).
final class RegistrationLimitTests: XCTestCase {
    func testAnAddressMakesAFewAccountsAnHour() throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let server = try TestServer(now: { clock.withLock { $0 } }) { $0.registrationsPerHour = 2 }
        func register(_ name: String) throws -> Message {
            let c = try server.connect()
            c.send("CAP LS 302")
            c.send("CAP REQ :draft/account-registration standard-replies")
            c.send("NICK \(name)")
            c.send("USER \(name) 0 * :\(name)")
            c.send("REGISTER \(name) * \(name)-password")
            return try c.expect("the answer to REGISTER") { $0.command == "REGISTER" || $0.command == "FAIL" }
        }
        XCTAssertEqual(try register("one").params.first, "SUCCESS")
        XCTAssertEqual(try register("two").params.first, "SUCCESS")
        let third = try register("three")
        XCTAssertEqual(Array(third.params.prefix(3)), ["REGISTER", "TEMPORARILY_UNAVAILABLE", "three"])
        XCTAssertTrue(third.params.last?.contains("try again in 3600 s") == true, third.params.last ?? "")
        clock.withLock { $0 = $0.addingTimeInterval(3601) }
        XCTAssertEqual(try register("four").params.first, "SUCCESS", "an hour on")
    }

    func testTheNetworkHasABudgetToo() {
        let gate = LoginGate(slots: 1)
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for i in 0..<8 { gate.registered(address: "198.51.100.\(i)", at: t) }
        XCTAssertNil(gate.registrationRetryAfter(address: "203.0.113.1", perHour: 2, now: t), "another network")
        XCTAssertNotNil(gate.registrationRetryAfter(address: "198.51.100.200", perHour: 2, now: t), "a fresh address of a full /24")
        XCTAssertNil(gate.registrationRetryAfter(address: "198.51.100.200", perHour: 0, now: t), "0: no limit")
    }
}
