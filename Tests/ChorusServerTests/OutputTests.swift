import Glibc
@testable import ChorusServer
import ChorusIRC
import Foundation
import NIOCore
import XCTest

/// Output to a client that does not keep up. Plaintext output goes straight to the socket while
/// nothing of the client's waits in the channel; these tests fill the socket so that the rest must
/// wait in the channel, and check that nothing is lost, reordered or allowed to grow without end.
final class OutputTests: XCTestCase {
    /// `slow` joins #flood and reads nothing; `fast` sends numbered lines there in bursts of 1,000
    /// until `enough` holds (checked after each burst is relayed) or 200 bursts (~34 MB) are out.
    /// The kernel buffers megabytes on loopback before the server's socket is full; hence bursts.
    private func flood(_ server: TestServer, until enough: () throws -> Bool) throws -> (slow: RawClient, fast: TestClient, sent: Int) {
        let slow = try RawClient(port: server.plainPort, receiveBuffer: 4096)
        slow.send("NICK slow\r\nUSER slow 0 * :Slow Reader\r\nJOIN #flood\r\n")
        _ = try slow.read(until: " 366 slow #flood ")

        let fast = try server.connect()
        try fast.register("fast")
        try fast.join("#flood")
        let padding = String(repeating: "x", count: 150)
        var sent = 0
        for burst in 0..<200 {
            var bytes = ""
            for _ in 0..<1000 {
                bytes += "PRIVMSG #flood :line \(sent) \(padding)\r\n"
                sent += 1
            }
            fast.sendRaw(Array(bytes.utf8))
            // The server answers lines in order: after the PONG, every PRIVMSG before it was relayed.
            fast.send("PING burst-\(burst)")
            _ = try fast.take("PONG burst-\(burst)", timeout: 20) { $0.command == "PONG" && $0.params.last == "burst-\(burst)" }
            if try enough() { break }
        }
        return (slow, fast, sent)
    }

    /// Read on the server's loop. The task holds the server weakly: a task is released on the loop
    /// after it ran, and a TestServer released last there would shut down from its own loop (a trap).
    private func writesInChannel(_ server: TestServer, of nick: String) throws -> Int? {
        let irc = server.server!
        return try irc.loop.submit { [weak irc] in irc?.registry.nicks[nick]?.writesInChannel }.wait().map { Int($0) }
    }

    func testASlowReaderGetsEveryLineInOrder() throws {
        let server = try TestServer(configure: { $0.sendQueueBytes = 64 * 1024 * 1024 })
        // Until the socket is full and output waits in the channel: the path this test is about.
        let (slow, fast, flooded) = try flood(server) { try writesInChannel(server, of: "slow") ?? 0 > 0 }
        var sent = flooded
        XCTAssertGreaterThan(try writesInChannel(server, of: "slow") ?? 0, 0, "the slow reader's socket never filled")

        // The reader catches up while the room goes on talking: new lines must queue behind the old.
        var text = ""
        for _ in 0..<400 {
            text += slow.receiveSome()
            fast.sendRaw(Array((0..<20).map { _ in defer { sent += 1 }; return "PRIVMSG #flood :line \(sent) more\r\n" }.joined().utf8))
        }
        text += try slow.read(until: "line \(sent - 1) ", timeout: 30)
        var expected = 0
        for line in text.split(separator: "\r\n") {
            guard let m = try? Message.parse(String(line)), m.command == "PRIVMSG", let body = m.params.last else { continue }
            let number = Int(body.dropFirst(5).prefix(while: \.isNumber))
            guard number == expected else {
                return XCTFail("after line \(expected - 1) came \(number.map(String.init) ?? body.prefix(20).description)")
            }
            expected += 1
        }
        XCTAssertEqual(expected, sent, "lines lost")

        // Once the channel has written it all, output goes straight to the socket again.
        let deadline = Date().addingTimeInterval(5)
        while try writesInChannel(server, of: "slow") != 0, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(try writesInChannel(server, of: "slow"), 0)
        slow.send("PING after-the-flood\r\n")
        XCTAssertTrue(try slow.read(until: "after-the-flood").contains("PONG"))
    }

