import ChorusBot
import ChorusCore
import ChorusIRC
import Foundation

extension IRCServer {
    // PRIVMSG <target>{,<target>} :<text>
    func handlePrivmsg(_ reply: Reply, _ m: Message) {
        relay(reply, m, command: "PRIVMSG")
    }

    // NOTICE <target>{,<target>} :<text>   (never answered with an error, as RFC 2812 asks)
    func handleNotice(_ reply: Reply, _ m: Message) {
        relay(reply, m, command: "NOTICE")
    }

    // TAGMSG <target>{,<target>}   (only tags, e.g. typing notifications; not stored)
    func handleTagmsg(_ reply: Reply, _ m: Message) {
        relay(reply, m, command: "TAGMSG")
    }

    private func relay(_ reply: Reply, _ m: Message, command: String) {
        let client = reply.client
        let quiet = command == "NOTICE"
        let isTagMsg = command == "TAGMSG"
        guard let targets = m.params.first, !targets.isEmpty else {
            if !quiet { reply.numeric(.noRecipient, "No recipient given (\(command))") }
            return
        }
        let text = m.params.count > 1 ? m.params[1] : ""
        // Private lines kept for accounts nobody is connected as (target, msgid): the sender hears
        // so once they are stored.
        var held: [HeldLine] = []
        if !isTagMsg && text.isEmpty {
            if !quiet { reply.numeric(.noTextToSend, "No text to send") }
            return
        }
        var clientTags = m.clientTags
        if isTagMsg && clientTags.isEmpty { return }
        // IRCv3 bot mode: what a +B client says carries the `bot` tag, so clients can tell.
        if client.isBot { clientTags.append(Message.Tag("bot")) }
        client.lastSpokeAt = now()
        let source = client.prefix  // made once: a line to a room names it twice (the line and its history)
        for target in targets.split(separator: ",").prefix(4).map(String.init) {
            let t = now()
            let msgid = ids.next(at: t)
            let out = Outgoing(Message(source: source, command, isTagMsg ? [target] : [target, text]),
                               time: t, msgid: msgid, account: client.accountName, clientTags: clientTags)
            let recipients: (Client) -> Bool = { !isTagMsg || $0.caps.contains(.messageTags) }
            let echo = client.caps.contains(.echoMessage)

            // @#room and +#room reach only the managers (and voiced members).
            var roomName = target
            var statusFilter: LiveRoom.Status?
            if let first = target.first, first == "@" || first == "+", target.count > 1 {
                roomName = String(target.dropFirst())
                statusFilter = first == "@" ? .op : [.op, .voice]
            }
            if Names.isChannel(roomName) {
                guard let room = rooms[Names.fold(roomName)] else {
                    if !quiet { reply.numeric(.noSuchChannel, roomName, "No such room") }
                    continue
                }
                guard room.canSpeak(client), !(isBanned(client, from: room) && (room.status(of: client) ?? []).isEmpty) else {
                    if !quiet {
                        let why = room.contains(client) ? "the room is moderated (+m) or you are banned" : "you are not in the room (+n)"
                        reply.numeric(.cannotSendToChan, room.name, "Cannot send to room: \(why)")
                    }
                    continue
                }
                let isCommand = command == "PRIVMSG" && statusFilter == nil && Bot.isCommand(text)
                let relayed = !isCommand || room.echoCommands
                // Where members see only their own jobs, a command line may name what the rules
                // hide from them (`!job add Secret raise for carol @carol`): only managers read it.
                let managersOnly = isCommand && room.jobsHidden
                // A line every member hears (most of them) is written without asking of each member.
                let everyone = !isTagMsg && relayed && !managersOnly && statusFilter == nil
                broadcast(out, to: room.members, except: echo ? nil : client, reply: reply, only: everyone ? nil : { member in
                    guard recipients(member), relayed || member === client else { return false }
                    if managersOnly && member !== client && !room.hearsAsManager(member) { return false }
                    guard let statusFilter else { return true }
                    return member === client || !(room.status(of: member) ?? []).isDisjoint(with: statusFilter)
                })
                // What is not kept still reaches the room's members on other processes.
                if isTagMsg || statusFilter != nil { relayToRoomElsewhere(out, text: text, from: client, target: target, room: room) }
                // Stored before the command runs, so the line comes before what it made happen.
                if !isTagMsg && statusFilter == nil && relayed {
                    record(HistoryEntry(conversation: room.key, msgid: msgid, time: t, command: command, source: source,
                                        account: client.accountName, target: room.name, text: text,
                                        clientTags: Message.serializedTags(clientTags),
                                        audience: managersOnly ? [client.account?.key ?? ""] : nil))
                }
                if !isTagMsg { metrics.linesRelayed.increment() }
                if command == "PRIVMSG" && statusFilter == nil && !isCommand { pushMentions(out, text: text, in: room, from: client) }
                if isCommand { runCommand(text, in: room, reply: reply) }
            } else if target.hasPrefix("$") {
                // $* : a server-wide notice from an operator.
                guard client.isOper else {
                    if !quiet { reply.numeric(.noPrivileges, "Permission Denied: only operators may message the whole server") }
                    continue
                }
                broadcast(out, to: registry.clients.values.filter(\.registered), except: echo ? nil : client, reply: reply, only: recipients)
            } else if Names.fold(target) == Names.fold(config.serviceNick) {
                // Private commands to the bot; `help` works as well as `!help`.
                if command == "PRIVMSG" {
                    if echo { reply.add(out) }
                    runCommand(text.hasPrefix("!") ? text : "!" + text, in: nil, reply: reply)
                }
            } else {
                guard let peer = registry.client(nick: target) else {
                    if messageAccount(out, msgid: msgid, text: text, from: client, reply: reply, held: &held, only: recipients) { continue }
                    if let elsewhere = remote.user(nick: target) {
                        messageElsewhere(out, text: text, from: client, to: elsewhere, reply: reply)
                        continue
                    }
                    if !quiet { reply.numeric(.noSuchNick, target, "No such nick") }
                    continue
                }
                for session in registry.sharing(peer) where recipients(session) { send(out, to: session) }
                // The person's devices on other nodes: a kept line reaches them from the log; tags
                // and a guest's line, which no history keeps, go on the bus.
                if (isTagMsg || client.account == nil) && hasSessionsElsewhere(peer) { relay(out, text: text, from: client, target: peer.nick) }
                if peer.nickKey != client.nickKey { copyToOtherSessions(out, of: client) }
                if !isTagMsg { metrics.linesRelayed.increment() }
                // To yourself with echo-message: the delivery and the (labeled) echo, both.
                if echo { reply.add(out) }
                if command == "PRIVMSG", let away = peer.away { reply.numeric(.away, peer.nick, away) }
                if !isTagMsg, let to = peer.account { recordPrivateLine(out, text: text, from: client, to: to.name, target: peer.nick) }
            }
        }
        keepHeld(held, for: reply)
    }

