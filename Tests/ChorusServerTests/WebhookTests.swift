import ChorusCore
import ChorusIRC
@testable import ChorusServer
import ChorusTestSupport
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import XCTest

/// Rooms' webhooks, delivered to a receiver on 127.0.0.1 (`webhooks-to-private = on`) that checks
/// each signature with its own HMAC, as a team's program would.
final class WebhookTests: XCTestCase {
    func testEventsOfTheHooksTypesArriveSignedAndInOrder() throws {
        let receiver = try HookReceiver { _ in 200 }
        defer { receiver.close() }
        let server = try TestServer { $0.webhooksToPrivate = true }
        let ann = try manager(of: "#kitchen", on: server)
        let secret = try addHook(ann, "!hook add #kitchen http://127.0.0.1:\(receiver.port)/in job")
        // With private receivers allowed, the refusal of another scheme names http:// too.
        ann.send("PRIVMSG Chorus :!hook add #kitchen ftp://127.0.0.1/in")
        let refusal = try ann.expect("ftp refused") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("A webhook's URL") == true }
        XCTAssertEqual(refusal.params.last, "A webhook's URL starts with https:// or, for a receiver on a private network, http://")
        ann.send("PRIVMSG #kitchen :!chore add dishes every day among ann")
        try ann.expect("the chore") { $0.command == "NOTICE" && $0.params.last?.contains("added the chore") == true }
        for title in ["Fix the sink", "Buy bulbs", "Call the landlord"] {
            ann.send("PRIVMSG #kitchen :!job add \(title)")
            try ann.expect(title) { $0.command == "NOTICE" && $0.params.last?.contains(title) == true }
        }
        let got = try receiver.wait(for: 3)
        let events = try got.map { try JSONSerialization.jsonObject(with: Data($0.body)) as! [String: Any] }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["job.created", "job.created", "job.created"], "the chore's event is not the hook's")
        XCTAssertEqual(events.compactMap { ($0["data"] as? [String: String])?["title"] }, ["Fix the sink", "Buy bulbs", "Call the landlord"])
        let ids = events.compactMap { $0["id"] as? Int }
        XCTAssertEqual(ids, ids.sorted())
        XCTAssertEqual(events.first?["room"] as? String, "#kitchen")
        // One after another on the hook's one kept connection, each made in a pass of its own.
        XCTAssertEqual(receiver.connections, 1)
        for request in got {
            XCTAssertEqual(request.headers["x-chorus-event"], "job.created")
            XCTAssertTrue(Self.signatureHolds(request, secret: secret), "\(request.headers)")
            XCTAssertFalse(Self.signatureHolds(request, secret: secret + "0"))
        }
        // The log keeps each batch's last delivery: the last event's, at least.
        ann.send("PRIVMSG Chorus :!hook log 1")
        let heading = try ann.expectLines("the log", count: 1)[0]
        XCTAssertTrue(heading.hasPrefix("Webhook 1, its last attempts ("), heading)
        let kept = try XCTUnwrap(Int(heading.drop { $0 != "(" }.dropFirst().prefix { $0.isNumber }), heading)
        let log = try ann.expectLines("the attempts", count: kept)
        XCTAssertTrue(log.allSatisfy { $0.contains("job.created") && $0.contains("→ 200 in ") }, "\(log)")
        XCTAssertTrue(log.last?.hasPrefix("  event \(ids.last!) ") == true, "\(log)")
    }

    func testAReceiverThatWasDownGetsEveryEventInOrderAfterARestart() throws {
        let down = NIOLockedValueBox(true)
        let receiver = try HookReceiver { _ in down.withLockedValue { $0 } ? 503 : 200 }
        defer { receiver.close() }
        let server = try TestServer {
            $0.webhooksToPrivate = true
            $0.webhookRetry = 0.1
        }
        let ann = try manager(of: "#kitchen", on: server)
        _ = try addHook(ann, "!hook add #kitchen http://127.0.0.1:\(receiver.port)/in")
        ann.send("PRIVMSG #kitchen :!job add One")
        try ann.expect("One") { $0.command == "NOTICE" && $0.params.last?.contains("One") == true }
        _ = try receiver.wait(for: 2)  // refused twice at least
        ann.send("PRIVMSG Chorus :!hooks #kitchen")
        let listed = try ann.expectLines("the listing", count: 2)
        XCTAssertTrue(listed[1].contains("failing since") && listed[1].contains("HTTP 503"), "\(listed)")

        // Down across a restart, with more events made meanwhile.
        try server.restart()
        let again = try server.connect(as: "ann")
        try again.join("#kitchen")
        for title in ["Two", "Three"] {
            again.send("PRIVMSG #kitchen :!job add \(title)")
            try again.expect(title) { $0.command == "NOTICE" && $0.params.last?.contains(title) == true }
        }
        let refused = receiver.count
        down.withLockedValue { $0 = false }
        let all = try receiver.wait(for: refused + 3, within: 10)
        let delivered = all[refused...].compactMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] }
        XCTAssertEqual(delivered.compactMap { ($0["data"] as? [String: String])?["title"] }, ["One", "Two", "Three"])
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(receiver.count, refused + 3, "each event delivered once")
    }

    func testAHookReachesPublicAddressesOnly() throws {
        let server = try TestServer()
        let ann = try manager(of: "#kitchen", on: server)
        for url in ["https://127.0.0.1/x", "https://localhost:8443/x", "https://[::1]/x", "https://10.1.2.3/x", "https://169.254.169.254/latest",
                    "https://[::ffff:192.168.0.1]/x", "https://printer.local/x"] {
            ann.send("PRIVMSG Chorus :!hook add #kitchen \(url)")
            try ann.expect(url) { $0.command == "NOTICE" && $0.params.last?.contains("a webhook reaches public addresses only") == true }
        }
        // A name made of hex digits is a name, not an address: it is checked when resolved.
        _ = try addHook(ann, "!hook add #kitchen https://cafe.be/hooks")
        ann.send("PRIVMSG Chorus :!hook rm 1")
        try ann.expect("removed") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("Webhook 1 is removed") == true }
        ann.send("PRIVMSG Chorus :!hook add #kitchen http://example.org/x")
        try ann.expect("http") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("A webhook's URL starts with https://") == true }
        XCTAssertTrue(AddressRanges.isPublic("93.184.215.14"))
        XCTAssertTrue(AddressRanges.isPublic("2606:4700::1111"))
        XCTAssertFalse(AddressRanges.isAddress("cafe.be"))
        XCTAssertTrue(AddressRanges.isAddress("::1") && AddressRanges.isAddress("10.0.0.1"))
        for address in ["100.64.0.1", "172.20.0.1", "0.0.0.0", "224.0.0.1", "fe80::1", "fc00::1", "::", "2001:db8::1", "64:ff9b::a00:1", "nonsense"] {
            XCTAssertFalse(AddressRanges.isPublic(address), address)
        }

        // A name is resolved and checked before each delivery: this machine's own name is refused.
        let host = ProcessInfo.processInfo.hostName
        ann.send("PRIVMSG Chorus :!hook add #kitchen https://\(host):1/x job")
        try ann.expect("added") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("Webhook 2 of #kitchen") == true }
        ann.send("PRIVMSG #kitchen :!chore add dishes every day among ann")
        try ann.expect("the chore") { $0.command == "NOTICE" && $0.params.last?.contains("added the chore") == true }
        ann.send("PRIVMSG #kitchen :!job add Probe")
        try ann.expect("Probe") { $0.command == "NOTICE" && $0.params.last?.contains("Probe") == true }
        var failure = ""
        for _ in 0..<50 where failure.isEmpty {
            Thread.sleep(forTimeInterval: 0.1)
            failure = (try server.server.store.webhook(2)?.lastError) ?? ""
        }
        XCTAssertTrue(failure.hasPrefix("refused: \(host) is this machine or a private network") || failure.hasPrefix("cannot resolve"), failure)
        // The failed attempt names the event it was for: the job's, not the chore's before it.
        ann.send("PRIVMSG Chorus :!hook log 2")
        let heading = try ann.expectLines("the log", count: 1)[0]
        let kept = try XCTUnwrap(Int(heading.drop { $0 != "(" }.dropFirst().prefix { $0.isNumber }), heading)
        let log = try ann.expectLines("the attempts", count: kept)
        XCTAssertTrue(!log.isEmpty && log.allSatisfy { $0.contains("job.created") }, "\(log)")
    }

    func testTenHooksARoomAndOnlyItsManagersSeeThem() throws {
        let server = try TestServer { $0.webhooksToPrivate = true }
        let ann = try manager(of: "#kitchen", on: server)
        for n in 1...Webhook.maxPerRoom { _ = try addHook(ann, "!hook add #kitchen http://127.0.0.1:9/\(n)") }
        ann.send("PRIVMSG Chorus :!hook add #kitchen http://127.0.0.1:9/11")
        try ann.expect("the limit") { $0.command == "NOTICE" && $0.params.last == "#kitchen has 10 webhooks already: !hook rm <id> removes one." }
        try server.addAccount("ben", "ben-password")
        ann.send("PRIVMSG #kitchen :!room add ben")
        try ann.expect("ben added") { $0.command == "NOTICE" && $0.params.last?.contains("added ben") == true }
        let ben = try server.connect(as: "ben")
        ben.send("PRIVMSG Chorus :!hook rm 1")
        try ben.expect("not his") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("There is no webhook 1 in a room you manage") == true }
        ben.send("PRIVMSG Chorus :!hook add #kitchen http://127.0.0.1:9/x")
        try ben.expect("not a manager") { $0.command == "NOTICE" && $0.params.last == "Only managers of #kitchen see and change its webhooks" }
    }

    /// Two processes on one database both deliver hooks, each taking a hook while it delivers
    /// it: every event reaches the receiver once, in order, wherever it was made.
    func testTwoNodesDeliverAHooksEventsOnceAndInOrder() throws {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let receiver = try HookReceiver { _ in 200 }
        defer { receiver.close() }
        let shared = "hooks-\(UUID().uuidString)"
        let a = try TestServer(sharing: shared) { $0.webhooksToPrivate = true }
        let b = try TestServer(sharing: shared) { $0.webhooksToPrivate = true }
        let ann = try manager(of: "#kitchen", on: a)
        _ = try addHook(ann, "!hook add #kitchen http://127.0.0.1:\(receiver.port)/in job.created")
        try b.server.reloadAccountKeys()
        let onB = try b.connect(as: "ann", nick: "ann_b")  // the same account, another nick: nicks are the whole cluster's
        try onB.join("#kitchen")
        for n in 1...8 {
            let client = n % 2 == 0 ? onB : ann
            client.send("PRIVMSG #kitchen :!job add Job \(n)")
            try client.expect("job \(n)") { $0.command == "NOTICE" && $0.params.last?.contains("Job \(n)") == true }
        }
        let got = try receiver.wait(for: 8, within: 15)
        let titles = got.compactMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] }
            .compactMap { ($0["data"] as? [String: String])?["title"] }
        XCTAssertEqual(titles, (1...8).map { "Job \($0)" })
        Thread.sleep(forTimeInterval: 2.5)
        XCTAssertEqual(receiver.count, 8, "each event once")
    }

    /// Events in a room without hooks ring no pass (a pass reads every hook); a hook added here
    /// rings its room's from then on, before any pass has read it.
    func testOnlyTheEventsOfRoomsWithHooksStartAPass() throws {
        let receiver = try HookReceiver { _ in 200 }
        defer { receiver.close() }
        let server = try TestServer { $0.webhooksToPrivate = true }
        let ann = try manager(of: "#kitchen", on: server)
        try ann.join("#yard")
        _ = try addHook(ann, "!hook add #kitchen http://127.0.0.1:\(receiver.port)/in job.created")
        ann.send("PRIVMSG #kitchen :!job add Fix the sink")
        try ann.expect("the job") { $0.command == "NOTICE" && $0.params.last?.contains("Fix the sink") == true }
        _ = try receiver.wait(for: 1)
        let deliverer = try XCTUnwrap(try server.server.loop.submit { server.server.webhooks }.wait())

        func passes(whileAdding count: Int, in room: String) throws -> (passes: Int, seconds: TimeInterval) {
            let (before, began) = (deliverer.passes, Date())
            for n in 1...count {
                ann.send("PRIVMSG \(room) :!job add Rake \(room) \(n)")
                try ann.expect("job \(n)") { $0.command == "NOTICE" && $0.params.last?.contains("Rake \(room) \(n)") == true }
            }
            return (deliverer.passes - before, Date().timeIntervalSince(began))
        }
        // Ten batches with events in #yard: only the passes due every two seconds, not one each.
        let quiet = try passes(whileAdding: 10, in: "#yard")
        XCTAssertLessThanOrEqual(quiet.passes, Int(quiet.seconds / 2) + 1, "\(quiet)")
        XCTAssertTrue(deliverer.rings(for: ["#kitchen"]))
        XCTAssertFalse(deliverer.rings(for: ["#yard"]))
        // A hook added to #yard: its events ring at once, before a pass has read the hook.
        _ = try addHook(ann, "!hook add #yard http://127.0.0.1:\(receiver.port)/in job.created")
        XCTAssertTrue(deliverer.rings(for: ["#yard"]))
        let rung = try passes(whileAdding: 3, in: "#yard")
        XCTAssertGreaterThanOrEqual(rung.passes, 1, "\(rung)")
        let titles = try receiver.wait(for: 4).compactMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] }
            .compactMap { ($0["data"] as? [String: String])?["title"] }
        XCTAssertEqual(titles, ["Fix the sink", "Rake #yard 1", "Rake #yard 2", "Rake #yard 3"])
    }

    // MARK: Helpers

    private func manager(of room: String, on server: TestServer) throws -> TestClient {
        try server.addAccount("ann", "ann-password")
        let ann = try server.connect(as: "ann")
        try ann.join(room)
        return ann
    }

    /// Adds a hook in private; its secret.
    private func addHook(_ client: TestClient, _ command: String) throws -> String {
        client.send("PRIVMSG Chorus :\(command)")
        try client.expect("the hook") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("Webhook ") == true }
        let secret = try client.expect("its secret") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("Its secret") == true }
        let words = try XCTUnwrap(secret.params.last).split(separator: " ")
        return String(words[5].dropLast())
    }

    /// The receiver's own check: `t=<time>,v1=<hex>` over "<time>.<body>".
    static func signatureHolds(_ request: HookReceiver.Request, secret: String) -> Bool {
        guard let header = request.headers["x-chorus-signature"] else { return false }
        var parts: [String: String] = [:]
        for item in header.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { parts[String(pair[0])] = String(pair[1]) }
        }
        guard let time = parts["t"], let given = parts["v1"], let seconds = Double(time), abs(Date().timeIntervalSince1970 - seconds) < 300 else { return false }
        let expected = HMAC<SHA256>.authenticationCode(for: Data((time + ".").utf8) + Data(request.body), using: SymmetricKey(data: Data(secret.utf8)))
        return expected.map { String(format: "%02x", $0) }.joined() == given
    }
}