    func testAClientThatStopsReadingIsDisconnectedAtItsSendQueueLimit() throws {
        let server = try TestServer(configure: { $0.sendQueueBytes = 64 * 1024 })
        let (_, fast, _) = try flood(server) { try writesInChannel(server, of: "slow") == nil }
        XCTAssertNil(try writesInChannel(server, of: "slow"), "still connected")
        try fast.expect(command: "QUIT", "SendQ exceeded", timeout: 10)  // the server's reason, not the user's
    }

    /// Every line goes out at once (no Nagle delay), and the server sets no socket option that
    /// needs privileges: setting SO_DEBUG instead of TCP_NODELAY once made every connection fail
    /// for a server running as its own user (the systemd unit's), and pass as root.
    func testAcceptedSocketsSendWithoutDelayAndWithoutPrivilegedOptions() throws {
        let server = try TestServer()
        let plain = try server.connect()
        try plain.register("plain")
        let secure = try server.connect(tls: true)
        try secure.register("secure")
        let irc = server.server!
        let options = try irc.loop.submit { [weak irc] () -> [String: [Int]] in
            var found: [String: [Int]] = [:]
            for nick in ["plain", "secure"] {
                guard let options = irc?.registry.nicks[nick]?.channel.syncOptions else { continue }
                found[nick] = [try options.getOption(ChannelOptions.tcpOption(.tcp_nodelay)),
                               try options.getOption(ChannelOptions.socketOption(.init(rawValue: SO_DEBUG)))]
            }
            return found
        }.wait()
        XCTAssertEqual(options["plain"], [1, 0], "plaintext socket: [TCP_NODELAY, SO_DEBUG]")
        XCTAssertEqual(options["secure"], [1, 0], "TLS socket: [TCP_NODELAY, SO_DEBUG]")
    }

    /// The server sends to a plaintext socket by its descriptor, which the kernel hands to the next
    /// connection once NIO closes it. Members vanish (reset or closed) while the room talks, and
    /// newcomers connect at once and are likely to get their descriptors: a send after the close
    /// would reach a newcomer, who joined nothing. (Debug builds also assert on every send.)
    func testMembersThatVanishMidConversationLeaveNothingForTheNextConnection() throws {
        let server = try TestServer()
        let talker = try server.connect()
        try talker.register("talker")
        try talker.join("#busy")
        let stayer = try RawClient(port: server.plainPort, receiveBuffer: 1 << 20)
        stayer.send("NICK stayer\r\nUSER stayer 0 * :Stays\r\nJOIN #busy\r\n")
        _ = try stayer.read(until: " 366 stayer #busy ")

        var sent = 0
        func talk(_ lines: Int) {
            talker.sendRaw(Array((0..<lines).map { _ in defer { sent += 1 }; return "PRIVMSG #busy :line \(sent)\r\n" }.joined().utf8))
        }
        for round in 0..<8 {
            var members: [RawClient] = []
            for k in 0..<8 {
                let member = try RawClient(port: server.plainPort, receiveBuffer: 4096)
                member.send("NICK m\(round)x\(k)\r\nUSER m 0 * :Member\r\nJOIN #busy\r\n")
                _ = try member.read(until: " 366 m\(round)x\(k) #busy ")
                members.append(member)
            }
            talk(300)
            for (k, member) in members.enumerated() { member.vanish(reset: k % 2 == 0) }
            talk(300)
            var newcomers: [RawClient] = []
            for k in 0..<8 {
                let newcomer = try RawClient(port: server.plainPort, receiveBuffer: 1 << 20)
                newcomer.send("NICK n\(round)x\(k)\r\nUSER n 0 * :Newcomer\r\n")
                newcomers.append(newcomer)
            }
            talk(300)
            for (k, newcomer) in newcomers.enumerated() {
                newcomer.send("PING check-\(k)\r\n")
                let seen = try newcomer.read(until: "check-\(k)")
                XCTAssertFalse(seen.contains("#busy"), "a line of #busy reached n\(round)x\(k), who joined nothing:\n\(seen.suffix(300))")
            }
        }
        // And the member who stayed heard every line, in order.
        let text = try stayer.read(until: "line \(sent - 1)\r", timeout: 30)
        let numbers = text.split(separator: "\r\n").compactMap { line -> Int? in
            guard let m = try? Message.parse(String(line)), m.command == "PRIVMSG" else { return nil }
            return Int(m.params.last!.dropFirst(5))
        }
        XCTAssertEqual(numbers, Array(0..<sent))
    }

