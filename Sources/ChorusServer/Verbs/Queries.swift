import ChorusCore
import ChorusIRC
import Foundation

extension IRCServer {
    // WHO <mask> [%<fields>[,<token>]]   (WHOX when the second parameter starts with %)
    func handleWho(_ reply: Reply, _ m: Message) {
        let client = reply.client
        let mask = m.params.first ?? "*"
        var fields: Set<Character>?
        var token = "0"
        if m.params.count > 1, m.params[1].hasPrefix("%") {
            let spec = m.params[1].dropFirst().split(separator: ",", maxSplits: 1)
            fields = Set(spec.first ?? "")
            if spec.count > 1 { token = String(spec[1].prefix(3)) }
        }
        let multi = client.caps.contains(.multiPrefix)
        var rows: [(person: Person, room: LiveRoom?)] = []
        if Names.isChannel(mask) {
            if let room = rooms[Names.fold(mask)], !room.room.modes.secret || room.contains(client) {
                rows = people(in: room).map { ($0, room) }
            }
        } else if let exact = person(nick: mask) {
            rows = [(exact, exact.roomKeys.first.flatMap { rooms[$0] })]
        } else {
            // The invisible (+i) are listed to those who share a room with them.
            let myRooms = Set(client.rooms.map(\.key))
            for other in everyone where rows.count < 200 {
                guard !other.isInvisible || other.isConnection(client) || !myRooms.isDisjoint(with: other.roomKeys) else { continue }
                if mask == "*" || mask == "0" || Names.matches(mask: mask, other.nick) || Names.matches(mask: mask, other.host)
                    || Names.matches(mask: mask, other.realname) {
                    rows.append((other, nil))
                }
            }
        }
        for (other, room) in rows {
            let flags = other.presenceFlags + (room.map { other.prefix(in: $0, multiPrefix: multi) } ?? "")
            let roomName = room?.name ?? "*"
            guard let fields else {
                reply.numeric(.whoReply, roomName, other.user, other.host, other.server, other.nick, flags, "0 \(other.realname)")
                continue
            }
            var params: [String] = []
            for f in "tcuihsnfdlaor" where fields.contains(f) {
                switch f {
                case "t": params.append(token)
                case "c": params.append(roomName)
                case "u": params.append(other.user)
                case "i": params.append(client.isOper || other.isConnection(client) ? other.ip ?? "255.255.255.255" : "255.255.255.255")
                case "h": params.append(other.host)
                case "s": params.append(other.server)
                case "n": params.append(other.nick)
                case "f": params.append(flags)
                case "d": params.append("0")
                case "l": params.append(String(other.idle(at: now())))
                case "a": params.append(other.account ?? "0")
                case "o": params.append("n/a")
                default: params.append(other.realname)
                }
            }
            reply.numeric(.whoSpcRpl, params: params)
        }
        reply.numeric(.endOfWho, mask, "End of WHO list")
    }

    // WHOIS [<server>] <nick>
    func handleWhois(_ reply: Reply, _ m: Message) {
        let client = reply.client
        let nick = m.params.count > 1 ? m.params[1] : m.params[0]
        if Names.fold(nick) == Names.fold(config.serviceNick) {
            reply.numeric(.whoisUser, config.serviceNick, "bot", name, "*", "Chorus: type !help in a room, or /msg \(config.serviceNick) help")
            reply.numeric(.whoisServer, config.serviceNick, name, config.network)
            reply.numeric(.whoisBot, config.serviceNick, "is a bot")
            return reply.numeric(.endOfWhois, config.serviceNick, "End of /WHOIS list")
        }
        guard let other = person(nick: nick) else {
            reply.numeric(.noSuchNick, nick, "No such nick")
            return reply.numeric(.endOfWhois, nick, "End of /WHOIS list")
        }
        let visible = other.roomKeys.sorted().compactMap { key -> String? in
            guard let room = rooms[key], !room.room.modes.secret || room.contains(client) else { return nil }
            return other.prefix(in: room, multiPrefix: false) + room.name
        }
        let w = other.nick
        reply.numeric(.whoisUser, w, other.user, other.host, "*", other.realname)
        if !visible.isEmpty { reply.numeric(.whoisChannels, w, visible.joined(separator: " ")) }
        reply.numeric(.whoisServer, w, other.server, config.network)
        if other.isOper { reply.numeric(.whoisOperator, w, "is an IRC operator") }
        if let away = other.away { reply.numeric(.away, w, away) }
        if let account = other.account { reply.numeric(.whoisAccount, w, account, "is logged in as") }
        if other.isTLS { reply.numeric(.whoisSecure, w, "is using a secure connection") }
        if other.isBot { reply.numeric(.whoisBot, w, "is a bot") }
        // Their address, to operators and themselves (known for connections here only).
        if client.isOper || other.isConnection(client), let ip = other.ip { reply.numeric(.whoisActually, w, ip, "Actual host") }
        reply.numeric(.whoisIdle, w, String(other.idle(at: now())), String(Int(other.signon.timeIntervalSince1970)), "seconds idle, signon time")
        reply.numeric(.endOfWhois, w, "End of /WHOIS list")
    }

