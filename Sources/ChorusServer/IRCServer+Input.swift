import ChorusBot
import ChorusCore
import ChorusIRC
import Foundation
import NIOCore

/// Input: each client's lines are paced by a token bucket and wait in a bounded queue while the
/// client's earlier lines are still being answered; then one line at a time is parsed and
/// handed to its verb's handler.
extension IRCServer {

    func receive(_ client: Client, _ inbound: Client.Inbound) {
        guard !client.closing else { return }
        client.activity &+= 1
        client.lastReadAt = now()
        client.awaitingPong = false
        if !client.inbox.isEmpty || !mayProcess(inbound, from: client) || !takeFloodToken(client) {
            client.inbox.append(inbound)
            if config.floodBurst > 0, client.inbox.count > config.floodQueue {
                disconnect(client, reason: "Excess Flood")
            } else {
                scheduleDrain(client)
            }
            return
        }
        process(client, inbound)
    }

    /// A suspended command finished: run the lines that waited.
    func resumeInput(_ client: Client) {
        drain(client)
    }

    private func drain(_ client: Client) {
        while !client.closing, let next = client.inbox.first, mayProcess(next, from: client) {
            guard takeFloodToken(client) else { return scheduleDrain(client) }
            client.inbox.removeFirst()
            process(client, next)
        }
    }

    /// Whether a line can run now: not while a suspended line waits, and while bot commands are in
    /// flight, only another bot command (up to `commandPipeline` of them).
    private func mayProcess(_ inbound: Client.Inbound, from client: Client) -> Bool {
        guard !client.suspended else { return false }
        guard client.commandsInFlight > 0 else { return true }
        guard client.commandsInFlight < config.commandPipeline, case .line(let text) = inbound,
              let message = try? Message.parse(text), message.command == "PRIVMSG", message.params.count == 2 else { return false }
        let target = message.params[0]
        if Names.isChannel(target) { return Bot.isCommand(message.params[1]) }
        return Names.fold(target) == Names.fold(config.serviceNick)
    }

    private func scheduleDrain(_ client: Client) {
        guard !client.suspended, client.commandsInFlight == 0, !client.drainScheduled else { return }
        client.drainScheduled = true
        let wait = config.floodBurst > 0 ? max(0.01, (1 - client.floodTokens) / config.floodRate) : 0
        loop.scheduleTask(in: .milliseconds(Int64(wait * 1000))) { [weak self, weak client] in
            guard let self, let client else { return }
            client.drainScheduled = false
            self.drain(client)
        }
    }

    /// Token bucket: `floodBurst` lines at once, then `floodRate` a second. 0 turns it off.
    private func takeFloodToken(_ client: Client) -> Bool {
        guard config.floodBurst > 0 else { return true }
        let t = NIODeadline.now()
        let elapsed = Double((t - client.floodUpdatedAt).nanoseconds) / 1e9
        client.floodTokens = min(Double(config.floodBurst), client.floodTokens + elapsed * config.floodRate)
        client.floodUpdatedAt = t
        guard client.floodTokens >= 1 else { return false }
        client.floodTokens -= 1
        return true
    }

    private func process(_ client: Client, _ inbound: Client.Inbound) {
        switch inbound {
        case .tooLong:
            answerUnparsed(client) { $0.numeric(.inputTooLong, "Input line was too long") }
        case .notUTF8(let line):
            // UTF8ONLY: refused, and answered as the line's command with its label, as Ergo does.
            let why = "Message rejected: this server takes UTF-8 only (UTF8ONLY)"
            // The UTF8ONLY specification asks for this FAIL whether or not the client negotiated standard-replies.
            guard let message = try? Message.parse(line) else {
                return answerUnparsed(client) { $0.fail("INVALID_UTF8", why, evenWithoutCap: true) }
            }
            let reply = Reply(client: client, server: self, command: message.command, label: message.tag("label"))
            reply.fail("INVALID_UTF8", why, evenWithoutCap: true)
            reply.finish()
        case .line(let text):
            do {
                dispatch(client, try Message.parse(text))
            } catch {
                switch error {
                case .empty:
                    return
                case .lineTooLong, .tagsTooLong:
                    answerUnparsed(client) { $0.numeric(.inputTooLong, "Input line was too long") }
                case .forbiddenCharacter:
                    answerUnparsed(client) { $0.fail("INVALID_LINE", "Lines may not contain NUL or a bare CR") }
                case .invalidCommand(let verb):
                    // Not a command (`NO_SUCH`), but its label still comes back with the 421.
                    // `!job add …` typed at a bare terminal: say how a chat command is sent.
                    let why = verb.hasPrefix("!") && verb.count > 1
                        ? "Unknown command: a chat command goes in a message, as PRIVMSG \(client.rooms.first?.name ?? "#room") :\(verb) … " +
                          "or PRIVMSG \(config.serviceNick) :\(verb) …"
                        : "Unknown command"
                    answerUnparsed(client, label: Self.label(ofUnparsed: text)) { $0.numeric(.unknownCommand, verb, why) }
                case .missingCommand:
                    answerUnparsed(client) { $0.numeric(.unknownCommand, "*", "A line needs a command") }
                }
            }
        }
    }

    private func dispatch(_ client: Client, _ message: Message) {
        // Refusals go through the reply too: a labeled line gets its label back whatever happens.
        let reply = Reply(client: client, server: self, command: message.command, label: message.tag("label"))
        guard let verb = Verbs.table[message.command] else {
            if client.registered {
                reply.numeric(.unknownCommand, message.command, "Unknown command")
            } else {
                reply.numeric(.notRegistered, "You have not registered")
            }
            return reply.finish()
        }
        if !client.registered && !verb.beforeRegistration {
            reply.numeric(.notRegistered, "You have not registered")
        } else if message.params.count < verb.minParams {
            reply.numeric(.needMoreParams, message.command, "Not enough parameters")
        } else {
            verb.handler(self)(reply, message)
        }
        if !reply.isWaiting { reply.finish() }
    }

    /// The `label` tag of a line whose tags parsed but whose command did not (its value unescaped
    /// only as far as labels need: they are short tokens).
    static func label(ofUnparsed text: String) -> String? {
        guard text.hasPrefix("@"), let end = text.firstIndex(of: " ") else { return nil }
        for tag in text[text.index(after: text.startIndex)..<end].split(separator: ";") where tag.hasPrefix("label=") {
            let value = tag.dropFirst(6)
            return value.isEmpty || value.contains("\\") ? nil : String(value)
        }
        return nil
    }

    /// The answer to a line that could not be parsed (so it has no command and no label): through a
    /// reply all the same, so it keeps the client's answer order and carries the tags its
    /// capabilities ask for (server-time), and a FAIL is a NOTICE for clients without standard-replies.
    private func answerUnparsed(_ client: Client, label: String? = nil, _ answer: (Reply) -> Void) {
        let reply = Reply(client: client, server: self, command: "*", label: label)
        answer(reply)
        reply.finish()
    }
}
