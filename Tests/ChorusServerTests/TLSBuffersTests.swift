@testable import ChorusServer
import ChorusIRC
import Foundation
import NIOCore
import XCTest

/// Idle TLS connections give the pages of their TLS buffers back to the kernel (`TLSBuffers`):
/// the pages read as zeros afterwards, so anything live in them would be lost.
final class TLSBuffersTests: XCTestCase {
    func testIdleTLSConnectionsGiveBackTheirBuffersAndGoOnUnharmed() throws {
        let server = try TestServer()
        let irc = server.server!
        try irc.loop.submit { irc.cancelMaintenance() }.wait()  // the sweeps below are the only ones
        func sweep() throws -> Int { try irc.loop.submit { irc.releaseIdleTLSBuffers() }.wait() }

        let ann = try server.connect(tls: true), bob = try server.connect(tls: true), plain = try server.connect()
        for (client, nick) in [(ann, "ann"), (bob, "bob"), (plain, "pat")] {
            try client.register(nick)
            try client.join("#tls")
        }
        try ann.expect("pat's JOIN") { $0.command == "JOIN" && $0.source?.hasPrefix("pat!") == true }
        let owners = try irc.loop.submit { irc.registry.clients.values.filter(\.isTLS).map(\.id) }.wait()
        XCTAssertEqual(owners.map { TLSBuffers.blockCount(owner: $0) }, [2, 2], "each TLS connection's two buffers noted")

        // The first sweep sees that they were busy; the next, with nothing new, gives the pages back:
        // all 48 KiB of each connection's buffers (they start on a page).
        XCTAssertEqual(try sweep(), 0)
        XCTAssertGreaterThan(owners.map { TLSBuffers.residentBytes(owner: $0) }.min() ?? 0, 0, "buffers in use")
        XCTAssertEqual(try sweep(), 2 * 48 * 1024)
        XCTAssertEqual(owners.map { TLSBuffers.residentBytes(owner: $0) }, [0, 0], "pages out of memory")
        XCTAssertEqual(try sweep(), 0, "pages already given back")

        // Both sides of each TLS connection go on: a burst larger than both buffers, in order.
        let filler = String(repeating: "x", count: 400)
        for i in 0..<150 { ann.send("PRIVMSG #tls :line \(i) \(filler)") }
        for receiver in [bob, plain] {
            for i in 0..<150 {
                try receiver.expect(command: "PRIVMSG", "#tls", "line \(i) \(filler)")
            }
        }
        plain.send("PRIVMSG #tls :and back")
        try ann.expect(command: "PRIVMSG", "#tls", "and back")

        // Busy again: the next sweep leaves them; once quiet, they give their pages back again, more
        // of them if the burst made a buffer grow (swift-nio-ssl keeps the larger one).
        XCTAssertEqual(try sweep(), 0)
        XCTAssertGreaterThanOrEqual(try sweep(), 2 * 48 * 1024)
        ann.send("PING again")
        try ann.expect("PONG again") { $0.command == "PONG" && $0.params.last == "again" }
    }