    // WHOWAS <nick> [<count>]
    func handleWhowas(_ reply: Reply, _ m: Message) {
        let nick = m.params[0]
        // A count of 0 or less asks for every entry (modern.ircdocs.horse, WHOWAS).
        let count = m.params.count > 1 ? (Int(m.params[1]).map { $0 > 0 ? $0 : Int.max } ?? 10) : 10
        let matches = registry.whowas.reversed().filter { Names.fold($0.nick) == Names.fold(nick) }.prefix(count)
        if matches.isEmpty { reply.numeric(.wasNoSuchNick, nick, "There was no such nickname") }
        for e in matches {
            reply.numeric(.whowasUser, e.nick, e.user, e.host, "*", e.realname)
            if let account = e.account { reply.numeric(.whoisAccount, e.nick, account, "was logged in as") }
            reply.numeric(.whoisServer, e.nick, name, Timestamp.format(e.time))
        }
        reply.numeric(.endOfWhowas, nick, "End of WHOWAS")
    }

    // USERHOST <nick>{ <nick>}   (up to 5)
    func handleUserhost(_ reply: Reply, _ m: Message) {
        let entries = m.params.prefix(5).compactMap { nick in
            person(nick: nick).map { p in "\(p.nick)\(p.isOper ? "*" : "")=\(p.away == nil ? "+" : "-")\(p.user)@\(p.host)" }
        }
        reply.numeric(.userhost, entries.joined(separator: " "))
    }

    // ISON <nick>{ <nick>}
    func handleIson(_ reply: Reply, _ m: Message) {
        let present = m.params.flatMap { $0.split(separator: " ") }.prefix(64).compactMap { nick in
            person(nick: String(nick))?.nick
        }
        reply.numeric(.ison, present.joined(separator: " "))
    }

    // LUSERS
    func handleLusers(_ reply: Reply, _ m: Message) { sendLusers(reply) }

    func sendLusers(_ reply: Reply) {
        // The whole server, several processes or one; "local" is this process.
        let local = registry.registeredCount
        let users = local + remote.count
        let invisible = registry.invisibleCount + remote.invisibleCount
        let opers = registry.operCount + remote.operCount
        reply.numeric(.luserClient, text: "There are \(users - invisible) users and \(invisible) invisible on 1 server")
        if opers > 0 { reply.numeric(.luserOp, String(opers), "operator(s) online") }
        if registry.unregisteredCount > 0 { reply.numeric(.luserUnknown, String(registry.unregisteredCount), "unknown connection(s)") }
        reply.numeric(.luserChannels, String(rooms.count), "rooms formed")
        // 255, 265 and 266 count registered clients, as 251 does; "max" is the most there have
        // been since the server started.
        let peak = registry.peakUsers, globalPeak = max(peak, users)
        reply.numeric(.luserMe, text: "I have \(local) clients and 0 servers")
        reply.numeric(.localUsers, String(local), String(peak), text: "Current local users \(local), max \(peak)")
        reply.numeric(.globalUsers, String(users), String(globalPeak), text: "Current global users \(users), max \(globalPeak)")
    }

    // MOTD
    func handleMotd(_ reply: Reply, _ m: Message) { sendMotd(reply) }

    func sendMotd(_ reply: Reply) {
        guard !welcome.motd.isEmpty else { return reply.numeric(.noMotd, "MOTD File is missing") }
        reply.numeric(.motdStart, "- \(name) Message of the day - ")
        for line in welcome.motd { reply.numeric(.motd, written: line) }
        reply.numeric(.endOfMotd, "End of /MOTD command.")
    }

    // VERSION
    func handleVersion(_ reply: Reply, _ m: Message) {
        reply.numeric(.version, version, name, "Chorus: an IRC server for teams that share work")
        for line in welcome.isupport { reply.numeric(.isupport, written: line) }
    }

    // INFO
    func handleInfo(_ reply: Reply, _ m: Message) {
        for line in [
            "\(version): a chat server for teams that share work.",
            "Rooms are IRC channels; the \(config.serviceNick) bot runs the team's jobs, chores and lists (type !help in a room).",
            "Written in Swift on SwiftNIO, swift-nio-ssl and GRDB (SQLite).",
            "This server started \(welcome.created).",
        ] { reply.numeric(.info, line) }
        reply.numeric(.endOfInfo, "End of INFO list")
    }

    // TIME
    func handleTime(_ reply: Reply, _ m: Message) {
        let t = now()
        reply.numeric(.time, name, String(Int(t.timeIntervalSince1970)), "0", Timestamp.format(t))
    }
}

/// A user as WHO lists them, connected here or to another process.
