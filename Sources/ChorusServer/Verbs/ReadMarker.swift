import ChorusIRC
import Foundation

/// IRCv3 `draft/read-marker`: where each account has read to in each room or conversation, kept in
/// step across its clients (a phone that read the room clears the desktop's unread count). Markers
/// belong to the account and are never shown to anyone else. They are few (accounts × the rooms
/// they read), so the server holds them all, loaded at start and written through: a JOIN can name
/// the room's marker before its end of NAMES, as the specification asks. A guest's markers are its
/// connection's own, and go with it.
extension IRCServer {
    // MARKREAD <target> [timestamp=YYYY-MM-DDThh:mm:ss.sssZ]
    func handleMarkread(_ reply: Reply, _ m: Message) {
        guard let target = m.params.first, !target.isEmpty else {
            return reply.fail("NEED_MORE_PARAMS", "Missing parameters", evenWithoutCap: true)
        }
        let owner = readMarkerOwner(of: reply.client)
        guard Names.isChannel(target) || Names.isValidNick(target) else {
            return reply.fail("INVALID_PARAMS", context: [target], "Not a room or a nick", evenWithoutCap: true)
        }
        let key = Names.fold(target)
        guard m.params.count > 1 else {
            return reply.send(markreadLine(target, at: readMarkers[owner]?[key]))
        }
        let given = m.params[1]
        guard given.hasPrefix("timestamp="), let time = Timestamp.parse(String(given.dropFirst(10))) else {
            return reply.fail("INVALID_PARAMS", context: [given], "Give timestamp=YYYY-MM-DDThh:mm:ss.sssZ", evenWithoutCap: true)
        }
        // Never back, and never past now: a marker is a line that was read.
        let stored = readMarkers[owner]?[key]
        let marker = max(stored ?? .distantPast, min(time, now()))
        guard marker != stored else { return reply.send(markreadLine(target, at: stored)) }
        readMarkers[owner, default: [:]][key] = marker
        // Every client of the account hears it; the one that set it in its reply.
        let line = markreadLine(target, at: marker)
        reply.send(line)
        guard let account = reply.client.account else { return }
        persist("a read marker of \(account.name)") { _ = try $0.markRead(of: account.key, in: key, at: marker) }
        for other in registry.connections(ofAccount: account.key) where other !== reply.client && other.caps.contains(.readMarker) {
            send(Outgoing(line, time: now()), to: other)
        }
    }

    /// Whose markers a client reads and sets: its account's, kept; a guest's own, for the
    /// connection's life (`connectionClosed` forgets them).
    func readMarkerOwner(of client: Client) -> String {
        client.account?.key ?? "~\(client.id)"
    }

    /// `MARKREAD <target> timestamp=…`, or `*` when nothing is marked read.
    func markreadLine(_ target: String, at time: Date?) -> Message {
        Message(source: name, "MARKREAD", [target, time.map { "timestamp=" + Timestamp.format($0) } ?? "*"])
    }
}