    /// A line to an account's name that no connection has as its nick (an account's name is its
    /// reserved nick). Its connections under other nicks get it (alice as `alice_` after a
    /// reconnect); with none, a PRIVMSG is stored and played back at the account's next login
    /// (`deliverHeldLines`), as teammates expect of a team chat, and the sender hears that it waits
    /// (301). Only between accounts: a guest's line has no one to keep it for. False when the
    /// target is no account, or for a NOTICE or TAGMSG to an account nobody is connected as.
    private func messageAccount(_ out: Outgoing, msgid: String, text: String, from client: Client, reply: Reply,
                                held: inout [HeldLine], only recipients: (Client) -> Bool) -> Bool {
        let target = out.message.params[0], key = Account.key(target), command = out.message.command
        guard accountKeys.contains(key) else { return false }
        let connections = registry.connections(ofAccount: key)
        // Connected to another process: the line reaches them from the store's log.
        let elsewhere = !remote.users(ofAccount: key).isEmpty
        if connections.isEmpty && !elsewhere {
            guard command == "PRIVMSG" else { return false }
            guard client.account != nil else {
                reply.numeric(.noSuchNick, target, "\(target) is offline; log in to leave them a message")
                return true
            }
        }
        for peer in connections where recipients(peer) {
            var line = out
            line.message.params[0] = peer.nick  // clients take a private line addressed to their own nick
            send(line, to: peer)
        }
        if client.caps.contains(.echoMessage) { reply.add(out) }
        if key != client.account?.key { copyToOtherSessions(out, of: client) }
        if command != "TAGMSG" && client.account != nil {
            recordPrivateLine(out, text: text, from: client, to: target, target: target)
        } else if elsewhere {
            relay(out, text: text, from: client, target: target)  // a guest's line, or tags only
        }
        if connections.isEmpty && !elsewhere { held.append(HeldLine(target: target, msgid: msgid, line: out)) }
        return true
    }

    /// A line to a nick connected to another process: it goes there through the store's log, as a
    /// private line between accounts (kept), or else as a line only relayed.
    private func messageElsewhere(_ out: Outgoing, text: String, from client: Client, to peer: PresenceRecord, reply: Reply) {
        let command = out.message.command
        if client.caps.contains(.echoMessage) { reply.add(out) }
        copyToOtherSessions(out, of: client)
        if command == "PRIVMSG", let away = peer.away { reply.numeric(.away, peer.nick, away) }
        guard command != "TAGMSG" else { return relay(out, text: text, from: client, target: peer.nick) }
        metrics.linesRelayed.increment()
        if client.account != nil, let account = peer.account {
            recordPrivateLine(out, text: text, from: client, to: account, target: peer.nick)
        } else {
            relay(out, text: text, from: client, target: peer.nick)
        }
    }

