import ChorusBot
import ChorusCore
import ChorusIRC
import Foundation
import NIOCore

/// Output: lines for a client are gathered over a loop turn and written once; a broadcast is
/// serialized once per capability variant; lines for a client reading a replay wait for it.
extension IRCServer {

    func write(_ line: String, to client: Client) {
        write(allocator.buffer(string: line), to: client)
    }

    /// Queues bytes for a client; they reach the socket at the end of this loop turn. Lines of the
    /// same turn are gathered into one buffer, so a client gets one channel write and one flush per
    /// turn: a channel write per line (NIO's pipeline and pending-writes bookkeeping) was a third of
    /// the server's CPU in saturated fan-out. The first line of a turn is kept as it is (often the
    /// bytes shared by every member); a second one copies it and appends.
    /// The buffer is consumed: bytes a broadcast made move into the client's output, without a
    /// retain there and a release in the caller for every recipient.
    func write(_ buffer: consuming ByteBuffer, to client: Client) {
        guard !client.closing else { return }
        guard client.replaysReading == 0 else {
            let key = ObjectIdentifier(client)
            if heldLive[key] == nil { heldLive[key] = buffer } else { heldLive[key]!.writeImmutableBuffer(buffer) }
            return
        }
        queue(buffer, for: client)
    }

    /// Writes the answer to the client's own line (a reply, a join's replay): never held back.
    func writeAnswer(_ buffer: consuming ByteBuffer, to client: Client) {
        guard !client.closing else { return }
        queue(buffer, for: client)
    }

    /// Holds the client's live lines until `replayRead` (a join's history is being read).
    func replayReading(for client: Client) {
        client.replaysReading += 1
    }

    /// A replay is written (or there was none to write): the held lines follow once all are.
    func replayRead(for client: Client) {
        guard client.replaysReading > 0 else { return }  // released already: the client left
        client.replaysReading -= 1
        if client.replaysReading == 0 { releaseHeldLines(of: client) }
    }

    /// Lets the lines held during replays go at once (the client is leaving).
    func releaseHeldLines(of client: Client) {
        client.replaysReading = 0
        heldFromElsewhere[ObjectIdentifier(client)] = nil
        guard let held = heldLive.removeValue(forKey: ObjectIdentifier(client)) else { return }
        if !client.closing { queue(held, for: client) }
    }

    private func queue(_ buffer: consuming ByteBuffer, for client: Client) {
        if client.outbound == nil {
            client.outbound = consume buffer
        } else {
            client.outbound!.append(buffer, allocator: allocator)
        }
        if !client.hasPendingWrites {
            client.hasPendingWrites = true
            dirty.append(client)
            if !flushScheduled {
                flushScheduled = true
                // Runs after this turn's reads: every client gets one flush however many lines it got.
                loop.execute { self.flushPending() }
            }
        }
    }

    func flushPending() {
        flushScheduled = false
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for client in batch {
            client.hasPendingWrites = false
            guard var bytes = client.outbound.take() else { continue }  // moved out, not copied and cleared
            guard let socket = client.socket else {
                client.activity &+= 1
                // A buffer swift-nio-ssl makes here (its last one still queued) is this connection's.
                TLSBuffers.noting(owner: client.id) { client.output.writeAndFlush(NIOAny(bytes), promise: nil) }
                continue
            }
            if client.writesInChannel == 0 && !client.closing {
                // Debug builds (the tests) check on every send that NIO still has this descriptor open.
                assert(SocketWrite.descriptor(of: client.channel) == socket, "a send on a descriptor NIO has closed")
                bytes.moveReaderIndex(forwardBy: SocketWrite.sendNow(bytes, to: socket))
                if bytes.readableBytes == 0 { continue }
            }
            // The rest waits in the channel, and what follows waits behind it.
            client.writesInChannel += 1
            let written = loop.makePromise(of: Void.self)
            written.futureResult.whenComplete { _ in client.writesInChannel -= 1 }
            client.output.writeAndFlush(NIOAny(bytes), promise: written)
        }
    }

    /// Sends a server-originated line to one client, outside any reply.
    func send(_ outgoing: Outgoing, to client: Client) {
        write(outgoing.buffer(for: client.caps, allocator: allocator), to: client)
    }

    /// Sends `outgoing` to each recipient once, skipping `except`. The requester's own copy goes into its reply.
    func broadcast<S: Sequence>(_ outgoing: Outgoing, to recipients: S, except: Client? = nil, reply: Reply? = nil,
                                only filter: ((Client) -> Bool)? = nil) where S.Element == Client {
        var bytes = FanoutBytes(allocator: allocator)
        for client in recipients where client !== except && !client.closing {
            if let filter, !filter(client) { continue }
            if let reply, client === reply.client {
                reply.add(outgoing)
            } else {
                write(bytes.bytes(of: outgoing, for: client.caps), to: client)
            }
        }
    }

    /// Everyone who shares a room with `client`, each once.
    func peers(of client: Client) -> [Client] {
        if client.rooms.count == 1, let room = client.rooms.first { return room.members }
        var seen = Set<ObjectIdentifier>()
        var result: [Client] = []
        for room in client.rooms {
            for member in room.members where seen.insert(ObjectIdentifier(member)).inserted {
                result.append(member)
            }
        }
        return result
    }

    func peersAndSelf(of client: Client) -> [Client] {
        client.rooms.isEmpty ? [client] : peers(of: client)
    }
}

extension ByteBuffer {
    /// Room for a turn's lines to one client, made once at its second line: the first is often
    /// a broadcast's bytes shared with every member, sized to that line, and growing a copy of it
    /// line by line cost a `realloc` every few deliveries in saturated fan-out (instructions.py).
    static let turnCapacity = 4096

    /// Appends `other`'s readable bytes. The first append to a small buffer moves its bytes into
    /// one of `turnCapacity`; what does not fit then grows as NIO grows it. The bytes are copied
    /// with one `copyMemory`: `writeImmutableBuffer` slices NIO's storage through generic
    /// collection code that cost more instructions than the copy itself.
    mutating func append(_ other: ByteBuffer, allocator: ByteBufferAllocator) {
        let count = other.readableBytes
        guard count > 0 else { return }
        if capacity < Self.turnCapacity {
            var own = allocator.buffer(capacity: Swift.max(Self.turnCapacity, readableBytes + count))
            own.writeImmutableBuffer(self)
            self = own
        }
        reserveCapacity(minimumWritableBytes: count)
        let end = writerIndex
        withVeryUnsafeMutableBytes { target in
            other.withUnsafeReadableBytes { source in
                (target.baseAddress! + end).copyMemory(from: source.baseAddress!, byteCount: count)
            }
        }
        moveWriterIndex(forwardBy: count)
    }
}
