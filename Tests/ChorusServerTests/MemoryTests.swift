#if canImport(Glibc)
@testable import ChorusServer
import ChorusIRC
import Glibc
import XCTest

/// What a connection holds once it is idle again. A chat server's connections are idle most of
/// their lives, so memory a burst leaves behind is paid for as long as they stay.
final class MemoryTests: XCTestCase {
    /// NIO keeps a connection's read buffer at the largest size its reads ever grew to; with its
    /// usual ceiling that was 64 KiB for life after one pasted burst.
    func testABurstOfInputLeavesNothingBehind() throws {
        let server = try TestServer(configure: {
            // Flood control on, but fast: the burst's lines wait in each client's inbox and drain.
            $0.floodBurst = 5
            $0.floodRate = 5000
            $0.floodQueue = 200
        })
        let irc = server.server!
        let clients = try (0..<32).map { i -> TestClient in
            let client = try server.connect()
            try client.register("burst\(i)")
            try client.join("#burst")
            return client
        }
        // Each client's lines are answered in order: its PONG says all before it were read.
        func settle() throws {
            for (i, client) in clients.enumerated() {
                client.send("PING settle\(i)")
                try client.expect("PONG settle\(i)") { $0.command == "PONG" && $0.params.last == "settle\(i)" }
            }
        }
        try settle()
        let before = heapInUse()

        // 90 lines of 400 bytes each, in one write: PONGs, which the server reads and answers with nothing.
        let burst = String(repeating: "PONG :" + String(repeating: "x", count: 392) + "\r\n", count: 90)
        for client in clients { client.sendRaw(Array(burst.utf8)) }
        try settle()
        let perConnection = (heapInUse() - before) / clients.count

        // Reads at NIO's usual 64 KiB ceiling kept ~38 KiB a connection here. The figure is the whole
        // process's heap, so glibc's per-thread caches and its arena's growth add a few KiB of noise.
        XCTAssertLessThan(perConnection, 12 * 1024, "bytes a connection kept after a 36 KiB burst: \(perConnection)")
        let inboxes = try irc.loop.submit { irc.registry.clients.values.map(\.inbox.capacity) }.wait()
        XCTAssertEqual(inboxes, Array(repeating: 0, count: clients.count), "inboxes hold no buffer once drained")

        // A script's burst of bot commands: their answers wait in order in `unanswered`.
        try server.addAccount("boss", "secret-1")
        let boss = try server.connect()
        try boss.register("boss", pass: "secret-1")
        boss.sendRaw(Array(String(repeating: "PRIVMSG Chorus :!mine\r\n", count: 40).utf8))
        for _ in 0..<40 {
            try boss.expect("an answer to !mine") { $0.params.last?.hasPrefix("You have no open jobs") == true }
        }
        let unanswered = try irc.loop.submit { irc.registry.clients.values.first { $0.nick == "boss" }?.unanswered.capacity }.wait()
        XCTAssertEqual(unanswered, 0, "the queue of answers holds no buffer once drained")
    }
}

extension MemoryTests {
    /// Every connection pays for its `Client` for as long as it stays: its fields are laid out so
    /// that the block malloc gives it stays small (472 usable bytes before counters went to 32 bits,
    /// empty queues to one pointer each and replay holding to the server).
    ///
    /// The figure is the size the Swift runtime asks malloc for, read from the class's metadata.
    /// `malloc_usable_size` of the live object is not a fixed figure: when glibc cuts a block from
    /// a free chunk only 16 bytes larger it hands out the whole chunk, so the same 392-byte request
    /// measured 392 usable bytes here and 408 in CI.
    func testAClientStaysWithinItsBudget() throws {
        // The reading itself: a header of 16 bytes and the stored properties, unpadded at the end.
        final class Known { var a = 0; var b: (Int, Int) = (0, 0); var c: UInt8 = 0 }
        XCTAssertEqual(instanceSize(Known.self), 16 + 8 + 16 + 1, "instance size read from class metadata")

        let size = instanceSize(Client.self)
        // A request of r bytes gets a chunk of (r + 8) rounded up to 16: 392 fills a 400-byte chunk.
        XCTAssertLessThanOrEqual(size, 392, "bytes a Client asks malloc for")

        // And the live object is one such block, whatever chunk malloc cut it from.
        let server = try TestServer()
        let irc = server.server!
        let client = try server.connect()
        try client.register("small")
        try client.join("#small")
        let usable = try irc.loop.submit {
            irc.registry.clients.values.map { mallocUsableSize(Unmanaged.passUnretained($0).toOpaque()) }
        }.wait()
        XCTAssertEqual(usable.count, 1)
        XCTAssertGreaterThanOrEqual(usable[0], size, "a Client lives in a block of its own size")
        XCTAssertLessThan(usable[0], size + 48, "a Client's block is no more than one size class above its request")
    }
}

/// The bytes the Swift runtime allocates for an instance of `type`: the `InstanceSize` field of
/// its class metadata (on platforms without Objective-C interop: kind, superclass, flags and
/// address point come first, at offsets 0, 8, 16 and 20).
private func instanceSize(_ type: AnyClass) -> Int {
    let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
    return Int(metadata.load(fromByteOffset: 24, as: UInt32.self))
}

/// Bytes the C library's allocator has handed out and not had back, from glibc's `malloc_info`:
/// the memory its arenas hold, less their free chunks, plus blocks it mapped on their own.
func heapInUse() -> Int {
    var text: UnsafeMutablePointer<CChar>?
    var size = 0
    guard let stream = open_memstream(&text, &size) else { return 0 }
    _ = mallocInfo(0, stream)
    fclose(stream)
    guard let text else { return 0 }
    defer { free(text) }
    // The totals over all arenas follow the last arena's own figures.
    let xml = String(cString: text)
    guard let totals = xml.range(of: "</heap>", options: .backwards).map({ xml[$0.upperBound...] }) else { return 0 }
    func figure(_ element: String) -> Int {
        guard let start = totals.range(of: element) else { return 0 }
        let rest = totals[start.upperBound...]
        guard let size = rest.range(of: "size=\"") else { return 0 }
        return Int(rest[size.upperBound...].prefix { $0.isNumber }) ?? 0
    }
    return figure("<system type=\"current\"") - figure("<total type=\"fast\"") - figure("<total type=\"rest\"")
        + figure("<total type=\"mmap\"")
}

@_silgen_name("malloc_usable_size")  // <malloc.h> too
private func mallocUsableSize(_ block: UnsafeMutableRawPointer) -> Int

@_silgen_name("malloc_info")  // <malloc.h>, which the Glibc module leaves out
private func mallocInfo(_ options: CInt, _ stream: UnsafeMutablePointer<FILE>) -> CInt
#endif
