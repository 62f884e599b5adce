import ChorusCore
import ChorusIRC
import Foundation
import NIOCore

/// One connection: its state, and the handler at the end of its channel's pipeline
/// (`Connection.swift`). Lives on the server's event loop; only the server touches it.
///
/// An idle connection costs what this object and NIO's and swift-nio-ssl's own per channel cost,
/// so stored properties are laid out with their sizes in mind: the small ones sit together rather
/// than each padded to eight bytes, and nothing is kept that another property already says.
final class Client {
    // What every delivery reads and writes comes first, on the object's first cache line: a room's
    // broadcast touches each member once, and a second line per member showed in perf as stalls.
    var closing = false
    var hasPendingWrites = false
    /// Joins whose history replay is being read. Meanwhile the room's (and everyone's) lines to this
    /// client wait (`IRCServer.heldLive`), so it reads the replay first, then what was said since.
    var replaysReading: UInt16 = 0
    var caps: Caps = []
    /// This loop turn's lines, written to the channel at its end (`IRCServer.flushPending`).
    var outbound: ByteBuffer?
    /// Writes the channel has taken and not finished. While there are any, new output queues behind
    /// them rather than going straight to the socket (`SocketWrite`).
    var writesInChannel: Int32 = 0
    /// The socket's descriptor, for plaintext clients: output goes straight to it when it can
    /// (`SocketWrite`). Valid while `closing` is false.
    let socket: CInt?
    /// This connection's place in its channel's pipeline, set when the handler is added, before any
    /// event. Output written here goes through the handlers before it (TLS) without the pipeline's
    /// entry checks: ~800 instructions less per delivery in light fan-out (callgrind). Used on the
    /// server's loop only, which is the channel's.
    var output: ChannelHandlerContext!

    let server: IRCServer
    let id: Int
    /// The client's address: the socket's peer, or the one a trusted balancer's PROXY header names
    /// (set before the connection becomes active).
    var ip: String
    let connectedAt: Date
    var lastSpokeAt: Date
    /// Time of the last line read (liveness); `lastSpokeAt`, of the last PRIVMSG/NOTICE (WHOIS idle).
    var lastReadAt: Date

    var nick = "*"
    var nickKey = "*"
    var user = ""
    var realname = ""
    /// What QUIT said, for the QUIT others see.
    var quitReason: String?
    var away: String?

    /// The account this connection is logged in to: its name and key only. The account's record
    /// (password hash, email) stays in the store rather than in every connection's memory.
    var account: Login?
    /// PASS's text, until registration uses it.
    var pendingPass: String?
    /// The base64 chunks of an SASL PLAIN exchange under way (`AUTHENTICATE`); nil when none is.
    var saslPayload: String?

    /// Rooms this connection has joined, in the order it joined them. A client is in few rooms and
    /// looks one up by key only to join or leave it; a dictionary cost an idle connection ~70 bytes more.
    var rooms: [LiveRoom] = []

    // Input pacing: parsed lines wait here while a command is in flight or the flood budget is spent.
    var inbox = ReleasingQueue<Inbound>()
    /// Replies to this client's lines that are not written yet because an earlier one is still
    /// running: a client reads its answers in the order it sent its lines.
    var unanswered = ReleasingQueue<Reply>()
    var floodTokens: Double
    var floodUpdatedAt: NIODeadline = .now()

    /// Splits what the channel reads into lines.
    var framer = LineFramer(maxLineLength: Limits.maxInputLine)

    // Counters and flags last, packed together: 32 bits is plenty for each counter, and the two
    // that only ever change by one (`activity`) compare for equality, so they may wrap.
    /// Bot commands of this client on their way through the database writer. The client's next bot
    /// command may follow them there (the writer runs them in order); any other line waits.
    var commandsInFlight: Int32 = 0
    var batchCounter: UInt32 = 0
    /// Lines read and TLS writes: what tells `IRCServer.releaseIdleTLSBuffers` a connection was
    /// quiet between two of its sweeps, and whether its TLS buffers' pages are given back.
    var activity: UInt32 = 0
    var activityAtSweep: UInt32 = 0
    var capVersion: UInt16 = 0
    var saslAttempts: UInt8 = 0
    let isTLS: Bool
    var registered = false
    var capNegotiating = false
    /// Set through `ClientRegistry.setOper` and `setInvisible`, which keep LUSERS' counts.
    var isOper = false
    var invisible = false
    var isBot = false
    var awaitingPong = false
    var suspended = false
    var drainScheduled = false
    var tlsBuffersReleased = false

    enum Inbound {
        case line(String)
        case tooLong
        /// A line that is not UTF-8, as decoded with U+FFFD: refused (`UTF8ONLY`), never relayed.
        case notUTF8(String)
    }

    /// Made as the channel is set up, before it is registered or active.
    init(server: IRCServer, id: Int, channel: Channel, isTLS: Bool) {
        self.server = server
        self.id = id
        self.socket = isTLS ? nil : SocketWrite.descriptor(of: channel)
        self.ip = channel.remoteAddress.map(IRCServer.text(of:)) ?? "unknown"
        self.isTLS = isTLS
        let now = server.now()
        self.connectedAt = now
        self.lastSpokeAt = now
        self.lastReadAt = now
        self.floodTokens = Double(server.config.floodBurst)
    }

    var channel: Channel { output.channel }
    /// The host others see: the address, as the server cloaks nothing.
    var host: String { ip }
    var prefix: String { "\(nick)!\(user.isEmpty ? "*" : user)@\(host)" }
    var accountName: String? { account?.name }

    func nextBatchID() -> String {
        batchCounter &+= 1
        return "b\(batchCounter)"
    }
}

extension Client: Hashable {
    static func == (a: Client, b: Client) -> Bool { a === b }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Who a connection is logged in as.
struct Login: Equatable {
    let name: String
    /// `Account.key(name)`, folded once rather than on every use.
    let key: String

    init(_ account: Account) {
        name = account.name
        key = account.key
    }
}

/// A first-in, first-out queue that holds no memory while it is empty.
///
/// A connection's queues are empty nearly all its life: lines wait only while the flood budget is
/// spent or a command runs. An empty `CircularBuffer` still holds its buffer (176 bytes for the
/// two of a connection, 5 % of an idle one) and keeps whatever size a burst grew it to (a 40-line
/// paste left 1 KiB in `inbox`), so the buffer here is made on the first append and let go with
/// the last element. It lives in a box, so that an empty queue is one pointer in `Client` (a
/// `CircularBuffer` inline is three words): two allocations per burst, none per line.
struct ReleasingQueue<Element> {
    private final class Box {
        var elements = CircularBuffer<Element>(initialCapacity: 4)
    }

    private var box: Box?

    var isEmpty: Bool { box == nil }
    var count: Int { box?.elements.count ?? 0 }
    var first: Element? { box?.elements.first }
    /// Elements the queue has room for without growing; 0 while it holds no buffer.
    var capacity: Int { box?.elements.capacity ?? 0 }

    mutating func append(_ element: Element) {
        if box == nil { box = Box() }
        box!.elements.append(element)
    }

    @discardableResult
    mutating func removeFirst() -> Element {
        let element = box!.elements.removeFirst()
        if box!.elements.isEmpty { box = nil }
        return element
    }
}
