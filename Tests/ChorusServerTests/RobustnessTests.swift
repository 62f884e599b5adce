import ChorusIRC
@testable import ChorusServer
import Foundation
#if canImport(Glibc)
import Glibc
import NIOSSL
#endif
import XCTest

final class RobustnessTests: XCTestCase {
    func testBadInputGetsErrorsAndTheConnectionGoesOn() throws {
        let server = try TestServer()
        let c = try server.connect()
        try c.register("alice")
        c.send("PRIVMSG #x :" + String(repeating: "a", count: 600))
        try c.expect(command: "417")
        c.send(String(repeating: "b", count: 20_000))
        try c.expect(command: "417")
        c.send("FROBNICATE now")
        try c.expect(command: "421", "FROBNICATE")
        c.send("PRI%MSG x")
        try c.expect(command: "421")
        // A chat command typed alone at a terminal: the 421 says how to send it.
        c.send("JOIN #kitchen")
        try c.expect(command: "366")
        c.send("!job add Fix the sink")
        let hint = try c.expect(command: "421", "!job")
        XCTAssertEqual(hint.params.last, "Unknown command: a chat command goes in a message, as PRIVMSG #kitchen :!job … or PRIVMSG Chorus :!job …")
        c.send("PART #kitchen")
        c.sendRaw(Array("PRIVMSG alice :a\u{0}b\r\n".utf8))
        // No standard-replies asked for: the FAIL comes as a NOTICE a telnet user can read.
        try c.expect(command: "NOTICE", "alice", "Lines may not contain NUL or a bare CR")
        c.sendRaw([0xff, 0xfe, 0x0d, 0x0a])
        // UTF8ONLY asks for a FAIL whatever the client negotiated.
        try c.expect("not UTF-8") { $0.command == "FAIL" && $0.params.last?.contains("UTF-8 only") == true }
        c.send("JOIN")
        try c.expect(command: "461", "JOIN")
        c.send("MODE #nope +o x")
        try c.expect(command: "403")
        c.send("JOIN #bad,name")
        c.send("JOIN bad")
        try c.expect(command: "403", "bad")
        c.sendRaw(Array("PRIVMSG alice :caf\u{e9} \r\n".utf8) )
        c.send("PING still-alive")
        try c.expect(command: "PONG")
    }

    /// A line the parser refuses has no reply of its own; its answer still carries server-time.
    func testAnswersToUnparsableLinesCarryServerTime() throws {
        let server = try TestServer()
        let c = try server.connect()
        try c.register("tim", caps: ["server-time", "standard-replies"])
        c.send("!job add water the plants")  // a bot command typed as a verb: no such command
        XCTAssertNotNil(try c.expect(command: "421", "!job").tag("time"))
        c.send(String(repeating: "b", count: 20_000))
        XCTAssertNotNil(try c.expect(command: "417").tag("time"))
        c.sendRaw(Array("PRIVMSG tim :a\u{0}b\r\n".utf8))
        XCTAssertNotNil(try c.expect(command: "FAIL", "*", "INVALID_LINE").tag("time"))
        c.send("PING after")
        try c.expect(command: "PONG")
    }

    /// A TLS client on the plaintext port is told at once where to go, and closed, instead of
    /// getting notices about its handshake bytes and waiting for the registration timeout.
    func testATLSHandshakeOnThePlaintextPortIsClosedAtOnce() throws {
        let server = try TestServer()
        let c = try server.connect()
        // The start of a ClientHello: handshake record, TLS 1.0 record version, length, then hello.
        c.sendRaw([0x16, 0x03, 0x01, 0x00, 0xF4, 0x01, 0x00, 0x00, 0xF0, 0x03, 0x03] + Array(repeating: 0x2A, count: 64))
        let error = try c.expect(command: "ERROR", timeout: 2)
        XCTAssertTrue(error.params[0].contains("This port is plaintext: connect with TLS to port \(server.tlsPort)"), error.params[0])
        XCTAssertTrue(c.drain(for: 0.5).isEmpty, "nothing after the ERROR: the connection is closed")
    }

    /// TLS 1.2 offers Mozilla's "intermediate" suites only: a client that knows nothing but CBC with
    /// SHA-1 gets no session; one that offers an AEAD suite does.
    func testTLS12OffersNoCBCWithSHA1() throws {
        let server = try TestServer()
        func client(_ suites: [NIOTLSCipher]) -> TLSConfiguration {
            var c = TLSConfiguration.makeClientConfiguration()
            c.certificateVerification = .none
            c.maximumTLSVersion = .tlsv12
            c.cipherSuiteValues = suites
            return c
        }
        let old = try server.connect(tls: true, tlsConfiguration: client([.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
                                                                          .TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA]))
        old.send("NICK old")
        old.send("USER old 0 * :Old")
        XCTAssertTrue(old.drain(for: 1).isEmpty, "no handshake, so no welcome")
        let current = try server.connect(tls: true, tlsConfiguration: client([.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]))
        try current.register("current")
    }