    /// The buffers of a closed connection go back to the kernel at once, and the next connections
    /// use them again: the region does not grow with connections that come and go.
    func testAClosedConnectionsBuffersGoBackAndAreUsedAgain() throws {
        let server = try TestServer()
        let irc = server.server!
        func connect(_ nicks: [String]) throws -> [TestClient] {
            try nicks.map { nick in
                let client = try server.connect(tls: true)
                try client.register(nick)
                return client
            }
        }
        let first = try connect(["one", "two", "three"])
        let owners = try irc.loop.submit { irc.registry.clients.values.map(\.id) }.wait()
        XCTAssertEqual(owners.map { TLSBuffers.blockCount(owner: $0) }, [2, 2, 2])
        let before = TLSBuffers.usage()

        // The channel and its handlers go some time after the server has seen the connection close.
        for client in first { client.close() }
        let deadline = Date().addingTimeInterval(5)
        while owners.contains(where: { TLSBuffers.blockCount(owner: $0) > 0 }), Date() < deadline { usleep(10_000) }
        XCTAssertEqual(owners.map { TLSBuffers.blockCount(owner: $0) }, [0, 0, 0], "blocks freed with their connection")
        let closed = TLSBuffers.usage()
        XCTAssertLessThanOrEqual(closed.inUse, before.inUse - 6)  // less if an earlier test's channel went meanwhile
        XCTAssertGreaterThanOrEqual(closed.freed, 6)
        XCTAssertEqual(closed.freedResident, 0, "freed blocks' pages are out of memory")

        let again = try connect(["four", "five", "six"])
        let newOwners = try irc.loop.submit { irc.registry.clients.values.map(\.id) }.wait()
        XCTAssertEqual(newOwners.map { TLSBuffers.blockCount(owner: $0) }, [2, 2, 2])
        XCTAssertEqual(TLSBuffers.usage().used, before.used, "the new connections' buffers are the freed ones")
        again[0].send("PING reused")
        try again[0].expect("PONG reused") { $0.command == "PONG" && $0.params.last == "reused" }
    }

    /// A reader that falls behind: swift-nio-ssl's outbound buffer is still in the socket channel's
    /// queue when the next record is written, so it writes into a new one. That one must be noted
    /// too, or the connection keeps its pages for the rest of its life once it is idle.
    func testABufferMadeWhileAReaderLagsIsGivenBackToo() throws {
        let server = try TestServer(configure: { $0.sendQueueBytes = 64 * 1024 * 1024 })
        let irc = server.server!
        try irc.loop.submit { irc.cancelMaintenance() }.wait()
        func sweep() throws -> Int { try irc.loop.submit { irc.releaseIdleTLSBuffers() }.wait() }
        func waiting() throws -> Int {
            try irc.loop.submit { [weak irc] in
                (try? irc?.registry.nicks["lag"]?.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
            }.wait()
        }

        let lag = try server.connect(tls: true, receiveBuffer: 4096), talker = try server.connect()
        try lag.register("lag")
        try lag.join("#lag")
        try talker.register("talker")
        try talker.join("#lag")
        try lag.expect("talker's JOIN") { $0.command == "JOIN" && $0.source?.hasPrefix("talker!") == true }
        let owner = try irc.loop.submit { irc.registry.nicks["lag"]!.id }.wait()
        XCTAssertEqual(TLSBuffers.blockCount(owner: owner), 2)

        // The reader stops reading; the room talks until output waits in the server's channel, and
        // a little more, so that records are written while the earlier ones wait.
        try lag.channel.setOption(ChannelOptions.autoRead, value: false).wait()
        let padding = String(repeating: "x", count: 150)
        var sent = 0, lagging = 0
        for burst in 0..<200 where lagging < 2 {
            talker.sendRaw(Array((0..<200).map { _ in defer { sent += 1 }; return "PRIVMSG #lag :line \(sent) \(padding)\r\n" }.joined().utf8))
            talker.send("PING burst-\(burst)")
            _ = try talker.take("PONG burst-\(burst)", timeout: 20) { $0.command == "PONG" && $0.params.last == "burst-\(burst)" }
            if try waiting() > 0 { lagging += 1 }
        }
        XCTAssertEqual(lagging, 2, "the reader's socket never filled")

        // It catches up, and everything reaches it.
        try lag.channel.setOption(ChannelOptions.autoRead, value: true).wait()
        try lag.expect(command: "PRIVMSG", "#lag", "line \(sent - 1) \(padding)", timeout: 30)
        let deadline = Date().addingTimeInterval(5)
        while try waiting() > 0, Date() < deadline { usleep(10_000) }

        // Idle again: both of its buffers are known, and their pages go back.
        XCTAssertEqual(TLSBuffers.blockCount(owner: owner), 2, "the buffer made while it lagged is noted")
        _ = try sweep()
        XCTAssertGreaterThanOrEqual(try sweep(), 48 * 1024)
        lag.send("PING after")
        try lag.expect("PONG after") { $0.command == "PONG" && $0.params.last == "after" }
    }
}
