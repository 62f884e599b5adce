import ChorusBot
import ChorusCore
import ChorusIRC
@testable import ChorusServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOWebSocket
import XCTest

/// The HTTPS listener: IRC over WebSocket beside TCP clients, the refusals RFC 6455 and HTTP give
/// for bad input, and the web client's files. Real TLS sockets on 127.0.0.1.
final class WebTests: XCTestCase {
    func webServer(_ configure: (inout ServerConfig) -> Void = { _ in }) throws -> TestServer {
        try TestServer(configure: { config in
            config.web = .init(host: "127.0.0.1", port: 0)
            configure(&config)
        })
    }

    // MARK: IRC over WebSocket

    func testSubprotocolFollowsTheClientsOrderAndFramesFollowIt() throws {
        let server = try webServer()
        let text = try TestClient(webSocketPort: server.webPort, subprotocols: ["text.ircv3.net", "binary.ircv3.net"])
        XCTAssertEqual(text.subprotocol, "text.ircv3.net")
        let binary = try TestClient(webSocketPort: server.webPort, subprotocols: ["x.example", "binary.ircv3.net", "text.ircv3.net"])
        XCTAssertEqual(binary.subprotocol, "binary.ircv3.net")
        let unnamed = try TestClient(webSocketPort: server.webPort, subprotocols: [])
        XCTAssertNil(unnamed.subprotocol)
        // Each registers and reads its welcome: one line per message, no CR LF left in any.
        for (client, nick) in [(text, "tex"), (binary, "bin"), (unnamed, "plain")] {
            let welcome = try client.register(nick)
            XCTAssertEqual(welcome.first?.command, "001", nick)
        }
        binary.send("PING :hello")
        let pong = try binary.expect(command: "PONG")
        XCTAssertEqual(pong.params.last, "hello")
    }

    func testBehindAProxyThePlainListenerSpeaksTheSame() throws {
        let server = try TestServer(configure: { config in
            config.webPlain = .init(host: "127.0.0.1", port: 0)
        })
        XCTAssertNil(server.server.webAddress, "the tests' servers have no HTTPS listener unless asked")
        let client = try TestClient(webSocketPort: server.webPlainPort, tls: false)
        XCTAssertEqual(client.subprotocol, "text.ircv3.net")
        try client.register("proxied")
        client.send("PING :through")
        try client.expect(command: "PONG")
    }

    func testMessagesEndingInCRLFFromOlderClientsAreRead() throws {
        let server = try webServer()
        let client = try TestClient(webSocketPort: server.webPort)
        client.sendRaw(Array("NICK old\r\n".utf8))
        client.sendRaw(Array("USER old 0 * :Old Client\n".utf8))
        try client.expect(command: "001")
    }

