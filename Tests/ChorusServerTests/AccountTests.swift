import ChorusCore
import ChorusTestSupport
import ChorusIRC
import XCTest

final class AccountTests: XCTestCase {
    func testRegisterBeforeConnectThenSaslOnANewConnection() throws {
        let server = try TestServer()
        let c = try server.connect()
        c.send("CAP LS 302")
        c.send("CAP REQ :standard-replies")
        c.send("REGISTER alice alice@example.org hunter2hunter2")
        let ok = try c.expect(command: "REGISTER")
        XCTAssertEqual(Array(ok.params.prefix(2)), ["SUCCESS", "alice"])
        try c.expect(command: "900")
        c.send("REGISTER bob * short")
        try c.expect(command: "FAIL", "REGISTER", "ALREADY_AUTHENTICATED")
        c.send("NICK alice")
        c.send("USER alice 0 * :Alice")
        c.send("CAP END")
        try c.expect(command: "001")

        let d = try server.connect()
        d.send("CAP LS 302")
        d.send("CAP REQ :standard-replies")
        d.send("REGISTER Alice * another-password")
        let taken = try d.expect(command: "FAIL", "REGISTER", "ACCOUNT_EXISTS")
        XCTAssertTrue(taken.params.last?.hasPrefix("The account Alice already exists; log in to it with PASS Alice:") == true, "\(taken)")
        d.send("REGISTER bob * short")
        try d.expect(command: "FAIL", "REGISTER", "WEAK_PASSWORD")
        d.send("REGISTER 1bob * long-password")
        try d.expect(command: "FAIL", "REGISTER", "BAD_ACCOUNT_NAME")
        d.send("REGISTER bob not-an-email long-password")
        try d.expect(command: "FAIL", "REGISTER", "INVALID_EMAIL")
        c.close()

        let e = try server.connect()
        let burst = try e.register("alice", caps: ["account-tag"], sasl: ("alice", "hunter2hunter2"))
        XCTAssertEqual(burst.first?.command, "001")
        e.send("WHOIS alice")
        try e.expect(command: "330", "alice", "alice")
    }

    /// Someone who joins as a guest and makes an account there becomes a member of those rooms (the
    /// manager of one they run) and is put back in them next time; logging in mid-session also
    /// gives the account's role where it has one and rejoins its other rooms.
    func testLoggingInMidSessionMakesTheGuestsRoomsTheAccounts() throws {
        let server = try TestServer()
        try server.addAccount("alice", "alice-password")
        let alice = try server.connect()
        try alice.register("alice", pass: "alice-password")
        try alice.join("#den")
        try alice.join("#attic")

        let bob = try server.connect()
        try bob.register("bob")
        try bob.join("#den")
        try bob.join("#shed")  // bob runs it, as a guest
        bob.send("REGISTER bob * bob-password-1")
        try bob.expect(command: "REGISTER", "SUCCESS", "bob")
        try bob.expect(command: "900")
        bob.send("PRIVMSG #den :!jobs")
        try bob.expect(command: "NOTICE", "#den", "No jobs match in #den.")
        bob.close()

        let back = try server.connect()
        try back.register("bob", pass: "bob:bob-password-1")
        var rejoined: [String] = [], names: [String: String] = [:], ends = 0
        _ = try back.collect { m in
            if m.command == "JOIN" { rejoined.append(m.params[0]) }
            if m.command == "353" { names[m.params[2], default: ""] += m.params[3] }
            if m.command == "366" { ends += 1 }
            return ends == 2
        }
        XCTAssertEqual(Set(rejoined), ["#den", "#shed"])
        XCTAssertEqual(names["#shed"]?.contains("@bob"), true, "bob manages the room he ran as a guest")
        XCTAssertEqual(names["#den"]?.contains("@bob"), false, "and is a member of alice's")

        // Alice, as a guest on a second connection, logs in there: she gets her role in #den and is
        // put into #attic too.
        let guest = try server.connect()
        try guest.register("ally")
        try guest.join("#den")
        guest.send("CAP REQ :sasl")
        try guest.expect(command: "CAP", "ally", "ACK")
        guest.send("AUTHENTICATE PLAIN")
        try guest.expect(command: "AUTHENTICATE", "+")
        guest.send("AUTHENTICATE " + Data("\0alice\0alice-password".utf8).base64EncodedString())
        try guest.expect(command: "MODE", "#den", "+o", "ally")
        try guest.expect(command: "JOIN", "#attic")
        try guest.expect(command: "903")
    }