    /// Keeps the lines for accounts nobody is connected as, after their history lines, and only
    /// then tells the sender they will arrive (301): what a sender was told, is kept. The answer
    /// waits for the write; a line that could not be kept is said to be so.
    /// A private line for an account nobody is connected as: kept for its next login, and sent to
    /// its devices (`push`).
    struct HeldLine {
        let target: String
        let msgid: String
        let line: Outgoing
    }

    private func keepHeld(_ held: [HeldLine], for reply: Reply) {
        guard !held.isEmpty else { return }
        let lines = held.map { ($0.msgid, Account.key($0.target)) }
        let kept = readAfterWrites { store in for (msgid, account) in lines { try store.holdPrivateLine(msgid, for: account) } }
        reply.wait(for: kept) { result in
            for line in held {
                let target = line.target
                if case .success = result {
                    reply.numeric(.away, target, "not connected; they will get your message when they log in")
                    self.push(line.line, to: [Account.key(target)], urgent: true)
                } else {
                    reply.fail("MESSAGE_ERROR", context: [target], "Your message to \(target) could not be kept; send it again later")
                }
            }
        }
    }

    /// Private lines are kept between accounts, so both sides can page them back later; a guest's
    /// are not kept.
    private func recordPrivateLine(_ out: Outgoing, text: String, from client: Client, to account: String, target: String) {
        guard let from = client.account, let msgid = out.msgid else { return }
        record(HistoryEntry(conversation: HistoryEntry.conversation(between: from.name, and: account), msgid: msgid,
                            time: out.time, command: out.message.command, source: client.prefix, account: from.name,
                            target: target, text: text, clientTags: Message.serializedTags(out.clientTags)))
    }

    /// The private lines that waited for this account (`messageAccount`), oldest first, each
    /// with its time: as a server-time tag, or written in front of the text for clients without it.
    /// At most the latest `heldLinesPlayedBack`, so that a long absence cannot fill the send queue
    /// and cut the connection; the rest stay in the history of each conversation.
    func deliverHeldLines(to client: Client, accountKey: String) {
        let limit = Self.heldLinesPlayedBack
        readAfterWrites { try $0.takeHeldPrivateLines(for: accountKey, limit: limit) }.whenSuccess { lines, held in
            guard !lines.isEmpty else { return }
            guard !client.closing else {
                // Gone meanwhile: the lines wait for the next login again.
                return self.persist("held lines") { store in try lines.forEach { try store.holdPrivateLine($0.msgid, for: accountKey) } }
            }
            if held > lines.count {
                self.send(Outgoing(Message(source: self.name, "NOTICE", [client.nick,
                    "\(held) private messages came while you were away; here are the latest \(lines.count). "
                    + "The others are in your history with each sender (CHATHISTORY)."]), time: self.now()), to: client)
            }
            let stamp = !client.caps.contains(.serverTime)
            for e in lines { self.send(Outgoing(replaying: e, to: client.nick, stampingText: stamp), to: client) }
        }
    }

    /// 100 lines of up to 512 bytes stay well inside a client's send queue (256 KiB).
    static let heldLinesPlayedBack = 100

    // AWAY [:<message>]
    func handleAway(_ reply: Reply, _ m: Message) {
        let text = m.params.first.map { String($0.prefix(Limits.awayLength)) } ?? ""
        if text.isEmpty {
            reply.numeric(.unaway, "You are no longer marked as being away")
        } else {
            reply.numeric(.nowAway, "You have been marked as being away")
        }
        setAway(reply.client, text.isEmpty ? nil : text)
    }

    // SETNAME :<realname>
    func handleSetname(_ reply: Reply, _ m: Message) {
        let client = reply.client
        let realname = m.params[0]
        guard !realname.isEmpty, realname.utf8.count <= Limits.realnameLength else {
            return reply.fail("INVALID_REALNAME", "A real name must be 1-\(Limits.realnameLength) bytes")
        }
        client.realname = realname
        let out = Outgoing(Message(source: client.prefix, "SETNAME", [realname]), time: now(), account: client.accountName)
        broadcast(out, to: client.rooms.isEmpty ? [client] + peersAndWatchers(of: client) : peersAndWatchers(of: client), reply: reply,
                  only: { $0 === client || $0.caps.contains(.setname) })
        cluster?.presenceChanged(client)
    }
}
