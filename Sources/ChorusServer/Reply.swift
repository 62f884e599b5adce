import ChorusIRC
import ChorusWorkspace
import Foundation
import NIOCore

/// Everything one command sends back to the client that sent it, written when the command finishes.
///
/// This is the one place that knows IRCv3 labeled-response: a single line carries the `label`, several
/// lines are wrapped in a `labeled-response` batch, and no line at all becomes an `ACK`. Handlers
/// add lines; they never write to a socket themselves.
final class Reply {
    let client: Client
    let server: IRCServer
    let command: String
    private let label: String?
    private var lines: [Line] = []
    /// Lines that follow the answer whenever they came: a command's events, which reach the
    /// server before its answer does.
    private var afterAnswer: [Outgoing] = []
    /// The reply's plain lines, one after another, each ending in CR LF: as they go to a client
    /// without tags, so such a client's reply is this buffer as it stands.
    private var bodies: [UInt8] = []
    private(set) var isSuspended = false
    /// Answers still waiting for their work (`wait`).
    private var waits = 0
    /// Whether the reply is in `client.unanswered`.
    private var queued = false
    private var isCommand = false
    private var commandsRunning = 0
    private var finished = false

    init(client: Client, server: IRCServer, command: String, label: String?) {
        self.client = client
        self.server = server
        self.command = command
        self.label = client.caps.contains(.labeledResponse) ? label : nil
    }

    var nick: String { client.nick }

    /// A line of the reply. The lines a handler makes for this client alone (numerics, notices, the
    /// echo of its JOIN) carry no tags but label, batch and time, so their bodies are written at once
    /// and only those tags wait for `write()`: a `Message` and an `Outgoing` per line were ~3.5k of
    /// a welcome line's ~4.5k instructions (callgrind, 1,000 registrations).
    private enum Line {
        case outgoing(Outgoing)
        case plain(body: Range<Int>, time: Date, batch: String?)

        /// A plain line that gets no tag at all (no time asked for, no batch it is in).
        func isUntagged(for caps: Caps) -> Bool {
            guard case let .plain(_, _, batch) = self else { return false }
            return batch == nil || !caps.contains(.batch)
        }

        /// Puts the line in batch `id` unless it is in one of its own.
        mutating func enter(batch id: String) {
            switch self {
            case .outgoing(var line) where line.batch == nil:
                line.batch = id
                self = .outgoing(line)
            case let .plain(body, time, nil):
                self = .plain(body: body, time: time, batch: id)
            default:
                break
            }
        }
    }

    func add(_ line: consuming Outgoing) {
        lines.append(.outgoing(line))
    }

    /// A line written after every other line of the reply.
    func addAfterAnswer(_ line: Outgoing) {
        afterAnswer.append(line)
    }

    func send(_ message: borrowing Message) {
        appendPlain { Message.writeBody(source: message.source, command: message.command, params: message.params, to: &$0) }
    }

    /// A numeric from the server to this client.
    func numeric(_ numeric: Numeric, _ params: String...) {
        self.numeric(numeric, params: params)
    }

    func numeric(_ numeric: Numeric, params: [String]) {
        appendPlain { out in
            writeStart(of: numeric, lastParam: params.isEmpty, to: &out)
            Message.writeParams(params, to: &out)
        }
    }

    /// A numeric whose last parameter is `ParamText`: the lines of every registration and join.
    func numeric(_ numeric: Numeric, _ params: String..., text: ParamText) {
        appendPlain { out in
            writeStart(of: numeric, lastParam: false, to: &out)
            for param in params { Message.writeParam(param, isLast: false, to: &out) }
            Message.writeParam(text, isLast: true, to: &out)
        }
    }

    /// A numeric whose parameters after the nick were written once (`Message.writeParams`).
    func numeric(_ numeric: Numeric, written params: [UInt8]) {
        appendPlain { out in
            writeStart(of: numeric, lastParam: params.isEmpty, to: &out)
            out.append(contentsOf: params)
        }
    }

