import ChorusCore
import ChorusIRC
import Foundation

extension IRCServer {
    // CHATHISTORY LATEST <target> <* | ref> <limit>
    // CHATHISTORY BEFORE|AFTER|AROUND <target> <ref> <limit>
    // CHATHISTORY BETWEEN <target> <ref> <ref> <limit>
    // CHATHISTORY TARGETS <timestamp> <timestamp> <limit>
    // where <ref> is `timestamp=<ISO 8601>` or `msgid=<id>` (IRCv3 draft/chathistory)
    func handleChathistory(_ reply: Reply, _ m: Message) {
        let client = reply.client
        let sub = m.params[0].uppercased()
        let p = Array(m.params.dropFirst())
        func invalid(_ why: String) { reply.fail("INVALID_PARAMS", context: [sub], why) }
        func limit(_ text: String) -> Int? {
            guard let n = Int(text), n > 0 else { return nil }
            return min(n, config.historyPageLimit)
        }

        if sub == "TARGETS" {
            guard p.count >= 3, let a = Self.bound(p[0]), let b = Self.bound(p[1]), let n = limit(p[2]),
                  case .time(let from) = a, case .time(let to) = b else {
                return invalid("Expected TARGETS timestamp=<time> timestamp=<time> <limit>")
            }
            // The client's rooms, and its account's conversation with every account, connected or
            // not: a private conversation is listed whoever is online.
            var conversations = client.rooms.map(\.key)
            if let account = client.account {
                conversations += accountKeys.map { HistoryEntry.conversation(between: account.name, and: $0) }
            }
            let me = client.account?.key
            let among = Array(Set(conversations))
            reply.wait(for: readAfterWrites { try $0.historyTargets(among: among, from: from, to: to, limit: n) }) { result in
                if case .success(let rows) = result {
                    reply.batch("draft/chathistory-targets", []) {
                        for row in rows {
                            let target = row.conversation.hasPrefix("@") ? Self.otherParty(row.conversation, me: me) : row.target
                            reply.send(Message(source: self.name, "CHATHISTORY", ["TARGETS", target, Timestamp.format(row.latest)]))
                        }
                    }
                } else {
                    reply.fail("MESSAGE_ERROR", context: [sub], "Could not read history")
                }
            }
            return
        }

        // The bot's name is the event feed's target (it keeps no private history of its own).
        if p.count >= 3, Names.fold(p[0]) == Names.fold(config.serviceNick) { return eventFeed(reply, sub, p) }
        guard ["LATEST", "BEFORE", "AFTER", "AROUND", "BETWEEN"].contains(sub) else {
            return reply.fail("INVALID_PARAMS", context: [sub], "Unknown subcommand: use LATEST, BEFORE, AFTER, AROUND, BETWEEN or TARGETS")
        }
        guard p.count >= (sub == "BETWEEN" ? 4 : 3) else { return reply.fail("NEED_MORE_PARAMS", context: [sub], "Not enough parameters") }
        let target = p[0]
        let query: HistoryQuery
        switch sub {
        case "LATEST":
            guard let n = limit(p[2]) else { return invalid("The limit must be a positive number") }
            if p[1] == "*" { query = .latest(after: nil, limit: n) }
            else if let b = Self.bound(p[1]) { query = .latest(after: b, limit: n) }
            else { return invalid("Expected * or timestamp=… or msgid=…") }
        case "BETWEEN":
            guard let a = Self.bound(p[1]), let b = Self.bound(p[2]), let n = limit(p[3]) else {
                return invalid("Expected BETWEEN <target> <ref> <ref> <limit>")
            }
            query = .between(a, b, limit: n)
        default:
            guard let b = Self.bound(p[1]), let n = limit(p[2]) else { return invalid("Expected \(sub) <target> <ref> <limit>") }
            query = sub == "BEFORE" ? .before(b, limit: n) : sub == "AFTER" ? .after(b, limit: n) : .around(b, limit: n)
        }

        let conversation: String
        var reader = HistoryReader.everything
        if Names.isChannel(target) {
            let key = Names.fold(target)
            guard let room = rooms[key], room.contains(client) || client.account.map({ room.memberships[$0.key] != nil }) == true else {
                return reply.fail("INVALID_TARGET", context: [sub, target], "You are not a member of \(target)")
            }
            conversation = key
            reader = room.historyReader(for: client)
        } else {
            guard let account = client.account else {
                return reply.fail("INVALID_TARGET", context: [sub, target], "Private history is kept for logged-in accounts only")
            }
            let other = registry.client(nick: target)?.account?.name ?? target
            conversation = HistoryEntry.conversation(between: account.name, and: other)
        }
        let (room, readAs) = (conversation, reader)
        reply.wait(for: readAfterWrites { try $0.history(of: room, query, reader: readAs) }) { result in
            switch result {
            case .success(let entries):
                reply.batch("chathistory", [target]) {
                    for e in entries { reply.add(Outgoing(replaying: e, to: e.target, stampingText: false)) }
                }
            case .failure:
                reply.fail("MESSAGE_ERROR", context: [sub, target], "Could not read history")
            }
        }
    }

    static func bound(_ text: String) -> HistoryQuery.Bound? {
        if text.hasPrefix("timestamp=") { return Timestamp.parse(String(text.dropFirst(10))).map { .time($0) } }
        if text.hasPrefix("msgid=") { return text.count > 6 ? .msgid(String(text.dropFirst(6))) : nil }
        return nil
    }

    static func otherParty(_ conversation: String, me: String?) -> String {
        let parts = conversation.dropFirst().split(separator: " ").map(String.init)
        return parts.first(where: { $0 != me }) ?? parts.first ?? conversation
    }
}