    /// A turn's lines to one client are gathered by `ByteBuffer.append`: bytes shared with other
    /// recipients stay as they were, small and large lines come out whole and in order.
    func testATurnsLinesAreGatheredWithoutTouchingSharedBytes() {
        let allocator = ByteBufferAllocator()
        let shared = allocator.buffer(string: "first\r\n")
        var out = shared
        out.append(allocator.buffer(string: ""), allocator: allocator)
        XCTAssertEqual(out.capacity, shared.capacity, "an empty line changes nothing")
        var expected = "first\r\n"
        for i in 0..<200 {  // past the first 4 KiB, so the buffer grows as well
            let line = "line \(i) " + String(repeating: "y", count: i) + "\r\n"
            out.append(allocator.buffer(string: line), allocator: allocator)
            expected += line
        }
        XCTAssertEqual(String(buffer: out), expected)
        XCTAssertEqual(String(buffer: shared), "first\r\n", "the broadcast's own bytes are not written into")

        // A first line larger than a turn's room is shared too, and copied before it is added to.
        let big = allocator.buffer(string: String(repeating: "z", count: 5000) + "\r\n")
        var other = big
        other.append(allocator.buffer(string: "after\r\n"), allocator: allocator)
        XCTAssertEqual(String(buffer: other), String(repeating: "z", count: 5000) + "\r\nafter\r\n")
        XCTAssertEqual(big.readableBytes, 5002)
        XCTAssertFalse(String(buffer: big).contains("after"))
    }
}

/// A plaintext client on a blocking socket that reads only when asked, with a small receive buffer,
/// so that the server's side of the connection fills. Every read is bounded by a deadline.
final class RawClient {
    private var fd: Int32
    private var received = Data()

    init(port: Int, receiveBuffer: Int32) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError.failed("socket: errno \(errno)") }
        var size = receiveBuffer
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw TestError.failed("connect: errno \(errno)") }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Closes the connection: with a reset (RST, as a crashed client) or the usual way (FIN).
    func vanish(reset: Bool) {
        if reset {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        close(fd)
        fd = -1
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            offset += n
        }
    }

    /// What one read returns (up to 64 KiB), or nothing after 100 ms.
    func receiveSome() -> String {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return "" }
        received.append(contentsOf: buffer[0..<n])
        // Whole lines only; a partial one stays for the next read.
        guard let end = received.lastIndex(of: UInt8(ascii: "\n")) else { return "" }
        let taken = String(decoding: received[...end], as: UTF8.self)
        received = Data(received[(end + 1)...])
        return taken
    }

    /// Reads until the peer closes or `timeout` passes: how many bytes came, and whether it closed.
    func readToEnd(timeout: TimeInterval = 5) -> (bytes: Int, closed: Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        var count = received.count
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { return (count, true) }
            if n > 0 { count += n } else if errno != EAGAIN && errno != EWOULDBLOCK { return (count, true) }
        }
        return (count, false)
    }

    /// Everything received up to and including the line that contains `marker`.
    func read(until marker: String, timeout: TimeInterval = 5) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        let needle = Data(marker.utf8)
        var searched = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            // Bytes, not Characters: "\r\n" is one Character, so a String search for "\n" misses it.
            let from = received.index(received.startIndex, offsetBy: max(0, searched - needle.count))
            if let range = received.range(of: needle, in: from..<received.endIndex),
               let end = received[range.upperBound...].firstIndex(of: UInt8(ascii: "\n")) {
                let taken = String(decoding: received[...end], as: UTF8.self)
                received = Data(received[(end + 1)...])
                return taken
            }
            searched = received.count
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { received.append(contentsOf: buffer[0..<n]) } else if n == 0 { break }
        }
        XCTFail("no \"\(marker)\" within \(timeout)s; received \(received.count) bytes, ending:\n"
                + String(decoding: received.suffix(600), as: UTF8.self))
        throw TestError.timeout(marker)
    }
}
