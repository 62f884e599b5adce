import ChorusServer
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// What one web client can make the server hold: a connection that pipelines requests and never
/// reads, and many connections from one address that never become WebSockets.
final class WebBoundsTests: XCTestCase {
    /// A TCP connection with nothing in between: it sends, and reads only when told to.
    final class RawConnection {
        let fd: Int32

        init(port: Int, receiveBuffer: Int32? = nil) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw TestError.failed("cannot connect to \(port)") }
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// How many of the bytes the kernel took before it would wait.
        @discardableResult
        func send(_ text: String) -> Int {
            Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// What arrives within `seconds` (until the server closes, if it does), and whether it closed.
        func read(for seconds: TimeInterval) -> (bytes: [UInt8], closed: Bool) {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n == 0 { return (bytes, true) }
                if n > 0 { bytes += buffer[..<n] }
            }
            return (bytes, false)
        }
    }

    private func plainWebServer(_ configure: (inout ServerConfig) -> Void = { _ in }) throws -> TestServer {
        try TestServer(configure: { config in
            config.webPlain = .init(host: "127.0.0.1", port: 0)
            configure(&config)
        })
    }

    /// The server's count of HTTP requests read, from its own `/metrics`.
    private func requestsRead(_ server: TestServer) throws -> Int {
        let scrape = try RawConnection(port: server.webPlainPort)
        scrape.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let text = String(decoding: scrape.read(for: 3).bytes, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("chorus_web_requests_total ") }),
              let count = Double(line.split(separator: " ")[1]) else { throw TestError.failed("no request count in \(text)") }
        return Int(count) - 1  // not this scrape
    }

    func testAConnectionThatPipelinesAndNeverReadsIsAnsweredAsItReads() throws {
        let server = try plainWebServer()
        let hoarder = try RawConnection(port: server.webPlainPort, receiveBuffer: 4096)
        let requests = 1000
        var sent = 0
        for _ in 0..<requests { sent += hoarder.send("GET /chat.js HTTP/1.1\r\nHost: x\r\n\r\n") > 0 ? 1 : 0 }
        Thread.sleep(forTimeInterval: 1)
        // Each answer (the web client's largest script, 22 KB) waits until the socket took the one before:
        // what the kernel's buffers hold, not a thousand of them in the server's memory.
        let answeredWhileStalled = try requestsRead(server)
        XCTAssertGreaterThan(answeredWhileStalled, 0)
        XCTAssertLessThan(answeredWhileStalled, 400, "requests read while the client read nothing")
        // Once it reads, every request is answered, in order, none lost.
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(30)
        var answers = 0
        while answers < sent && Date() < deadline {
            received += hoarder.read(for: 0.5).bytes
            answers = String(decoding: received, as: UTF8.self).components(separatedBy: "HTTP/1.1 200 OK").count - 1
        }
        XCTAssertEqual(answers, sent)
    }

    func testConnectionsThatNeverBecomeWebSocketsCountTowardsTheirAddress() throws {
        let server = try plainWebServer { $0.maxConnectionsPerIP = 3 }
        var idle = try (0..<3).map { _ in try RawConnection(port: server.webPlainPort) }
        Thread.sleep(forTimeInterval: 0.3)
        let fourth = try RawConnection(port: server.webPlainPort)
        fourth.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(fourth.read(for: 3).closed, "the address already has its three")
        idle.removeFirst()  // one of them goes
        Thread.sleep(forTimeInterval: 0.3)
        let fifth = try RawConnection(port: server.webPlainPort)
        fifth.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(String(decoding: fifth.read(for: 3).bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        XCTAssertEqual(idle.count, 2)
    }
}