extension TestClient {
    /// The text of the next `count` notices.
    func expectLines(_ what: String, count: Int) throws -> [String] {
        try (0..<count).map { i in try expect("\(what) \(i + 1)") { $0.command == "NOTICE" }.params.last ?? "" }
    }
}

/// A webhook receiver on 127.0.0.1: keeps every request and answers with the status `answer`
/// gives for its number (from 1).
final class HookReceiver: @unchecked Sendable {
    struct Request {
        var headers: [String: String]
        var body: [UInt8]
    }

    private let lock = NIOLock()
    private var requests: [Request] = []
    private let answer: @Sendable (Int) -> Int
    private var channel: Channel!
    private var connectionsOpened = 0
    /// How many connections were made to it.
    var connections: Int { lock.withLock { connectionsOpened } }

    init(answer: @escaping @Sendable (Int) -> Int) throws {
        self.answer = answer
        channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                self.lock.withLock { self.connectionsOpened += 1 }
                return channel.pipeline.configureHTTPServerPipeline().flatMap { channel.pipeline.addHandler(Handler(receiver: self)) }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    var port: Int { channel.localAddress!.port! }
    var count: Int { lock.withLock { requests.count } }

    func close() { try? channel.close().wait() }

    fileprivate func received(_ request: Request) -> Int {
        let number = lock.withLock { requests.append(request); return requests.count }
        return answer(number)
    }

    /// The requests once there are `count`, waiting at most `seconds`.
    func wait(for count: Int, within seconds: TimeInterval = 5) throws -> [Request] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let got = lock.withLock { requests }
            if got.count >= count { return got }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestError.failed("\(self.count) of \(count) webhook requests arrived")
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let receiver: HookReceiver
        var headers: [String: String] = [:]
        var body: [UInt8] = []

        init(receiver: HookReceiver) {
            self.receiver = receiver
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                headers = Dictionary(head.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
                body = []
            case .body(let part):
                body += part.readableBytesView
            case .end:
                let status = receiver.received(Request(headers: headers, body: body))
                var head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
                head.headers.add(name: "Content-Length", value: "3")
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok\n")))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