    /// The lines' frames are written by `WebSocketLines`, not NIO's encoder: NIO's decoder must read
    /// them back as the lines, at each size where the length's form changes.
    func testLinesFramedHereAreReadBackByNIOsDecoder() throws {
        let sizes = [0, 1, 125, 126, 127, 0xFFFF, 0x10000]
        var lines = ByteBuffer()
        for (index, size) in sizes.enumerated() {
            lines.writeRepeatingByte(UInt8(ascii: "a") + UInt8(index), count: size)
            lines.writeString(index.isMultiple(of: 2) ? "\r\n" : "\n")
        }
        lines.writeString("last, without an ending")
        var frames = ByteBuffer()
        WebSocketLines.appendFrames(of: lines, opcode: .binary, to: &frames)

        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 0x20000)))
        try channel.writeInbound(frames)
        var read: [WebSocketFrame] = []
        while let frame = try channel.readInbound(as: WebSocketFrame.self) { read.append(frame) }
        XCTAssertEqual(read.count, sizes.count + 1)
        for (index, frame) in read.enumerated() {
            XCTAssertTrue(frame.fin)
            XCTAssertEqual(frame.opcode, .binary)
            XCTAssertNil(frame.maskKey, "a server's frames are not masked")
            let expected = index < sizes.count
                ? String(repeating: Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(index))), count: sizes[index])
                : "last, without an ending"
            XCTAssertEqual(String(buffer: frame.data), expected, "frame \(index)")
        }
        XCTAssertEqual(try channel.finish().isClean, true)
    }

    func testAWebSocketUserAndATCPUserShareARoom() throws {
        let server = try webServer()
        try server.addAccount("ann", "ann-password")
        try server.addAccount("ben", "ben-password")
        let browser = try TestClient(webSocketPort: server.webPort)
        try browser.register("ann", caps: ["message-tags", "server-time"], sasl: ("ann", "ann-password"))
        let irssi = try server.connect(as: "ben")
        try browser.join("#kitchen")
        try irssi.join("#kitchen")
        try browser.expect("ben joining") { $0.command == "JOIN" && $0.source?.hasPrefix("ben!") == true }

        irssi.send("PRIVMSG #kitchen :hello from TCP")
        let heard = try browser.expect(command: "PRIVMSG", "#kitchen", "hello from TCP")
        XCTAssertNotNil(heard.tags.first { $0.key == "time" }, "a WebSocket client gets the caps it asked for")
        browser.send("PRIVMSG #kitchen :hello from the browser")
        try irssi.expect(command: "PRIVMSG", "#kitchen", "hello from the browser")

        // A bot command from the browser: the TCP member sees its event.
        browser.send("PRIVMSG #kitchen :!job add Fix the tap @ben")
        try irssi.expect("the job's event") { $0.command == "NOTICE" && $0.params.last?.contains("Fix the tap") == true }
    }

    func testProtocolErrorsCloseWithTheirCodeAndTheServerGoesOn() throws {
        let server = try webServer()
        let cases: [(String, WebSocketErrorCode, (TestClient) -> Void)] = [
            ("unmasked", .protocolError, { c in
                c.sendFrame(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "NICK x")), masked: false)
            }),
            ("oversize", .messageTooLarge, { c in
                c.send("PRIVMSG x :" + String(repeating: "a", count: Limits.maxInputLine + 10))
            }),
            ("oversize in fragments", .messageTooLarge, { c in
                for i in 0..<5 {
                    c.sendFrame(WebSocketFrame(fin: false, opcode: i == 0 ? .text : .continuation,
                                               data: ByteBuffer(string: String(repeating: "b", count: 4000))))
                }
            }),
            ("not UTF-8", .dataInconsistentWithMessage, { c in c.sendRaw([0x4E, 0x49, 0x43, 0x4B, 0x20, 0xFF, 0xFE]) }),
            ("RSV1 without an extension", .protocolError, { c in
                var frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "NICK x"))
                frame.rsv1 = true
                c.sendFrame(frame)
            }),
            ("close code 999", .protocolError, { c in
                var code = ByteBuffer()
                code.writeInteger(UInt16(999))
                c.sendFrame(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))
            }),
            ("close code 1005, for no code at all", .protocolError, { c in
                var code = ByteBuffer()
                code.writeInteger(UInt16(1005))
                c.sendFrame(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))
            }),
            ("a one-byte close body", .protocolError, { c in
                c.sendFrame(WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer(bytes: [0x03])))
            }),
            ("an application's close code", WebSocketErrorCode(codeNumber: 4000), { c in
                var code = ByteBuffer()
                code.writeInteger(UInt16(4000))
                c.sendFrame(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))
            }),
            ("two lines", .policyViolation, { c in c.send("NICK a\r\nNICK b") }),
            ("bare CR", .policyViolation, { c in c.send("NICK a\rNICK b") }),
        ]
        for (name, code, send) in cases {
            let client = try TestClient(webSocketPort: server.webPort)
            send(client)
            let close = try client.expect(command: "WSCLOSE")
            XCTAssertEqual(close.params.first, String(UInt16(webSocketErrorCode: code)), name)
            XCTAssertNil(client.drainRaw(for: 2).first { !$0.hasPrefix("WSCLOSE") }, "\(name): nothing after the close")
            XCTAssertTrue(client.isClosed, name)
        }
        let after = try TestClient(webSocketPort: server.webPort)
        try after.register("still")
    }

    func testCloseFromTheClientIsAnsweredAndPingIsPonged() throws {
        let server = try webServer()
        let client = try TestClient(webSocketPort: server.webPort)
        client.sendFrame(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "are you there")))
        client.sendFrame(WebSocketFrame(fin: true, opcode: .connectionClose, data: {
            var b = ByteBuffer()
            b.write(webSocketErrorCode: .goingAway)
            return b
        }()))
        let close = try client.expect(command: "WSCLOSE")
        XCTAssertEqual(close.params.first, "1001")
        _ = client.drainRaw(for: 1)
        XCTAssertTrue(client.isClosed)
    }

    func testTheServersOwnDisconnectSendsErrorThenACloseFrame() throws {
        let server = try webServer()
        let client = try TestClient(webSocketPort: server.webPort)
        try client.register("leaver")
        client.send("QUIT :bye")
        try client.expect(command: "ERROR")
        let close = try client.expect(command: "WSCLOSE")
        XCTAssertEqual(close.params.first, "1000")
    }

    func testThePerAddressLimitCountsWebSocketClients() throws {
        let server = try webServer { $0.maxConnectionsPerIP = 2 }
        let first = try TestClient(webSocketPort: server.webPort)
        let second = try server.connect()
        try first.register("one")
        try second.register("two")
        // The third is upgraded, then told why and closed; its upgrade may not have finished on the
        // client's side by then, so the server's count says it too.
        if let third = try? TestClient(webSocketPort: server.webPort) {
            let refused = try third.expect(command: "ERROR")
            XCTAssertTrue(refused.params.last?.contains("too many connections") == true, "\(refused)")
        }
        let irc: IRCServer = server.server  // not the TestServer: its last release must not fall on the loop
        let connected = try irc.loop.submit { irc.registry.clients.count }.wait()
        XCTAssertEqual(connected, 2)
    }

    /// A browser tab that stops reading is cut at the send-queue limit, counting what waits in
    /// front of its socket as well as what waits in it.
    func testAWebSocketClientThatStopsReadingIsCutAtTheSendQueueLimit() throws {
        let server = try webServer { $0.sendQueueBytes = 16 * 1024 }
        let talker = try server.connect()
        try talker.register("talker")
        try talker.join("#busy")
        let tab = try TestClient(webSocketPort: server.webPort)
        try tab.register("tab")
        try tab.join("#busy")
        try talker.expect("tab joining") { $0.command == "JOIN" && $0.source?.hasPrefix("tab!") == true }
        try tab.channel.setOption(ChannelOptions.socketOption(.so_rcvbuf), value: 4096).wait()
        try tab.channel.setOption(ChannelOptions.autoRead, value: false).wait()
        let line = String(repeating: "x", count: 400)
        var quit: Message?
        for burst in 0..<3000 where quit == nil {  // the kernel takes a few MiB first
            for i in 0..<20 { talker.send("PRIVMSG #busy :\(burst) \(i) \(line)") }
            talker.send("PING :\(burst)")
            let lines = try talker.collect(until: { $0.command == "PONG" })
            quit = lines.first { $0.command == "QUIT" && $0.source?.hasPrefix("tab!") == true }
        }
        XCTAssertEqual(quit?.params.last, "SendQ exceeded", "the tab is cut, and said why")
    }

    func testFloodControlAppliesToWebSocketClients() throws {
        let server = try webServer { $0.floodBurst = 5; $0.floodRate = 1; $0.floodQueue = 10 }
        let client = try TestClient(webSocketPort: server.webPort)
        try client.register("flooder")
        for i in 0..<40 { client.send("PRIVMSG flooder :\(i)") }
        let error = try client.expect(command: "ERROR")
        XCTAssertTrue(error.params.last?.contains("Excess Flood") == true, "\(error)")
    }

    // MARK: The handshake

    func testAPageOfAnotherOriginIsRefusedAndItsOwnOriginIsNot() throws {
        let server = try webServer { $0.webOrigins = ["https://chat.example.org"] }
        let port = server.webPort
        XCTAssertEqual(try http(server, upgradeRequest(port: port, origin: "https://evil.example")).status, 403)
        XCTAssertEqual(try http(server, upgradeRequest(port: port, origin: "https://127.0.0.1:\(port)"), waiting: 1).status, 101)
        XCTAssertEqual(try http(server, upgradeRequest(port: port, origin: "https://chat.example.org"), waiting: 1).status, 101)
        XCTAssertThrowsError(try TestClient(webSocketPort: port, origin: "https://evil.example"))
    }

    func testBadHandshakesGetTheirStatus() throws {
        let server = try webServer()
        let noUpgrade = try http(server, "GET /socket HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(noUpgrade.status, 426)
        XCTAssertEqual(noUpgrade.headers["upgrade"], "websocket")
        let oldVersion = try http(server, "GET /socket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n")
        XCTAssertEqual(oldVersion.status, 426)
        XCTAssertEqual(oldVersion.headers["sec-websocket-version"], "13")
        let noKey = try http(server, "GET /socket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n")
        XCTAssertEqual(noKey.status, 400)
    }

    // MARK: Plain HTTP

    func testTheWebClientsFilesAndHealthAreServed() throws {
        let server = try webServer()
        let page = try http(server, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")
        XCTAssertTrue(page.headers["content-security-policy"]?.contains("default-src 'self'") == true)
        XCTAssertTrue(page.body.contains("app.js"), page.body)
        let etag = try XCTUnwrap(page.headers["etag"])
        let again = try http(server, "GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(etag)\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(again.status, 304)
        let script = try http(server, "GET /app.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(script.status, 200)
        XCTAssertEqual(script.headers["content-type"], "text/javascript; charset=utf-8")
        XCTAssertNil(script.headers["content-encoding"], "plain to a client that does not ask for gzip")
        // Gzipped to one that does (the browser tests load the page so, and run it).
        let plainChat = try http(server, "GET /chat.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let packed = try http(server, "GET /chat.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br;q=1, gzip;q=0.8\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(packed.headers["content-encoding"], "gzip")
        XCTAssertEqual(packed.headers["vary"], "Accept-Encoding")
        let plainLength = try XCTUnwrap(Int(plainChat.headers["content-length"] ?? ""))
        let packedLength = try XCTUnwrap(Int(packed.headers["content-length"] ?? ""))
        XCTAssertLessThan(packedLength, plainLength / 2, "chat.js gzipped")
        let refused = try http(server, "GET /app.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=0\r\nConnection: close\r\n\r\n")
        XCTAssertNil(refused.headers["content-encoding"], "gzip;q=0 says no")
        XCTAssertEqual(try http(server, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").body, "alive")
        XCTAssertEqual(try http(server, "GET /ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 200)
        let head = try http(server, "HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body, "")
    }

    func testTheWebClientIsSmallAndNamesTheBot() throws {
        let total = WebClientFiles.files.values.reduce(0) { $0 + $1.bytes.count }
        XCTAssertLessThan(total, 150 * 1024, "the web client's files together")
        let server = try webServer { $0.serviceNick = "Helper" }
        let settings = try http(server, "GET /client.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(settings.headers["content-type"], "application/json")
        XCTAssertTrue(settings.body.contains("\"bot\":\"Helper\""), settings.body)
    }

    func testWhatNoRouteTakesIsRefusedAndTheConnectionGoesOnWhereItCan() throws {
        let server = try webServer()
        XCTAssertEqual(try http(server, "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 404)
        let post = try http(server, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(post.headers["allow"], "GET, HEAD")
        let delete = try http(server, "DELETE /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(delete.status, 405)
        XCTAssertEqual(delete.headers["allow"], "GET, HEAD")
        // A GET route answers HEAD with its headers and no body; the page is at /index.html too.
        let head = try http(server, "HEAD /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-type"], "text/html; charset=utf-8")
        XCTAssertEqual(head.body, "")
        XCTAssertEqual(try http(server, "GET /photo/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 404)
        XCTAssertEqual(try http(server, "GET /photo/1.jpg/more HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 404)
        let longPath = "/" + String(repeating: "a", count: WebRequests.maxTarget + 1)
        XCTAssertEqual(try http(server, "GET \(longPath) HTTP/1.1\r\nHost: x\r\n\r\n").status, 414)
        let hugeHeader = "X-Big: " + String(repeating: "b", count: 20_000)
        XCTAssertEqual(try http(server, "GET / HTTP/1.1\r\nHost: x\r\n\(hugeHeader)\r\n\r\n").status, 431)
        let manyHeaders = (0..<100).map { "X-\($0): y\r\n" }.joined()
        XCTAssertEqual(try http(server, "GET / HTTP/1.1\r\nHost: x\r\n\(manyHeaders)\r\n").status, 431)
        XCTAssertEqual(try http(server, "NOT HTTP AT ALL\r\n\r\n").status, 400)
        let bigBody = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "z", count: 100_000)
        XCTAssertEqual(try http(server, bigBody).status, 413)
        // Two requests on one connection, the first kept alive: both answered, in order.
        let both = try http(server, "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(both.status, 200)
        XCTAssertTrue(both.rest.contains("HTTP/1.1 404 Not Found"), both.rest)
        // The server still serves.
        XCTAssertEqual(try http(server, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 200)
    }

    func testTheWebListenerIsOnByDefaultAndOffWhenAskedTo() throws {
        XCTAssertEqual(ServerConfig().web, .init(host: "0.0.0.0", port: 8443))
        XCTAssertNil(try ServerConfig.Listener.parse("off"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-web-\(UUID().uuidString).conf")
        try "web = 127.0.0.1:9443\nweb-origin = https://chat.example.org\nweb-url = https://chat.example.org/\n"
            .write(to: folder, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: folder) }
        var config = ServerConfig()
        try config.load(file: folder.path)
        XCTAssertEqual(config.web, .init(host: "127.0.0.1", port: 9443))
        XCTAssertEqual(config.webOrigins, ["https://chat.example.org"])
        XCTAssertEqual(config.webURL, "https://chat.example.org")
    }

    // MARK: Operations

    func testMetricsCountWhatHappenedAndAreForThisMachineOnly() throws {
        let server = try webServer()
        try server.addAccount("ann", "ann-password")
        let browser = try TestClient(webSocketPort: server.webPort)
        try browser.register("ann", sasl: ("ann", "ann-password"))
        let irssi = try server.connect(tls: true)
        try irssi.register("ben")
        try browser.join("#kitchen")
        browser.send("PRIVMSG #kitchen :hello")  // three room lines: this one and the two commands
        browser.send("PRIVMSG #kitchen :!job add Sweep")
        try browser.expect("the job") { $0.command == "NOTICE" && $0.params.last?.contains("Sweep") == true }
        browser.send("PRIVMSG #kitchen :!start 99")
        try browser.expect("the refusal") { $0.command == "NOTICE" && $0.params.last?.contains("99") == true }
        let guesser = try server.connect()
        guesser.send("PASS ann:wrong-guess")
        guesser.send("NICK guess")
        guesser.send("USER guess 0 * :g")
        try guesser.expect(command: "464")

        let scrape = try http(server, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(scrape.status, 200)
        XCTAssertTrue(scrape.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = scrape.rest
        for expected in [
            #"chorus_connections{kind="websocket"} 1"#, #"chorus_connections{kind="tls"} 1"#,
            "chorus_rooms 1", "chorus_lines_relayed_total 3", "chorus_failed_logins_total 1",
            #"chorus_commands_total{command="job",outcome="ok"} 1"#, #"chorus_commands_total{command="start",outcome="refused"} 1"#,
            #"chorus_tls_handshakes_total{listener="irc"} 1"#, "chorus_command_duration_seconds_count 2",
            "chorus_writer_batch_size_count",
        ] {
            XCTAssertTrue(text.contains(expected), "missing \(expected) in:\n\(text)")
        }
        XCTAssertTrue(text.contains(#"chorus_tls_handshakes_total{listener="web"} "#), text)

        XCTAssertTrue(WebApplication.isLoopback(try SocketAddress(ipAddress: "127.0.0.1", port: 1)))
        XCTAssertTrue(WebApplication.isLoopback(try SocketAddress(ipAddress: "::1", port: 1)))
        XCTAssertFalse(WebApplication.isLoopback(try SocketAddress(ipAddress: "10.1.2.3", port: 1)))
        XCTAssertFalse(WebApplication.isLoopback(try SocketAddress(ipAddress: "2001:db8::1", port: 1)))
        let closed = try webServer { $0.metrics = .off }
        XCTAssertEqual(try http(closed, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 404)
    }

    // MARK: Helpers

    struct HTTPAnswer {
        var status: Int
        var headers: [String: String]
        var body: String
        /// What came after the first response (a second one on the same connection).
        var rest: String
    }

    private func upgradeRequest(port: Int, origin: String? = nil) -> String {
        "GET /socket HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + (origin.map { "Origin: \($0)\r\n" } ?? "") + "\r\n"
    }

    /// Sends `request` as raw bytes over TLS and reads until the server closes (or `waiting` seconds).
    func http(_ server: TestServer, _ request: String, waiting: TimeInterval = 5) throws -> HTTPAnswer {
        let client = try TestClient(port: server.webPort, tls: true)
        client.sendRaw(Array(request.utf8))
        var lines = client.drainRaw(for: waiting)
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 "),
              let status = Int(statusLine.split(separator: " ")[1]) else {
            throw TestError.failed("no HTTP answer: \(lines)")
        }
        lines.removeFirst()
        var headers: [String: String] = [:]
        while let line = lines.first, !line.isEmpty {
            lines.removeFirst()
            if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        if !lines.isEmpty { lines.removeFirst() }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let remaining = lines.joined(separator: "\n")
        let body = String(remaining.utf8.prefix(max(0, length - 1)).map { Character(UnicodeScalar($0)) })
        return HTTPAnswer(status: status, headers: headers, body: body, rest: remaining)
    }
}
