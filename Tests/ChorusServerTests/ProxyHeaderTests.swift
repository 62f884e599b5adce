@testable import ChorusServer
import Foundation
import NIOCore
import XCTest

/// A balancer in front (HAProxy's send-proxy, send-proxy-v2) says who the client is: the header is
/// read from the configured balancers only, before anything else, and a bad one closes the connection.
final class ProxyHeaderTests: XCTestCase {
    private func parse(_ bytes: [UInt8]) -> ProxyHeader.Parse {
        ProxyHeader.parse(ByteBuffer(bytes: bytes).readableBytesView)
    }

    private static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    /// A v2 PROXY header over TCP/IPv4 from `source`, with `extra` bytes of TLVs after the addresses.
    static func v2(_ source: [UInt8], extra: Int = 0) -> [UInt8] {
        let length = 12 + extra
        return v2Signature + [0x21, 0x11, UInt8(length >> 8), UInt8(length & 0xFF)] + source + [127, 0, 0, 1, 0xC8, 0x00, 0x1A, 0x0B]
            + Array(repeating: 0, count: extra)
    }

    func testBothVersionsAreReadAndBadHeadersAreNot() {
        let v1 = Array("PROXY TCP4 203.0.113.7 192.0.2.1 51234 6697\r\nNICK".utf8)
        XCTAssertEqual(parse(v1), .found(.client("203.0.113.7"), length: v1.count - 4))
        XCTAssertEqual(parse(Array("PROXY TCP6 2001:db8::7 2001:db8::1 51234 6697\r\n".utf8)), .found(.client("2001:db8::7"), length: 47))
        XCTAssertEqual(parse(Array("PROXY UNKNOWN\r\n".utf8)), .found(.balancer, length: 15))
        XCTAssertEqual(parse(Array("PROXY TCP4 203.0.1".utf8)), .needMore)
        XCTAssertEqual(parse(Array("PROX".utf8)), .needMore)
        XCTAssertEqual(parse(Array("NICK ann\r\nUSER".utf8)), .invalid("not a PROXY protocol header"))
        XCTAssertEqual(parse(Array("PROXY TCP4 2001:db8::7 192.0.2.1 1 2\r\n".utf8)), .invalid("PROXY header with a bad address"))
        XCTAssertEqual(parse(Array("PROXY TCP4 203.0.113.7 192.0.2.1 99999 2\r\n".utf8)), .invalid("PROXY header with a bad port"))
        XCTAssertEqual(parse(Array(("PROXY TCP4 " + String(repeating: "9", count: 120)).utf8)), .invalid("PROXY header longer than 107 bytes"))

        let header = Self.v2([198, 51, 100, 9], extra: 5)
        XCTAssertEqual(parse(header + Array("NICK".utf8)), .found(.client("198.51.100.9"), length: header.count))
        XCTAssertEqual(parse(Array(header.prefix(20))), .needMore)
        XCTAssertEqual(parse(Array(Self.v2Signature.prefix(7))), .needMore)
        var six = Self.v2Signature + [0x21, 0x21, 0x00, 36]
        six += [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [7] + Array(repeating: 0, count: 16) + [0, 1, 0, 2]
        XCTAssertEqual(parse(six), .found(.client("2001:db8::7"), length: 52))
        XCTAssertEqual(parse(Self.v2Signature + [0x20, 0x00, 0x00, 0x00]), .found(.balancer, length: 16))
        XCTAssertEqual(parse(Self.v2Signature + [0x31, 0x11, 0x00, 0x0C] + Array(repeating: 0, count: 12)),
                       .invalid("PROXY header of an unknown version"))
        XCTAssertEqual(parse(Self.v2Signature + [0x21, 0x11, 0xFF, 0xFF]), .invalid("PROXY header longer than 1024 bytes"))
    }

    func testABalancersClientsAreKnownByTheirOwnAddresses() throws {
        let server = try TestServer(configure: { config in
            config.proxyFrom = ["127.0.0.1"]
            config.maxConnectionsPerIP = 2
        })
        // Version 1, and the header in the same packet as the first lines.
        let ann = try server.connect()
        ann.sendRaw(Array("PROXY TCP4 203.0.113.7 127.0.0.1 51234 6667\r\nNICK ann\r\nUSER ann 0 * :Ann\r\n".utf8))
        let welcome = try ann.expect(command: "001")
        XCTAssertTrue(welcome.params.last?.hasSuffix("ann!~ann@203.0.113.7") == true, "\(welcome)")
        ann.send("WHOIS ann")
        XCTAssertEqual(try ann.expect(command: "338").params[2], "203.0.113.7")

        // Version 2, the header alone first; and the per-address limit counts the client's address.
        let ben = try server.connect()
        ben.sendRaw(Self.v2([203, 0, 113, 7]))
        usleep(50_000)
        try ben.register("ben")
        let third = try server.connect()
        third.sendRaw(Self.v2([203, 0, 113, 7]))
        XCTAssertTrue(try third.expect(command: "ERROR").params[0].contains("too many connections from 203.0.113.7"))
        let other = try server.connect()
        other.sendRaw(Array("PROXY TCP4 198.51.100.9 127.0.0.1 1 6667\r\n".utf8))
        try other.register("cat")

        // From the balancer, a connection without a header is closed; nothing of it is read.
        let bare = try server.connect()
        bare.send("NICK dan")
        bare.send("USER dan 0 * :Dan")
        XCTAssertTrue(bare.drain(for: 0.5).isEmpty)
        XCTAssertTrue(bare.isClosed)
    }

    func testTheWebSideJudgesRequestsByTheClientsAddress() throws {
        let server = try TestServer(configure: { config in
            config.webPlain = .init(host: "127.0.0.1", port: 0)
            config.proxyFrom = ["127.0.0.1"]
        })
        func get(_ path: String, header: String?) throws -> [String] {
            let c = try TestClient(port: server.webPlainPort, tls: false)
            defer { c.close() }
            c.sendRaw(Array(((header ?? "") + "GET \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").utf8))
            return c.drainRaw(for: 0.5)
        }
        // /metrics is for this machine only: a client the balancer speaks for is not on it.
        XCTAssertEqual(try get("/metrics", header: "PROXY TCP4 203.0.113.9 127.0.0.1 1 8080\r\n").first, "HTTP/1.1 403 Forbidden")
        XCTAssertEqual(try get("/metrics", header: "PROXY TCP4 127.0.0.1 127.0.0.1 1 8080\r\n").first, "HTTP/1.1 200 OK")
        XCTAssertEqual(try get("/health", header: nil), [], "the balancer's connection without its header is closed unanswered")
    }

    /// IRC over WebSocket behind the balancer: the person in the browser is known by their own
    /// address, and a connection from the balancer without its header is not upgraded.
    func testAWebSocketClientIsKnownByItsOwnAddress() throws {
        let server = try TestServer(configure: { config in
            config.webPlain = .init(host: "127.0.0.1", port: 0)
            config.proxyFrom = ["127.0.0.1"]
        })
        let wes = try TestClient(webSocketPort: server.webPlainPort, tls: false,
                                 proxyHeader: "PROXY TCP4 203.0.113.8 127.0.0.1 40000 8080\r\n")
        try wes.register("wes")
        wes.send("WHOIS wes")
        XCTAssertEqual(try wes.expect(command: "338").params[2], "203.0.113.8")
        XCTAssertThrowsError(try TestClient(webSocketPort: server.webPlainPort, tls: false), "no header from the balancer: closed")
    }

    /// Behind nginx or Caddy (`web-proxy-from`): each request and each browser's WebSocket is
    /// known by the address the proxy appended, not by what a client wrote, and not as the proxy.
    func testAnHTTPProxyNamesItsClientsAndNoOneElseDoes() throws {
        let server = try TestServer(configure: { config in
            config.webPlain = .init(host: "127.0.0.1", port: 0)
            config.webProxyFrom = ["127.0.0.1"]
            config.maxConnectionsPerIP = 2
        })
        func status(_ path: String, _ header: String) throws -> String? {
            let c = try TestClient(port: server.webPlainPort, tls: false)
            defer { c.close() }
            c.sendRaw(Array("GET \(path) HTTP/1.1\r\nHost: test\r\n\(header)\r\nConnection: close\r\n\r\n".utf8))
            return c.drainRaw(for: 0.5).first
        }
        XCTAssertEqual(try status("/metrics", "X-Forwarded-For: 203.0.113.9"), "HTTP/1.1 403 Forbidden")
        XCTAssertEqual(try status("/metrics", "Forwarded: for=203.0.113.9;proto=https"), "HTTP/1.1 403 Forbidden")
        XCTAssertEqual(try status("/metrics", "X-Forwarded-For: 127.0.0.1, 203.0.113.9"), "HTTP/1.1 403 Forbidden",
                       "what the client wrote comes first; the proxy appends whom it heard")
        XCTAssertEqual(try status("/metrics", "X-Forwarded-For: 127.0.0.1"), "HTTP/1.1 200 OK")

        // Each browser is counted and throttled as itself: two from one address, a third refused.
        let forwarded = { (address: String) in try TestClient(webSocketPort: server.webPlainPort, tls: false,
                                                              headers: [("X-Forwarded-For", address)]) }
        let wes = try forwarded("203.0.113.8")
        try wes.register("wes")
        wes.send("WHOIS wes")
        XCTAssertEqual(try wes.expect(command: "338").params[2], "203.0.113.8")
        let second = try forwarded("203.0.113.8")
        // Refused as it arrives: its ERROR, or the close alone when the close beats the client's
        // own upgrade (the test client then throws).
        if let third = try? forwarded("203.0.113.8") {
            XCTAssertTrue(try third.expect(command: "ERROR").params[0].contains("too many connections from 203.0.113.8"))
        }
        let other = try forwarded("[2001:db8::1]:4711")
        try other.register("ipv6")
        _ = second
    }

    /// Without `web-proxy-from`, a request that names a client in a forwarding header came through
    /// a proxy the server does not know: it is not this machine's, whatever the socket says.
    func testAForwardingHeaderFromAnUnknownProxyIsNotBelieved() throws {
        let server = try TestServer(configure: { $0.webPlain = .init(host: "127.0.0.1", port: 0) })
        let c = try TestClient(port: server.webPlainPort, tls: false)
        c.sendRaw(Array("GET /metrics HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        XCTAssertEqual(c.drainRaw(for: 0.5).first, "HTTP/1.1 403 Forbidden")
        let ws = try TestClient(webSocketPort: server.webPlainPort, tls: false, headers: [("X-Forwarded-For", "203.0.113.8")])
        try ws.register("wes")
        ws.send("WHOIS wes")
        XCTAssertEqual(try ws.expect(command: "338").params[2], "127.0.0.1", "a client cannot say where it comes from")
    }

    func testAHeaderFromAnyoneButABalancerIsNotRead() throws {
        let server = try TestServer(configure: { $0.proxyFrom = ["192.0.2.1"] })
        let c = try server.connect()
        c.send("PROXY TCP4 203.0.113.7 127.0.0.1 51234 6667")
        try c.register("eve")
        c.send("WHOIS eve")
        XCTAssertEqual(try c.expect(command: "338").params[2], "127.0.0.1", "a client cannot say where it comes from")
    }

    func testTheConfigNamesTheBalancersByAddress() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("chorus.conf").path
        try "proxy-from = 10.0.0.5, ::1\n".write(toFile: path, atomically: true, encoding: .utf8)
        var config = ServerConfig()
        try config.load(file: path)
        XCTAssertEqual(config.proxyFrom, ["10.0.0.5", "::1"])
        try "web-proxy-from = 127.0.0.1\n".write(toFile: path, atomically: true, encoding: .utf8)
        try config.load(file: path)
        XCTAssertEqual(config.webProxyFrom, ["127.0.0.1"])
        try "proxy-from = balancer.example.org\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try config.load(file: path)) { error in
            XCTAssertTrue("\(error)".contains("proxy-from takes IP addresses"), "\(error)")
        }
    }
}