    /// A bot logs in with a token instead of the password, by PASS or SASL; revoking the token
    /// closes those connections and refuses it from then on, another account's token is refused,
    /// and the password keeps working.
    func testBotsLogInWithTokens() throws {
        let server = try TestServer()
        try server.addAccount("bob", "bob-password")
        try server.addAccount("carol", "carol-password")
        let bob = try server.connect(as: "bob")
        bob.send("PRIVMSG Chorus :!token new ci")
        let made = try bob.expect("the new token") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("Token 1 (ci): ") == true }
        let secret = String(made.params[1].dropFirst("Token 1 (ci): ".count))
        XCTAssertTrue(secret.hasPrefix("chorus-") && secret.count == 7 + 64, secret)

        let byPass = try server.connect()
        let burst = try byPass.register("cibot", pass: "bob:\(secret)")
        XCTAssertTrue(burst.contains { $0.command == "900" && $0.params[2] == "bob" }, "logged in as bob")
        let bySasl = try server.connect()
        try bySasl.register("cibot2", sasl: ("bob", secret))

        bob.send("PRIVMSG Chorus :!token")
        let listed = try bob.expect("the token's line") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("  1 ci — made ") == true }
        XCTAssertTrue(listed.params[1].contains("last used"), listed.params[1])

        func refused(_ pass: String, nick: String) throws {
            let c = try server.connect()
            c.send("PASS \(pass)")
            c.send("NICK \(nick)")
            c.send("USER \(nick) 0 * :\(nick)")
            try c.expect(command: "464")
        }
        try refused("carol:\(secret)", nick: "carol")

        bob.send("PRIVMSG Chorus :!token revoke 1")
        try bob.expect(command: "NOTICE", "bob", "Token 1 is revoked: connections logged in with it are closed, and later logins refused.")
        for bot in [byPass, bySasl] {
            let closed = try bot.expect(command: "ERROR")
            XCTAssertTrue(closed.params[0].hasSuffix("[Token revoked]"), closed.params[0])
        }
        bob.send("PING still-here")
        try bob.expect(command: "PONG", "test.chorus", "still-here")  // logged in with the password: stays
        try refused("bob:\(secret)", nick: "cibot3")
        _ = try server.connect(as: "bob", nick: "bob2")  // the password still logs in
    }

    /// SASL's payload comes in 400-byte chunks; `*` aborts an exchange, and one too long is refused.
    func testSaslInChunksAbortAndTooLong() throws {
        let server = try TestServer()
        let password = String(repeating: "long-password-", count: 22)  // 308 bytes: 420 in base64
        try server.addAccount("carol", password)
        let c = try server.connect()
        c.send("CAP LS 302")
        c.send("CAP REQ :sasl")

        c.send("AUTHENTICATE PLAIN")
        try c.expect(command: "AUTHENTICATE", "+")
        c.send("AUTHENTICATE " + String(repeating: "A", count: 400))
        c.send("AUTHENTICATE *")
        try c.expect(command: "906")

        c.send("AUTHENTICATE PLAIN")
        try c.expect(command: "AUTHENTICATE", "+")
        // Chunks that add up to more than 1200 bytes fail (904); one line over 400 bytes is too long (905).
        for _ in 0..<4 { c.send("AUTHENTICATE " + String(repeating: "A", count: 400)) }
        try c.expect(command: "904")
        c.send("AUTHENTICATE PLAIN")
        try c.expect(command: "AUTHENTICATE", "+")
        c.send("AUTHENTICATE " + String(repeating: "A", count: 401))
        try c.expect(command: "905")

        let payload = Data("\0carol\0\(password)".utf8).base64EncodedString()
        XCTAssertGreaterThan(payload.utf8.count, 400)
        c.send("AUTHENTICATE PLAIN")
        try c.expect(command: "AUTHENTICATE", "+")
        c.send("AUTHENTICATE " + payload.prefix(400))
        c.send("AUTHENTICATE " + payload.dropFirst(400))
        try c.expect(command: "900")
        try c.expect(command: "903")
        c.send("NICK carol")
        c.send("USER carol 0 * :Carol")
        c.send("CAP END")
        try c.expect(command: "001")
    }

    func testWrongSaslPasswordAndReservedNick() throws {
        let server = try TestServer()
        try server.addAccount("alice", "right-password")
        let c = try server.connect()
        c.send("CAP LS 302")
        c.send("CAP REQ :sasl")
        c.send("AUTHENTICATE PLAIN")
        try c.expect(command: "AUTHENTICATE", "+")
        c.send("AUTHENTICATE " + Data("\0alice\0wrong-password".utf8).base64EncodedString())
        try c.expect(command: "904")
        c.send("AUTHENTICATE SCRAM-SHA-256")
        try c.expect(command: "908")
        c.send("NICK alice")
        c.send("USER a 0 * :A")
        c.send("CAP END")
        let reserved = try c.expect(command: "433", "alice")
        XCTAssertTrue(reserved.params.last!.contains("reserved"))
        c.send("NICK guest")
        try c.expect(command: "001")
        c.send("NICK Alice")
        try c.expect(command: "433")
    }

    /// A database that cannot answer is not a wrong password: the login is refused as unavailable,
    /// nothing is counted against the account, and logins work again once it answers.
    func testALoginTheStoreCannotCheckIsUnavailableNotWrong() throws {
        let server = try TestServer()
        try server.addAccount("alice", "right-password")
        try TestStore.renameTable("accounts", to: "accounts_away", folder: server.folder.path)

        let sasl = try server.connect()
        sasl.send("CAP LS 302")
        sasl.send("CAP REQ :sasl standard-replies")
        sasl.send("AUTHENTICATE PLAIN")
        try sasl.expect(command: "AUTHENTICATE", "+")
        sasl.send("AUTHENTICATE " + Data("\0alice\0right-password".utf8).base64EncodedString())
        let fail = try sasl.expect(command: "FAIL")
        XCTAssertEqual(Array(fail.params.prefix(3)), ["AUTHENTICATE", "TEMPORARILY_UNAVAILABLE", "alice"])
        let refused = try sasl.expect(command: "904")
        XCTAssertTrue(refused.params.last!.contains("unavailable"), refused.params.last!)

        let pass = try server.connect()
        pass.send("PASS alice:right-password")
        pass.send("NICK alice")
        pass.send("USER a 0 * :A")
        // Without standard-replies the refusal is a NOTICE, in the same words.
        try pass.expect("the refusal") { $0.command == "NOTICE" && $0.params.last!.contains("Logins are unavailable") }
        let closed = try pass.expect(command: "ERROR")
        XCTAssertFalse(closed.params.last!.contains("Bad password"), closed.params.last!)

        try TestStore.renameTable("accounts_away", to: "accounts", folder: server.folder.path)
        let back = try server.connect()
        try back.register("alice", sasl: ("alice", "right-password"))
    }

    func testPassLogsInAndWrongPassDisconnects() throws {
        let server = try TestServer()
        try server.addAccount("buildbot", "token-123456")
        let bot = try server.connect()
        try bot.register("buildbot", pass: "buildbot:token-123456")
        bot.send("WHOIS buildbot")
        try bot.expect(command: "330", "buildbot", "buildbot")

        let bad = try server.connect()
        bad.send("PASS buildbot:nope-nope")
        bad.send("NICK impostor")
        bad.send("USER x 0 * :x")
        try bad.expect(command: "464")
        try bad.expect(command: "ERROR")
    }

    func testOperAndKill() throws {
        let hash = try PasswordHasher(logRounds: 4).hash("oper-secret")
        let server = try TestServer(configure: { $0.operators = [.init(name: "root", passwordHash: hash)] })
        let o = try server.connect(), victim = try server.connect()
        try o.register("admin")
        try victim.register("spammer")
        o.send("KILL spammer :no")
        try o.expect(command: "481")
        o.send("OPER root wrong")
        try o.expect(command: "464")
        o.send("OPER nobody x")
        try o.expect(command: "491")
        o.send("OPER root oper-secret")
        try o.expect(command: "381")
        o.send("NOTICE $* :maintenance at noon")
        try victim.expect(command: "NOTICE", "$*", "maintenance at noon")
        o.send("KILL spammer :spamming")
        let error = try victim.expect(command: "ERROR")
        XCTAssertTrue(error.params[0].contains("Killed (admin (spamming))"))
        // Without a reason (as Ergo allows), and with none at all: 461.
        let quiet = try server.connect()
        try quiet.register("quiet")
        o.send("KILL quiet")
        XCTAssertTrue(try quiet.expect(command: "ERROR").params[0].contains("Killed (admin (no reason given))"))
        o.send("KILL")
        try o.expect(command: "461")

        // LUSERS keeps count of invisible users and operators as they change, come and go.
        let shy = try server.connect()
        try shy.register("shy")
        shy.send("MODE shy +i")
        try shy.expect(command: "MODE", "shy", "+i")
        func lusers() throws -> (String, String?) {
            o.send("LUSERS")
            let lines = try o.collect(until: { $0.command == "266" })
            return (lines.first { $0.command == "251" }!.params[1], lines.first { $0.command == "252" }?.params[1])
        }
        var (users, opers) = try lusers()
        XCTAssertEqual(users, "There are 1 users and 1 invisible on 1 server")
        XCTAssertEqual(opers, "1")
        o.send("MODE admin -o")
        try o.expect(command: "MODE", "admin", "-o")
        shy.send("QUIT")
        try shy.expect(command: "ERROR")
        (users, opers) = try lusers()
        XCTAssertEqual(users, "There are 1 users and 0 invisible on 1 server")
        XCTAssertNil(opers, "no operator online: 252 is left out")
    }
}