    /// `:server NNN nick`, the nick trailing if nothing follows it.
    private func writeStart(of numeric: Numeric, lastParam: Bool, to out: inout [UInt8]) {
        // The source was written once (`Welcome`): a welcome burst is ~20 numerics.
        out.append(contentsOf: server.welcome.numericSource)
        out.appendUTF8(numeric.rawValue)
        // Until registration completes the client has no nick of its own, however many it asked
        // for: a 433 for its NICK is addressed to `*`, as Ergo and InspIRCd do.
        Message.writeParam(client.registered ? client.nick : "*", isLast: lastParam, to: &out)
    }

    /// Adds a line without tags of its own; `write` appends its body.
    private func appendPlain(_ write: (inout [UInt8]) -> Void) {
        // Most replies fit; a registration's welcome (~1.3 KB, 15 lines) grows once, not six times.
        if bodies.capacity == 0 {
            bodies.reserveCapacity(960)
            lines.reserveCapacity(16)
        }
        let start = bodies.count
        write(&bodies)
        lines.append(.plain(body: start..<bodies.count, time: server.now(), batch: nil))
        bodies.append(UInt8(ascii: "\r"))
        bodies.append(UInt8(ascii: "\n"))
    }

    /// An IRCv3 standard reply (`FAIL <command> <code> [context…] :<text>`). Clients that did not ask
    /// for standard-replies get the text as a server NOTICE, so a telnet user reads it too.
    /// `evenWithoutCap`: a FAIL some specification requires whatever the client negotiated
    /// (UTF8ONLY's INVALID_UTF8).
    func fail(_ code: String, context: [String] = [], _ text: String, command: String? = nil, evenWithoutCap: Bool = false) {
        standardReply("FAIL", code, context: context, text, command: command, evenWithoutCap: evenWithoutCap)
    }

    /// Commands whose own specification answers errors with FAIL (draft/account-registration,
    /// draft/chathistory, setname): a client that speaks them reads FAIL whatever else it negotiated.
    static let failsByTheirSpecification: Set<String> = ["REGISTER", "VERIFY", "CHATHISTORY", "SETNAME"]

    func note(_ code: String, context: [String] = [], _ text: String, command: String? = nil) {
        standardReply("NOTE", code, context: context, text, command: command)
    }

    private func standardReply(_ kind: String, _ code: String, context: [String], _ text: String, command: String?,
                               evenWithoutCap: Bool = false) {
        if client.caps.contains(.standardReplies) || evenWithoutCap || Self.failsByTheirSpecification.contains(command ?? self.command) {
            send(Message(source: server.name, kind, [command ?? self.command, code] + context + [text]))
        } else {
            let about = command ?? self.command  // "*" when the line had no command to name
            send(Message(source: server.name, "NOTICE", [client.nick, about == "*" ? text : "\(about): \(text)"]))
        }
    }

    /// Wraps lines in a batch of `type` (e.g. `chathistory`) when the client supports batches.
    func batch(_ type: String, _ params: [String], _ body: () -> Void) {
        guard client.caps.contains(.batch) else { return body() }
        let id = client.nextBatchID()
        send(Message(source: server.name, "BATCH", ["+" + id, type] + params))
        let start = lines.count
        body()
        for i in start..<lines.count { lines[i].enter(batch: id) }
        send(Message(source: server.name, "BATCH", ["-" + id]))
    }

    /// The answer waits for `work` done off the event loop (a password hash, a history read): the
    /// client's next lines wait too. `answer` adds the lines, and the reply is finished when it
    /// returns, whatever path it took: a handler cannot leave the client's input frozen.
    /// An answer may wait again, or for a command (a login, then the nick's claim; a room looked
    /// up, then the membership stored): the reply finishes after the last.
    func wait<T>(for work: EventLoopFuture<T>, then answer: @escaping (Result<T, Error>) -> Void) {
        if !isSuspended {
            isSuspended = true
            client.suspended = true
            queueAnswer()
        }
        waits += 1
        work.whenComplete { result in
            answer(result)
            self.waits -= 1
            if !self.isWaiting { self.finish() }
        }
    }

    /// Takes this reply's place among the client's answers, in the order of its lines, once.
    private func queueAnswer() {
        guard !queued else { return }
        queued = true
        client.unanswered.append(self)
    }

