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
        var rows: [(Listed, LiveRoom?)] = []
        if Names.isChannel(mask) {
            if let room = rooms[Names.fold(mask)], !room.room.modes.secret || room.contains(client) {
                rows = room.people.map { (Listed($0, in: room, multiPrefix: multi, now: now()), room) }
                    + remote.members(of: room.key).map { (Listed($0, in: room.key, multiPrefix: multi), room) }
            }
        } else if let exact = registry.client(nick: mask) {
            rows = [(Listed(exact, in: exact.rooms.first, multiPrefix: multi, now: now()), exact.rooms.first)]
        } else if let exact = remote.user(nick: mask) {
            rows = [(Listed(exact, in: nil, multiPrefix: multi), nil)]
        } else {
            let shared = Set(peers(of: client).map(ObjectIdentifier.init))
            func matches(_ nick: String, _ host: String, _ realname: String) -> Bool {
                mask == "*" || mask == "0" || Names.matches(mask: mask, nick) || Names.matches(mask: mask, host)
                    || Names.matches(mask: mask, realname)
            }
            for other in registry.clients.values where other.registered && rows.count < 200 {
                guard !other.invisible || other === client || shared.contains(ObjectIdentifier(other)) else { continue }
                if matches(other.nick, other.host, other.realname) { rows.append((Listed(other, in: nil, multiPrefix: multi, now: now()), nil)) }
            }
            let myRooms = Set(client.rooms.map(\.key))
            for other in remote.users.values where rows.count < 200 {
                guard !other.isInvisible || !myRooms.isDisjoint(with: other.rooms.keys) else { continue }
                if matches(other.nick, other.host, other.realname) { rows.append((Listed(other, in: nil, multiPrefix: multi), nil)) }
            }
        }
        for (other, room) in rows {
            let flags = other.flags
            let roomName = room?.name ?? "*"
            guard let fields else {
                reply.numeric(.whoReply, roomName, other.user, other.host, name, other.nick, flags, "0 \(other.realname)")
                continue
            }
            var params: [String] = []
            for f in "tcuihsnfdlaor" where fields.contains(f) {
                switch f {
                case "t": params.append(token)
                case "c": params.append(roomName)
                case "u": params.append(other.user)
                case "i": params.append(client.isOper || other.nick == client.nick ? other.ip ?? "255.255.255.255" : "255.255.255.255")
                case "h": params.append(other.host)
                case "s": params.append(name)
                case "n": params.append(other.nick)
                case "f": params.append(flags)
                case "d": params.append("0")
                case "l": params.append(String(other.idle))
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
        guard let other = registry.client(nick: nick) else {
            if let elsewhere = remote.user(nick: nick) { return whois(elsewhere, for: reply) }
            reply.numeric(.noSuchNick, nick, "No such nick")
            return reply.numeric(.endOfWhois, nick, "End of /WHOIS list")
        }
        let visible = other.rooms
            .filter { !$0.room.modes.secret || $0.contains(client) }
            .sorted { $0.key < $1.key }
            .map { $0.prefix(of: other, multiPrefix: false) + $0.name }
        sendWhois(Whois(nick: other.nick, user: other.user, host: other.host, realname: other.realname, rooms: visible,
                        isOper: other.isOper, isBot: other.isBot, isTLS: other.isTLS, away: other.away, account: other.accountName,
                        ip: client.isOper || other === client ? other.ip : nil,
                        idle: Int(now().timeIntervalSince(other.lastSpokeAt)), signon: other.connectedAt), to: reply)
    }

    /// WHOIS of a user connected to another process: what its record tells (neither its address
    /// nor whether it came by TLS, and no idle time).
    private func whois(_ other: PresenceRecord, for reply: Reply) {
        let visible = other.rooms.keys.sorted().compactMap { key -> String? in
            guard let room = rooms[key], !room.room.modes.secret || room.contains(reply.client) else { return nil }
            return other.prefix(in: key, multiPrefix: false) + room.name
        }
        sendWhois(Whois(nick: other.nick, user: other.user, host: other.host, realname: other.realname, rooms: visible,
                        isOper: other.isOper, isBot: other.isBot, isTLS: false, away: other.away, account: other.account,
                        ip: nil, idle: 0, signon: other.since), to: reply)
    }

    /// What WHOIS tells of a user, here or on another process.
    private struct Whois {
        var nick, user, host, realname: String
        /// The rooms the asker may see, with the user's status prefix.
        var rooms: [String]
        var isOper, isBot, isTLS: Bool
        var away, account: String?
        /// Shown to operators and the user themselves only.
        var ip: String?
        var idle: Int
        var signon: Date
    }

    private func sendWhois(_ w: Whois, to reply: Reply) {
        reply.numeric(.whoisUser, w.nick, w.user, w.host, "*", w.realname)
        if !w.rooms.isEmpty { reply.numeric(.whoisChannels, w.nick, w.rooms.joined(separator: " ")) }
        reply.numeric(.whoisServer, w.nick, name, config.network)
        if w.isOper { reply.numeric(.whoisOperator, w.nick, "is an IRC operator") }
        if let away = w.away { reply.numeric(.away, w.nick, away) }
        if let account = w.account { reply.numeric(.whoisAccount, w.nick, account, "is logged in as") }
        if w.isTLS { reply.numeric(.whoisSecure, w.nick, "is using a secure connection") }
        if w.isBot { reply.numeric(.whoisBot, w.nick, "is a bot") }
        if let ip = w.ip { reply.numeric(.whoisActually, w.nick, ip, "Actual host") }
        reply.numeric(.whoisIdle, w.nick, String(w.idle), String(Int(w.signon.timeIntervalSince1970)), "seconds idle, signon time")
        reply.numeric(.endOfWhois, w.nick, "End of /WHOIS list")
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
        let entries = m.params.prefix(5).compactMap { nick -> String? in
            if let c = registry.client(nick: nick) {
                return "\(c.nick)\(c.isOper ? "*" : "")=\(c.away == nil ? "+" : "-")\(c.user)@\(c.host)"
            }
            return remote.user(nick: nick).map { r in "\(r.nick)\(r.isOper ? "*" : "")=\(r.away == nil ? "+" : "-")\(r.user)@\(r.host)" }
        }
        reply.numeric(.userhost, entries.joined(separator: " "))
    }

    // ISON <nick>{ <nick>}
    func handleIson(_ reply: Reply, _ m: Message) {
        let present = m.params.flatMap { $0.split(separator: " ") }.prefix(64).compactMap { nick in
            registry.client(nick: String(nick))?.nick ?? remote.user(nick: String(nick))?.nick
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
private struct Listed {
    var nick: String
    var user: String
    var host: String
    var realname: String
    var account: String?
    /// Known for connections here only.
    var ip: String?
    /// Seconds since they last spoke; 0 for connections elsewhere.
    var idle: Int
    /// `H` or `G`, `*` for an operator, `B` for a bot, and the status prefix in the room listed.
    var flags: String

    init(_ client: Client, in room: LiveRoom?, multiPrefix: Bool, now: Date) {
        nick = client.nick
        user = client.user
        host = client.host
        realname = client.realname
        account = client.accountName
        ip = client.ip
        idle = Int(now.timeIntervalSince(client.lastSpokeAt))
        flags = (client.away == nil ? "H" : "G") + (client.isOper ? "*" : "") + (client.isBot ? "B" : "")
            + (room?.prefix(of: client, multiPrefix: multiPrefix) ?? "")
    }

    init(_ record: PresenceRecord, in roomKey: String?, multiPrefix: Bool) {
        nick = record.nick
        user = record.user
        host = record.host
        realname = record.realname
        account = record.account
        ip = nil
        idle = 0
        flags = (record.away == nil ? "H" : "G") + (record.isOper ? "*" : "") + (record.isBot ? "B" : "")
            + (roomKey.map { record.prefix(in: $0, multiPrefix: multiPrefix) } ?? "")
    }
}