    /// A certificate or key the server cannot use stops the start with an error naming the file.
    func testABadCertificateOrKeyIsNamed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = folder.appendingPathComponent("garbage.pem").path
        try "not a certificate\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        // A pair that works, made the way the server makes its own.
        let cert = folder.appendingPathComponent("cert.pem").path, key = folder.appendingPathComponent("key.pem").path
        _ = try Certificates.ensureSelfSigned(certPath: cert, keyPath: key, serverName: "test")
        let otherCert = folder.appendingPathComponent("other-cert.pem").path, otherKey = folder.appendingPathComponent("other-key.pem").path
        _ = try Certificates.ensureSelfSigned(certPath: otherCert, keyPath: otherKey, serverName: "other")
        for (certPath, keyPath, named) in [(garbage, key, garbage), (cert, garbage, garbage), (cert, otherKey, otherKey)] {
            XCTAssertThrowsError(try TestServer(configure: { $0.certificatePath = certPath; $0.keyPath = keyPath })) { error in
                XCTAssertTrue("\(error)".contains(named), "\(error)")
            }
        }
        XCTAssertNoThrow(try TestServer(configure: { $0.certificatePath = cert; $0.keyPath = key }))
    }

    func testRandomGarbageDoesNotCrashTheServer() throws {
        let server = try TestServer()
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5 {
            let c = try server.connect()
            var bytes: [UInt8] = []
            for _ in 0..<4000 { bytes.append(UInt8.random(in: 0...255, using: &rng)) }
            c.sendRaw(bytes + Array("\r\nNICK x\r\nUSER x 0 * :x\r\n".utf8))
            _ = c.drain(for: 0.2)
            c.close()
        }
        let ok = try server.connect()
        try ok.register("survivor")
    }

    func testFloodingClientIsDisconnected() throws {
        let server = try TestServer(configure: { $0.floodBurst = 5; $0.floodRate = 2; $0.floodQueue = 20 })
        let c = try server.connect()
        try c.register("flooder")
        for i in 0..<200 { c.send("PRIVMSG flooder :\(i)") }
        let error = try c.expect(command: "ERROR")
        XCTAssertTrue(error.params[0].contains("Excess Flood"))
    }

    func testPerIPConnectionLimit() throws {
        let server = try TestServer(configure: { $0.maxConnectionsPerIP = 2 })
        let a = try server.connect(), b = try server.connect()
        try a.register("a1")
        try b.register("b1")
        let c = try server.connect()
        let error = try c.expect(command: "ERROR")
        XCTAssertTrue(error.params[0].contains("too many connections"))
    }

    func testTLSClientTalksToPlaintextClient() throws {
        let server = try TestServer()
        let secure = try server.connect(tls: true), plain = try server.connect()
        try secure.register("sec")
        try plain.register("pla")
        try secure.join("#mixed")
        try plain.join("#mixed")
        secure.send("PRIVMSG #mixed :over TLS")
        try plain.expect(command: "PRIVMSG", "#mixed", "over TLS")
        plain.send("WHOIS sec")
        try plain.expect(command: "671", "sec")
    }

    #if os(Linux)
    /// Out of file descriptors, a waiting client is told the server is full and closed, instead of
    /// hanging while the server's loop retries `accept` at full speed; once descriptors are free
    /// again, clients are taken as before. (The clients' ends are in this process too, so the test
    /// lowers the process's own limit and fills every free descriptor but one.)
    func testOutOfDescriptorsTurnsAClientAwayWithoutSpinning() throws {
        let server = try TestServer()
        let irc = server.server!
        let first = try server.connect()
        try first.register("first")

        let descriptors = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var saved = rlimit()
        getrlimit(descriptors, &saved)
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { Int($0) }
        var low = saved
        low.rlim_cur = rlim_t(open.max()! + 16)
        XCTAssertEqual(setrlimit(descriptors, &low), 0)
        var fillers: [CInt] = []
        func release() {
            fillers.forEach { close($0) }
            fillers = []
            setrlimit(descriptors, &saved)
        }
        defer { release() }
        while fillers.count < 100_000, case let fd = Glibc.open("/dev/null", O_RDONLY), fd >= 0 { fillers.append(fd) }
        XCTAssertEqual(errno, EMFILE)
        close(fillers.removeLast())  // one for the client's socket; the server has none left

        let refused = try RawClient(port: server.plainPort, receiveBuffer: 4096)
        XCTAssertTrue(try refused.read(until: "ERROR").contains("server is full"))
        usleep(300_000)
        let (failed, turnedAway) = try irc.loop.submit { [weak irc] in
            (irc?.listeners.acceptFailures.failed ?? -1, irc?.listeners.acceptFailures.turnedAway ?? -1)
        }.wait()
        XCTAssertEqual(turnedAway, 1)
        XCTAssertLessThanOrEqual(failed, 2, "the loop kept retrying accept: \(failed)")

        // On the TLS port a client expects a handshake: no plaintext line, only the close.
        close(fillers.removeLast())
        let refusedTLS = try RawClient(port: server.tlsPort, receiveBuffer: 4096)
        let (bytes, closed) = refusedTLS.readToEnd()
        XCTAssertTrue(closed)
        XCTAssertEqual(bytes, 0)
        XCTAssertEqual(try irc.loop.submit { [weak irc] in irc?.listeners.acceptFailures.turnedAway ?? -1 }.wait(), 2)

        release()
        let later = try server.connect()
        try later.register("later")
        first.send("PRIVMSG later :still here")
        try later.expect(command: "PRIVMSG", "later", "still here")
    }
    #endif
}
