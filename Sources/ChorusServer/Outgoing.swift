import ChorusCore
import ChorusIRC
import Foundation
import NIOCore

/// A line on its way to one or many clients. The tags each client sees depend on its capabilities,
/// so the line keeps its tag values apart from the message and is written per capability variant.
struct Outgoing {
    var message: Message
    var time: Date
    var msgid: String?
    var account: String?
    var clientTags: [Message.Tag] = []
    /// Set only on lines of a reply: the batch they belong to.
    var batch: String?
    /// A line too long for the wire is cut (what a client relays), or split (the server's own
    /// notices, which must arrive whole).
    var overlong = Message.Overlong.cut

    init(_ message: Message, time: Date, msgid: String? = nil, account: String? = nil, clientTags: [Message.Tag] = [],
         overlong: Message.Overlong = .cut) {
        self.message = message
        self.time = time
        self.msgid = msgid
        self.account = account
        self.clientTags = clientTags
        self.overlong = overlong
    }

    /// Appends the line as a client with `caps` should read it, with its CR LF: plus `label` when it
    /// is a labeled reply's only line or opens its batch, and in `batch` unless it is in one of its own.
    func write(for caps: Caps, label: String? = nil, batch outer: String? = nil, to out: inout [UInt8]) {
        var tags = Outgoing.plainTags(for: caps, label: label, batch: batch ?? outer, time: time)
        if caps.contains(.messageTags) {
            if let msgid { tags.append(.init("msgid", msgid)) }
            tags.append(contentsOf: clientTags)
        }
        if caps.contains(.accountTag), let account { tags.append(.init("account", account)) }
        // A notice cut in two (an event's sentence, say) keeps its tags on both lines; the second
        // says it continues. Two flag tests: nothing is looked up on the fan-out's path.
        let continued = overlong == .split && caps.contains(.messageTags) ? Outgoing.continued : nil
        message.writeLines(to: &out, tags: tags, overlong: overlong, continuation: { $0.key != "msgid" && $0.key != "label" },
                           continued: continued)
    }

    /// The tag on the second and later lines of a notice split over several.
    static let continued = Message.Tag("chorus/continued", "1")

    /// The tags of a line without message id, account or client tags (a server's numeric, say), as
    /// `write` begins every line's: the label, the batch, the time.
    static func plainTags(for caps: Caps, label: String?, batch: String?, time: Date) -> [Message.Tag] {
        var tags: [Message.Tag] = []
        if let label { tags.append(.init("label", label)) }
        if let batch, caps.contains(.batch) { tags.append(.init("batch", batch)) }
        if caps.contains(.serverTime) { tags.append(.init("time", Timestamp.format(time))) }
        return tags
    }

    /// The line as a client with `caps` should read it, in a buffer of its own.
    func buffer(for caps: Caps, allocator: ByteBufferAllocator) -> ByteBuffer {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        write(for: caps, to: &bytes)
        return allocator.buffer(bytes: bytes)
    }
}

/// One broadcast's bytes, made once per capability variant and shared by every recipient of that variant.
/// It keeps only the bytes: the line itself stays with the caller, so it is not copied.
struct FanoutBytes {
    let allocator: ByteBufferAllocator
    private var variants: [(Caps, ByteBuffer)] = []

    init(allocator: ByteBufferAllocator) {
        self.allocator = allocator
    }

    mutating func bytes(of outgoing: borrowing Outgoing, for caps: Caps) -> ByteBuffer {
        let variant = caps.intersection(Caps.tagVariantBits)
        for (v, buffer) in variants where v == variant { return buffer }
        let buffer = outgoing.buffer(for: variant, allocator: allocator)
        variants.append((variant, buffer))
        return buffer
    }
}

extension Outgoing {
    /// A stored line played back to `target` (a room's replay, private lines that waited): with its
    /// own time, which a client without server-time reads in front of the text.
    /// Its client tags (an event's `chorus/*`, a `+draft/reply`) come back too: a bot that
    /// reconnects reads replayed events as it read them live.
    init(replaying entry: HistoryEntry, to target: String, stampingText: Bool) {
        let text = stampingText ? "[\(Timestamp.short(entry.time))] \(entry.text)" : entry.text
        self.init(said: entry.command, text, by: entry.source, account: entry.account, to: target, time: entry.time,
                  msgid: entry.msgid, storedTags: entry.clientTags)
    }

    /// A line another node relayed (`BusMessage.line`), to `target`.
    init(relayed line: RelayedLine, to target: String) {
        self.init(said: line.command, line.text, by: line.source, account: line.account, to: target, time: line.time,
                  msgid: line.msgid, storedTags: line.clientTags)
    }

    private init(said command: String, _ text: String, by source: String, account: String?, to target: String, time: Date,
                 msgid: String, storedTags: String) {
        // Notices (the bot's events among them) are split rather than cut: they must be read whole.
        self.init(Message(source: source, command, command == "TAGMSG" ? [target] : [target, text]), time: time, msgid: msgid,
                  account: account, clientTags: Self.tags(stored: storedTags), overlong: command == "NOTICE" ? .split : .cut)
    }

    /// Tags as a history row keeps them (`key=value;…`, escaped as on the wire).
    static func tags(stored: String) -> [Message.Tag] {
        guard !stored.isEmpty, let parsed = try? Message.parse("@\(stored) X") else { return [] }
        return parsed.tags
    }
}
