import ChorusIRC
import Foundation

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
    private var lines: [Outgoing] = []
    private(set) var isSuspended = false
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

    func add(_ line: consuming Outgoing) {
        lines.append(line)
    }

    /// `consuming`: the message moves into the line (~250 instructions less than a copy of its four references).
    func send(_ message: consuming Message) {
        add(Outgoing(message, time: server.now()))
    }

    /// A numeric from the server to this client.
    func numeric(_ numeric: Numeric, _ params: String...) {
        send(Message(source: server.name, numeric.rawValue, [client.nick] + params))
    }

    func numeric(_ numeric: Numeric, params: [String]) {
        send(Message(source: server.name, numeric.rawValue, [client.nick] + params))
    }

    /// An IRCv3 standard reply (`FAIL <command> <code> [context…] :<text>`). Clients that did not ask
    /// for standard-replies get the text as a server NOTICE, so a telnet user reads it too.
    func fail(_ code: String, context: [String] = [], _ text: String, command: String? = nil) {
        standardReply("FAIL", code, context: context, text, command: command)
    }

    func note(_ code: String, context: [String] = [], _ text: String, command: String? = nil) {
        standardReply("NOTE", code, context: context, text, command: command)
    }

    private func standardReply(_ kind: String, _ code: String, context: [String], _ text: String, command: String?) {
        if client.caps.contains(.standardReplies) {
            send(Message(source: server.name, kind, [command ?? self.command, code] + context + [text]))
        } else {
            send(Message(source: server.name, "NOTICE", [client.nick, "\(command ?? self.command): \(text)"]))
        }
    }

    /// Wraps lines in a batch of `type` (e.g. `chathistory`) when the client supports batches.
    func batch(_ type: String, _ params: [String], _ body: () -> Void) {
        guard client.caps.contains(.batch) else { return body() }
        let id = client.nextBatchID()
        send(Message(source: server.name, "BATCH", ["+" + id, type] + params))
        let start = lines.count
        body()
        for i in start..<lines.count where lines[i].batch == nil { lines[i].batch = id }
        send(Message(source: server.name, "BATCH", ["-" + id]))
    }

    /// The command continues off the event loop (a password hash, a database read); the client's
    /// next lines wait until `finish()`.
    func suspend() {
        isSuspended = true
        client.suspended = true
        client.unanswered.append(self)
    }

    /// A bot command waits for the database writer. Unlike `suspend()`, the client's next bot
    /// commands may follow it there (a script importing jobs need not wait for each answer), so a
    /// group commit holds more than one command per client; its other lines wait. A line naming
    /// several rooms runs a command for each: the reply finishes with the last of them.
    func suspendForCommand() {
        if commandsRunning == 0 {
            isCommand = true
            client.commandsInFlight += 1
            client.unanswered.append(self)
        }
        commandsRunning += 1
    }

    func commandFinished() {
        commandsRunning -= 1
        if commandsRunning == 0 { finish() }
    }

    /// Whether the line's handler returned before its answer was complete.
    var isWaiting: Bool { isSuspended || commandsRunning > 0 }

    func finish() {
        guard !finished else { return }
        finished = true
        if !isSuspended && !isCommand {
            guard client.unanswered.isEmpty else { return client.unanswered.append(self) }
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
        let caps = client.caps
        var out: [UInt8] = []
        out.reserveCapacity(lines.count * 96)
        switch label {
        case let label? where lines.isEmpty:
            Outgoing(Message(source: server.name, "ACK"), time: server.now()).write(for: caps, label: label, to: &out)
        case let label? where lines.count == 1:
            lines[0].write(for: caps, label: label, to: &out)
        case let label? where caps.contains(.batch):
            let id = client.nextBatchID()
            Outgoing(Message(source: server.name, "BATCH", ["+" + id, "labeled-response"]), time: server.now())
                .write(for: caps, label: label, to: &out)
            for i in lines.indices { lines[i].write(for: caps, batch: id, to: &out) }
            Outgoing(Message(source: server.name, "BATCH", ["-" + id]), time: server.now()).write(for: caps, to: &out)
        default:
            for i in lines.indices { lines[i].write(for: caps, to: &out) }
        }
        if !out.isEmpty { server.write(server.allocator.buffer(bytes: out), to: client) }
    }
}