    /// A bot command waits for the Workspace. Unlike `wait`, the client's next bot commands may
    /// follow it there (a script importing jobs need not wait for each answer), so a group commit
    /// holds more than one command per client; its other lines wait. A line naming several rooms
    /// runs a command for each: the reply finishes with the last of them, once `answer` returns.
    func wait(forCommand outcome: EventLoopFuture<Outcome>, then answer: @escaping (Outcome) -> Void) {
        if !isCommand {
            isCommand = true
            client.commandsInFlight += 1
            queueAnswer()
        }
        commandsRunning += 1
        outcome.whenComplete { result in
            answer((try? result.get()) ?? .notCommitted)
            self.commandsRunning -= 1
            if !self.isWaiting { self.finish() }
        }
    }

    /// Whether the line's answer still waits for work (`wait`) or commands.
    var isWaiting: Bool { waits > 0 || commandsRunning > 0 }

    func finish() {
        guard !finished else { return }
        finished = true
        if !isSuspended && !isCommand {
            guard client.unanswered.isEmpty else { return queueAnswer() }
            return write()
        }
        // Answers go out in the order of the lines: this one, and any that finished behind it.
        while let first = client.unanswered.first, first.finished {
            client.unanswered.removeFirst()
            first.write()
        }
        if isSuspended { client.suspended = false }
        if isCommand { client.commandsInFlight -= 1 }
        server.resumeInput(client)
    }

    /// Writes the whole reply as one buffer: one write to the channel, however many lines.
    private func write() {
        guard !client.closing else { return }
        if !afterAnswer.isEmpty {
            lines += afterAnswer.map { .outgoing($0) }
            afterAnswer = []
        }
        let caps = client.caps
        if label == nil, !caps.contains(.serverTime), lines.allSatisfy({ $0.isUntagged(for: caps) }) {
            if !bodies.isEmpty { server.writeAnswer(server.allocator.buffer(bytes: bodies), to: client) }
            return
        }
        var out: [UInt8] = []
        out.reserveCapacity(lines.count * 96)
        switch label {
        case let label? where lines.isEmpty:
            Outgoing(Message(source: server.name, "ACK"), time: server.now()).write(for: caps, label: label, to: &out)
        case let label? where lines.count == 1 && !(caps.contains(.batch) && splits(lines[0], for: caps)):
            write(lines[0], for: caps, label: label, to: &out)
        case let label? where caps.contains(.batch):
            // Several lines, or one the wire splits in several (a long notice): a batch either way.
            let id = client.nextBatchID()
            Outgoing(Message(source: server.name, "BATCH", ["+" + id, "labeled-response"]), time: server.now())
                .write(for: caps, label: label, to: &out)
            for line in lines { write(line, for: caps, batch: id, to: &out) }
            Outgoing(Message(source: server.name, "BATCH", ["-" + id]), time: server.now()).write(for: caps, to: &out)
        default:
            for line in lines { write(line, for: caps, to: &out) }
        }
        if !out.isEmpty { server.writeAnswer(server.allocator.buffer(bytes: out), to: client) }
    }

    /// Whether `line` goes out as more than one wire line (it is split to fit 512 bytes).
    private func splits(_ line: Line, for caps: Caps) -> Bool {
        guard case .outgoing(let outgoing) = line, outgoing.overlong == .split else { return false }
        // Most lines are far from the limit: only those near it are written out to see.
        let m = outgoing.message
        let body = (m.source?.utf8.count ?? 0) + m.command.utf8.count + m.params.reduce(0) { $0 + $1.utf8.count + 2 } + 4
        guard body > Limits.lineBytes - 32 else { return false }
        var bytes: [UInt8] = []
        outgoing.write(for: caps, to: &bytes)
        return bytes.lazy.filter { $0 == UInt8(ascii: "\n") }.count > 1
    }

    private func write(_ line: Line, for caps: Caps, label: String? = nil, batch outer: String? = nil, to out: inout [UInt8]) {
        switch line {
        case .outgoing(let line):
            line.write(for: caps, label: label, batch: outer, to: &out)
        case let .plain(body, time, batch):
            let tags = Outgoing.plainTags(for: caps, label: label, batch: batch ?? outer, time: time)
            if tags.isEmpty {
                out.append(contentsOf: bodies[body.lowerBound..<body.upperBound + 2])  // with its CR LF
            } else {
                Message.writeLine(tags: tags, body: bodies[body], to: &out)
            }
        }
    }
}
