@testable import ChorusServer
import ChorusIRC
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
        let owners = try irc.loop.submit { irc.clients.values.filter(\.isTLS).map(\.id) }.wait()
        XCTAssertEqual(owners.map { TLSBuffers.blockCount(owner: $0) }, [2, 2], "each TLS connection's two buffers noted")

        // The first sweep sees that they were busy; the next, with nothing new, gives the pages back:
        // all 48 KiB of each connection's buffers (they start on a page).
        XCTAssertEqual(try sweep(), 0)
        XCTAssertEqual(try sweep(), 2 * 48 * 1024)
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
}
