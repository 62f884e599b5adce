import ChorusIRC
import Foundation

/// IRCv3 MONITOR: people want to know when a teammate comes online, without sharing a room or
/// asking again and again (ISON). With `extended-monitor`, a watcher also hears a watched nick's
/// AWAY, ACCOUNT and SETNAME changes, as if they shared a room.
extension IRCServer {
    // MONITOR + <nick>{,<nick>} | MONITOR - <nick>{,<nick>} | MONITOR C | MONITOR L | MONITOR S
    func handleMonitor(_ reply: Reply, _ m: Message) {
        let client = reply.client
        let targets = m.params.count > 1 ? m.params[1].split(separator: ",").map(String.init) : []
        switch m.params[0] {
        case "+":
            guard !targets.isEmpty else { return reply.numeric(.needMoreParams, "MONITOR", "Give nicks to monitor") }
            // Only nicks: a mask would let someone follow a person across nick changes.
            let (added, full) = monitors.add(targets.filter(Names.isValidNick), for: client)
            if !full.isEmpty {
                reply.numeric(.monListFull, String(Monitors.limit), full.joined(separator: ","), "Monitor list is full.")
            }
            sendMonitorStatus(of: added, to: reply)
        case "-":
            monitors.remove(targets, for: client)
        case "C", "c":
            monitors.clear(for: client)
        case "L", "l":
            for chunk in Self.commaLists(monitors.list(of: client)) { reply.numeric(.monList, chunk) }
            reply.numeric(.endOfMonList, "End of MONITOR list")
        case "S", "s":
            sendMonitorStatus(of: monitors.list(of: client), to: reply)
        default:
            reply.numeric(.unknownCommand, "MONITOR", "Use MONITOR +, -, C, L or S")
        }
    }

    /// RPL_MONONLINE with `nick!user@host` for those online, RPL_MONOFFLINE for the others.
    private func sendMonitorStatus(of nicks: [String], to reply: Reply) {
        var online: [String] = [], offline: [String] = []
        for nick in nicks {
            if let prefix = person(nick: nick)?.prefix {
                online.append(prefix)
            } else {
                offline.append(nick)
            }
        }
        for chunk in Self.commaLists(online) { reply.numeric(.monOnline, chunk) }
        for chunk in Self.commaLists(offline) { reply.numeric(.monOffline, chunk) }
    }

    /// A nick came online (registered, or took it by NICK): its watchers are told.
    func monitoredOnline(_ client: Client) {
        for watcher in monitors.watchers(of: client.nickKey) where watcher !== client {
            send(Outgoing(Message(source: name, Numeric.monOnline.rawValue, [watcher.nick, client.prefix]), time: now()), to: watcher)
        }
    }

    /// A nick went offline (QUIT, or a NICK away from it): its watchers are told, by the nick as it was.
    func monitoredOffline(nick: String, key: String, except client: Client? = nil) {
        for watcher in monitors.watchers(of: key) where watcher !== client {
            send(Outgoing(Message(source: name, Numeric.monOffline.rawValue, [watcher.nick, nick]), time: now()), to: watcher)
        }
    }

    /// Those who hear `client`'s AWAY, ACCOUNT and SETNAME: the people it shares a room with, and
    /// (extended-monitor) those who watch its nick.
    func peersAndWatchers(of client: Client) -> [Client] {
        let watching = monitors.watchers(of: client.nickKey).filter { $0.caps.contains(.extendedMonitor) }
        guard !watching.isEmpty else { return peers(of: client) }
        var seen = Set<ObjectIdentifier>()
        return (peers(of: client) + watching).filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    /// Comma-separated lists that fit a numeric line (at most ~400 bytes each).
    static func commaLists(_ items: [String]) -> [String] {
        var lists: [String] = [], current = ""
        for item in items {
            if !current.isEmpty && current.utf8.count + 1 + item.utf8.count > 400 {
                lists.append(current)
                current = ""
            }
            current += (current.isEmpty ? "" : ",") + item
        }
        if !current.isEmpty { lists.append(current) }
        return lists
    }
}
